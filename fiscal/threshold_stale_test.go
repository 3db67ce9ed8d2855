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

// TestOverThresholdDecidedOnStaleTotals: a sale decided over the threshold
// on the current year (current_year_exceeded), the previous year read
// within the limit, reaches the committer after a late sale of the
// previous year took that year over EUR 10,000. In the log's order its
// rule is previous_year_exceeded; a review found the record stating the
// stale rule, legal basis and previous-year figure. The committer now
// sends it back to be decided again, on the totals it then finds.
//
// 2026 is over the threshold from its opening figure, so that no 2026 sale
// is decided within it: a late 2025 sale that takes 2025 over after 2026
// sales were decided within would put those in doubt (Art. 59c(1)(c): the
// preceding year exceeded), and is reviewed (TestLateSupplyTakingTheYearOverIsReviewed).
func TestOverThresholdDecidedOnStaleTotals(t *testing.T) {
	seller := smallIrishSeller
	seller.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "10500"}}
	_, b, g := gatedEngine(t, seller, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	ctx := context.Background()
	n := 0
	settle := func(stamp string) *fiscal.SettleResult {
		n++
		res, err := b.Settle(ctx, fiscaltest.Request(n, "6000", "DE", stamp), "")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for range 3 { // 2026 over the threshold
		settle("2026-04-10T14:30:00Z")
	}
	for range 2 { // 2025 within
		if th := settle("2025-12-15T10:00:00Z").Record.Classification.Threshold; th.Rule != vat.ThresholdWithin {
			t.Fatalf("2025 sale: %s", th.Rule)
		}
	}
	// X, a 2026 sale, reads the totals (2026 over, 2025 within) and is
	// held before its commit...
	done := make(chan settled, 1)
	go func() {
		res, err := b.Settle(ctx, fiscaltest.Request(100, "50", "DE", "2026-03-02T09:00:00Z"), "")
		done <- settled{res, err}
	}()
	<-g.entered
	// ... while a 2025 sale takes 2025 over the threshold.
	if th := settle("2025-12-15T10:00:00Z").Record.Classification.Threshold; th.Rule != vat.ThresholdCrossed {
		t.Fatalf("third 2025 sale: %s", th.Rule)
	}
	// ... and another 2026 sale is committed before it.
	late := settle("2026-04-10T14:30:00Z").Record.Classification.Threshold
	close(g.release)
	x := <-done
	if x.err != nil {
		t.Fatal(x.err)
	}
	// In log order X comes after the 2025 crossing: its previous year was
	// over the limit.
	totals, err := b.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("totals now %+v", totals)
	th := x.res.Record.Classification.Threshold
	if !th.TotalBefore.Equal(*late.TotalAfter) {
		t.Errorf("X states the 2026 total before it as %s; in log order it is %s (the total after the 2026 sale committed before it)", th.TotalBefore, late.TotalAfter)
	}
	if th.Rule != vat.ThresholdPreviousYear || th.PreviousYear.LessThanOrEqual(decimal10000) {
		t.Errorf("X (log index %d, after the 2025 crossing) states rule %s, previousYear %s; a sequential execution gives %s with the previous year over EUR 10,000",
			x.res.Record.Ledger.Index, th.Rule, th.PreviousYear, vat.ThresholdPreviousYear)
	}
}

var decimal10000 = decimal.NewFromInt(10000)
