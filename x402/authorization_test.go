package x402

import (
	"strings"
	"testing"
)

// TestParseAuthorizationFieldsRequired: an EIP-3009 authorization carries
// six members, all required: from, to, value, validAfter, validBefore and
// nonce (x402 specification v1 §5.2.2 and v2 §5.2.2, "The Authorization
// object"; scheme_exact_evm.md phase 1). validAfter and validBefore are
// Unix times as decimal strings, and transferWithAuthorization runs only
// when validAfter < block.timestamp < validBefore (EIP-3009), so an
// authorization whose validBefore is not after its validAfter was never
// executable. Each such document is refused, naming the member.
func TestParseAuthorizationFieldsRequired(t *testing.T) {
	auth := func(p map[string]any) map[string]any {
		return p["payload"].(map[string]any)["authorization"].(map[string]any)
	}
	const ptr = "/paymentPayload/payload/authorization/"
	for _, member := range []string{"from", "to", "value", "validAfter", "validBefore", "nonce"} {
		settle, req, payload := consistentDocs()
		delete(auth(payload), member)
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr+member)
		if !strings.Contains(err.Error(), "required") {
			t.Errorf("missing %s: %v does not say it is required", member, err)
		}
	}
	for _, c := range []struct {
		member string
		v      any
	}{
		{"validAfter", "abc"}, {"validAfter", "-1"}, {"validAfter", "1.5"}, {"validAfter", 0},
		{"validBefore", ""}, {"validBefore", "1e10"}, {"validBefore", 9999999999},
		{"validBefore", strings.Repeat("9", 79)},
	} {
		settle, req, payload := consistentDocs()
		auth(payload)[c.member] = c.v
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr+c.member)
	}
	settle, req, payload := consistentDocs()
	auth(payload)["validAfter"], auth(payload)["validBefore"] = "1740672154", "1740672154"
	_, err := parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, ptr+"validBefore")

	// The spec's own example window, and the widest uint256 one, are valid.
	for _, w := range [][2]string{{"1740672089", "1740672154"}, {"0", strings.Repeat("9", 77)}} {
		settle, req, payload = consistentDocs()
		auth(payload)["validAfter"], auth(payload)["validBefore"] = w[0], w[1]
		if _, err := parseMaps(t, settle, req, payload); err != nil {
			t.Errorf("window %v: %v", w, err)
		}
	}
}
