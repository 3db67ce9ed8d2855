package refunds_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundNamingAnotherSalesPaymentIsRefused: the refund transfer goes
// from the settlement's receiver back to its payer; a transaction the
// ledger records as a sale's payment (buyer to seller) is not one. The
// engine refused the settlement's own payment, but took another sale's
// (of the same account or another) as the refund transfer wherever the
// chain is not checked: the refund and its credit note said the amount was
// paid back by a transfer that an auditor following the hash finds to be
// a buyer's payment to a seller.
func TestRefundNamingAnotherSalesPaymentIsRefused(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	other := fiscaltest.Books(t, e, 1)
	ctx := context.Background()
	a := settleOK(t, b, request(301, "11.90", "DE", "2026-04-10T14:30:00Z"))
	sameAccount := settleOK(t, b, request(302, "5.00", "FR", "2026-04-10T15:30:00Z"))
	otherAccount := settleOK(t, other, request(303, "7.00", "IT", "2026-04-10T16:30:00Z"))
	for _, sale := range []*fiscal.Record{sameAccount, otherAccount} {
		tx := &refunds.Transaction{Network: sale.Settlement.Network, TxHash: sale.Settlement.TxHash}
		_, err := refunds.Create(ctx, b, a.ID, refunds.Request{AmountUSDC: "1.00", Transaction: tx}, "")
		var fe *fiscal.Error
		if !asError(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/transaction/txHash" {
			t.Fatalf("refund of %s naming the payment of %s: %v, want BAD_REQUEST /transaction/txHash", a.ID, sale.ID, err)
		}
	}
	// A transfer no sale paid with is taken.
	res, err := refunds.Create(ctx, b, a.ID, refunds.Request{AmountUSDC: "1.00", Transaction: &refunds.Transaction{Network: a.Settlement.Network, TxHash: fiscaltest.TxHash(304)}}, "")
	if err != nil || res.Refund.Transaction == nil || res.Refund.Transaction.TxHash != fiscaltest.TxHash(304) {
		t.Fatalf("refund with its own transfer: %+v, %v", res, err)
	}
}
