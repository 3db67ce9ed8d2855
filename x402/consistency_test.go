package x402

import (
	"encoding/json"
	"strings"
	"testing"
)

// consistentDocs are the three documents of one x402 v2 exact EIP-3009
// payment, as maps so that a case can change one member.
func consistentDocs() (settle, req, payload map[string]any) {
	const (
		payer = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
		payTo = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
	)
	mkReq := func() map[string]any {
		return map[string]any{
			"scheme": "exact", "network": "eip155:8453", "amount": "1500000",
			"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": payTo, "maxTimeoutSeconds": 60,
			"extra": map[string]any{"name": "USD Coin", "version": "2"},
		}
	}
	settle = map[string]any{"success": true, "payer": payer, "transaction": "0x" + strings.Repeat("ab", 32), "network": "eip155:8453"}
	payload = map[string]any{"x402Version": 2, "accepted": mkReq(), "payload": map[string]any{
		"signature": "0xab",
		"authorization": map[string]any{
			"from": payer, "to": payTo, "value": "1500000",
			"validAfter": "0", "validBefore": "9999999999", "nonce": "0x" + strings.Repeat("11", 32),
		},
	}}
	return settle, mkReq(), payload
}

func parseMaps(t *testing.T, settle, req, payload map[string]any) (Payment, error) {
	t.Helper()
	var parts [3][]byte
	for i, m := range []map[string]any{settle, req, payload} {
		if m == nil {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		parts[i] = b
	}
	p, _, err := Parse(Settlement{parts[0], parts[1], parts[2]})
	return p, err
}

func wantBadRequest(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Kind != BadRequest || e.Field != field {
		t.Fatalf("error %v, want %s at %s", err, BadRequest, field)
	}
}

// TestParseAuthorizationMatchesRequirements: an EIP-3009 authorization
// moves exactly its value to its "to" (EIP-3009 transferWithAuthorization),
// and the x402 exact scheme requires value = amount and to = payTo (the
// reference facilitators refuse anything else: recipient mismatch,
// authorization value mismatch). An authorization that names another payee
// or another amount describes another payment than the requirements, so
// the documents are refused where the authorization disagrees.
func TestParseAuthorizationMatchesRequirements(t *testing.T) {
	auth := func(p map[string]any) map[string]any {
		return p["payload"].(map[string]any)["authorization"].(map[string]any)
	}
	settle, req, payload := consistentDocs()
	if _, err := parseMaps(t, settle, req, payload); err != nil {
		t.Fatalf("consistent documents: %v", err)
	}
	// Any case of the same address, and the same amount, agree.
	auth(payload)["to"] = strings.ToLower(auth(payload)["to"].(string))
	if _, err := parseMaps(t, settle, req, payload); err != nil {
		t.Fatalf("payee in lower case: %v", err)
	}

	settle, req, payload = consistentDocs()
	auth(payload)["to"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
	_, err := parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/payload/authorization/to")

	settle, req, payload = consistentDocs()
	auth(payload)["value"] = "1000000"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/payload/authorization/value")

	// x402 v1: the value is compared with maxAmountRequired.
	settle, req, payload = consistentDocs()
	req["network"], req["maxAmountRequired"] = "base", "10000"
	delete(req, "amount")
	settle["network"] = "base"
	v1 := map[string]any{"x402Version": 1, "scheme": "exact", "network": "base", "payload": payload["payload"]}
	auth(v1)["value"] = "10001"
	_, err = parseMaps(t, settle, req, v1)
	wantBadRequest(t, err, "/paymentPayload/payload/authorization/value")
	auth(v1)["value"] = "10000"
	if _, err := parseMaps(t, settle, req, v1); err != nil {
		t.Fatalf("v1 value = maxAmountRequired: %v", err)
	}

	// A value that is not atomic units is malformed, not a mismatch.
	settle, req, payload = consistentDocs()
	auth(payload)["value"] = "1.5"
	_, err = parseMaps(t, settle, req, payload)
	wantBadRequest(t, err, "/paymentPayload/payload/authorization/value")
}
