package invoicelaw_test

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryRefusal: whether one supply may be on a summary invoice
// under a state's invoicing rules (Art. 219a, 223 Directive 2006/112/EC):
// its law must be that state's, and the law must allow it as InvoicedBy
// decides for summary_monthly; the refusal says why, "" when it may.
func TestSummaryRefusal(t *testing.T) {
	det := vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: vat.RegimeOSSB2C, TaxingCountry: "DE", Scheme: vat.SchemeUnion,
		Category: vat.CategoryStandard, SupplyDate: "2026-04-10"}
	ie := invoicelaw.Law{TaxCountry: "IE", Basis: "basis of IE"}
	if got := invoicelaw.SummaryRefusal(det, ie, "IE"); got != "" {
		t.Fatalf("an Irish OSS supply on an Irish summary: refused %q", got)
	}
	if by, _ := invoicelaw.InvoicedBy(invoicelaw.ModeSummaryMonthly, det, ie, true); by != invoicelaw.BySummary {
		t.Fatalf("InvoicedBy %s: the case must be a summary one", by)
	}
	cases := []struct {
		name  string
		det   vat.Determination
		law   invoicelaw.Law
		state string
		want  string
	}{
		{"another state's rules", det, invoicelaw.Law{TaxCountry: "DE", Basis: "basis of DE"}, "IE", "DE"},
		{"no state's rules", det, invoicelaw.Law{}, "IE", "no state"},
		{"no national rule on file", det, invoicelaw.Law{TaxCountry: "FR"}, "FR", "no national rule"},
		{"outside the scope", func() vat.Determination { d := det; d.Category = vat.CategoryOutsideScope; return d }(), ie, "IE", "not subject to EU VAT"},
		{"no date of supply", func() vat.Determination { d := det; d.SupplyDate = ""; return d }(), ie, "IE", "no date of supply"},
	}
	for _, c := range cases {
		got := invoicelaw.SummaryRefusal(c.det, c.law, c.state)
		if got == "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: refusal %q, want one naming %q", c.name, got, c.want)
		}
	}
}
