package x402

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseEmptySchemePayload: the payment payload's scheme payload (the
// signed EIP-3009 authorization, Permit2 authorization or ERC-7710
// delegation) may be absent: examples/x402hook hands over a payload without
// it, and an SDK's hook may too. The settlement is then still the settle
// response's transaction, read from the chain, but nothing of an
// authorization is known: no transfer method, no nonce, and the payer is
// the settle response's. Whether the scheme payload is missing, null or an
// empty object, or the whole payment payload is absent, the documents say
// the same, so they parse to the same payment; and where the settle
// response does not name the payer either, each is refused the same way.
func TestParseEmptySchemePayload(t *testing.T) {
	settle, req, full := consistentDocs()
	delete(full, "resource")
	withPayload := func(v any, present bool) map[string]any {
		p := map[string]any{"x402Version": full["x402Version"], "accepted": full["accepted"]}
		if present {
			p["payload"] = v
		}
		return p
	}
	variants := []struct {
		name    string
		payload map[string]any
	}{
		{"no payment payload", nil},
		{"scheme payload missing", withPayload(nil, false)},
		{"scheme payload null", withPayload(nil, true)},
		{"scheme payload empty object", withPayload(map[string]any{}, true)},
		{"authorization null", withPayload(map[string]any{"authorization": nil}, true)},
		{"permit2Authorization null", withPayload(map[string]any{"permit2Authorization": nil}, true)},
	}
	want, err := parseMaps(t, settle, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.Method != "" || want.Nonce != "" || want.Payer != strings.ToLower(settle["payer"].(string)) {
		t.Fatalf("without a payment payload: %+v claims an authorization", want)
	}
	for _, v := range variants {
		got, err := parseMaps(t, settle, req, v.payload)
		if err != nil {
			t.Errorf("%s: %v", v.name, err)
			continue
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v (no payload)", v.name, got, want)
		}
	}
	noPayer := map[string]any{}
	for k, v := range settle {
		noPayer[k] = v
	}
	delete(noPayer, "payer")
	for _, v := range variants {
		_, err := parseMaps(t, noPayer, req, v.payload)
		wantBadRequest(t, err, "/settleResponse/payer")
	}
}

// TestParseEmptyPaymentPayloadDocument: a payment payload document that is
// an empty object carries no more than an absent one, so it is read as
// absent (as an empty string or JSON null is), not as "x402 version 0"; a
// payment payload that says something but not its x402Version is refused
// there, as incomplete, not as an unsupported version.
func TestParseEmptyPaymentPayloadDocument(t *testing.T) {
	settle, req, _ := consistentDocs()
	want, err := parseMaps(t, settle, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{`{}`, ` { } `, `"e30="`} { // e30= is base64 of {}
		got, _, err := Parse(Settlement{mustJSON(t, settle), mustJSON(t, req), []byte(doc)})
		if err != nil {
			t.Errorf("payment payload %s: %v", doc, err)
		} else if got != want {
			t.Errorf("payment payload %s: %+v, want %+v", doc, got, want)
		}
	}
	_, err = parseMaps(t, settle, req, map[string]any{"payload": map[string]any{}})
	wantBadRequest(t, err, "/paymentPayload/x402Version")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
