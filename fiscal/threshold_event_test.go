package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestThresholdEventAfterCancelledCaller: the sale that takes the
// Art. 59c total over EUR 10,000 is committed while its caller's context
// ends after the committer took the append (an HTTP client gone). Its
// account.threshold_crossed event is appended all the same: it used to be
// appended with that ended context, failed, and stayed queued in
// threshold-due until a restart or another crossing (a review found it).
func TestThresholdEventAfterCancelledCaller(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	b := fiscaltest.Books(t, e, 0)
	for i := range 2 {
		if _, err := b.Settle(context.Background(), fiscaltest.Request(i, "6000", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := fiscaltest.Request(2, "6000", "DE", "2026-04-10T14:30:00Z").Payment(e.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.SettlePayment(ctx, p, fiscal.Verification{}, func(d *fiscal.Draft) {
		d.ClaimPayment("", p.Fingerprint())
		// The caller goes away once the committer has taken the append.
		d.OnCommit(nil, func(*ledger.Hook) error { cancel(); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if th := res.Record.Classification.Threshold; th == nil || !th.Crossed {
		t.Fatalf("the third sale does not cross: %+v", th)
	}
	if evs := thresholdEvents(t, e); len(evs) != 1 {
		t.Errorf("the crossing is committed (log index %d), but %d account.threshold_crossed events are in the outbox", res.Record.Ledger.Index, len(evs))
	}
}
