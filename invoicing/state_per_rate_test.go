package invoicing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestSummaryDoesNotMergeTwoStatesVATAtOneRate: an Irish seller below the
// Art. 59c threshold taxes its first April sale to a Polish consumer at
// origin (Irish VAT 23 %, mention "Place of supply: IE"); the next sale
// takes it over the threshold and the rest are taxed in Poland under the
// OSS, also at 23 %. A summary has one line and one VAT breakdown per
// category and rate (EN 16931 BG-23), so it put the Irish and the Polish
// supplies on one 23 % line under the mention "Place of supply: IE":
// an invoice stating Ireland as the place of supply of supplies made in
// Poland (Art. 58, 226(11a) Directive 2006/112/EC), and one taxable
// amount mixing VAT due to two states. The summary is refused
// (INVOICE_RULES_FAILED, nothing issued) naming both states, as a month
// that mixes what one invoice cannot state is; each supply can be
// invoiced on its own (IssueAlone), and the invoice of the Irish supply
// carries the mention.
func TestSummaryDoesNotMergeTwoStatesVATAtOneRate(t *testing.T) {
	c, b, recs, wallet := crossingMonth(t, "PL")
	ctx := context.Background()
	first, last := recs[0].Classification, recs[2].Classification
	if first.TaxingCountry == last.TaxingCountry || first.Category != last.Category ||
		!first.RatePercent.Decimal().Equal(last.RatePercent.Decimal()) || first.InvoiceNote == "" {
		t.Fatalf("supplies taxed in %s at %v (%q) and %s at %v: the test needs two states' VAT at one rate",
			first.TaxingCountry, first.RatePercent, first.InvoiceNote, last.TaxingCountry, last.RatePercent)
	}
	c.set(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
	q := invoicing.SummaryRequest{Period: "2026-04", Buyer: wallet}
	res, err := invoicing.Issue(ctx, b, q)
	if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed {
		if len(res) == 1 {
			t.Fatalf("summary issued with totals %+v; want INVOICE_RULES_FAILED", res[0].Summary.Totals)
		}
		t.Fatalf("Issue = %v; want INVOICE_RULES_FAILED", err)
	}
	for _, want := range []string{first.TaxingCountry, last.TaxingCountry, recs[0].ID, first.SupplyDate} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %s: %v", want, err)
		}
	}
	if by, err := invoicing.InvoicedBy(ctx, b, recs[1].ID); err != nil || by != "" {
		t.Fatalf("InvoicedBy = %q, %v; want no summary", by, err)
	}
	// The refusal is the one a refund reads, and the Irish supply can be
	// invoiced on its own with its mention.
	fe, err := invoicing.Refusal(ctx, b, recs[0])
	if err != nil || fe == nil || fe.Code != fiscal.CodeInvoiceRulesFailed {
		t.Fatalf("Refusal = %v, %v", fe, err)
	}
	alone, err := invoicing.IssueAlone(ctx, b, recs[0], fe.Detail)
	if err != nil {
		t.Fatal(err)
	}
	_, u, err := invoicing.Summary(ctx, b, alone.Summary.ID)
	if err != nil || !strings.Contains(string(u), first.InvoiceNote) {
		t.Fatalf("the Irish supply's own invoice (%v) lacks %q", err, first.InvoiceNote)
	}
}
