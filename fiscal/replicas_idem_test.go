package fiscal_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestReplicasSameKeyAtOnce: a client whose request timed out sends it
// again, with the same Idempotency-Key, and the load balancer gives the
// retry to the other replica while the first still runs. Whichever
// commits first creates the record; the other is a replay of the key
// (Outcome Replayed: 201 with Idempotent-Replayed, README "Walkthrough"),
// never a duplicate of the payment (200), with the same record. A review found the loser answering Existing when the winner
// committed between its look-up of the key and its look-up of the
// payment.
func TestReplicasSameKeyAtOnce(t *testing.T) {
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	engines := replicaEngines(t, fiscaltest.Config(t, start, fiscaltest.IrishSeller), 2)
	books := []*fiscal.Books{fiscaltest.Books(t, engines[0], 0), fiscaltest.Books(t, engines[1], 0)}
	const payments, lanes = 240, 4
	var wg sync.WaitGroup
	for lane := range lanes {
		wg.Go(func() {
			for n := lane; n < payments; n += lanes {
				req := fiscaltest.Request(100+n, "12.50", "DE", "2026-04-10T14:30:00Z")
				var res [2]*fiscal.SettleResult
				var errs [2]error
				var both sync.WaitGroup
				for r := range 2 {
					both.Go(func() { res[r], errs[r] = books[r].Settle(context.Background(), req, fmt.Sprintf("retry-%d", n)) })
				}
				both.Wait()
				if errs[0] != nil || errs[1] != nil {
					t.Errorf("payment %d: %v, %v", n, errs[0], errs[1])
					continue
				}
				got := [2]fiscal.Outcome{res[0].Outcome, res[1].Outcome}
				if got != [2]fiscal.Outcome{fiscal.Created, fiscal.Replayed} && got != [2]fiscal.Outcome{fiscal.Replayed, fiscal.Created} {
					t.Errorf("payment %d, one key on two replicas at once: outcomes %v, want one created and one replayed", n, got)
				}
				if res[0].Record.ID != res[1].Record.ID || !bytes.Equal(res[0].JSON, res[1].JSON) {
					t.Errorf("payment %d: the two answers differ: %s / %s", n, res[0].Record.ID, res[1].Record.ID)
				}
			}
		})
	}
	wg.Wait()
}
