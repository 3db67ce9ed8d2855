package httpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestX402SchemaAcceptsWhatTheIngestReads: every x402 ingest body that the
// server reads past its documents (this fixture has no chain, so such a
// body is answered 422 CHAIN_VERIFICATION_REQUIRED, not 400) is valid
// against the request schema the OpenAPI document publishes, and every
// body it refuses as malformed (400) is one the schema refuses too. Package
// x402 reads a payment payload without its scheme payload ("payload"
// missing, null or {}), and a document that is {}, null or "" as absent
// (x402/doc.go, "Parsing rules"); a client or validating proxy that
// checks the body against the document must not be told otherwise.
func TestX402SchemaAcceptsWhatTheIngestReads(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	item := doc["paths"].(map[string]any)["/v1/x402/settlements"].(map[string]any)["post"].(map[string]any)
	schema := item["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)

	const (
		payer = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
		payTo = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
	)
	pp := func(b map[string]any) map[string]any { return b["paymentPayload"].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(b map[string]any)
	}{
		{"complete documents", func(b map[string]any) {}},
		{"scheme payload missing", func(b map[string]any) { delete(pp(b), "payload") }},
		{"scheme payload null", func(b map[string]any) { pp(b)["payload"] = nil }},
		{"scheme payload empty", func(b map[string]any) { pp(b)["payload"] = map[string]any{} }},
		{"payment payload missing", func(b map[string]any) { delete(b, "paymentPayload") }},
		{"payment payload null", func(b map[string]any) { b["paymentPayload"] = nil }},
		{"payment payload empty", func(b map[string]any) { b["paymentPayload"] = map[string]any{} }},
		{"payment payload empty string", func(b map[string]any) { b["paymentPayload"] = "" }},
		{"payment payload base64 of {}", func(b map[string]any) { b["paymentPayload"] = "e30=" }},
		{"requirements missing (v2 accepted)", func(b map[string]any) { delete(b, "paymentRequirements") }},
		{"requirements null (v2 accepted)", func(b map[string]any) { b["paymentRequirements"] = nil }},
		{"requirements empty (v2 accepted)", func(b map[string]any) { b["paymentRequirements"] = map[string]any{} }},
		{"requirements empty string (v2 accepted)", func(b map[string]any) { b["paymentRequirements"] = "" }},
		{"settle response empty string", func(b map[string]any) { b["settleResponse"] = "" }},
		{"payment payload without x402Version", func(b map[string]any) { delete(pp(b), "x402Version") }},
		{"settle response empty", func(b map[string]any) { b["settleResponse"] = map[string]any{} }},
		{"settle response null", func(b map[string]any) { b["settleResponse"] = nil }},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := x402Body(txHash(9000+i), payer, payTo, 1_000_000, map[string]any{"consumerCountry": "DE"})
			c.mutate(body)
			raw := mustJSON(t, body)
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			errs := doc.check(schema, v, "")
			r := f.do("POST", "/v1/x402/settlements", keyA, raw)
			var p struct{ Code, Field string }
			_ = json.Unmarshal(r.body, &p)
			switch {
			case r.status == http.StatusUnprocessableEntity && p.Code == "CHAIN_VERIFICATION_REQUIRED":
				if len(errs) > 0 {
					t.Errorf("the server reads the documents (422 %s), but the schema refuses the body: %s", p.Code, strings.Join(errs, "; "))
				}
			case r.status == http.StatusBadRequest:
				if len(errs) == 0 {
					t.Errorf("the schema accepts the body, but the server refuses it: 400 %s %s", p.Code, p.Field)
				}
			default:
				t.Fatalf("answer %d %s", r.status, r.body)
			}
		})
	}
}
