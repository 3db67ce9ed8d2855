package httpserver_test

import "testing"

// TestRefusedOtherKindLeavesTheKeyFree: a request refused because the
// account recorded its payment as the other kind of record (409
// PAYMENT_ALREADY_RECORDED) writes nothing, its Idempotency-Key included,
// on both ingest endpoints: the key stays free for the request the client
// meant to send. POST /settlements already left it free; POST
// /v1/fiscal-events bound the key to the settlement that holds the payment
// before refusing, so every later request under that key, whatever its
// payment, was 409 IDEMPOTENCY_CONFLICT ("already used with a different
// request body") for a key no request had ever been answered with
// (README "Errors": the same Idempotency-Key with a different body is the
// conflict; draft-ietf-httpapi-idempotency-key-header, an error response is
// not the key's stored answer).
func TestRefusedOtherKindLeavesTheKeyFree(t *testing.T) {
	f := newFixture(t)
	settled := settlement(map[string]any{"txHash": txHash(950001)})
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settled)); r.status != 201 {
		t.Fatalf("settlement: %d %s", r.status, r.body)
	}
	ev := fiscalEventBody(map[string]any{"payment.txHash": txHash(951001)})
	if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, ev)); r.status != 201 {
		t.Fatalf("fiscal event: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		name, refusedPath string
		refused           map[string]any
		field, laterPath  string
		later             map[string]any
	}{
		{"fiscal event of a settled payment", "/v1/fiscal-events", fiscalEventBody(map[string]any{"payment.txHash": txHash(950001)}), "/payment/txHash",
			"/v1/fiscal-events", fiscalEventBody(map[string]any{"payment.txHash": txHash(951002)})},
		{"settlement of a fiscal event's payment", "/settlements", settlement(map[string]any{"txHash": txHash(951001)}), "/txHash",
			"/settlements", settlement(map[string]any{"txHash": txHash(950002)})},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := "refused-" + c.field
			wantProblem(t, f.do("POST", c.refusedPath, keyA, mustJSON(t, c.refused), "Idempotency-Key", key), 409, "PAYMENT_ALREADY_RECORDED", c.field)
			if r := f.do("POST", c.laterPath, keyA, mustJSON(t, c.later), "Idempotency-Key", key); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("a new request under the refused request's key: %d %.300s, want 201 (the key was never answered)", r.status, r.body)
			}
		})
	}
}
