package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestTotalsRebuiltCountOriginTaxedSales: a sale decided without running
// totals (Supply.CrossBorder nil, as every sale was before the engine kept
// them) to a consumer in another member state, taxed where the seller is
// (Art. 59c(1) Directive 2006/112/EC), is one of the supplies whose "total
// value, exclusive of VAT" the EUR 10,000 threshold measures (Art.
// 59c(1)(b), (c)); its record has no threshold section and names the
// seller's state as place of supply. A review found the totals rebuilt for
// such a ledger leaving it out: an undercount lets the seller go on
// charging its own VAT after the year went over (Art. 59c(2)). A sale to a
// consumer in the seller's own state still does not count.
func TestTotalsRebuiltCountOriginTaxedSales(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	seller := fiscaltest.Books(t, e, 0).Account().Seller
	want := decimal.Zero
	for i, c := range []string{"DE", "IE"} {
		p, err := fiscaltest.Request(i, "1234.56", c, "2026-04-10T14:30:00Z").Payment(e.Now().UTC())
		if err != nil {
			t.Fatal(err)
		}
		p.Buyer.SupplyKind, p.Buyer.Description = seller.SupplyKind, seller.ItemName // as Books.Settle sets them
		d, err := e.Prepare(ctx, fiscaltest.AccountID(0), fiscal.Supply{Payment: p, Seller: seller}, e.Now().UTC())
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Issue(d, seller); err != nil {
			t.Fatal(err)
		}
		r := d.Record
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeDomestic || r.Classification.TaxingCountry != "IE" || r.Classification.Threshold != nil {
			t.Fatalf("%s: %s %v %s in %s, threshold %v; want a processed DOMESTIC IE record without a section", c, r.ReviewStatus, r.ReviewReasons, r.Classification.Regime, r.Classification.TaxingCountry, r.Classification.Threshold)
		}
		if _, _, err := e.Commit(ctx, d); err != nil {
			t.Fatal(err)
		}
		if c == "DE" {
			want = decimal.RequireFromString(r.FX.NetEURExact)
		}
	}
	if err := e.RebuildTotals(ctx, []byte(fiscaltest.AccountID(0)+"\x002026")); err != nil {
		t.Fatal(err)
	}
	got, err := fiscaltest.Books(t, e, 0).Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Year != 2026 || !decimal.RequireFromString(got[0].CrossBorderEUR).Equal(want) {
		t.Fatalf("rebuilt totals %+v; want 2026: EUR %s (the sale to the German consumer, not the Irish one)", got, want)
	}
}
