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

// recheckNumber is the German VAT number the re-check race tests ask about;
// recheckBusy and recheckValid are the registry's answers about it.
const recheckNumber = "DE136695976"

var (
	recheckBusy  = vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()}
	recheckValid = vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-late", RequestDate: time.Now()}
)

// recheckRace settles a German sale with recheckNumber while the registry
// is busy (the record pending review, its number queued for a re-check
// every minute) and moves the clock past the first re-check: the engine,
// the books, the hooked registry, the record and a function that moves
// the clock on.
func recheckRace(t *testing.T) (*fiscal.Engine, *fiscal.Books, *fiscaltest.HookVIES, *fiscal.Record, func(time.Duration)) {
	t.Helper()
	var mu sync.Mutex
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, irishSeller)
	cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	fake := fiscaltest.NewHookVIES()
	fake.Set(recheckNumber, recheckBusy)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	req := request(1, "100.00", "DE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = recheckNumber
	res, err := b.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("status %s", res.Record.ReviewStatus)
	}
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	advance(2 * time.Minute)
	return e, b, fake, res.Record, advance
}

// TestRecheckAfterConcurrentResolution: a person resolves the record while
// the background re-check of its VAT number is waiting on the registry.
// The resolution dequeued the re-check; whatever the registry then answers,
// the re-check must neither put itself back in the queue nor revise the
// record the person resolved.
func TestRecheckAfterConcurrentResolution(t *testing.T) {
	for _, answer := range []struct {
		name string
		r    vies.Result
	}{{"still busy", recheckBusy}, {"valid", recheckValid}} {
		t.Run(answer.name, func(t *testing.T) {
			e, b, fake, rec, advance := recheckRace(t)
			ctx := context.Background()
			fake.Once(func() {
				if _, err := b.Resolve(ctx, rec.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, ""); err != nil {
					t.Errorf("resolve: %v", err)
				}
				fake.Set(recheckNumber, answer.r)
			})
			if _, err := e.RecheckNow(ctx); err != nil {
				t.Fatal(err)
			}
			if q, _ := e.Queues(); q.Rechecks != 0 {
				t.Errorf("%d re-checks queued after the resolution dequeued the only one", q.Rechecks)
			}
			advance(time.Hour)
			fake.Set(recheckNumber, recheckValid)
			if _, err := e.RecheckNow(ctx); err != nil {
				t.Fatal(err)
			}
			r, _, err := b.Record(ctx, rec.ID)
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
	e, b, fake, rec, _ := recheckRace(t)
	ctx := context.Background()
	fake.Set(recheckNumber, recheckValid)
	fake.Once(func() {
		// The other pass runs while this one waits on the registry.
		if _, err := e.RecheckNow(ctx); err != nil {
			t.Errorf("other pass: %v", err)
		}
	})
	if _, err := e.RecheckNow(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err := b.Record(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Revision != 2 || len(r.History) != 2 {
		t.Fatalf("two passes revised the record %d times (revision %d, %s %v)", len(r.History)-1, r.Revision, r.ReviewStatus, reasonCodes(r.ReviewReasons))
	}
}
