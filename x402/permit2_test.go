package x402

import (
	"strings"
	"testing"
)

// permit2Docs are consistentDocs with the payload of the Permit2 transfer
// method (scheme_exact_evm.md §2, "Example PaymentPayload").
func permit2Docs() (settle, req, payload map[string]any) {
	settle, req, payload = consistentDocs()
	payload["payload"] = map[string]any{"signature": "0xab", "permit2Authorization": map[string]any{
		"permitted": map[string]any{"token": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913", "amount": "1500000"},
		"from":      "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		"spender":   "0x402085c248EeA27D92E8b30b2C58ed07f9E20001",
		"nonce":     "33247007178036348590600198031289925668252061821958005840077069883511451257277",
		"deadline":  "1740672154",
		"witness":   map[string]any{"to": "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", "validAfter": "1740672089"},
	}}
	return settle, req, payload
}

func permit2Auth(p map[string]any) map[string]any {
	return p["payload"].(map[string]any)["permit2Authorization"].(map[string]any)
}

// TestParsePermit2Authorization: a Permit2 authorization carries from,
// permitted {token, amount}, spender, nonce, deadline and witness {to,
// validAfter}, all required (scheme_exact_evm.md §2 Phase 2; the x402 Go
// SDK's Permit2PayloadFromMap refuses a payload without any of them, so no
// such payload was settled). nonce, deadline and validAfter are uint256
// decimal strings, and the permit is executable only when validAfter ≤
// block.timestamp ≤ deadline (x402ExactPermit2Proxy requires
// block.timestamp ≥ witness.validAfter; Permit2's SignatureTransfer reverts
// after the deadline), so a deadline before validAfter never settled. Each
// such document is refused, naming the member. A complete one parses to
// the method "permit2" and its payer, and claims no EIP-3009 nonce (the
// Permit2 nonce is another kind of number, and the record's
// authorizationNonce is the EIP-3009 bytes32).
func TestParsePermit2Authorization(t *testing.T) {
	settle, req, payload := permit2Docs()
	delete(settle, "payer")
	p, err := parseMaps(t, settle, req, payload)
	if err != nil {
		t.Fatal(err)
	}
	if p.Method != "permit2" || p.Payer != "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" || p.Nonce != "" ||
		p.PayTo != "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc" || p.AmountAtomic != "1500000" {
		t.Fatalf("permit2 payment %+v", p)
	}

	const ptr = "/paymentPayload/payload/permit2Authorization/"
	for _, member := range []string{"from", "permitted", "spender", "nonce", "deadline", "witness", "permitted/token", "permitted/amount", "witness/to", "witness/validAfter"} {
		settle, req, payload := permit2Docs()
		m := permit2Auth(payload)
		if parent, child, ok := strings.Cut(member, "/"); ok {
			m = m[parent].(map[string]any)
			member = child
		}
		delete(m, member)
		_, err := parseMaps(t, settle, req, payload)
		e, ok := err.(*Error)
		if !ok || e.Kind != BadRequest || !strings.HasSuffix(e.Field, "/"+member) || !strings.HasPrefix(e.Field, ptr) {
			t.Errorf("without %s: %v, want bad_request at it", member, err)
		} else if !strings.Contains(e.Detail, "required") {
			t.Errorf("without %s: %v does not say it is required", member, err)
		}
	}
	for _, c := range []struct {
		path string
		v    any
	}{
		{"spender", "proxy"}, {"spender", "0x402085c248EeA27D92E8b30b2C58ed07f9E2000"},
		{"nonce", "0x11"}, {"nonce", "-1"}, {"nonce", 5}, {"nonce", strings.Repeat("9", 79)},
		{"deadline", "1e10"}, {"deadline", ""}, {"witness/validAfter", "soon"},
		{"permitted", "all"}, {"witness", []any{}},
	} {
		settle, req, payload := permit2Docs()
		m, member := permit2Auth(payload), c.path
		if parent, child, ok := strings.Cut(c.path, "/"); ok {
			m, member = m[parent].(map[string]any), child
		}
		m[member] = c.v
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr+c.path)
	}
	settle, req, payload = permit2Docs()
	permit2Auth(payload)["deadline"] = "1740672088"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, ptr+"deadline")
	// A deadline equal to validAfter leaves one second to settle in.
	settle, req, payload = permit2Docs()
	permit2Auth(payload)["deadline"] = "1740672089"
	if _, err := parseMaps(t, settle, req, payload); err != nil {
		t.Errorf("deadline = validAfter: %v", err)
	}
}

// TestParseOneTransferMethod: the exact scheme's payload has the shape of
// one transfer method (scheme_exact_evm.md: EIP-3009 "authorization",
// Permit2 "permit2Authorization", ERC-7710 "delegator"). A payload with
// two says two things about how the money moved (the x402 Go SDK routes it
// to Permit2, fiscal402 read it as EIP-3009), so it is refused rather than
// recorded under either.
func TestParseOneTransferMethod(t *testing.T) {
	_, _, eip3009 := consistentDocs()
	auth := eip3009["payload"].(map[string]any)["authorization"]
	settle, req, payload := permit2Docs()
	payload["payload"].(map[string]any)["authorization"] = auth
	_, err := parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/payload/permit2Authorization")

	settle, req, payload = consistentDocs()
	payload["payload"].(map[string]any)["delegator"] = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/payload/delegator")
}

// TestParsePermit2Spender: in the exact scheme the Permit2 authorization's
// spender is the x402ExactPermit2Proxy, "not the Facilitator", the
// contract that enforces that the funds go only to witness.to
// (scheme_exact_evm.md §2 Phase 2 and Annex, canonical address
// 0x402085c248EeA27D92E8b30b2C58ed07f9E20001 on every chain); the x402 Go
// and TypeScript facilitators refuse any other spender
// (invalid_permit2_spender). A permit for another spender (a facilitator's
// own account, the upto scheme's proxy, which may move less than the
// permitted amount) was not settled under the exact scheme, so the
// documents are refused at the spender. The canonical proxy is accepted in
// any letter case (EIP-55 checksums are mixed case).
func TestParsePermit2Spender(t *testing.T) {
	const ptr = "/paymentPayload/payload/permit2Authorization/spender"
	for _, spender := range []string{
		"0x402085c248EeA27D92E8b30b2C58ed07f9E20001",
		"0x402085C248EEA27D92E8B30B2C58ED07F9E20001",
		"0x402085c248eea27d92e8b30b2c58ed07f9e20001",
	} {
		settle, req, payload := permit2Docs()
		permit2Auth(payload)["spender"] = spender
		if _, err := parseMaps(t, settle, req, payload); err != nil {
			t.Errorf("spender %s: %v", spender, err)
		}
	}
	for _, spender := range []string{
		"0x90F79bf6EB2c4f870365E785982E1f101E93b906", // an account, e.g. the facilitator's
		"0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002", // x402UptoPermit2Proxy
		"0x000000000022D473030F116dDEE9F6B43aC78BA3", // Permit2 itself
	} {
		settle, req, payload := permit2Docs()
		permit2Auth(payload)["spender"] = spender
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr)
		if !strings.Contains(err.Error(), "x402ExactPermit2Proxy") {
			t.Errorf("spender %s: %v does not name the proxy the exact scheme requires", spender, err)
		}
	}
}
