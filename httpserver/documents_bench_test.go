package httpserver_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkDocuments measures building and encoding each published document
// in the handler (no network): the documents are computed per request from
// the engine's values, so this is their whole cost.
func BenchmarkDocuments(b *testing.B) {
	f := newDocFixture(b, false, testNow)
	for _, path := range []string{"/openapi.json", "/.well-known/service.json", "/.well-known/agent-card.json", "/v1/capabilities", "/v1/pricing", "/v1/reliability", "/discover"} {
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				f.handler.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%d", rec.Code)
				}
			}
		})
	}
}

// BenchmarkCapabilitiesCheck measures POST /v1/capabilities/check in the
// handler: decoding, two vat.Determine runs (threshold alternative), the ECB
// lookup and encoding.
func BenchmarkCapabilitiesCheck(b *testing.B) {
	f := newDocFixture(b, false, testNow)
	body := []byte(`{"seller_country":"IE","buyer_country":"DE","supply_type":"digital_service","buyer_type":"B2C","payment":{"protocol":"x402","network":"eip155:8453","asset":"USDC"}}`)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/capabilities/check", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		f.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
