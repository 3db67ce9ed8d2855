package returns_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/returns"
)

// negativeStateReturn is the return of Q1 2026 of a seller whose German
// sale of Q4 2025 is refunded in full in Q1 2026 (a correction of 2025-Q4
// and no German sale in Q1: Germany's balance is negative) and who sold
// to France in Q1 (France's balance is positive).
func negativeStateReturn(t *testing.T) *returns.Return {
	t.Helper()
	b, set := newBooksClock(t, time.Date(2025, 11, 10, 12, 0, 0, 0, time.UTC))
	de := settle(t, b, 1, sale{amount: "238.00", country: "DE", at: "2025-11-10T10:00:00Z"})[0]
	set(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC))
	refund(t, b, de.ID, "", "r-de")
	settle(t, b, 2, sale{amount: "24.40", country: "FR", at: "2026-02-10T10:00:00Z"})
	set(testNow)
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ret
}

// TestNegativeStateIsNotOffset: when corrections leave the balance of a
// member state of consumption negative, the return's result per state is
// not offset against another state's positive balance: the amount to pay
// is the sum of the positive balances, and a negative one is refunded by
// that member state of consumption under its own procedure (the Spanish
// tax agency's instructions for the OSS return, form 369, section 5,
// https://sede.agenciatributaria.gob.es/Sede/en_gb/ayuda/manuales-videos-folletos/manuales-ayuda-presentacion/modelo-369/presentacion-regimen-exterior-union/5-resultado-autoliquidacion-em-consumo.html;
// the VAT paid is distributed per member state of consumption, Art. 369i
// Directive 2006/112/EC). Until this version the return gave only the net
// of all states (total.vatEur), which asked to pay France's VAT less the
// German refund.
func TestNegativeStateIsNotOffset(t *testing.T) {
	ret := negativeStateReturn(t)
	if ret.Status != returns.StatusFinal {
		t.Fatalf("status %s (%s), want final", ret.Status, ret.StatusReason)
	}
	pos, posInv := decimal.Zero, decimal.Zero
	var negative []string
	for _, st := range ret.MemberStates {
		v, iv := decimal.RequireFromString(st.VATEUR), decimal.RequireFromString(st.InvoiceVATEUR)
		if v.IsPositive() {
			pos = pos.Add(v)
		} else if v.IsNegative() {
			negative = append(negative, st.MemberState)
		}
		if iv.IsPositive() {
			posInv = posInv.Add(iv)
		}
	}
	if len(negative) != 1 || negative[0] != "DE" || pos.IsZero() {
		t.Fatalf("scenario: member states %+v, want DE negative and FR positive", ret.MemberStates)
	}
	p := ret.Payable
	if p.VATEUR != pos.StringFixed(2) || p.InvoiceVATEUR != posInv.StringFixed(2) {
		t.Errorf("payment VAT %s (invoices %s), want the positive balances' %s (%s); total.vatEur nets them to %s",
			p.VATEUR, p.InvoiceVATEUR, pos.StringFixed(2), posInv.StringFixed(2), ret.Total.VATEUR)
	}
	if len(p.RefundedBy) != 1 || p.RefundedBy[0] != "DE" || p.Note == "" {
		t.Errorf("payment %+v, want DE's negative balance named as refunded by DE, with the reason", p)
	}
}

// TestCSVSaysWhatIsPayable: the CSV form of that return has the row of
// section "payable" with the payable VAT and the member state refunding
// its negative balance, so that a reader of the CSV alone does not net the
// rows.
func TestCSVSaysWhatIsPayable(t *testing.T) {
	ret := negativeStateReturn(t)
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(returns.CSVHeader, name) }
	var found [][]string
	for _, row := range rows[1:] {
		if row[col("section")] == returns.SectionPayable {
			found = append(found, row)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d rows of section payable, want 1", len(found))
	}
	row := found[0]
	if row[col("vatEur")] != ret.Payable.VATEUR || row[col("invoiceVatEur")] != ret.Payable.InvoiceVATEUR ||
		!strings.Contains(row[col("note")], "refundedBy DE") {
		t.Errorf("payable row %v, want VAT %s (invoices %s) and DE named", row, ret.Payable.VATEUR, ret.Payable.InvoiceVATEUR)
	}
}

// TestCSVHasTheMemberStateTotals: the return gives, per member state of
// consumption, the VAT due: its lines and corrections (Art. 369g(1)
// Directive 2006/112/EC; memberStates in the JSON). The CSV had the lines
// and corrections only, so a reader of the CSV summed them, and could not
// see Germany's balance negative; it has a row of section "member_state"
// per state now, with its VAT, and its corrections' part in "note".
func TestCSVHasTheMemberStateTotals(t *testing.T) {
	ret := negativeStateReturn(t)
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(returns.CSVHeader, name) }
	got := map[string][]string{}
	for _, row := range rows[1:] {
		if row[col("section")] == returns.SectionMemberState {
			got[row[col("memberState")]] = row
		}
	}
	if len(got) != len(ret.MemberStates) {
		t.Fatalf("%d member state rows, want %d (%+v)", len(got), len(ret.MemberStates), ret.MemberStates)
	}
	for _, st := range ret.MemberStates {
		row := got[st.MemberState]
		if row == nil || row[col("vatEur")] != st.VATEUR || row[col("invoiceVatEur")] != st.InvoiceVATEUR ||
			st.CorrectionsVATEUR != "" && !strings.Contains(row[col("note")], "correctionsVatEur "+st.CorrectionsVATEUR) {
			t.Errorf("member state row %v, want %+v", row, st)
		}
	}
}
