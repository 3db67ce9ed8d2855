package refunds_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundWithoutTransferStatesNoRefundTransfer: a refund recorded
// without its transfer (no transaction) has no refund transaction to
// name. Its document, the API's refund and the event's data, must not
// state the sale's own transfer as the refund's payment: a review found
// payment.txHash carrying the sale's hash, with payer and receiver
// swapped, which an auditor reads as a transfer from the seller back to
// the buyer that the chain does not hold (the sale's hash is its
// transfer from the buyer to the seller, of another amount). The
// refund's payment states what is known of it (the refunded amount, from
// the settlement's receiver to its payer, the refund's time), and the
// sale's payment stays under originalSettlement.
func TestRefundWithoutTransferStatesNoRefundTransfer(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	sale := settleOK(t, b, request(900, "11.90", "DE", "2026-04-10T14:30:00Z"))
	res, err := refunds.Create(ctx, b, sale.ID, refunds.Request{AmountUSDC: "5.00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	list, err := refunds.List(ctx, b, sale.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	stored, err := refunds.Document(ctx, b, sale.ID, res.Refund.ID)
	if err != nil {
		t.Fatal(err)
	}
	for what, raw := range map[string][]byte{"the created refund": res.JSON, "the stored refund": stored} {
		var doc struct {
			Payment            map[string]any `json:"payment"`
			OriginalSettlement map[string]any `json:"originalSettlement"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if tx, ok := doc.Payment["txHash"].(string); ok && strings.EqualFold(tx, sale.Settlement.TxHash) {
			t.Errorf("%s states the sale's own transfer %s as its payment.txHash", what, tx)
		}
		if doc.Payment["amountUsdc"] != "5.000000" || doc.Payment["payerWallet"] != sale.Settlement.ReceiverWallet || doc.Payment["receiverWallet"] != sale.Settlement.PayerWallet {
			t.Errorf("%s: payment %v, want 5.000000 USDC from the settlement's receiver to its payer", what, doc.Payment)
		}
		if doc.OriginalSettlement["txHash"] != sale.Settlement.TxHash {
			t.Errorf("%s: originalSettlement %v, want the sale's payment", what, doc.OriginalSettlement)
		}
	}
	if r := list[0]; r.Transaction != nil || strings.EqualFold(r.Payment.TxHash, sale.Settlement.TxHash) {
		t.Errorf("listed refund: transaction %+v, payment tx %q", r.Transaction, r.Payment.TxHash)
	}
}
