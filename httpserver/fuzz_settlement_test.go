package httpserver_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/httpserver"
)

// FuzzSettlementRequest posts any bytes as the body of POST /settlements
// (and, with its own body, of POST /v1/x402/settlements) through the whole
// server: the answer is never a 500 or a panic, an error is a problem
// document with a code, and a refused request writes nothing.
func FuzzSettlementRequest(f *testing.F) {
	fx := newFixture(f)
	h := newHandler(f, fx.engine, httpserver.Options{RateLimit: rate.Inf, AuthFailureRate: rate.Inf})
	f.Add([]byte(mustJSON(f, settlement(nil))), false)
	f.Add([]byte(mustJSON(f, settlement(map[string]any{"consumerVatNumber": "DE136695976", "amountUsdc": "0.000001"}))), false)
	f.Add([]byte(`{"amountUsdc":"1","amountUsdc":"2"}`), false)
	f.Add([]byte(`{"consumerCountry":"\ud800"}`), false)
	f.Add([]byte(`{"AmountUsdc":"1"}`), false)
	f.Add([]byte(`[[[[[[[[[[]]]]]]]]]]`), false)
	f.Add([]byte(`{"settleResponse":{"success":true},"paymentRequirements":{},"paymentPayload":{}}`), true)
	f.Add([]byte(`{"settleResponse":"eyJzdWNjZXNzIjp0cnVlfQ=="}`), true)
	f.Fuzz(func(t *testing.T, body []byte, x402 bool) {
		path := "/settlements"
		if x402 {
			path = "/v1/x402/settlements"
		}
		before := fx.engine.Ledger().Size()
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Service-Key", keyA)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		case rec.Code >= 400:
			var p struct{ Code string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" || rec.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("%s: %d is not a problem document: %s", path, rec.Code, rec.Body)
			}
			if after := fx.engine.Ledger().Size(); after != before {
				t.Fatalf("%s: refused with %s but the ledger grew from %d to %d", path, p.Code, before, after)
			}
		}
	})
}
