package rates_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

// fiscalEvent is fiscal event n of the account's own (Irish) seller to a
// consumer in buyerCountry at timestamp.
func fiscalEvent(n int, amount, buyerCountry, timestamp string) fiscalevent.Request {
	r := fiscaltest.Request(n, amount, "", timestamp)
	return fiscalevent.Request{
		Payment: fiscalevent.Payment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp,
			PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
		Seller: parties.Seller{LegalName: fiscaltest.IrishSeller.LegalName, Country: "IE", VATNumber: fiscaltest.IrishSeller.VATNumber},
		Buyer:  parties.Buyer{Country: buyerCountry, BusinessStatus: "B2C"},
		Supply: parties.Supply{Kind: "digital_service"},
	}
}

func invariantHolds(ev *fiscalevent.Event, code string) bool {
	for _, inv := range ev.Production.Invariants {
		if inv.Code == code {
			return inv.Holds
		}
	}
	return false
}

// TestFiscalEventDecidedWhenRatePublished: a fiscal event recorded before
// the ECB published its day's rate has no EUR amounts, receipt or invoice
// (fx_rate_available does not hold). It waits for the rate as a settlement
// does: it is queued, and once the rate is published rates.Retry decides it
// again as a new revision (cause fx_rate_published) with its EUR amounts,
// receipt and invoice, and leaves the queue.
func TestFiscalEventDecidedWhenRatePublished(t *testing.T) {
	ecb := newECBServer(t)
	now := time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC)
	e, svc := engineWithRates(t, t.TempDir(), now, ecb)
	defer e.Close()
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, fiscalEvent(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if ev := res.Event; invariantHolds(ev, fiscalevent.InvariantFXRateAvailable) || ev.Invoice != nil || ev.FX.GrossEUR != "" {
		t.Fatalf("before publication: invariants %+v, gross %q", ev.Production.Invariants, ev.FX.GrossEUR)
	}
	if rep := svc.Report(); rep.Waiting != 1 {
		t.Fatalf("waiting %d before publication, want the fiscal event queued", rep.Waiting)
	}

	ecb.publish("2026-04-14", "1.172513")
	waitFor(t, "the 14 April publication", func() bool { return svc.Report().Newest == "2026-04-14" })
	if _, err := rates.Retry(ctx, e); err != nil {
		t.Fatal(err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || !ev.Production.Receipt || ev.Invoice == nil || ev.Receipt == nil || ev.FX.USDPerEUR == nil || ev.FX.USDPerEUR.Raw != "1.172513" {
		t.Fatalf("after publication: revision %d, invariants %+v, fx %+v", ev.Revision, ev.Production.Invariants, ev.FX.USDPerEUR)
	}
	if h := ev.History[1]; h.Cause != fiscal.CauseRatePublished || h.EventType != fiscalevent.EventRevised || h.ReviewStatus != fiscal.StatusProcessed {
		t.Errorf("revision %+v", h)
	}
	if _, _, err := events.Invoice(ctx, acct, ev.ID); err != nil {
		t.Errorf("invoice: %v", err)
	}
	if rep := svc.Report(); rep.Waiting != 0 {
		t.Errorf("waiting %d after the revision, want 0", rep.Waiting)
	}
}

// TestFiscalEventManualDeterminationWaitsForRate: a person's determination
// of a fiscal event that waits for its ECB rate would be dropped by the
// revision made once the rate is out (it decides by the rules again), so
// it is refused naming /determination, as a settlement's is, and nothing
// is written.
func TestFiscalEventManualDeterminationWaitsForRate(t *testing.T) {
	ecb := newECBServer(t)
	e, _ := engineWithRates(t, t.TempDir(), time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC), ecb)
	defer e.Close()
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, fiscalEvent(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "the German standard rate applies"},
		ResolvedBy:    "tax-desk-4",
	}, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/determination" {
		if got != nil {
			t.Fatalf("accepted while the rate is missing: revision %d %s", got.Event.Revision, got.Event.Determination.Regime)
		}
		t.Fatalf("manual determination while the rate is missing: %v, want BAD_REQUEST at /determination", err)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("a refused resolution wrote %d entries", e.Ledger().Size()-size)
	}
}

// TestFiscalEventWaitsForNationalRate: a Polish seller's fiscal event to a
// Polish consumer must state its VAT in PLN too (Art. 230 Directive
// 2006/112/EC); while the zloty rate is missing its invoice cannot be
// issued (invoice_issuable fails). It waits for that rate as a settlement
// does, and gets its invoice in a revision once the rate is published.
func TestFiscalEventWaitsForNationalRate(t *testing.T) {
	ecb := newECBServer(t)
	seller := polishSeller(t)
	e, svc := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC), ecb, seller)
	defer e.Close()
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := fiscalEvent(1, "123.00", "PL", "2026-04-14T10:00:00Z")
	req.Seller = parties.Seller{LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber}
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev := res.Event; !invariantHolds(ev, fiscalevent.InvariantFXRateAvailable) || ev.Invoice != nil || ev.Production.Receipt {
		t.Fatalf("before the zloty: invariants %+v", ev.Production.Invariants)
	}
	if rep := svc.Report(); rep.Waiting != 1 {
		t.Fatalf("waiting %d before the zloty, want the fiscal event queued", rep.Waiting)
	}
	emb, _ := fx.Embedded()
	usd13, _ := emb.Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	ecb.publishRates("2026-04-13", "USD", usd13.Raw, "PLN", "4.2615")
	waitFor(t, "the zloty of 13 April", func() bool {
		ev, _, err := events.Get(ctx, acct, res.Event.ID)
		return err == nil && ev.Revision == 2
	})
	ev, _, _ := events.Get(ctx, acct, res.Event.ID)
	if !ev.Production.Receipt || ev.Invoice == nil || ev.FX.National == nil || ev.History[1].Cause != fiscal.CauseRatePublished {
		t.Fatalf("after the zloty: invariants %+v national %+v history %+v", ev.Production.Invariants, ev.FX.National, ev.History)
	}
	waitFor(t, "the queue to empty", func() bool { return svc.Report().Waiting == 0 })
}

// TestFiscalEventRateRetryKeepsEventsProfile: a fiscal event of the
// account's own sale waits for its ECB rate; before the rate is published
// the operator changes the seller's profile (renamed, its Union OSS
// registration stated from 1 May only). The revision made once the rate is
// out decides the April sale under the profile the event was recorded
// with, as a resolution does: a review found the later profile deciding it
// (seller_not_registered, no invoice) and naming the renamed seller.
func TestFiscalEventRateRetryKeepsEventsProfile(t *testing.T) {
	ecb := newECBServer(t)
	seller := fiscaltest.IrishOSSSeller()
	e, svc := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 15, 0, 0, 0, time.UTC), ecb, seller)
	defer e.Close()
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	res, err := events.Record(ctx, acct, fiscalEvent(1, "11.90", "DE", "2026-04-14T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if invariantHolds(res.Event, fiscalevent.InvariantFXRateAvailable) {
		t.Fatal("the rate was already there")
	}
	later := seller
	later.LegalName, later.LegalID = "Renamed Digital Holdings Ltd", "IE-CRO-999999"
	later.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-05-01"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(later)); err != nil {
		t.Fatal(err)
	}
	ecb.publish("2026-04-14", "1.172513")
	waitFor(t, "the 14 April publication", func() bool { return svc.Report().Newest == "2026-04-14" })
	if _, err := rates.Retry(ctx, e); err != nil {
		t.Fatal(err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Status != vat.StatusDetermined || ev.Invoice == nil {
		t.Fatalf("after publication: revision %d %s %v invoice %v; want the sale decided under the profile it was recorded with",
			ev.Revision, ev.Determination.Status, ev.Determination.Reasons, ev.Invoice)
	}
	xml, _, err := events.Invoice(ctx, acct, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(xml), seller.LegalName) || strings.Contains(string(xml), later.LegalName) {
		t.Errorf("the revision's invoice does not name the seller the event was recorded with")
	}
}

// TestFiscalEventWaitingCountedOnce: the fiscal event of a small Polish
// seller's sale to a German consumer is taxed in Poland (Art. 59c(1)
// Directive 2006/112/EC, within the EUR 10,000 threshold) and its VAT must
// be stated in PLN (Art. 230); while the zloty rate is missing its invoice
// cannot be issued and the event waits. A supply counts toward the Art.
// 59c total exactly once, whatever its number of revisions, and, as for a
// settlement (TestWaitingRecordCountedOnce), when its final state is
// recorded: nothing while it waits, its counted value once the revision
// made on the zloty's publication issues its invoice. A review found the
// waiting state and the revision each adding the value.
func TestFiscalEventWaitingCountedOnce(t *testing.T) {
	ecb := newECBServer(t)
	seller := polishSeller(t)
	seller.OverThreshold = false
	e, svc := engineOf(t, t.TempDir(), time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC), ecb, seller)
	defer e.Close()
	events := fiscalevent.New(e)
	books := fiscaltest.Books(t, e, 0)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := fiscalEvent(1, "1230.00", "DE", "2026-04-14T10:00:00Z")
	req.Seller = parties.Seller{LegalName: seller.LegalName, Country: seller.Country, VATNumber: seller.VATNumber}
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev := res.Event; ev.Determination.TaxingCountry != "PL" || ev.Determination.Threshold == nil || invariantHolds(ev, fiscalevent.InvariantInvoiceIssuable) {
		t.Fatalf("setup: taxed in %s, threshold %+v, invariants %+v", ev.Determination.TaxingCountry, ev.Determination.Threshold, ev.Production.Invariants)
	}
	if waiting, err := books.Totals(ctx); err != nil || len(waiting) != 0 {
		t.Fatalf("totals while the event waits: %+v %v, want none (a settlement's waiting state counts nothing)", waiting, err)
	}
	emb, _ := fx.Embedded()
	usd13, _ := emb.Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), fx.ForDayOrPrevious)
	ecb.publishRates("2026-04-13", "USD", usd13.Raw, "PLN", "4.2615")
	var ev *fiscalevent.Event
	waitFor(t, "the revision", func() bool {
		ev, _, err = events.Get(ctx, acct, res.Event.ID)
		return err == nil && ev.Revision == 2
	})
	waitFor(t, "the queue to empty", func() bool { return svc.Report().Waiting == 0 })
	th := ev.Determination.Threshold
	if !ev.Production.Receipt || th == nil || th.Counted == nil {
		t.Fatalf("after the zloty: invariants %+v threshold %+v", ev.Production.Invariants, th)
	}
	after, err := books.Totals(ctx)
	if err != nil || len(after) != 1 || after[0].CrossBorderEUR != th.Counted.String() {
		t.Fatalf("totals after the revision %+v (%v), want 2026 at the event's value %s, counted once", after, err, th.Counted)
	}
}
