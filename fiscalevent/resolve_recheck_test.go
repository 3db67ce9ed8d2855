package fiscalevent_test

import (
	"context"
	"slices"
	"strings"
	"sync"
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
	fake, e, events, res := recheckedEvent(t)
	ctx, acct, number, now := context.Background(), fiscaltest.AccountID(0), recheckNumber, recheckNow
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

// TestFiscalEventRecheckAfterConcurrentResolution: the person resolves the
// event while the re-check waits on the registry, which then confirms the
// old number: the re-check must not revise the event the person resolved.
func TestFiscalEventRecheckAfterConcurrentResolution(t *testing.T) {
	fake, e, events, res := recheckedEvent(t)
	ctx, acct, number, now := context.Background(), fiscaltest.AccountID(0), recheckNumber, recheckNow
	fake.Once(func() {
		if _, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, ""); err != nil {
			t.Errorf("resolve: %v", err)
		}
		fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-late", RequestDate: now,
			Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	})
	n, err := e.RecheckNow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Regime != vat.RegimeOSSB2C || len(ev.History) != 2 {
		t.Fatalf("a stale re-check revised the resolved event: revision %d %s history %d", ev.Revision, ev.Determination.Regime, len(ev.History))
	}
	if n != 0 {
		t.Errorf("RecheckNow counted %d revised for the re-check the resolution overtook", n)
	}
	if q, _ := e.Queues(); q.Rechecks != 0 {
		t.Errorf("%d re-checks queued", q.Rechecks)
	}
}

// TestFiscalEventRecheckGivesUp: a registry that never answers within
// RecheckPolicy.GiveUpAfter leaves the event for a person, with a revision
// that says the registry never answered (fiscal.Recheck.Abandoned), as a
// settlement's does; the re-check is dequeued.
func TestFiscalEventRecheckGivesUp(t *testing.T) {
	const number = "DE136695976"
	fake := vies.NewFake()
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_UNAVAILABLE", RequestDate: time.Now()})
	var mu sync.Mutex
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Hour, GiveUpAfter: 72 * time.Hour}
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(1, number), "")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(73 * time.Hour)
	mu.Unlock()
	if n, err := e.RecheckNow(ctx); err != nil || n != 1 {
		t.Fatalf("give up: %d %v", n, err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Status != vat.StatusManualReview {
		t.Fatalf("after giving up: revision %d %s", ev.Revision, ev.Determination.Status)
	}
	said := false
	for _, r := range ev.Determination.Reasons {
		said = said || r.Code == vat.ReasonVATNumberUnverified && strings.Contains(r.Detail, "could not confirm") && strings.Contains(r.Detail, "review by a person")
	}
	if !said {
		t.Errorf("the revision does not say the registry never answered: %+v", ev.Determination.Reasons)
	}
	if q, _ := e.Queues(); q.Rechecks != 0 {
		t.Errorf("%d re-checks still queued after giving up", q.Rechecks)
	}
}

// TestFiscalEventResolutionKeepsEvidence: facts a resolution gives replace
// the event's, and facts a later resolution leaves out keep them
// (fiscal.Resolution). Location evidence a person gave is recorded on the
// event, and a second resolution that only states the buyer is a consumer
// is decided on it, not on the country alone.
func TestFiscalEventResolutionKeepsEvidence(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, b2bEvent(2, "DE136695976"), "")
	if err != nil {
		t.Fatal(err)
	}
	evidence := []vat.Evidence{
		{Kind: vat.EvidenceIPAddress, Country: "DE", Source: vat.EvidenceSourceMerchant},
		{Kind: vat.EvidenceBillingAddress, Country: "FR", Source: vat.EvidenceSourceCustomer},
	}
	first, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Evidence: evidence}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if first.Event.Determination.Status != vat.StatusManualReview || len(first.Event.Buyer.Evidence) != 2 {
		t.Fatalf("first resolution: %s, evidence on the event %v", first.Event.Determination.Status, first.Event.Buyer.Evidence)
	}
	second, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	contradictory := slices.ContainsFunc(second.Event.Determination.Reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonLocationEvidenceContradictory })
	if second.Event.Determination.Status != vat.StatusManualReview || !contradictory {
		t.Fatalf("the second resolution dropped the evidence of the first: %s %s %v", second.Event.Determination.Status, second.Event.Determination.Regime, second.Event.Determination.Reasons)
	}
}

// TestFiscalEventRestatingCountryKeepsPostalCode: as for a settlement,
// restating the event's own country keeps its postal code (the Canary
// Islands, outside the EU VAT territory, which this account reviews), so
// the consumer there is not charged mainland Spain's VAT.
func TestFiscalEventRestatingCountryKeepsPostalCode(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.ReviewSpecialTerritories = true
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
	events := fiscalevent.New(e)
	ctx := context.Background()
	acct := fiscaltest.AccountID(0)
	req := request(3, "100.00", seller.LegalName, "IE", "ES")
	req.Buyer.PostalCode = "35001"
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Determination.Status != vat.StatusManualReview {
		t.Fatalf("before: %s %v", res.Event.Determination.Status, res.Event.Determination.Reasons)
	}
	got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "ES", Name: "Ana"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev := got.Event; ev.Buyer.PostalCode != "35001" || ev.Determination.Regime == vat.RegimeOSSB2C {
		t.Fatalf("restating ES dropped the postal code: %q %s %s", ev.Buyer.PostalCode, ev.Determination.Regime, ev.Determination.TaxingCountry)
	}
}

// recheckNumber is the German business's VAT number of the re-check
// tests; recheckNow their clock.
const recheckNumber = "DE136695976"

var recheckNow = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// recheckedEvent records a fiscal event of a German business whose VAT
// number (recheckNumber) the busy registry could not confirm, queued for a
// re-check at once: the registry, the engine, the events service and the
// recorded event.
func recheckedEvent(t *testing.T) (*fiscaltest.HookVIES, *fiscal.Engine, *fiscalevent.Service, *fiscalevent.Result) {
	t.Helper()
	fake := fiscaltest.NewHookVIES()
	fake.Set(recheckNumber, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	cfg := fiscaltest.Config(t, recheckNow, fiscaltest.IrishSeller)
	cfg.VIES = fake
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond}
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	res, err := events.Record(context.Background(), fiscaltest.AccountID(0), b2bEvent(1, recheckNumber), "")
	if err != nil {
		t.Fatal(err)
	}
	return fake, e, events, res
}
