package returns_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/returns"
)

// TestReturnStatesHowItsInvoiceFiguresDifferFromTheInvoices: a line's
// invoiceVatEur is the records' exact VAT, at each chargeable event's
// rate, summed and rounded once; the summary invoice of the same supplies
// states per VAT rate its taxable amount times the rate, rounded (EN 16931
// BR-CO-17, invoicing.SummaryVAT). Where a return line is exactly one
// summary's rate the two may differ by a cent. The return declares VAT at
// the period-end rate (vatEur, Art. 369h(2) Directive 2006/112/EC); the
// invoice figures are evidence to reconcile, so the return keeps the exact
// sum and says, in fx.invoiceRule, what its invoice figures are and why an
// issued invoice's VAT may differ. Until this version nothing said so, and
// the package's documentation called them "the sum of the invoices' own
// EUR amounts", which they are not.
//
// The test finds, among seeded random months of one consumer's German
// purchases (standard and reduced rate), one where a line and its
// summary's rate differ, so that the statement is about a real case.
func TestReturnStatesHowItsInvoiceFiguresDifferFromTheInvoices(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(11))
	for trial := 0; trial < 60; trial++ {
		s := ossSeller()
		s.Invoicing = fiscal.InvoicingSummaryMonthly
		cfg := fiscaltest.Config(t, testNow, s)
		cfg.VIES = fiscaltest.LawVIES(testNow)
		b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
		for i := 0; i < 4; i++ {
			req := fiscaltest.Request(i, decimal.New(int64(1+rng.Intn(2000000)), -6).String(), "DE", fmt.Sprintf("2026-02-%02dT10:00:00Z", 2+i))
			if i%2 == 1 {
				req.SupplyKind = "ebook"
			}
			if _, err := b.Settle(ctx, req, fmt.Sprintf("s-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-02", Buyer: fiscaltest.Request(0, "1", "DE", "").PayerWallet})
		if err != nil || len(res) != 1 || res[0].Summary == nil {
			t.Fatalf("summary: %v %+v", err, res)
		}
		ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ret.Lines {
			for _, st := range res[0].Summary.Totals {
				if st.RatePercent != l.RatePercent || st.Supplies != l.Records || st.VATEUR == l.InvoiceVATEUR {
					continue
				}
				// A line that is exactly this summary rate, a cent apart.
				rule := ret.FX.InvoiceRule
				if !strings.Contains(rule, "BR-CO-17") || !strings.Contains(rule, "vatEur") || !strings.Contains(rule, "invoiceVatEur") {
					t.Fatalf("line %s %s %%: invoiceVatEur %s, the summary invoice's VAT %s, and the return says of its invoice figures only %q",
						l.MemberState, l.RatePercent, l.InvoiceVATEUR, st.VATEUR, rule)
				}
				return
			}
		}
	}
	t.Fatal("no month of the seeded trials has a line a cent off its summary invoice's rate")
}
