package httpserver_test

import "testing"

// TestFiscalEventDuplicateWithOtherFactsIsAConflict: a fiscal event whose
// (network, txHash) this account already recorded as a fiscal event, but
// with another amount, payer or receiver, is 409 PAYMENT_CONFLICT and
// writes nothing (its Idempotency-Key included), as POST /settlements
// answers (README "Errors": "the (network, txHash) is recorded for this
// account with another amount, payer, receiver or asset than the request
// states; nothing is written"). It answered 200 with the old event, which
// hid the contradiction (a transaction backs one payment) and bound the
// key to that event.
func TestFiscalEventDuplicateWithOtherFactsIsAConflict(t *testing.T) {
	f := newFixture(t)
	tx := txHash(960001)
	if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": tx}))); r.status != 201 {
		t.Fatalf("fiscal event: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ name, member, value string }{
		{"amount", "payment.amountUsdc", "2.00"},
		{"payer", "payment.payerWallet", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"},
		{"receiver", "payment.receiverWallet", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := "other-facts-" + c.name
			body := fiscalEventBody(map[string]any{"payment.txHash": tx, c.member: c.value})
			wantProblem(t, f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, body), "Idempotency-Key", key), 409, "PAYMENT_CONFLICT", "/payment/txHash")
			wantProblem(t, f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, body)), 409, "PAYMENT_CONFLICT", "/payment/txHash")
			later := fiscalEventBody(map[string]any{"payment.txHash": txHash(961000 + len(c.name))})
			if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, later), "Idempotency-Key", key); r.status != 201 {
				t.Fatalf("a new event under the refused request's key: %d %.300s, want 201", r.status, r.body)
			}
		})
	}
	// The same payment again is still the existing event (200).
	if r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": tx}))); r.status != 200 {
		t.Fatalf("the same payment again: %d %.300s, want 200", r.status, r.body)
	}
}
