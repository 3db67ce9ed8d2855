package returns_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
)

// TestSupplyResolvedAfterItsQuarterIsReviewed: a sale of 20 March that
// waited for review (no consumer country) and was resolved on 10 May is,
// once resolved, in the lines of Q1, its quarter. A return of Q1 submitted
// before 10 May counted it in excluded.pending, in no line, and "changes to
// the figures contained in a VAT return ... shall, after the submission of
// that VAT return, be made only by adjustments in a subsequent return"
// (Art. 61(1) Implementing Regulation (EU) No 282/2011). As for a supply
// recorded after its quarter, the engine does not know when the return was
// submitted: the return of Q2, in which the record was resolved, must name
// it and its period, and Q1's return, recomputed, must say that its lines
// changed after the quarter and why. Until this version neither said
// anything: Q1 changed silently.
func TestSupplyResolvedAfterItsQuarterIsReviewed(t *testing.T) {
	ctx := context.Background()
	b, set := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-03-20T10:00:00Z"})
	pending := settle(t, b, 2, sale{amount: "23.80", country: "", at: "2026-03-20T11:00:00Z"})[0]
	if pending.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("a sale without the consumer's country: %s", pending.ReviewStatus)
	}
	set(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)) // Q1 is over, its period-end rate published
	before, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if before.Excluded.Pending.Records != 1 || len(before.Review) != 1 || !strings.Contains(before.Review[0], "excluded.pending") { // the pending record, named
		t.Fatalf("Q1 before the resolution: pending %+v, review %q", before.Excluded.Pending, before.Review)
	}
	set(time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC))
	res, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR"}, ResolvedBy: "ops@example.com"}, "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("resolve: %v", err)
	}
	index := "[" + strconv.FormatInt(res.Record.Ledger.Index, 10) + "]"
	settle(t, b, 3, sale{amount: "5.00", country: "DE", at: "2026-05-09T11:00:00Z"})
	set(time.Date(2026, 7, 5, 12, 0, 0, 0, time.UTC))

	q2, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	review := strings.Join(q2.Review, "\n")
	if !strings.Contains(review, "61(1)") || !strings.Contains(review, index) || !strings.Contains(review, "2026-Q1") || !strings.Contains(review, "resolved") {
		t.Errorf("Q2 review %q: want the Q1 sale resolved in Q2 (ledger index %s) named, with its period and Art. 61(1)", q2.Review, index)
	}
	after, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Excluded.Pending.Records != 0 || after.Total.Records != 2 {
		t.Fatalf("Q1 after the resolution: pending %+v, total %+v: the resolved sale is Q1's", after.Excluded.Pending, after.Total)
	}
	review = strings.Join(after.Review, "\n")
	if !strings.Contains(review, index) || !strings.Contains(review, "2026-Q2") || !strings.Contains(review, "61(1)") {
		t.Errorf("Q1 review after the resolution %q: want the change named (ledger index %s, resolved in 2026-Q2, Art. 61(1))", after.Review, index)
	}
}
