package returns_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
)

// TestThresholdRefundReviewOfAFinalReturnIsStable: a closed quarter's OSS
// return is final and the same bytes each time it is asked for, its
// figures and review as of the log checkpoint it states (returns/doc.go,
// "Recomputable"). The review that names refunds bringing a year over the
// Art. 59c threshold of EUR 10,000 back within it (Art. 59c(1)(c), Art.
// 90(1) Directive 2006/112/EC) read the year's total from the account's
// running totals as they stood when the return was asked for: a sale of
// a later quarter of the same year changed a final return's bytes, and one
// large enough made its review forget the refunds altogether. The year's
// total is the one as of the return's checkpoint: the sale of 10 April
// changes nothing, whether the refund was recorded within the quarter
// (its figures) or after it (then the checkpoint covers the refund the
// review names).
func TestThresholdRefundReviewOfAFinalReturnIsStable(t *testing.T) {
	for _, refundAt := range []time.Time{time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC), time.Date(2026, 4, 8, 12, 0, 0, 0, time.UTC)} {
		t.Run(refundAt.Format(time.DateOnly), func(t *testing.T) {
			seller := ossSeller()
			seller.OverThreshold = false
			now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
			var clock atomic.Pointer[time.Time]
			clock.Store(&now)
			cfg := fiscaltest.Config(t, now, seller)
			cfg.Clock = func() time.Time { return *clock.Load() }
			cfg.NoBackground = true
			b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
			set := func(at time.Time) { clock.Store(&at) }
			first := settle(t, b, 1, sale{amount: "11000.00", country: "DE", at: "2026-01-15T10:00:00Z"})[0]
			set(time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC))
			crossing := settle(t, b, 2, sale{amount: "5000.00", country: "FR", at: "2026-02-10T10:00:00Z"})[0]
			set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
			after := settle(t, b, 3, sale{amount: "100.00", country: "DE", at: "2026-02-20T10:00:00Z"})[0]
			if first.Classification.Threshold == nil || crossing.Classification.Threshold == nil || !crossing.Classification.Threshold.Crossed {
				t.Fatalf("test setup: the February sale to France must cross the threshold: %+v", crossing.Classification.Threshold)
			}
			set(refundAt)
			rf := refund(t, b, first.ID, "", "r-first")
			set(testNow)
			ask := func() (*returns.Return, []byte) {
				t.Helper()
				r, doc, err := returns.OSS(context.Background(), b, q1, returns.Options{})
				if err != nil {
					t.Fatal(err)
				}
				raw, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				return r, raw
			}
			named := func(r *returns.Return) string {
				for _, text := range r.Review {
					if strings.Contains(text, "59c") && strings.Contains(text, fmt.Sprint("[", rf.Ledger.Index, "]")) &&
						strings.Contains(text, fmt.Sprint("[", crossing.Ledger.Index, " ", after.Ledger.Index, "]")) {
						return text
					}
				}
				return ""
			}
			r1, doc1 := ask()
			if r1.Status != returns.StatusFinal || named(r1) == "" {
				t.Fatalf("return before the later sale: %s, review %q; want final, naming the refund that brings 2026 back within the threshold", r1.Status, r1.Review)
			}
			if r1.Log.Size <= rf.Ledger.Index {
				t.Errorf("the return names refund %d, but its checkpoint (size %d) does not cover it", rf.Ledger.Index, r1.Log.Size)
			}
			// A sale of the second quarter of the same year, large enough
			// to take the year's total net of the refund over EUR 10,000.
			set(time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC))
			settle(t, b, 4, sale{amount: "10000.00", country: "DE", at: "2026-04-10T10:00:00Z"})
			set(testNow)
			r2, doc2 := ask()
			if !bytes.Equal(doc1, doc2) {
				t.Errorf("the final return of Q1 changed with a sale of Q2:\nbefore %q\nafter  %q", r1.Review, r2.Review)
			}
			if named(r2) == "" {
				t.Errorf("after the later sale the review %q no longer names the refund", r2.Review)
			}
		})
	}
}

// TestThresholdRefundReviewCountsAsRecordingCounts: the year's total the
// review states, read from the records below the return's checkpoint,
// is the running total the engine kept (fiscal.Books.Totals) when nothing
// was recorded since, a sale that waited for review counting from the
// revision that decided it (a person's resolution), as recording counts it.
func TestThresholdRefundReviewCountsAsRecordingCounts(t *testing.T) {
	seller := ossSeller()
	seller.OverThreshold = false
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	cfg := fiscaltest.Config(t, now, seller)
	cfg.Clock = func() time.Time { return *clock.Load() }
	cfg.NoBackground = true
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	set := func(at time.Time) { clock.Store(&at) }
	ctx := context.Background()

	first := settle(t, b, 1, sale{amount: "11000.00", country: "DE", at: "2026-01-15T10:00:00Z"})[0]
	set(time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC))
	settle(t, b, 3, sale{amount: "5000.00", country: "FR", at: "2026-02-10T10:00:00Z"})
	set(time.Date(2026, 2, 15, 12, 0, 0, 0, time.UTC))
	waiting := settle(t, b, 2, sale{amount: "1000.00", country: "", at: "2026-02-15T10:00:00Z"})[0]
	if waiting.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("test setup: a sale without the consumer's country is %s", waiting.ReviewStatus)
	}
	set(time.Date(2026, 2, 25, 12, 0, 0, 0, time.UTC))
	res, err := b.Resolve(ctx, waiting.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "AT"}, ResolvedBy: "ops@example.com"}, "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed || res.Record.Classification.Threshold == nil || !res.Record.Classification.Threshold.Counts {
		t.Fatalf("resolution: %v %s", err, res.JSON)
	}
	set(time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC))
	refund(t, b, first.ID, "", "r-first")
	set(testNow)
	r, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	totals, err := b.Totals(ctx)
	if err != nil || len(totals) != 1 {
		t.Fatalf("totals: %v %+v", err, totals)
	}
	kept, err := decimal.NewFromString(totals[0].CrossBorderEUR)
	if err != nil {
		t.Fatal(err)
	}
	want := "while the EUR " + kept.StringFixed(2) + " recorded went over it"
	found := false
	for _, text := range r.Review {
		found = found || strings.Contains(text, "59c") && strings.Contains(text, want)
	}
	if !found {
		t.Errorf("review %q: want the year's total as the engine kept it, %q", r.Review, want)
	}
}
