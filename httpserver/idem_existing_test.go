package httpserver_test

import (
	"fmt"
	"testing"
)

// TestIdempotentRetryOfAnExistingPayment: a request under an
// Idempotency-Key whose payment is already recorded is answered 200 with
// the existing record, and the key is bound to that answer; its retry, the
// same key and the same body, must get the same answer again (service
// spec, Idempotency 2: same key and same body return the original event).
// The binding was stored as fingerprint \x00 record id and read back by
// cutting at the first NUL byte, which a binary SHA-256 fingerprint itself
// holds about one time in eight: those retries were 409
// IDEMPOTENCY_CONFLICT, "already used with a different request body",
// for the very same body, on POST /settlements and POST /v1/fiscal-events.
// The inputs are fixed, so each run checks the same fingerprints, enough
// of them to meet several with a zero byte.
func TestIdempotentRetryOfAnExistingPayment(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 40; i++ {
		for _, c := range []struct{ path, name string }{{"/settlements", "settlement"}, {"/v1/fiscal-events", "fiscal-event"}} {
			var body []byte
			if c.path == "/settlements" {
				body = mustJSON(t, settlement(map[string]any{"txHash": txHash(940000 + i)}))
			} else {
				body = mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(941000 + i)}))
			}
			first := f.do("POST", c.path, keyA, body)
			if first.status != 201 {
				t.Fatalf("%s %d: %d %s", c.name, i, first.status, first.body)
			}
			id := first.json(t)["id"]
			key := fmt.Sprintf("retry-%s-%d", c.name, i)
			for try := 1; try <= 3; try++ {
				r := f.do("POST", c.path, keyA, body, "Idempotency-Key", key)
				if r.status != 200 || r.json(t)["id"] != id {
					t.Errorf("%s %d, request %d under its key: %d %.200s, want 200 with %v", c.name, i, try, r.status, r.body, id)
					break
				}
			}
		}
	}
}
