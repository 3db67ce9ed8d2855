package refunds_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundTransferBeforeTheSaleIsRefused: a refund is a price reduction
// "after the supply takes place" (Art. 90(1) Directive 2006/112/EC), and a
// refund's transfer is its payment back. A transfer from the receiver to
// the payer of the right amount mined before the sale's own transfer is
// not a refund of that sale: recorded, it dated the refund (RefundDate, by
// the block) in the quarter before the supply, so the OSS return of that
// earlier quarter carried a "correction" of a later period. The chain's
// fact contradicts the refund; it is refused as CHAIN_VERIFY_FAILED on the
// transaction and writes nothing.
func TestRefundTransferBeforeTheSaleIsRefused(t *testing.T) {
	ctx := context.Background()
	refundAt := time.Date(2025, 12, 20, 10, 0, 0, 0, time.UTC)
	saleAt := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
	req := request(1, "10", "DE", saleAt.Format(time.RFC3339))
	refundTx := fiscaltest.TxHash(2)
	// The transfer back in block 10, dated refundAt; the sale in block 20,
	// dated saleAt (the blocks between are not read).
	node := fakechain.New(refundAt.Add(-10 * fakechain.BlockSeconds * time.Second))
	node.MineTransfer(refundTx, 10, req.ReceiverWallet, req.PayerWallet, 4_000_000)
	node.Edit(func(c *fakechain.Chain) { c.Genesis = saleAt.Add(-20 * fakechain.BlockSeconds * time.Second).Unix() })
	node.MineTransfer(req.TxHash, 20, req.PayerWallet, req.ReceiverWallet, 10_000_000)
	node.Advance(2)
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{node.Serve(t)}, Timeout: 5 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, saleAt.Add(time.Hour), irishSeller)
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	res, err := b.Settle(ctx, req, "")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("sale: %v", err)
	}
	size := e.Ledger().Size()
	got, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "4",
		Transaction: &refunds.Transaction{Network: evmverify.NetworkBase, TxHash: refundTx}}, "")
	var fe *fiscal.Error
	if !asError(err, &fe) || fe.Code != fiscal.CodeChainVerifyFailed || fe.Field != "/transaction/txHash" {
		date := ""
		if got != nil {
			date = got.Refund.RefundDate
		}
		t.Fatalf("a refund transfer mined on %s, before the sale of %s: %v (refund dated %q), want CHAIN_VERIFY_FAILED at /transaction/txHash",
			refundAt.Format(time.DateOnly), saleAt.Format(time.DateOnly), err, date)
	}
	if n := e.Ledger().Size(); n != size {
		t.Errorf("the refused refund wrote %d entries", n-size)
	}
}
