package httpserver_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestQueuedReplayIsMarked: the 202 that answers a request repeated under
// the Idempotency-Key of its entry, still queued, is a replay (README: "a
// replay: the chain is not asked"), and every replay carries
// Idempotent-Replayed: true (the header's contract in the OpenAPI
// document: "true when the answer replays an earlier request with the same
// Idempotency-Key and body"). The 202 replays answered without it, so a
// client could not tell its retry from a first queuing. The first 202, and
// a 202 under a key used for the first time, carry none.
func TestQueuedReplayIsMarked(t *testing.T) {
	node := fakechain.New(chainNow.Add(-72 * 3600e9))
	f := newChainFixture(t, node.Serve(t)) // the transaction is not on chain: only the queue could answer
	body := mustJSON(t, x402Body(fakechain.Hash("tx queued replay"), "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
		"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", 1_000_000, map[string]any{"consumerCountry": "DE"}))
	const async = "respond-async"
	steps := []struct {
		what, key, prefer string
		replayed          bool
	}{
		{"first queuing", "key-r", async, false},
		{"the same request again", "key-r", async, true},
		{"the same request, synchronous", "key-r", "", true},
		{"the same payment under a new key", "key-r2", async, false},
		{"the same payment without a key", "", async, false},
	}
	for _, s := range steps {
		r := f.do("POST", "/v1/x402/settlements", keyA, body, "Idempotency-Key", s.key, "Prefer", s.prefer)
		if r.status != 202 {
			t.Fatalf("%s: %d %s, want 202", s.what, r.status, r.body)
		}
		if got := r.header.Get("Idempotent-Replayed") == "true"; got != s.replayed {
			t.Errorf("%s: Idempotent-Replayed %q, want replayed=%v", s.what, r.header.Get("Idempotent-Replayed"), s.replayed)
		}
	}
}
