package fiscal_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// Art. 59c(2) Directive 2006/112/EC: "Where, during a calendar year, the
// threshold ... is exceeded, ... Article 58 shall apply as of that time":
// the supply that crosses is the one that, in the order the supplies were
// made, takes the year's total over EUR 10,000, and the supplies made
// before it stay taxed where the seller is. Settlements may be recorded
// after one dated later (a merchant reports late, a queue catches up); the
// running total knows only the sum, not the dates of what it sums.

func settleOrder(t *testing.T, b *fiscal.Books, n int, amount, stamp string) *fiscal.Record {
	t.Helper()
	res, err := b.Settle(context.Background(), fiscaltest.Request(n, amount, "DE", stamp), "")
	if err != nil {
		t.Fatal(err)
	}
	return res.Record
}

func hasReason(r *fiscal.Record, code string) bool {
	return slices.ContainsFunc(r.ReviewReasons, func(v vat.Reason) bool { return v.Code == code })
}

// TestLateSupplyTakingTheYearOverIsReviewed: a sale of 2 March within the
// threshold is recorded, then one of 2 February whose value takes the sum
// over EUR 10,000. In the order the sales were made, February's is within
// and March's crosses; in the order of recording it is the reverse. The
// engine cannot tell from a sum which supply crossed: the February sale is
// PENDING_MANUAL_REVIEW (threshold_order_in_doubt), never taxed in Germany
// as "exceeded_by_this_supply", and counts toward nothing until resolved.
// A person may then record either place: origin (it was made before the
// crossing) or destination.
func TestLateSupplyTakingTheYearOverIsReviewed(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	march := settleOrder(t, b, 1, "10500", "2026-03-02T10:00:00Z")
	if th := march.Classification.Threshold; th == nil || th.Rule != vat.ThresholdWithin {
		t.Fatalf("the March sale: %+v, want within the threshold", th)
	}
	before, err := b.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	feb := settleOrder(t, b, 2, "4200", "2026-02-02T10:00:00Z")
	if th := feb.Classification.Threshold; feb.ReviewStatus == fiscal.StatusProcessed {
		t.Fatalf("the February sale, recorded after the March one, is %s %s (rule %s): which of the two crossed depends on the order they were made in, which a running sum does not hold",
			feb.ReviewStatus, feb.Classification.TaxingCountry, th.Rule)
	}
	if !hasReason(feb, vat.ReasonThresholdOrderInDoubt) {
		t.Errorf("the February sale's reasons %+v lack %s", feb.ReviewReasons, vat.ReasonThresholdOrderInDoubt)
	}
	after, err := b.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Errorf("totals %+v after the pending sale, %+v before: a pending sale counts toward nothing", after, before)
	}
	// A person decides it: at origin (made before the sum crossed).
	res, err := b.Resolve(ctx, feb.ID, fiscal.Resolution{ResolvedBy: "ops@example.com",
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeDomestic, TaxingCountry: "IE", RatePercent: "23", Reason: "made before the March sale"}}, "")
	if err != nil {
		t.Fatalf("resolving the February sale at origin: %v", err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusProcessed || r.Classification.TaxingCountry != "IE" {
		t.Fatalf("resolved: %s %s", r.ReviewStatus, r.Classification.TaxingCountry)
	}
	totals, err := b.Totals(ctx)
	if err != nil || len(totals) != 1 || !totals[0].Exceeded {
		t.Errorf("totals after the resolution %+v %v: both sales count, over EUR 10,000", totals, err)
	}
}

// TestSupplyBeforeTheCrossingIsReviewed: three sales of March take 2026
// over EUR 10,000 (the third crosses). A sale dated 10 January recorded
// afterwards was made while the year was within the threshold; in the
// order of recording it is "current_year_exceeded". It is reviewed
// (threshold_order_in_doubt); a sale dated after the crossing is not.
func TestSupplyBeforeTheCrossingIsReviewed(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	b := fiscaltest.Books(t, e, 0)
	var crossed *fiscal.Record
	for i, stamp := range []string{"2026-03-02T10:00:00Z", "2026-03-03T10:00:00Z", "2026-03-04T10:00:00Z"} {
		crossed = settleOrder(t, b, 1+i, "6000", stamp)
	}
	if th := crossed.Classification.Threshold; th == nil || !th.Crossed {
		t.Fatalf("the third March sale: %+v, want the crossing", th)
	}
	jan := settleOrder(t, b, 10, "50", "2026-01-10T10:00:00Z")
	if jan.ReviewStatus == fiscal.StatusProcessed {
		t.Errorf("a sale of 10 January recorded after the year crossed on 4 March is %s %s (rule %s): it was made before the crossing",
			jan.ReviewStatus, jan.Classification.TaxingCountry, jan.Classification.Threshold.Rule)
	}
	if !hasReason(jan, vat.ReasonThresholdOrderInDoubt) {
		t.Errorf("the January sale's reasons %+v lack %s", jan.ReviewReasons, vat.ReasonThresholdOrderInDoubt)
	}
	// A person decides it at destination (a supply the sums cannot place
	// either way): that stands too, and counts.
	res, err := b.Resolve(context.Background(), jan.ID, fiscal.Resolution{ResolvedBy: "ops@example.com",
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "checked the dates"}}, "")
	if err != nil {
		t.Fatalf("resolving the January sale at destination: %v", err)
	}
	if th := res.Record.Classification.Threshold; res.Record.ReviewStatus != fiscal.StatusProcessed || th == nil || th.Rule != vat.ThresholdOrderManual || !th.Counts {
		t.Errorf("resolved: %s %+v", res.Record.ReviewStatus, th)
	}
	later := settleOrder(t, b, 11, "50", "2026-03-05T10:00:00Z")
	if th := later.Classification.Threshold; later.ReviewStatus != fiscal.StatusProcessed || later.Classification.TaxingCountry != "DE" || th.Rule != vat.ThresholdCurrentYear {
		t.Errorf("a sale after the crossing: %s %s %+v, want DE current_year_exceeded", later.ReviewStatus, later.Classification.TaxingCountry, th)
	}
}

// crossingsNamed are the records the account.threshold_crossed entries
// name (their documents' recordId).
func crossingsNamed(t *testing.T, e *fiscal.Engine) []string {
	t.Helper()
	var out []string
	for _, ev := range thresholdEvents(t, e) {
		raw, err := e.Document(ev.EntryID)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			RecordID string `json:"recordId"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		out = append(out, doc.RecordID)
	}
	return out
}

// TestThresholdEventNamesTheSupplyThatCrossed: account.threshold_crossed
// names the supply that took the year over EUR 10,000 (Art. 59c(2)
// Directive 2006/112/EC, "as of that time"). A sale of 2 February recorded
// after one of 2 March whose value takes the sum over is in doubt
// (threshold_order_in_doubt). A person who places it at origin determines
// that the year was within when it was made: it did not cross, and the
// event must not name it (the supply that crossed in time order is one
// dated after it, already recorded, which the review text asks to check).
// The year is over all the same: a sale dated before 2 March is still in
// doubt, one dated after is taxed where the consumer is. A person who
// places it at destination determines it crossed (the sales made before
// it are within the total before it): the event names it.
func TestThresholdEventNamesTheSupplyThatCrossed(t *testing.T) {
	for _, c := range []struct {
		name  string
		det   fiscal.ManualDetermination
		named bool
	}{
		{"origin", fiscal.ManualDetermination{Regime: vat.RegimeDomestic, TaxingCountry: "IE", RatePercent: "23", Reason: "made before the March sale"}, false},
		{"destination", fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "the year was within until it"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
			b := fiscaltest.Books(t, e, 0)
			ctx := context.Background()
			settleOrder(t, b, 1, "10500", "2026-03-02T10:00:00Z")
			feb := settleOrder(t, b, 2, "4200", "2026-02-02T10:00:00Z")
			if !hasReason(feb, vat.ReasonThresholdOrderInDoubt) {
				t.Fatalf("the February sale: %s %v", feb.ReviewStatus, feb.ReviewReasons)
			}
			res, err := b.Resolve(ctx, feb.ID, fiscal.Resolution{ResolvedBy: "ops@example.com", Determination: &c.det}, "")
			if err != nil {
				t.Fatal(err)
			}
			th := res.Record.Classification.Threshold
			if th == nil || th.Crossed != c.named {
				t.Errorf("resolved at %s: threshold section %+v, want crossed %t", c.name, th, c.named)
			}
			var want []string
			if c.named {
				want = []string{feb.ID}
			}
			if got := crossingsNamed(t, e); !slices.Equal(got, want) {
				t.Errorf("resolved at %s: account.threshold_crossed names %v, want %v", c.name, got, want)
			}
			// The year went over by 2 March at the latest either way.
			if jan := settleOrder(t, b, 10, "50", "2026-01-10T10:00:00Z"); !hasReason(jan, vat.ReasonThresholdOrderInDoubt) {
				t.Errorf("a sale of 10 January after the resolution: %s %s %v, want %s", jan.ReviewStatus, jan.Classification.TaxingCountry, jan.ReviewReasons, vat.ReasonThresholdOrderInDoubt)
			}
			if apr := settleOrder(t, b, 11, "50", "2026-04-01T10:00:00Z"); apr.ReviewStatus != fiscal.StatusProcessed || apr.Classification.TaxingCountry != "DE" {
				t.Errorf("a sale of 1 April after the resolution: %s %s %v, want PROCESSED DE", apr.ReviewStatus, apr.Classification.TaxingCountry, apr.ReviewReasons)
			}
		})
	}
}
