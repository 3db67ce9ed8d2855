package fiscal_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// hookChecker is a registry that runs a hook (once) while it is asked, as a
// person's resolution may commit while a re-check waits on the registry.
type hookChecker struct {
	*vies.Fake
	mu   sync.Mutex
	hook func()
}

func (h *hookChecker) Check(ctx context.Context, number string) vies.Result {
	h.mu.Lock()
	hook := h.hook
	h.hook = nil
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	return h.Fake.Check(ctx, number)
}

// TestRecheckAfterConcurrentResolution: a person resolves the record while
// the background re-check of its VAT number is waiting on the registry.
// The resolution dequeued the re-check; whatever the registry then answers,
// the re-check must neither put itself back in the queue nor revise the
// record the person resolved.
func TestRecheckAfterConcurrentResolution(t *testing.T) {
	const number = "DE136695976"
	busy := vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()}
	valid := vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-late", RequestDate: time.Now()}
	for _, answer := range []struct {
		name string
		r    vies.Result
	}{{"still busy", busy}, {"valid", valid}} {
		t.Run(answer.name, func(t *testing.T) {
			var mu sync.Mutex
			now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
			cfg := fiscaltest.Config(t, now, irishSeller)
			cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			fake := &hookChecker{Fake: vies.NewFake()}
			fake.Set(number, busy)
			cfg.VIES = fake
			cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
			e := fiscaltest.Engine(t, cfg)
			b := fiscaltest.Books(t, e, 0)
			ctx := context.Background()
			req := request(1, "100.00", "DE", "2026-04-10T14:30:00Z")
			req.ConsumerVATNumber = number
			res, err := b.Settle(ctx, req, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Record.ReviewStatus != fiscal.StatusPendingReview {
				t.Fatalf("status %s", res.Record.ReviewStatus)
			}
			mu.Lock()
			now = now.Add(2 * time.Minute)
			mu.Unlock()
			fake.mu.Lock()
			fake.hook = func() {
				if _, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, ""); err != nil {
					t.Errorf("resolve: %v", err)
				}
				fake.Set(number, answer.r)
			}
			fake.mu.Unlock()
			if _, err := e.RecheckNow(ctx); err != nil {
				t.Fatal(err)
			}
			if q, _ := e.Queues(); q.Rechecks != 0 {
				t.Errorf("%d re-checks queued after the resolution dequeued the only one", q.Rechecks)
			}
			mu.Lock()
			now = now.Add(time.Hour)
			mu.Unlock()
			fake.Set(number, valid)
			if _, err := e.RecheckNow(ctx); err != nil {
				t.Fatal(err)
			}
			r, _, err := b.Record(ctx, res.Record.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Revision != 2 || len(r.History) != 2 || r.History[1].Cause != fiscal.CauseResolution || r.Classification.Regime != vat.RegimeOSSB2C {
				t.Fatalf("the resolved record was revised by a stale re-check: revision %d regime %s history %d", r.Revision, r.Classification.Regime, len(r.History))
			}
		})
	}
}

// TestRecheckTwoPassesReviseOnce: two passes of the re-check (the loop and
// an operator's RecheckNow) ask about the same queued number at once; the
// registry confirms it, but the revision stays pending for the customer's
// address (Art. 226(5)). The record gets exactly one revision.
func TestRecheckTwoPassesReviseOnce(t *testing.T) {
	const number = "DE136695976"
	busy := vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()}
	valid := vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-late", RequestDate: time.Now()}
	var mu sync.Mutex
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, irishSeller)
	cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	fake := &hookChecker{Fake: vies.NewFake()}
	fake.Set(number, busy)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := request(1, "100.00", "DE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = number
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	fake.Set(number, valid)
	fake.mu.Lock()
	fake.hook = func() {
		// The other pass runs while this one waits on the registry.
		if _, err := e.RecheckNow(ctx); err != nil {
			t.Errorf("other pass: %v", err)
		}
	}
	fake.mu.Unlock()
	if _, err := e.RecheckNow(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err := b.Record(ctx, res.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Revision != 2 || len(r.History) != 2 {
		t.Fatalf("two passes revised the record %d times (revision %d, %s %v)", len(r.History)-1, r.Revision, r.ReviewStatus, reasonCodes(r.ReviewReasons))
	}
}
