package invoicing_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundWithoutTransferNamesNoTransferAnywhere: a refund recorded
// without its transfer (no transaction) of a supply with its own invoice
// and of a supply a summary invoice covers. Nothing the account is served
// for the refund presents the sale's transfer as the refund's payment: not
// the refund document's payment (nor the refund as listed in the record's
// view), and not the credit note, which states the amount as payable (not
// paid) with no payment id and no transaction in its note. The sale's
// hash stays where it belongs: originalSettlement. (The refund's
// service.receipt/4.0.0 must state a tx_hash, committed: there it names
// the payment refunded, with chain not_performed; the receipt format is
// not this test's.)
func TestRefundWithoutTransferNamesNoTransferAnywhere(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{fiscal.InvoicingPerPayment, fiscal.InvoicingSummaryMonthly} {
		c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
		b := summaryEngine(t, mode, c)
		sale, err := b.Settle(ctx, fiscaltest.Request(7, "11.90", "DE", "2026-03-10T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
		if mode == fiscal.InvoicingSummaryMonthly {
			if _, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"}); err != nil {
				t.Fatal(err)
			}
		}
		tx := strings.TrimPrefix(sale.Record.Settlement.TxHash, "0x")
		res, err := refunds.Create(ctx, b, sale.Record.ID, refunds.Request{AmountUSDC: "5.00"}, "")
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if res.Refund.Payment.TxHash != "" || res.Refund.Transaction != nil || res.Refund.Verification.Chain != "not_performed" {
			t.Errorf("%s: refund payment %+v, transaction %+v, verification %+v", mode, res.Refund.Payment, res.Refund.Transaction, res.Refund.Verification)
		}
		if res.Refund.OriginalSettlement.TxHash != sale.Record.Settlement.TxHash {
			t.Errorf("%s: originalSettlement %+v, want the sale's payment", mode, res.Refund.OriginalSettlement)
		}
		cn, _, err := refunds.CreditNote(ctx, b, sale.Record.ID, res.Refund.ID)
		if err != nil {
			t.Fatalf("%s: credit note: %v", mode, err)
		}
		doc := string(compact(cn))
		if strings.Contains(strings.ToLower(doc), tx) || strings.Contains(doc, "<cbc:PaymentID>") || strings.Contains(doc, "<cbc:PrepaidAmount") {
			t.Errorf("%s: the credit note of a refund without transfer names a payment:\n%s", mode, cn)
		}
		if want := "<cbc:PayableAmount currencyID=\"EUR\">" + neg(res.Refund.FX.GrossEUR) + "</cbc:PayableAmount>"; !strings.Contains(doc, want) {
			t.Errorf("%s: the credit note does not state the refund as payable (%s):\n%s", mode, want, cn)
		}
		_, view, err := refunds.RecordView(ctx, b, sale.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		payment := string(view[strings.Index(string(view), `"refunds":`):])
		if i := strings.Index(payment, `"originalSettlement"`); i < 0 || strings.Contains(strings.ToLower(payment[:i]), tx) {
			t.Errorf("%s: the record's refunds present the sale's transfer as the refund's payment: %s", mode, payment)
		}
	}
}
