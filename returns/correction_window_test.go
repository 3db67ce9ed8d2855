package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/refunds"
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
	ret, late, kept := correctionWindowReturn(t)
	var periods []string
	for _, c := range ret.Corrections {
		periods = append(periods, c.OriginalPeriod)
		for _, i := range c.LedgerIndexes {
			if i == late.Ledger.Index {
				t.Errorf("the refund of %s (ledger index %d) is a correction of %s, after the three years of Art. 61(2)", late.OriginalSettlement.Timestamp, i, c.OriginalPeriod)
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

// correctionWindowReturn records the two sales and their refunds and
// returns the return of Q2 2027 with the refund of Q1 2024 (late) and that
// of Q2 2024 (kept).
func correctionWindowReturn(t *testing.T) (ret *returns.Return, late, kept *refunds.Refund) {
	t.Helper()
	b, set := newBooksClock(t, time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC))
	old := settle(t, b, 1, sale{amount: "119", country: "DE", at: "2024-01-15T10:00:00Z"})[0]
	set(time.Date(2024, 4, 15, 12, 0, 0, 0, time.UTC))
	inWindow := settle(t, b, 2, sale{amount: "238", country: "DE", at: "2024-04-15T10:00:00Z"})[0]
	if old.ReviewStatus != fiscal.StatusProcessed || inWindow.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("sales %s %s, want both processed", old.ReviewStatus, inWindow.ReviewStatus)
	}
	set(time.Date(2027, 5, 10, 12, 0, 0, 0, time.UTC))
	late = refund(t, b, old.ID, "", "r-old")
	kept = refund(t, b, inWindow.ID, "", "r-in")
	// After the quarter; its period-end rate is not embedded: a
	// provisional return, which corrects as a final one does.
	set(time.Date(2027, 7, 5, 12, 0, 0, 0, time.UTC))
	ret, _, err := returns.OSS(context.Background(), b, returns.Period{Year: 2027, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ret, late, kept
}

// TestCSVCorrectionRowsSayTheirRate: the CSV form of the return above has
// the time-barred refund in its own row, and the correction's row names
// the rate its EUR figures were converted at (the original period's end
// rate, Correction.USDPerEUR), as the JSON does: a row read alone must say
// how its figures were made. The column was left empty, and the
// time-barred bucket had no row.
func TestCSVCorrectionRowsSayTheirRate(t *testing.T) {
	ret, late, _ := correctionWindowReturn(t)
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var corr, barred []string
	for _, r := range rows[1:] {
		switch r[col["section"]] {
		case returns.SectionCorrection:
			corr = r
		case returns.SectionTimeBarred:
			barred = r
		}
	}
	c := ret.Corrections[0]
	if c.USDPerEUR == nil || corr == nil || corr[col["usdPerEur"]] != c.USDPerEUR.Raw || corr[col["vatEur"]] != c.VATEUR {
		t.Errorf("correction row %q; the JSON correction converts at %+v to VAT %s", corr, c.USDPerEUR, c.VATEUR)
	}
	if barred == nil || barred[col["ledgerIndexes"]] != strconv.FormatInt(late.Ledger.Index, 10) || barred[col["amountUsdc"]] != ret.Excluded.TimeBarred.AmountUSDC {
		t.Errorf("time-barred row %q, want the refund at index %d", barred, late.Ledger.Index)
	}
}
