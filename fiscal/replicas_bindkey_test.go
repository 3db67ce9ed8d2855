package fiscal_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestReplicasConcurrentKeyBindings: a payment recorded on one replica is
// sent again, with a fresh Idempotency-Key each time, by 24 clients at
// once to the replicas (a client retrying a payment whose first answer it
// lost, under new keys). Each duplicate must answer the record (Existing),
// bound to its key, promptly: binding a key is one short transaction.
func TestReplicasConcurrentKeyBindings(t *testing.T) {
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, start, fiscaltest.IrishSeller)
	engines := replicaEngines(t, cfg, 2)
	b0, b1 := fiscaltest.Books(t, engines[0], 0), fiscaltest.Books(t, engines[1], 0)
	req := fiscaltest.Request(1, "12.50", "DE", "2026-04-10T14:30:00Z")
	first, err := b0.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	const clients = 24
	var wg sync.WaitGroup
	errs := make([]error, clients)
	took := make([]time.Duration, clients)
	ids := make([]string, clients)
	for i := range clients {
		b := b1
		if i%4 == 0 {
			b = b0
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			t0 := time.Now()
			res, err := b.Settle(ctx, req, fmt.Sprintf("retry-%d", i))
			took[i], errs[i] = time.Since(t0), err
			if err == nil {
				ids[i] = res.Record.ID
				if res.Outcome != fiscal.Existing {
					errs[i] = fmt.Errorf("outcome %v, want existing", res.Outcome)
				}
			}
		})
	}
	wg.Wait()
	slow := 0
	for i := range clients {
		if errs[i] != nil {
			t.Errorf("client %d: %v (after %v)", i, errs[i], took[i].Round(time.Millisecond))
		} else if ids[i] != first.Record.ID {
			t.Errorf("client %d: answered %s, recorded %s", i, ids[i], first.Record.ID)
		}
		if took[i] > 10*time.Second {
			slow++
		}
	}
	if slow > 0 {
		t.Errorf("%d of %d duplicates took over 10 s to answer", slow, clients)
	}
}
