package returns_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/returns"
)

// TestCorrectionAfterThreeYearsIsNotInTheReturn: changes to an OSS return
// are made by adjustments in a subsequent return "within three years of the
// date on which the initial return was required to be submitted" (Art.
// 61(2) Implementing Regulation (EU) No 282/2011); the initial return was
// due by the end of the month following its quarter (Art. 369f Directive
// 2006/112/EC). Two German sales are refunded in Q2 2027: one of Q2 2024,
// whose return was due on 2024-07-31 (the return of Q2 2027 is due on
// 2027-07-31, within three years), and one of Q1 2024, whose return was
// due on 2024-04-30 (the window closed on 2027-04-30, before the return of
// Q2 2027 can be submitted). Only the first is a correction; the second is
// discharged with the member state of consumption and is counted apart,
// with the reason. Until this version both were corrections.
func TestCorrectionAfterThreeYearsIsNotInTheReturn(t *testing.T) {
	ctx := context.Background()
	b, set := newBooksClock(t, time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC))
	old := settle(t, b, 1, sale{amount: "119", country: "DE", at: "2024-01-15T10:00:00Z"})[0]
	set(time.Date(2024, 4, 15, 12, 0, 0, 0, time.UTC))
	inWindow := settle(t, b, 2, sale{amount: "238", country: "DE", at: "2024-04-15T10:00:00Z"})[0]
	set(time.Date(2027, 5, 10, 12, 0, 0, 0, time.UTC))
	if old.ReviewStatus != "PROCESSED" {
		t.Fatalf("old sale %s %+v", old.ReviewStatus, old.ReviewReasons)
	}
	late := refund(t, b, old.ID, "", "r-old")
	kept := refund(t, b, inWindow.ID, "", "r-in")
	// After the quarter; its period-end rate is not embedded: a
	// provisional return, which corrects as a final one does.
	set(time.Date(2027, 7, 5, 12, 0, 0, 0, time.UTC))

	ret, _, err := returns.OSS(ctx, b, returns.Period{Year: 2027, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var periods []string
	for _, c := range ret.Corrections {
		periods = append(periods, c.OriginalPeriod)
		for _, i := range c.LedgerIndexes {
			if i == late.Ledger.Index {
				t.Errorf("the refund of %s (ledger index %d) is a correction of %s, after the three years of Art. 61(2)", old.Settlement.Timestamp, i, c.OriginalPeriod)
			}
		}
	}
	if len(ret.Corrections) != 1 || ret.Corrections[0].OriginalPeriod != "2024-Q2" ||
		len(ret.Corrections[0].LedgerIndexes) != 1 || ret.Corrections[0].LedgerIndexes[0] != kept.Ledger.Index {
		t.Errorf("corrections of %v, want one of 2024-Q2 (the refund at index %d)", periods, kept.Ledger.Index)
	}
	tb := ret.Excluded.TimeBarred
	if tb.Records != 1 || len(tb.LedgerIndexes) != 1 || tb.LedgerIndexes[0] != late.Ledger.Index || tb.AmountUSDC != "-"+late.AmountUSDC || tb.Reason == "" {
		t.Errorf("time-barred %+v, want the refund at index %d of -%s USDC with its reason", tb, late.Ledger.Index, late.AmountUSDC)
	}
	// Nothing of it in the member state's figures.
	for _, st := range ret.MemberStates {
		if st.MemberState == "DE" && len(ret.Corrections) == 1 && st.InvoiceVATEUR != ret.Corrections[0].InvoiceVATEUR {
			t.Errorf("DE VAT %s, want the 2024-Q2 correction's %s alone", st.InvoiceVATEUR, ret.Corrections[0].InvoiceVATEUR)
		}
	}
}
