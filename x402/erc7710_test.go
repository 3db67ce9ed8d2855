package x402

import "testing"

// TestParseERC7710Payload: the ERC-7710 method's payload names the
// delegationManager (an address), the permissionContext (the delegation
// proof, bytes) and the delegator (the paying account), all three
// required (scheme_exact_evm.md §3 Phase 2: "The payload field must
// contain"); the facilitator settles by redeemDelegations on that manager
// with that context, so without either no such payment was settled. A
// complete one parses to the method "erc7710" and the delegator as payer.
func TestParseERC7710Payload(t *testing.T) {
	erc7710 := func() (settle, req, payload map[string]any) {
		settle, req, payload = consistentDocs()
		delete(settle, "payer")
		payload["payload"] = map[string]any{
			"delegationManager": "0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3",
			"permissionContext": "0x1234abcd",
			"delegator":         "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		}
		return settle, req, payload
	}
	settle, req, payload := erc7710()
	p, err := parseMaps(t, settle, req, payload)
	if err != nil || p.Method != "erc7710" || p.Payer != "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" || p.Nonce != "" {
		t.Fatalf("erc7710 payment %+v, %v", p, err)
	}
	const ptr = "/paymentPayload/payload/"
	for _, member := range []string{"delegationManager", "permissionContext", "delegator"} {
		settle, req, payload := erc7710()
		delete(payload["payload"].(map[string]any), member)
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr+member)
	}
	for _, c := range []struct{ member, v string }{
		{"delegationManager", "0xDelegationManagerAddress"}, {"permissionContext", "0x"}, {"permissionContext", "delegation"}, {"delegator", "me"},
	} {
		settle, req, payload := erc7710()
		payload["payload"].(map[string]any)[c.member] = c.v
		_, err := parseMaps(t, settle, req, payload)
		wantBadRequest(t, err, ptr+c.member)
	}
}
