package rates_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

const windowNumber = "DE136695976"

// windowEngine is an engine whose clock starts at sale (setNow moves it),
// whose registry cannot confirm windowNumber, and whose rates come from
// the local ECB feed returned.
func windowEngine(t *testing.T, sale time.Time) (*fiscal.Engine, *rates.Service, *ecbServer, func(time.Time)) {
	t.Helper()
	fake := vies.NewFake()
	fake.Set(windowNumber, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	var mu sync.Mutex
	now := sale
	base, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	live := fx.NewLiveTable(base)
	cfg := fiscaltest.Config(t, sale, fiscaltest.IrishSeller)
	cfg.FX, cfg.VIES = live, fake
	cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1, BaseDelay: time.Minute, MaxDelay: time.Minute}
	e := fiscaltest.Engine(t, cfg)
	ecb := newECBServer(t)
	svc, err := rates.New(e, live, rates.Options{Feeds: ecb.feeds(), Client: ecb.srv.Client(), Logger: fiscaltest.Logger(),
		RetryMin: 5 * time.Millisecond, RetryMax: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e, svc, ecb, func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
}

// TestRetryKeepsRecheckWindow: a business sale whose VAT number the
// registry could not confirm, made before the ECB published the day's
// rate, waits for both. The registry is asked again for 72 hours from the
// sale (RecheckPolicy.GiveUpAfter). The rate published two days later
// revises the record, but must not restart that window: 73 hours after
// the sale, with the registry still unavailable, the re-check gives up and
// leaves the record to a person, as it would have without the rate's
// revision.
func TestRetryKeepsRecheckWindow(t *testing.T) {
	sale := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	e, svc, ecb, setNow := windowEngine(t, sale)
	books := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(1, "100.00", "DE", "2026-04-14T14:30:00Z")
	req.ConsumerVATNumber = windowNumber
	req.ConsumerName = "Beispiel GmbH"
	req.ConsumerAddress = &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}
	r := settleRecord(t, books, req)
	if got := reasonCodes(r); !slices.Contains(got, vat.ReasonVATNumberUnverified) || !slices.Contains(got, fiscal.ReasonFXRateUnavailable) {
		t.Fatalf("sale: %s %v", r.ReviewStatus, got)
	}

	// Two days later the rate is published; the registry is still busy.
	setNow(sale.Add(48 * time.Hour))
	ecb.publish("2026-04-14", "1.172513")
	var err error
	waitFor(t, "the revision made with the published rate", func() bool {
		r, _, err = books.Record(ctx, r.ID)
		return err == nil && r.Revision == 2
	})
	if got := reasonCodes(r); !slices.Contains(got, vat.ReasonVATNumberUnverified) || slices.Contains(got, fiscal.ReasonFXRateUnavailable) {
		t.Fatalf("after the rate: %s %v", r.ReviewStatus, got)
	}
	waitFor(t, "the rate queue to empty", func() bool { return svc.Report().Waiting == 0 })
	if q, _ := e.Queues(); q.Rechecks != 1 {
		t.Fatalf("%d re-checks queued after the rate's revision, want 1", q.Rechecks)
	}

	// 73 hours after the sale: the registry never answered in the window.
	setNow(sale.Add(73 * time.Hour))
	if _, err := e.RecheckNow(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err = books.Record(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := e.Queues(); r.Revision != 3 || r.History[2].Cause != fiscal.CauseRegistryRecheck || q.Rechecks != 0 {
		t.Fatalf("73 h after the sale: revision %d, %d re-checks still queued; the rate's revision restarted the registry's 72 h window", r.Revision, q.Rechecks)
	}
}

// TestFiscalEventRetryKeepsRecheckWindow: the same for a fiscal event.
func TestFiscalEventRetryKeepsRecheckWindow(t *testing.T) {
	sale := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	e, svc, ecb, setNow := windowEngine(t, sale)
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := fiscalEvent(1, "100.00", "DE", "2026-04-14T14:30:00Z")
	req.Buyer = parties.Buyer{Country: "DE", BusinessStatus: "B2B", VATNumber: windowNumber, Name: "Beispiel GmbH"}
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := e.Queues(); q.Rechecks != 1 || q.WaitingForRates != 1 {
		t.Fatalf("queues after the event: %+v", q)
	}
	setNow(sale.Add(48 * time.Hour))
	ecb.publish("2026-04-14", "1.172513")
	waitFor(t, "the revision made with the published rate", func() bool {
		ev, _, err := events.Get(ctx, acct, res.Event.ID)
		return err == nil && ev.Revision == 2
	})
	waitFor(t, "the rate queue to empty", func() bool { return svc.Report().Waiting == 0 })
	setNow(sale.Add(73 * time.Hour))
	if _, err := e.RecheckNow(ctx); err != nil {
		t.Fatal(err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := e.Queues(); ev.Revision != 3 || ev.History[2].Cause != fiscal.CauseRegistryRecheck || q.Rechecks != 0 {
		t.Fatalf("73 h after the event: revision %d, %d re-checks still queued; the rate's revision restarted the registry's 72 h window", ev.Revision, q.Rechecks)
	}
}
