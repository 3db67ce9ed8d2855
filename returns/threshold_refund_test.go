package returns_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRefundUndoingTheThresholdIsReviewed: an Irish seller within the
// Art. 59c threshold sells in January a service to a German consumer
// (taxed in Ireland, counted toward the EUR 10,000), in February one to a
// French consumer that takes the year over EUR 10,000 (taxed in France
// under the OSS, exceeded_by_this_supply) and one to a German consumer
// (taxed in Germany, current_year_exceeded). In March the January sale is
// refunded in full: its taxable amount is reduced accordingly (Art. 90(1)
// Directive 2006/112/EC), and net of it the year's cross-border supplies
// (Art. 59c(1)(c): "the total value, exclusive of VAT") are within
// EUR 10,000. The running total is not lowered by a refund, and the OSS
// return of Q1 declared both February sales in the member states of
// consumption without a word. Whether a later reduction undoes a crossing
// the law does not say in terms; the engine does not guess, but the return
// names the year, the refunds and the supplies whose place of supply
// rested on the crossing, for a person to check before filing.
func TestRefundUndoingTheThresholdIsReviewed(t *testing.T) {
	seller := ossSeller()
	seller.OverThreshold = false
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	cfg := fiscaltest.Config(t, now, seller)
	cfg.Clock = func() time.Time { return *clock.Load() }
	cfg.NoBackground = true
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	set := func(at time.Time) { clock.Store(&at) }

	first := settle(t, b, 1, sale{amount: "11000.00", country: "DE", at: "2026-01-15T10:00:00Z"})[0]
	set(time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC))
	crossing := settle(t, b, 2, sale{amount: "5000.00", country: "FR", at: "2026-02-10T10:00:00Z"})[0]
	set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	after := settle(t, b, 3, sale{amount: "100.00", country: "DE", at: "2026-02-20T10:00:00Z"})[0]
	for _, c := range []struct {
		r            *fiscal.Record
		regime, rule string
	}{{first, vat.RegimeDomestic, vat.ThresholdWithin}, {crossing, vat.RegimeOSSB2C, vat.ThresholdCrossed}, {after, vat.RegimeOSSB2C, vat.ThresholdCurrentYear}} {
		if c.r.ReviewStatus != fiscal.StatusProcessed || c.r.Classification.Regime != c.regime || c.r.Classification.Threshold == nil || c.r.Classification.Threshold.Rule != c.rule {
			t.Fatalf("%s: %s %s %+v, want %s %s", c.r.ID, c.r.ReviewStatus, c.r.Classification.Regime, c.r.Classification.Threshold, c.regime, c.rule)
		}
	}
	// The year's total without the first sale is within EUR 10,000.
	rest := crossing.Classification.Threshold.Counted.Add(*after.Classification.Threshold.Counted)
	if rest.GreaterThan(decimal.NewFromInt(10000)) {
		t.Fatalf("test setup: the February sales count %s", rest)
	}

	ret0, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range ret0.Review {
		if strings.Contains(text, "59c") {
			t.Fatalf("before the refund the threshold was exceeded, nothing to review: %q", text)
		}
	}

	set(time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC))
	rf := refund(t, b, first.ID, "", "r-first")
	set(testNow)
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := ""
	for _, text := range ret.Review {
		if strings.Contains(text, "59c") && strings.Contains(text, "2026") {
			found = text
		}
	}
	for _, want := range []string{"Art. 90", fmt.Sprint("[", rf.Ledger.Index, "]"), fmt.Sprint("[", crossing.Ledger.Index, " ", after.Ledger.Index, "]")} {
		if !strings.Contains(found, want) {
			t.Errorf("review %q: want the year's crossing undone by the refund named, with %q", ret.Review, want)
		}
	}
}
