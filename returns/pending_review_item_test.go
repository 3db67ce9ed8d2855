package returns_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
)

// TestPendingRecordsAreNamedForReview: a record of the quarter waiting for
// review has no tax determination and is in no line (never guessed into
// one), counted in excluded.pending. Review lists what a person must check
// before filing; it said nothing of these records, so a final return read
// from its review items (or a CSV read from its review rows) looked
// complete while a sale of the quarter was undecided, possibly an OSS
// supply whose VAT the return leaves out. Review now names them.
func TestPendingRecordsAreNamedForReview(t *testing.T) {
	b := newBooks(t, testNow)
	recs := settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"},
		sale{amount: "12.00", country: "", at: "2026-02-15T10:00:00Z"}) // no country: pending review
	if recs[1].ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("sale without a country: %s", recs[1].ReviewStatus)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.Excluded.Pending.Records != 1 {
		t.Fatalf("excluded pending %+v", ret.Excluded.Pending)
	}
	idx := fmt.Sprint(recs[1].Ledger.Index)
	found := false
	for _, text := range ret.Review {
		if strings.Contains(text, "excluded.pending") && strings.Contains(text, "["+idx+"]") {
			found = true
		}
	}
	if !found {
		t.Errorf("review %q: want the record pending review (ledger index %s) named", ret.Review, idx)
	}
}
