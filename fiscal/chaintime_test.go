package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// oneTransferNode is a fake Base node holding one mined USDC transfer: tx
// in block 10, whose time is blockTime, head 12.
func oneTransferNode(t *testing.T, tx, from, to string, value int64, blockTime time.Time) string {
	t.Helper()
	node := fakechain.New(blockTime.Add(-10 * fakechain.BlockSeconds * time.Second))
	node.MineTransfer(tx, 10, from, to, value)
	node.Advance(2)
	return node.Serve(t)
}

// TestChainVerifiedSettlementTimeIsTheBlockTime: with chain verification
// required, a settlement is proven on chain, and its timestamp (the
// chargeable event: the VAT rate, the ECB rate day, the OSS quarter) must
// be the time the chain proves, the block's, within the clock skew the
// engine allows (chain verification checks the chain id, the receipt status
// and the block timestamp: evmverify/doc.go). A settlement claiming 31 March for a transfer
// the chain dates 2 April was recorded as "verified" in the first
// quarter, its record contradicting its own verification facts.
func TestChainVerifiedSettlementTimeIsTheBlockTime(t *testing.T) {
	blockTime := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	req := fiscaltest.Request(1, "10", "DE", "2026-03-31T23:59:00Z")
	url := oneTransferNode(t, req.TxHash, req.PayerWallet, req.ReceiverWallet, 10_000_000, blockTime)
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{url}, Timeout: 5 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, blockTime.Add(time.Hour), fiscaltest.IrishSeller)
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()

	_, err = b.Settle(ctx, req, "")
	if fiscaltest.Code(err) != fiscal.CodeChainVerifyFailed || !strings.Contains(err.Error(), evmverify.ReasonTimeMismatch) {
		t.Fatalf("settlement timestamped 2 days before its block: %v, want CHAIN_VERIFY_FAILED %s", err, evmverify.ReasonTimeMismatch)
	}
	if n := e.Ledger().Size(); n != 0 {
		t.Fatalf("ledger size %d after a refused settlement", n)
	}

	// The merchant's clock a minute after the block: the same payment.
	req.Timestamp = blockTime.Add(time.Minute).Format(time.RFC3339)
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Record.Verification.Facts; res.Record.Verification.Chain != "verified" || f == nil || !f.BlockTime.Equal(blockTime) {
		t.Fatalf("verification %+v", res.Record.Verification)
	}
}
