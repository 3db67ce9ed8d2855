package fiscal_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// Years counted before the engine kept the Art. 59c order dates (side
// bucket cross-border-order) have totals and no dates: the sums of such a
// year do not say when its supplies were made. Art. 59c(2) Directive
// 2006/112/EC applies Art. 58 "as of that time" the EUR 10,000 is
// exceeded, so where the order of a sale and the undated ones decides
// the place, the sale waits for review (threshold_order_in_doubt); the
// engine neither panics nor guesses.

// undatedBooks records sales (amount, timestamp) on an engine whose clock
// reads recorded, removes every order date the engine kept (the ledger of
// a version that kept none), and opens the engine again on the same
// ledger with a clock that can be moved.
func undatedBooks(t *testing.T, recorded time.Time, sales [][2]string) (*fiscal.Engine, *fiscal.Books, *atomic.Int64) {
	t.Helper()
	cfg := fiscaltest.Config(t, recorded, smallIrishSeller)
	old, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := old.Books(fiscaltest.AccountID(0))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sales {
		if _, err := b.Settle(context.Background(), fiscaltest.Request(100+i, s[0], "DE", s[1]), ""); err != nil {
			t.Fatal(err)
		}
	}
	err = old.Ledger().Update(func(tx ledger.Tx) error {
		var keys [][]byte
		if err := tx.Scan("cross-border-order", nil, nil, false, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		}); err != nil {
			return err
		}
		if len(keys) == 0 {
			t.Error("no order dates to remove: the test does not make an undated year")
		}
		for _, k := range keys {
			if err := tx.Delete("cross-border-order", k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	var now atomic.Int64
	now.Store(recorded.Add(7 * 24 * time.Hour).UnixNano())
	cfg.Clock = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	e := fiscaltest.Engine(t, cfg)
	return e, fiscaltest.Books(t, e, 0), &now
}

// TestUndatedYearTakenOverIsReviewed: a sale of 2 March was counted
// without its date. A sale of 2 February recorded now takes the year's
// sum over EUR 10,000: whether it or the March sale crossed depends on
// the dates, and the March one was not kept. It is reviewed, also after a
// sale of January decided since (within, which keeps its own date but says
// nothing of the March sale's).
func TestUndatedYearTakenOverIsReviewed(t *testing.T) {
	for _, between := range []bool{false, true} {
		name := "directly"
		if between {
			name = "after a dated sale"
		}
		t.Run(name, func(t *testing.T) {
			recorded := time.Date(2026, 3, 31, 18, 0, 0, 0, time.UTC)
			_, b, _ := undatedBooks(t, recorded, [][2]string{{"10500", "2026-03-02T10:00:00Z"}})
			if between {
				if r := settleOrder(t, b, 1, "100", "2026-01-05T10:00:00Z"); r.ReviewStatus != fiscal.StatusProcessed || r.Classification.TaxingCountry != "IE" {
					t.Fatalf("a small sale of January in an undated year within the threshold: %s %s %v", r.ReviewStatus, r.Classification.TaxingCountry, r.ReviewReasons)
				}
			}
			feb := settleOrder(t, b, 2, "4200", "2026-02-02T10:00:00Z")
			if feb.ReviewStatus == fiscal.StatusProcessed || !hasReason(feb, vat.ReasonThresholdOrderInDoubt) {
				t.Errorf("a sale of February taking an undated year over: %s %s (rule %s) %v; the year's March sale has no date, so which sale crossed is not known",
					feb.ReviewStatus, feb.Classification.TaxingCountry, feb.Classification.Threshold.Rule, feb.ReviewReasons)
			}
		})
	}
}

// TestUndatedYearOverIsReviewed: three sales of March took 2026 over
// EUR 10,000 before the engine kept dates. A sale of 10 January recorded
// now may have been made while the year was within: reviewed, not taxed
// in Germany as current_year_exceeded. A person who places it in Germany
// determines that the year was over by then, and the engine then knows a
// date the year was over at: a sale dated after the resolution is decided
// again without a person.
func TestUndatedYearOverIsReviewed(t *testing.T) {
	recorded := time.Date(2026, 3, 31, 18, 0, 0, 0, time.UTC)
	_, b, now := undatedBooks(t, recorded, [][2]string{{"6000", "2026-03-02T10:00:00Z"}, {"6000", "2026-03-03T10:00:00Z"}, {"6000", "2026-03-04T10:00:00Z"}})
	jan := settleOrder(t, b, 1, "50", "2026-01-10T10:00:00Z")
	if jan.ReviewStatus == fiscal.StatusProcessed || !hasReason(jan, vat.ReasonThresholdOrderInDoubt) {
		t.Fatalf("a sale of 10 January in a year that went over on undated sales: %s %s (rule %s) %v, want %s",
			jan.ReviewStatus, jan.Classification.TaxingCountry, jan.Classification.Threshold.Rule, jan.ReviewReasons, vat.ReasonThresholdOrderInDoubt)
	}
	res, err := b.Resolve(context.Background(), jan.ID, fiscal.Resolution{ResolvedBy: "ops@example.com",
		Determination: &fiscal.ManualDetermination{Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "the records show the year over by then"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if th := res.Record.Classification.Threshold; res.Record.ReviewStatus != fiscal.StatusProcessed || th == nil || th.Rule != vat.ThresholdOrderManual {
		t.Fatalf("resolved: %s %+v", res.Record.ReviewStatus, th)
	}
	now.Add(int64(48 * time.Hour))
	later := settleOrder(t, b, 2, "50", time.Unix(0, now.Load()).UTC().Add(-time.Hour).Format(time.RFC3339))
	if th := later.Classification.Threshold; later.ReviewStatus != fiscal.StatusProcessed || later.Classification.TaxingCountry != "DE" || th.Rule != vat.ThresholdCurrentYear {
		t.Errorf("a sale dated after the resolution: %s %s %+v %v, want PROCESSED DE current_year_exceeded", later.ReviewStatus, later.Classification.TaxingCountry, th, later.ReviewReasons)
	}
}
