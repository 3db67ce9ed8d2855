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

// TestLateResolutionAfterThreeYearsIsTimeBarred: a German consumer's sale
// of 15 January 2024 waited for review and was resolved on 10 May 2027.
// The return of Q1 2024 was due on 2024-04-30, and an adjustment of it in
// a subsequent return is made "within three years of the date on which the
// initial return was required to be submitted" (Art. 61(2) Implementing
// Regulation (EU) No 282/2011): the return of Q2 2027 (submitted no earlier
// than 2027-07-01) is too late, as it is for a refund of that quarter
// (excluded.timeBarred). The review lines told a person to declare the
// supply as an adjustment in the return of Q2 2027, and the recomputed
// return of Q1 2024 that a subsequent return would adjust it: both must
// apply the same three years, naming Art. 61(2).
func TestLateResolutionAfterThreeYearsIsTimeBarred(t *testing.T) {
	ctx := context.Background()
	b, set := newBooksClock(t, time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC))
	pending := settle(t, b, 1, sale{amount: "119", country: "", at: "2024-01-15T10:00:00Z"})[0]
	if pending.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("a sale without the consumer's country: %s", pending.ReviewStatus)
	}
	set(time.Date(2027, 5, 10, 12, 0, 0, 0, time.UTC))
	res, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops@example.com"}, "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("resolve: %v", err)
	}
	index := "[" + strconv.FormatInt(res.Record.Ledger.Index, 10) + "]"
	set(time.Date(2027, 7, 5, 12, 0, 0, 0, time.UTC))

	line := func(review []string) string {
		for _, l := range review {
			if strings.Contains(l, index) {
				return l
			}
		}
		return ""
	}
	q2, _, err := returns.OSS(ctx, b, returns.Period{Year: 2027, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := line(q2.Review); l == "" || !strings.Contains(l, "61(2)") || strings.Contains(l, "declare them here as adjustments") {
		t.Errorf("2027-Q2 review of the 2024-Q1 sale resolved in it: %q; want it time-barred (Art. 61(2)), not an adjustment to declare here", l)
	}
	q1, _, err := returns.OSS(ctx, b, returns.Period{Year: 2024, Quarter: 1}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := line(q1.Review); l == "" || !strings.Contains(l, "2027-Q2") || !strings.Contains(l, "61(2)") || strings.Contains(l, "declared as adjustments of this quarter in a subsequent return") {
		t.Errorf("2024-Q1 review of its sale resolved in 2027-Q2: %q; want it named as past the three years of Art. 61(2)", l)
	}
}
