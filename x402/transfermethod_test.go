package x402

import "testing"

// TestParseTransferMethodAgrees: the requirements' extra.assetTransferMethod
// names the method the payload must use ("MUST be "eip3009" when the
// payment payload uses the EIP-3009 shape", likewise permit2 and erc7710;
// scheme_exact_evm.md). Requirements that name one method beside a payload
// of another describe two payments, and are refused where they name it;
// requirements that name none, or the payload's, agree.
func TestParseTransferMethodAgrees(t *testing.T) {
	extra := func(m map[string]any) map[string]any { return m["extra"].(map[string]any) }
	settle, req, payload := consistentDocs()
	extra(req)["assetTransferMethod"] = "eip3009"
	if p, err := parseMaps(t, settle, req, payload); err != nil || p.Method != "eip3009" {
		t.Fatalf("eip3009 named and used: %+v %v", p, err)
	}
	extra(req)["assetTransferMethod"] = "permit2"
	_, err := parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentRequirements/extra/assetTransferMethod")

	// The copy in the payload's "accepted" is the requirements the client
	// signed for, and is held to the same rule.
	settle, req, payload = consistentDocs()
	extra(payload["accepted"].(map[string]any))["assetTransferMethod"] = "erc7710"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/accepted/extra/assetTransferMethod")
	_, err = parseMaps(t, settle, nil, payload)
	wantBadRequest(t, err, "/paymentPayload/accepted/extra/assetTransferMethod")

	settle, req, payload = permit2Docs()
	extra(req)["assetTransferMethod"] = "eip3009"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentRequirements/extra/assetTransferMethod")
	extra(req)["assetTransferMethod"] = "permit2"
	if p, err := parseMaps(t, settle, req, payload); err != nil || p.Method != "permit2" {
		t.Fatalf("permit2 named and used: %+v %v", p, err)
	}

	// Without a scheme payload the method used is not known: nothing to
	// compare, and none is claimed from the requirements.
	settle, req, payload = consistentDocs()
	extra(req)["assetTransferMethod"] = "permit2"
	delete(payload, "payload")
	if p, err := parseMaps(t, settle, req, payload); err != nil || p.Method != "" {
		t.Fatalf("no scheme payload: %+v %v", p, err)
	}
}
