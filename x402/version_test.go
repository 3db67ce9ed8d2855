package x402

import (
	"strings"
	"testing"
)

// v1Docs are the three documents of one x402 v1 exact payment on Base, as
// the v1 specification writes them (§5.1, §5.2, §5.3: network names,
// maxAmountRequired, a payload naming scheme and network).
func v1Docs() (settle, req, payload map[string]any) {
	settle, req, payload = consistentDocs()
	settle["network"] = "base"
	delete(req, "amount")
	req["maxAmountRequired"], req["network"] = "1500000", "base"
	req["resource"], req["description"] = "https://api.example.com/premium-data", "premium data"
	delete(payload, "accepted")
	payload["x402Version"], payload["scheme"], payload["network"] = 1, "exact", "base"
	return settle, req, payload
}

// TestParseVersionShapes: x402 v2 names networks in CAIP-2 (specification
// v2 §5.1.2, §5.3.2 and §11.1 "Networks in x402 v2 use CAIP-2"), names
// the price "amount" (§5.1.2) and requires the payload's "accepted"
// (§5.2.2); x402 v1 names the price "maxAmountRequired" (v1 §5.1.2) and
// its payload names scheme and network ("All fields are required", v1
// §5.2.2). The reference facilitators route a payment by its version and
// network (x402 Go SDK go/facilitator.go: v2 mechanisms are registered
// under CAIP-2 ids, v1 ones under names), so a document of one version in
// the other's shape never settled: it is refused, naming the member.
func TestParseVersionShapes(t *testing.T) {
	s1, r1, p1 := v1Docs()
	if p, err := parseMaps(t, s1, r1, p1); err != nil || p.Version != 1 || p.Network != "eip155:8453" {
		t.Fatalf("v1 documents: %+v %v", p, err)
	}
	s2, r2, p2 := consistentDocs()
	if p, err := parseMaps(t, s2, r2, p2); err != nil || p.Version != 2 || p.Network != "eip155:8453" {
		t.Fatalf("v2 documents: %+v %v", p, err)
	}
	type mod func(s, r, p map[string]any)
	acc := func(p map[string]any) map[string]any { return p["accepted"].(map[string]any) }
	for _, c := range []struct {
		name  string
		docs  func() (map[string]any, map[string]any, map[string]any)
		mod   mod
		field string
	}{
		{"v2 requirements with a v1 name", consistentDocs, func(s, r, p map[string]any) { r["network"], acc(p)["network"], s["network"] = "base", "base", "base" }, "/paymentRequirements/network"},
		{"v2 accepted with a v1 name", consistentDocs, func(s, r, p map[string]any) { acc(p)["network"] = "base" }, "/paymentPayload/accepted/network"},
		{"v2 settle response with a v1 name", consistentDocs, func(s, r, p map[string]any) { s["network"] = "base" }, "/settleResponse/network"},
		{"v2 requirements with maxAmountRequired only", consistentDocs, func(s, r, p map[string]any) {
			delete(r, "amount")
			r["maxAmountRequired"] = "1500000"
		}, "/paymentRequirements/amount"},
		{"v2 payload without accepted", consistentDocs, func(s, r, p map[string]any) { delete(p, "accepted") }, "/paymentPayload/accepted"},
		{"v1 requirements with amount only", v1Docs, func(s, r, p map[string]any) {
			delete(r, "maxAmountRequired")
			r["amount"] = "1500000"
		}, "/paymentRequirements/maxAmountRequired"},
		{"v1 payload without scheme", v1Docs, func(s, r, p map[string]any) { delete(p, "scheme") }, "/paymentPayload/scheme"},
		{"v1 payload without network", v1Docs, func(s, r, p map[string]any) { delete(p, "network") }, "/paymentPayload/network"},
	} {
		s, r, p := c.docs()
		c.mod(s, r, p)
		_, err := parseMaps(t, s, r, p)
		e, ok := err.(*Error)
		if !ok || e.Field != c.field || e.Kind != BadRequest {
			t.Errorf("%s: error %v, want %s at %s", c.name, err, BadRequest, c.field)
			continue
		}
		if !strings.Contains(e.Detail, "v1") && !strings.Contains(e.Detail, "v2") {
			t.Errorf("%s: %q does not name the x402 version", c.name, e.Detail)
		}
	}
}

// TestParseSettleResponseNetworkRequired: the settle response's network
// is required, in v1 and v2 alike (x402 specification v1 §5.3.2 and v2
// §5.3.2: "network ... Required"); the reference SDKs always write it.
func TestParseSettleResponseNetworkRequired(t *testing.T) {
	for _, docs := range []func() (map[string]any, map[string]any, map[string]any){consistentDocs, v1Docs} {
		s, r, p := docs()
		delete(s, "network")
		_, err := parseMaps(t, s, r, p)
		wantBadRequest(t, err, "/settleResponse/network")
	}
}
