package returns_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/returns"
)

// TestSupplyRecordedAfterItsQuarterIsReviewed: a sale of 20 March recorded
// on 10 May is in the return of Q1, its quarter. If that return was
// submitted before 10 May, the sale is in no submitted return, and changes
// to a submitted return "shall ... be made only by adjustments in a
// subsequent return" (Art. 61(1) Implementing Regulation (EU) No 282/2011).
// The engine does not know when a return was submitted: the return of Q2,
// the quarter in which the sale was recorded, must say so, naming it, for
// a person to add the adjustment. A sale of Q2 recorded in Q2 is no such
// case. Until this version nothing said it. Q1's own return, recomputed,
// has the sale in its lines and says since when (changedReview).
func TestSupplyRecordedAfterItsQuarterIsReviewed(t *testing.T) {
	b, set := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-03-20T10:00:00Z"}) // on time
	set(time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC))
	late := settle(t, b, 2, sale{amount: "23.80", country: "FR", at: "2026-03-20T11:00:00Z"})[0]
	settle(t, b, 3, sale{amount: "5.00", country: "DE", at: "2026-05-09T11:00:00Z"})
	set(time.Date(2026, 7, 5, 12, 0, 0, 0, time.UTC))

	q2, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	review := strings.Join(q2.Review, "\n")
	if !strings.Contains(review, "61(1)") || !strings.Contains(review, "["+strconv.FormatInt(late.Ledger.Index, 10)+"]") || !strings.Contains(review, "2026-Q1") {
		t.Errorf("Q2 review %q: want the Q1 sale recorded in Q2 (ledger index %d) named, with Art. 61(1)", q2.Review, late.Ledger.Index)
	}
	r1, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Lines) != 2 {
		t.Errorf("Q1: lines %+v: both March sales are Q1's, recorded in time or not", r1.Lines)
	}
	// Q1's return, recomputed, does not change silently: it names the sale
	// recorded after it ended, and the quarter whose return names it.
	if len(r1.Review) != 1 || !strings.Contains(r1.Review[0], "["+strconv.FormatInt(late.Ledger.Index, 10)+"]") || !strings.Contains(r1.Review[0], "2026-Q2") {
		t.Errorf("Q1 review %q: want one line naming the sale recorded in 2026-Q2 (ledger index %d)", r1.Review, late.Ledger.Index)
	}
}
