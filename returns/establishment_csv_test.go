package returns_test

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/fiscal402/fiscal402/returns"
)

// TestCSVFixedEstablishmentRowsNameItsVATNumber: the Union return gives
// the services supplied from a fixed establishment in another member state
// apart, with "the VAT identification number ... of that establishment"
// (Art. 369g(3) Directive 2006/112/EC; an item of the return's electronic
// message, Annex III Commission Implementing Regulation (EU) 2020/194). The
// JSON section has the number (Section.VATNumber); the CSV rows of the
// section named the establishment's country only, so a filer working from
// the CSV had no number to declare. WriteCSV is given a return with a
// French establishment's section, as OSS builds it.
func TestCSVFixedEstablishmentRowsNameItsVATNumber(t *testing.T) {
	line := func(state, pct string) returns.Line {
		return returns.Line{MemberState: state, RatePercent: pct, RateType: "standard", SupplyType: returns.SupplyServices,
			Amounts: returns.Amounts{Records: 1, AmountUSDC: "11.900000", InvoiceTaxableAmountEUR: "8.54", InvoiceVATEUR: "1.62"}, LedgerIndexes: []int64{3}}
	}
	ret := &returns.Return{Period: "2026-Q1", Status: returns.StatusProvisional, Scheme: "union",
		ID:    returns.Identification{Number: "IE1234567T", MemberState: "IE"},
		Lines: []returns.Line{line("AT", "20")},
		FixedEstablishments: []returns.Section{
			{Establishment: "FR", VATNumber: "FR40303265045", Lines: []returns.Line{line("DE", "19"), line("IT", "22")}},
			{Establishment: "NL", VATNumber: "NL123456789B01", Lines: []returns.Line{line("DE", "19")}},
		},
		Payable: returns.Payable{InvoiceVATEUR: "6.48", RefundedBy: []string{}},
	}
	var buf bytes.Buffer
	if err := returns.WriteCSV(&buf, ret); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(returns.CSVHeader, "establishmentVatNumber")
	sec, est := slices.Index(returns.CSVHeader, "section"), slices.Index(returns.CSVHeader, "establishment")
	want := map[string]string{}
	for _, s := range ret.FixedEstablishments {
		want[s.Establishment] = s.VATNumber
	}
	n := 0
	for _, row := range rows[1:] {
		if len(row) != len(returns.CSVHeader) {
			t.Fatalf("row %v has %d columns, the header %d", row, len(row), len(returns.CSVHeader))
		}
		switch row[sec] {
		case returns.SectionFixedEstablishment:
			n++
			if col < 0 || row[col] != want[row[est]] {
				t.Errorf("fixed-establishment row %v: want column establishmentVatNumber %q", row, want[row[est]])
			}
		case returns.SectionLine:
			if col >= 0 && row[col] != "" {
				t.Errorf("row %v of the member state of identification names an establishment's number", row)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d fixed-establishment rows, want 3", n)
	}
}
