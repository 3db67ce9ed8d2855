package httpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestErrorDetailEchoBounded: a 20,000-character value in a field, a query
// parameter's name or value, or a path id is refused with a problem
// document of bounded size that still names the field; the value is shown
// by its first characters and its length, not echoed whole.
func TestErrorDetailEchoBounded(t *testing.T) {
	f := newFixture(t)
	huge := strings.Repeat("X", 20000)
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
		status             int
		code, field        string
	}{
		{"consumerCountry", "POST", "/settlements", settlement(map[string]any{"consumerCountry": huge}), 400, "BAD_REQUEST", "/consumerCountry"},
		{"network", "POST", "/settlements", settlement(map[string]any{"network": huge}), 422, "UNSUPPORTED_NETWORK", "/network"},
		{"asset", "POST", "/settlements", settlement(map[string]any{"asset": huge}), 422, "UNSUPPORTED_ASSET", "/asset"},
		{"scheme", "POST", "/settlements", settlement(map[string]any{"scheme": huge}), 422, "UNSUPPORTED_SCHEME", "/scheme"},
		{"fiscal event seller country", "POST", "/v1/fiscal-events", fiscalEventBody(map[string]any{"seller.country": huge}), 400, "BAD_REQUEST", "/seller/country"},
		{"evaluate seller country", "POST", "/v1/compliance/evaluate", evaluateBody(map[string]any{"seller.country": huge}), 400, "BAD_REQUEST", "/seller/country"},
		{"capabilities check seller_country", "POST", "/v1/capabilities/check", map[string]any{"seller_country": huge, "buyer_country": "DE", "supply_type": "digital_service", "buyer_type": "B2C", "payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}}, 400, "BAD_REQUEST", "/seller_country"},
		{"query parameter name", "GET", "/settlements?" + huge + "=1", nil, 400, "BAD_REQUEST", ""},
		{"query parameter value", "GET", "/v1/returns/oss?period=" + url.QueryEscape(huge), nil, 400, "BAD_REQUEST", "period"},
		{"export format", "GET", "/settlements/export?format=" + huge, nil, 400, "BAD_REQUEST", "format"},
		{"list taxingCountry", "GET", "/settlements?taxingCountry=" + huge, nil, 400, "BAD_REQUEST", "taxingCountry"},
		{"OSS records memberState", "GET", "/v1/returns/oss/records?period=2026-Q1&memberState=" + huge, nil, 400, "BAD_REQUEST", "memberState"},
		{"settlement id", "GET", "/settlements/" + huge, nil, 404, "NOT_FOUND", ""},
		{"refund id", "GET", "/settlements/" + huge + "/refunds/" + huge, nil, 404, "NOT_FOUND", ""},
		{"receipt id", "GET", "/v1/receipts/" + huge, nil, 404, "NOT_FOUND", ""},
		{"summary invoice id", "GET", "/v1/invoices/summaries/" + huge, nil, 404, "NOT_FOUND", ""},
		{"fiscal event id", "GET", "/v1/fiscal-events/" + huge, nil, 404, "NOT_FOUND", ""},
		{"webhook endpoint id", "GET", "/v1/webhook-endpoints/" + huge, nil, 404, "NOT_FOUND", ""},
		{"event id", "GET", "/v1/events/" + huge, nil, 404, "NOT_FOUND", ""},
		{"sandbox settlement id", "GET", "/sandbox/v1/settlements/" + huge, nil, 404, "NOT_FOUND", ""},
		{"x402 ingest id", "GET", "/v1/x402/settlements/" + huge, nil, 404, "NOT_FOUND", ""},
		{"unknown member", "POST", "/settlements", map[string]any{huge: 1}, 400, "BAD_REQUEST", "/" + strings.Repeat("X", 64) + "… (20000 characters)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != nil {
				body = mustJSON(t, tc.body)
			}
			r := f.do(tc.method, tc.path, keyA, body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", r.status, tc.status, r.body)
			}
			p := r.json(t)
			if p["code"] != tc.code {
				t.Errorf("code %v, want %s", p["code"], tc.code)
			}
			if tc.field != "" && p["field"] != tc.field {
				t.Errorf("field %v, want %s", p["field"], tc.field)
			}
			if len(r.body) > 2048 {
				t.Errorf("problem document of %d bytes for a %d-character value: %.300s…", len(r.body), len(huge), r.body)
			}
			d, _ := p["detail"].(string)
			if !strings.Contains(d, "(20000 characters)") {
				t.Errorf("detail does not give the value's length: %.300s", d)
			}
		})
	}
}

// TestUnroutedPathEchoBounded: the path of a request no route answers (a
// 404 "no such endpoint", a 405 naming the method, a 307 to the cleaned
// path) is a value the request sent, and the problem's detail shows it as
// README "Errors" promises: whole up to 64 characters, else by its first
// 64 and its length, never a 20,000-character path echoed back whole (the
// Location header of the 307 carries the cleaned path itself).
func TestUnroutedPathEchoBounded(t *testing.T) {
	f := newFixture(t)
	huge := strings.Repeat("Z", 20000)
	client := *f.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"no such endpoint", "GET", "/" + huge, 404, "NOT_FOUND"},
		{"method not allowed", "DELETE", "/settlements/" + huge, 405, "METHOD_NOT_ALLOWED"},
		{"long method not allowed", strings.Repeat("M", 20000), "/settlements", 405, "METHOD_NOT_ALLOWED"},
		{"path not canonical", "GET", "/settlements//" + huge, 307, "PATH_NOT_CANONICAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %.300s", resp.StatusCode, tc.status, body)
			}
			var p map[string]any
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("not a problem document: %v %.300s", err, body)
			}
			if p["code"] != tc.code {
				t.Errorf("code %v, want %s", p["code"], tc.code)
			}
			if len(body) > 2048 {
				t.Errorf("problem document of %d bytes for a 20,000-character path or method: %.300s…", len(body), body)
			}
			if d, _ := p["detail"].(string); !strings.Contains(d, " characters)") {
				t.Errorf("detail does not give the value's length: %.300s", d)
			}
		})
	}
}
