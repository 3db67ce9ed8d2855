package returns_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
)

// TestPendingRecordsKeepTheReturnProvisional: the OSS return covers every
// supply of its period (Art. 369g Directive 2006/112/EC: "the total value
// ... of supplies ... carried out during the tax period"). A record of the
// quarter that waits for review has no tax determination and is in no
// line; it may be an OSS supply whose VAT the return leaves out. The
// return of the closed quarter said "final" (the same bytes each time)
// while such a record was undecided: it is provisional until every
// record of the quarter is decided, its reason naming them.
func TestPendingRecordsKeepTheReturnProvisional(t *testing.T) {
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
	if ret.FX.Rate == nil {
		t.Fatalf("the period-end rate of Q1 2026 is published (testNow): %+v", ret.FX)
	}
	idx := fmt.Sprint(recs[1].Ledger.Index)
	if ret.Status != returns.StatusProvisional || !strings.Contains(ret.StatusReason, "["+idx+"]") {
		t.Errorf("status %q (%q): want provisional, naming the record pending review (ledger index %s)", ret.Status, ret.StatusReason, idx)
	}

	// Without a pending record the closed quarter's return is final.
	b2 := newBooks(t, testNow)
	settle(t, b2, 1, sale{amount: "11.90", country: "DE", at: "2026-02-10T10:00:00Z"})
	ret2, _, err := returns.OSS(context.Background(), b2, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret2.Status != returns.StatusFinal {
		t.Errorf("status %q (%q) without pending records: want final", ret2.Status, ret2.StatusReason)
	}
}
