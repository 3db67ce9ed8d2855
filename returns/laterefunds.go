package returns

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/refunds"
)

// A refund is dated by its local day in the taxing state
// (refunds.Refund.RefundDate), and a refund whose transfer the chain
// proves by its block's time: a transfer of one quarter may be recorded in
// a later one, after the return of its own quarter was submitted. That
// return then did not declare it, and "changes to the figures contained in
// a VAT return ... shall, after the submission of that VAT return, be
// made only by adjustments in a subsequent return" (Art. 61(1)
// Implementing Regulation (EU) No 282/2011,
// https://datenbank.nwb.de/Dokument/495230_61). The ledger does not know
// when a return was submitted, so, as for a supply recorded after its
// quarter (lateReview, changedReview), the refund stays where its date
// puts it and both returns say so: the return of its date's quarter, that
// its figures changed after the quarter ended (refundsChangedReview), and
// the return of the quarter it was recorded in, that it adjusts the
// period of the supply it corrects if that return was already submitted
// (lateRefundReview).

// refundsSince calls fn with every refund of the account at a ledger index
// in (after, size), in ledger order (entriesSince); only a refund's entry
// ("<settlement id>-refund-<n>") is read, as Books.Indexed reads it.
func refundsSince(b *fiscal.Books, after, size int64, fn func(rf *refunds.Refund) error) error {
	return entriesSince(b, after, size, func(entryID string) error {
		if !isRefundID(entryID) {
			return nil
		}
		raw, err := b.Indexed(entryID, refunds.ObjectRefund)
		if err != nil {
			return err
		}
		var rf refunds.Refund
		if err := json.Unmarshal(raw, &rf); err != nil {
			return &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored refund " + entryID + " is unreadable", Err: err}
		}
		return fn(&rf)
	})
}

// isRefundID reports whether an entry id is a refund's: "<settlement
// id>-refund-<n>", n ≥ 1.
func isRefundID(id string) bool {
	const sep = "-refund-"
	i := strings.LastIndex(id, sep)
	if i <= 0 {
		return false
	}
	n, err := strconv.Atoi(id[i+len(sep):])
	return err == nil && n >= 1 && strconv.Itoa(n) == id[i+len(sep):]
}

// lateRefundReview says, per quarter of the supplies they correct, which
// refunds recorded in p, this quarter, are dated in an earlier quarter (by
// that quarter): each is in the return of its date's quarter (its line, or
// a correction there), and if that return was submitted before the refund
// was recorded, it is declared here as an adjustment of the supply's
// period (Art. 61(1) Implementing Regulation (EU) No 282/2011), unless
// that period's return was due more than three years before this one's
// (Art. 61(2); barredReview).
func lateRefundReview(late map[string][]int64, p Period) []string {
	return perKey(late, func(k string, idx []int64) string {
		dated, supplied, _ := strings.Cut(k, "|")
		s := fmt.Sprintf("%d refunds of OSS supplies of %s dated in %s were recorded in this quarter (ledger indexes %v): they are in the return of %s; "+
			"if that return was submitted before they were recorded", len(idx), supplied, dated, idx, dated)
		if barred(supplied, p) {
			return s + ", " + barredReview(supplied)
		}
		return s + fmt.Sprintf(", declare them here as adjustments of %s (Art. 61(1) Implementing Regulation (EU) No 282/2011), which this return does not do", supplied)
	})
}

// refundsChangedReview says which refunds in the figures of p, this
// return's quarter (its lines or corrections), were recorded after it
// ended, per quarter in which that happened: a return of p submitted
// before then did not have them, and the return of that quarter names
// them for the adjustment (lateRefundReview).
func refundsChangedReview(recorded map[string][]int64, p Period) []string {
	return perKey(recorded, func(q string, idx []int64) string {
		return fmt.Sprintf("%d refunds dated in this quarter were recorded in %s, after it ended (ledger indexes %v): they are in this return's figures now; "+
			"a return of this quarter submitted before then did not declare them, and they are declared as adjustments in a subsequent return (Art. 61(1) Implementing Regulation (EU) No 282/2011), not by filing this one again; the return of %s names them",
			len(idx), q, idx, q)
	})
}
