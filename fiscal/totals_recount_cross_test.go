package fiscal_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestTotalsRecountTakingTheYearOver: a ledger whose kept totals left
// supplies out (here two sales recorded while the seller had a second
// establishment, so that no total was kept for them; an older version
// left the account's fiscal events out the same way) is recounted at
// open, and the recount takes 2026 over EUR 10,000. The year is over
// (Art. 59c(1)(c) and (2) Directive 2006/112/EC) and the account must
// learn it: account.threshold_crossed is emitted once, naming the supply
// that took the year over in the order the supplies were made (the sale
// of 12 April 14:00). The dates that tell a supply recorded out of its
// time order are those of the recounted supplies: a sale of 11 April is
// dated before that crossing and is in doubt (threshold_order_in_doubt),
// not decided over the threshold on the date the older count kept (10
// April); one of 13 April is taxed where the consumer is.
func TestTotalsRecountTakingTheYearOver(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := fiscaltest.Books(t, e, 0)
	settleOrder(t, b, 1, "6000", "2026-04-10T10:00:00Z")
	two := smallIrishSeller
	two.OtherEstablishments = []string{"FR"}
	if err := e.SetAccounts(fiscaltest.Accounts(two)); err != nil {
		t.Fatal(err)
	}
	b = fiscaltest.Books(t, e, 0)
	settleOrder(t, b, 2, "6000", "2026-04-12T10:00:00Z")
	crossing := settleOrder(t, b, 3, "6000", "2026-04-12T14:00:00Z")
	if evs := thresholdEvents(t, e); len(evs) != 0 {
		t.Fatalf("events before the recount: %+v", evs)
	}
	forgetTotalsBuilt(t, e)
	e.Close()

	e = fiscaltest.Engine(t, cfg)
	b = fiscaltest.Books(t, e, 0)
	totals, err := b.Totals(context.Background())
	if err != nil || len(totals) != 1 || !totals[0].Exceeded {
		t.Fatalf("recounted totals %+v %v", totals, err)
	}
	if got := crossingsNamed(t, e); !slices.Equal(got, []string{crossing.ID}) {
		t.Errorf("account.threshold_crossed after the recount names %v, want the sale of 12 April 14:00 %s", got, crossing.ID)
	}
	if r := settleOrder(t, b, 10, "50", "2026-04-11T10:00:00Z"); !hasReason(r, vat.ReasonThresholdOrderInDoubt) {
		t.Errorf("a sale of 11 April, before the recounted crossing: %s %s %+v, want %s", r.ReviewStatus, r.Classification.TaxingCountry, r.Classification.Threshold, vat.ReasonThresholdOrderInDoubt)
	}
	if r := settleOrder(t, b, 11, "50", "2026-04-13T10:00:00Z"); r.ReviewStatus != fiscal.StatusProcessed || r.Classification.TaxingCountry != "DE" {
		t.Errorf("a sale of 13 April, after the recounted crossing: %s %s %v, want PROCESSED DE", r.ReviewStatus, r.Classification.TaxingCountry, r.ReviewReasons)
	}
	// Opened again, nothing is recounted and no second event is emitted.
	e.Close()
	e = fiscaltest.Engine(t, cfg)
	if got := crossingsNamed(t, e); !slices.Equal(got, []string{crossing.ID}) {
		t.Errorf("account.threshold_crossed after a second open: %v", got)
	}
}
