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

// TestRevisedEventLeavesTotals: only cross-border supplies to consumers
// count toward the Art. 59c(1)(b) threshold (Directive 2006/112/EC). A
// small Polish seller's fiscal events: a consumer sale to Germany, taxed
// in Poland, whose invoice waits for the zloty rate (Art. 230), so the
// event is pending; a sale to a German business (reverse charge) and one
// to a Polish consumer (domestic). The business and domestic sales never
// count; the pending consumer sale counts only once its final state is
// recorded (as a settlement's, fiscal Issue). A person then finds the
// customer is a business (its VAT number, confirmed): the revision is
// reverse charge and the total stays without the sale. A review found the
// pending consumer sale counted when recorded and left in the total after
// its revision to B2B.
func TestRevisedEventLeavesTotals(t *testing.T) {
	seller := fiscaltest.LawSellerOf(t, "pl-full")
	seller.OverThreshold = false
	now := time.Date(2026, 4, 14, 17, 30, 0, 0, time.UTC)
	fake := vies.NewFake()
	const number = "DE136695976"
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976",
		Name: "Beispiel GmbH", Address: "Musterstraße 1, 10115 Berlin", RequestDate: now})
	cfg := fiscaltest.Config(t, now, seller) // the embedded rates: no zloty
	cfg.VIES = fake
	e := fiscaltest.Engine(t, cfg)
	events, books := fiscalevent.New(e), fiscaltest.Books(t, e, 0)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	sale := func(n int, country, vatNumber string) *fiscalevent.Event {
		t.Helper()
		req := request(n, "1230.00", seller.LegalName, "PL", country)
		req.Seller.VATNumber, req.Payment.Timestamp = seller.VATNumber, "2026-04-14T10:00:00Z"
		if vatNumber != "" {
			req.Buyer.BusinessStatus, req.Buyer.VATNumber = "B2B", vatNumber
		}
		res, err := events.Record(ctx, acct, req, "")
		if err != nil {
			t.Fatal(err)
		}
		return res.Event
	}
	noTotals := func(when string) {
		t.Helper()
		if got, err := books.Totals(ctx); err != nil || len(got) != 0 {
			t.Errorf("%s: totals %+v (%v), want none", when, got, err)
		}
	}
	if d := sale(1, "DE", number).Determination; d.Regime != vat.RegimeReverseChargeB2B {
		t.Fatalf("business sale: %s %s", d.Status, d.Regime)
	}
	if d := sale(2, "PL", "").Determination; d.Regime != vat.RegimeDomestic {
		t.Fatalf("domestic sale: %s %s", d.Status, d.Regime)
	}
	noTotals("after a reverse-charge and a domestic sale")
	ev := sale(3, "DE", "")
	if d := ev.Determination; d.Status != vat.StatusDetermined || d.TaxingCountry != "PL" || d.Threshold == nil || !d.Threshold.Counts || ev.Production.Receipt {
		t.Fatalf("consumer sale: %s %s %+v production %+v", d.Status, d.TaxingCountry, d.Threshold, ev.Production)
	}
	noTotals("while the consumer sale waits for its invoice")
	got, err := events.Resolve(ctx, acct, ev.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{VATNumber: number}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Event.Determination; got.Event.Revision != 2 || d.Regime != vat.RegimeReverseChargeB2B || d.Threshold == nil || d.Threshold.Counts {
		t.Fatalf("revision %d: %s %+v", got.Event.Revision, d.Regime, d.Threshold)
	}
	if th := got.Event.Determination.Threshold; !th.TotalBefore.IsZero() {
		t.Errorf("the revision was decided on a total of %s, which holds the sale itself", th.TotalBefore)
	}
	noTotals("after the sale was revised to a business sale")

	// A rebuild from the ledger (an older ledger's, fiscal's rebuildTotals)
	// counts as recording does: not the waiting consumer sale either.
	sale(4, "DE", "")
	noTotals("while a second consumer sale waits for its invoice")
	e.Close()
	forgetTotals(t, cfg)
	books = fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	noTotals("rebuilt from the ledger")
}

// forgetTotals deletes account 0's Art. 59c running totals and the mark
// of their build from the ledger of cfg (whose engine is closed), as a
// ledger of a version that did not keep them never had them: the next
// engine opened on it rebuilds them.
func forgetTotals(t *testing.T, cfg fiscal.Config) {
	t.Helper()
	e := fiscaltest.Engine(t, cfg)
	fiscaltest.ForgetTotals(t, e, "2025", "2026")
	e.Close()
}
