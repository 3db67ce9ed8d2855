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

// TestSummaryOfSuppliesWithDifferentBuyerFactsIsRefused: one invoice
// names one customer, with its full name and address (Art. 226(5)
// Directive 2006/112/EC); a summary invoice (Art. 223) names the buyer
// of the supplies it details. A review found the summary taking the
// buyer's name, address, VAT number and country from the month's latest
// supply and stating them for every supply, whatever the earlier ones'
// records said (a consumer named at one payment and not at another,
// located in another country; a business whose address changed within the
// month). The records state both and the engine does not pick one: the
// summary is refused (INVOICE_RULES_FAILED, nothing written), naming the
// differing field, the supply that differs and the latest, as a supply
// under another state's rules refuses it (invoicelaw.SummaryRefusal).
func TestSummaryOfSuppliesWithDifferentBuyerFactsIsRefused(t *testing.T) {
	de := fiscaltest.LawBuyers()[0]
	cases := []struct {
		name   string
		first  func() fiscal.SettlementRequest
		latest func() fiscal.SettlementRequest
		buyer  string
		fields []string // what the refusal names
	}{
		{
			name: "consumer named once, then elsewhere",
			first: func() fiscal.SettlementRequest {
				r := fiscaltest.Request(60, "11.90", "DE", "2026-03-10T10:00:00Z")
				r.ConsumerName = "Alice Muster"
				return r
			},
			latest: func() fiscal.SettlementRequest { return fiscaltest.Request(61, "2.40", "FR", "2026-03-11T10:00:00Z") },
			buyer:  strings.ToLower(fiscaltest.Request(0, "1", "DE", "").PayerWallet),
			fields: []string{"name (BT-44)", "country (BT-55)"},
		},
		{
			name: "business that moved",
			first: func() fiscal.SettlementRequest {
				r := fiscaltest.LawRequest(62, de, true, true)
				r.Timestamp = "2026-03-10T14:30:00Z"
				return r
			},
			latest: func() fiscal.SettlementRequest {
				r := fiscaltest.LawRequest(63, de, true, true)
				r.Timestamp = "2026-03-20T14:30:00Z"
				r.ConsumerAddress.Street = "9 New Street"
				return r
			},
			buyer:  de.VATNumber,
			fields: []string{"street (BT-50)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC))
			ctx := context.Background()
			b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
			var recs []*fiscal.Record
			for _, req := range []fiscal.SettlementRequest{tc.first(), tc.latest()} {
				res, err := b.Settle(ctx, req, "")
				if err != nil {
					t.Fatal(err)
				}
				if inv := res.Record.Invoicing; res.Record.ReviewStatus != fiscal.StatusProcessed || inv == nil || inv.Invoice != "summary" {
					t.Fatalf("supply %s: %s %v %+v; want one a summary covers", res.Record.ID, res.Record.ReviewStatus, res.Record.ReviewReasons, inv)
				}
				recs = append(recs, res.Record)
			}
			if recs[0].Invoicing.Buyer != recs[1].Invoicing.Buyer || recs[0].Invoicing.TaxCountry != recs[1].Invoicing.TaxCountry {
				t.Fatalf("the supplies go to two summaries (%+v, %+v); the test needs one", recs[0].Invoicing, recs[1].Invoicing)
			}
			c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
			size := b.Engine().Ledger().Size()
			res, err := issueOne(ctx, b, invoicing.SummaryRequest{Period: "2026-03", Buyer: tc.buyer})
			if err == nil {
				t.Fatalf("summary %s issued for %d supplies naming one buyer; the supply %s states another", res.Summary.ID, res.Summary.Supplied, recs[0].ID)
			}
			msg := err.Error()
			want := append([]string{recs[0].ID, recs[0].Classification.SupplyDate, recs[1].ID}, tc.fields...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal %q does not name %s", msg, w)
				}
			}
			if fiscaltest.Code(err) != fiscal.CodeInvoiceRulesFailed {
				t.Errorf("refusal code %s, want %s", fiscaltest.Code(err), fiscal.CodeInvoiceRulesFailed)
			}
			if got := b.Engine().Ledger().Size(); got != size {
				t.Errorf("the refused summary wrote %d entries", got-size)
			}
			if cov, err := invoicing.Covering(ctx, b, recs[0].ID); err != nil || cov.Invoice != invoicing.CoveredLater {
				t.Errorf("coverage after the refusal: %+v %v", cov, err)
			}
		})
	}
}
