package x402

import (
	"encoding/json"
	"math/big"
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

// TestParseCopiesOfRequirementsAgree: the payload's "accepted" (v2) is the
// requirements the client chose and signed for, the v1 payload names its
// scheme, and the settle response may state the amount settled. Where the
// requirements are also given, each copy must be the same payment: same
// scheme (exact), asset, payTo and amount (the x402 Go SDK facilitators
// refuse a payload whose scheme or network is not the requirements'; the
// exact scheme settles exactly the required amount). A disagreeing copy is
// refused where it disagrees, before any chain is asked.
func TestParseCopiesOfRequirementsAgree(t *testing.T) {
	accepted := func(p map[string]any) map[string]any { return p["accepted"].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(settle, req, payload map[string]any) map[string]any // returns the payload to send
		field  string
		kind   Kind
	}{
		{"accepted scheme upto", func(_, _, p map[string]any) map[string]any {
			accepted(p)["scheme"] = "upto"
			return p
		}, "/paymentPayload/accepted/scheme", BadRequest},
		{"accepted another payTo", func(_, _, p map[string]any) map[string]any {
			accepted(p)["payTo"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
			return p
		}, "/paymentPayload/accepted/payTo", BadRequest},
		{"accepted another asset", func(_, _, p map[string]any) map[string]any {
			accepted(p)["asset"] = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
			return p
		}, "/paymentPayload/accepted/asset", BadRequest},
		{"accepted another amount", func(_, _, p map[string]any) map[string]any {
			accepted(p)["amount"] = "15000000"
			return p
		}, "/paymentPayload/accepted/amount", BadRequest},
		{"settle response states another amount", func(s, _, p map[string]any) map[string]any {
			s["amount"] = "1"
			return p
		}, "/settleResponse/amount", BadRequest},
		{"settle response states another amount, no payload", func(s, _, _ map[string]any) map[string]any {
			s["amount"] = "1"
			return nil
		}, "/settleResponse/amount", BadRequest},
		{"v1 payload of another scheme", func(s, r, p map[string]any) map[string]any {
			r["network"], r["maxAmountRequired"] = "base", r["amount"]
			delete(r, "amount")
			s["network"] = "base"
			return map[string]any{"x402Version": 1, "scheme": "upto", "network": "base", "payload": p["payload"]}
		}, "/paymentPayload/scheme", BadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			settle, req, payload := consistentDocs()
			payload = c.mutate(settle, req, payload)
			_, err := parseMaps(t, settle, req, payload)
			e, ok := err.(*Error)
			if !ok || e.Kind != c.kind || e.Field != c.field {
				t.Fatalf("error %v, want %s at %s", err, c.kind, c.field)
			}
		})
	}

	// Copies that agree, in another spelling, are the same payment.
	settle, req, payload := consistentDocs()
	accepted(payload)["payTo"] = strings.ToLower(accepted(payload)["payTo"].(string))
	accepted(payload)["asset"] = strings.ToLower(accepted(payload)["asset"].(string))
	settle["amount"] = "1500000"
	p, err := parseMaps(t, settle, req, payload)
	if err != nil || p.AmountAtomic != "1500000" {
		t.Fatalf("agreeing copies: %+v, %v", p, err)
	}
	// Without separate requirements, "accepted" is the requirements.
	p, err = parseMaps(t, settle, nil, payload)
	if err != nil || p.AmountAtomic != "1500000" {
		t.Fatalf("accepted as requirements: %+v, %v", p, err)
	}
}

// TestParsePermit2MatchesRequirements: with the Permit2 method the payer
// signs permitted {token, amount} and witness.to, and the exact scheme
// requires token = asset, amount = the required amount and witness.to =
// payTo (scheme_exact_evm.md §2; the x402 Go SDK facilitator refuses a
// token, amount or recipient mismatch). A permit that names another
// token, amount or payee describes another payment.
func TestParsePermit2MatchesRequirements(t *testing.T) {
	permit2 := func() (settle, req, payload map[string]any) {
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
	perm := func(p map[string]any) map[string]any {
		return p["payload"].(map[string]any)["permit2Authorization"].(map[string]any)
	}
	settle, req, payload := permit2()
	p, err := parseMaps(t, settle, req, payload)
	if err != nil || p.Method != "permit2" {
		t.Fatalf("consistent permit2 documents: %+v, %v", p, err)
	}
	const ptr = "/paymentPayload/payload/permit2Authorization"
	for _, c := range []struct {
		name   string
		mutate func(m map[string]any)
		field  string
	}{
		{"another payee", func(m map[string]any) {
			m["witness"].(map[string]any)["to"] = "0x90f79bf6eb2c4f870365e785982e1f101e93b906"
		}, ptr + "/witness/to"},
		{"another amount", func(m map[string]any) { m["permitted"].(map[string]any)["amount"] = "1" }, ptr + "/permitted/amount"},
		{"another token", func(m map[string]any) {
			m["permitted"].(map[string]any)["token"] = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
		}, ptr + "/permitted/token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			settle, req, payload := permit2()
			c.mutate(perm(payload))
			_, err := parseMaps(t, settle, req, payload)
			wantBadRequest(t, err, c.field)
		})
	}
}

// TestAtomicToUSDCNegative: a negative number of atomic units (a refund or
// an adjustment as a delta) renders with its sign once, in front: QuoRem
// truncates towards zero, so the remainder carries the sign too, and
// -500000 used to render as "0.-5" (the sign lost from the integer part)
// and -1500000 as "-1.-5".
func TestAtomicToUSDCNegative(t *testing.T) {
	for atomic, want := range map[int64]string{
		-500000:  "-0.5",
		-1500000: "-1.5",
		-1:       "-0.000001",
		-2000000: "-2",
		0:        "0",
	} {
		if got := AtomicToUSDC(big.NewInt(atomic)); got != want {
			t.Errorf("AtomicToUSDC(%d) = %q, want %q", atomic, got, want)
		}
	}
}
