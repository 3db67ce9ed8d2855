package returns_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSaleResolvedOutsideTheOSSAfterItsQuarterIsReviewed: a sale of 20
// March waited for review (no consumer country) and, on 10 May, a person
// resolved it as a French business's, whose VAT number the registry
// confirms: a reverse-charge supply (Art. 196 Directive 2006/112/EC),
// outside the OSS. The recomputed return of Q1 moved it from
// excluded.pending to notInOss without a word. Changes to the figures of
// a submitted return are made by adjustments in a subsequent return (Art.
// 61(1) Implementing Regulation (EU) No 282/2011): the sale was in no
// figure of Q1's return, so none is due, but the return must say that it
// changed, and why no adjustment follows, as it does for a sale resolved
// into its lines. A determined record is never revised (only one pending
// review is: Books.Resolve answers RECORD_NOT_PENDING), so no other
// revision changes a treatment a submitted return counted.
func TestSaleResolvedOutsideTheOSSAfterItsQuarterIsReviewed(t *testing.T) {
	ctx := context.Background()
	b, set := newBooksClock(t, time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC))
	done := settle(t, b, 1, sale{amount: "11.90", country: "DE", at: "2026-03-20T10:00:00Z"})[0]
	pending := settle(t, b, 2, sale{amount: "23.80", country: "", at: "2026-03-20T11:00:00Z"})[0]
	if pending.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("a sale without the consumer's country: %s", pending.ReviewStatus)
	}
	set(time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC))
	res, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR", VATNumber: "FR40303265045", BusinessStatus: vat.TreatmentB2B},
		ResolvedBy: "ops@example.com"}, "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed || res.Record.Classification.Regime != vat.RegimeReverseChargeB2B {
		t.Fatalf("resolve as a business: %v %+v", err, res)
	}
	// The premise: a determined record is not revised again.
	var fe *fiscal.Error
	if _, err := b.Resolve(ctx, done.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "FR", VATNumber: "FR40303265045", BusinessStatus: vat.TreatmentB2B},
		ResolvedBy: "ops@example.com"}, ""); !errors.As(err, &fe) || fe.Code != fiscal.CodeRecordNotPending {
		t.Fatalf("re-determining a processed record: %v, want %s", err, fiscal.CodeRecordNotPending)
	}
	set(time.Date(2026, 7, 5, 12, 0, 0, 0, time.UTC))
	q1r, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx := res.Record.Ledger.Index
	if q1r.Excluded.Pending.Records != 0 || !slices.ContainsFunc(q1r.NotInOSS, func(s returns.Summary) bool { return slices.Contains(s.LedgerIndexes, idx) }) {
		t.Fatalf("Q1 after the resolution: pending %+v, notInOss %+v", q1r.Excluded.Pending, q1r.NotInOSS)
	}
	index := "[" + strconv.FormatInt(idx, 10) + "]"
	if !slices.ContainsFunc(q1r.Review, func(l string) bool {
		return strings.Contains(l, index) && strings.Contains(l, "2026-Q2") && strings.Contains(l, "61(1)") && strings.Contains(l, "notInOss")
	}) {
		t.Errorf("Q1 review %q: want the sale resolved outside the OSS in 2026-Q2 (ledger index %s) named, with why no adjustment follows (Art. 61(1))", q1r.Review, index)
	}
}
