package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestFiscalEventResolveDequeuesRecheck: a person resolves an event whose
// VAT number the registry could not confirm (the buyer is a consumer after
// all). The resolution settles the number, so the queued re-check of it
// must go with it: a later answer of the registry about the old number must
// not revise the event the person resolved.
func TestFiscalEventResolveDequeuesRecheck(t *testing.T) {
	fake := vies.NewFake()
	const number = "DE136695976"
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond}
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(1, number), "")
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := e.Queues(); q.Rechecks != 1 {
		t.Fatalf("%d re-checks queued, want 1", q.Rechecks)
	}
	got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Event.Revision != 2 || got.Event.Determination.Regime != vat.RegimeOSSB2C {
		t.Fatalf("resolved: revision %d %s", got.Event.Revision, got.Event.Determination.Regime)
	}
	if q, _ := e.Queues(); q.Rechecks != 0 {
		t.Errorf("%d re-checks still queued after the resolution settled the VAT number", q.Rechecks)
	}
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-late", RequestDate: now,
		Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	if n, err := e.RecheckNow(ctx); err != nil || n != 0 {
		t.Errorf("RecheckNow after the resolution: %d revised, %v", n, err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Regime != vat.RegimeOSSB2C || len(ev.History) != 2 {
		t.Fatalf("the re-check of the old number revised the resolved event: revision %d %s history %d", ev.Revision, ev.Determination.Regime, len(ev.History))
	}
}
