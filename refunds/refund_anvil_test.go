package refunds_test

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/anviltest"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRefundVerifiedOnAnvil: with chain mode required, a refund's transfer
// is checked on a real chain (anvil with Circle's USDC): USDC back from the
// settlement's receiver to its payer, of exactly the refunded amount. A
// transfer the other way, of another amount, or a hash the chain does not
// know is refused and writes nothing; the right one is recorded with the
// chain's facts.
func TestRefundVerifiedOnAnvil(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)})
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{chain.RPCURL()}, Timeout: 5 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, refundNow, irishSeller)
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()

	payTx := chain.Transfer(t, chain.Payer(), chain.PayTo(), big.NewInt(10_000_000))
	req := request(1, "10", "DE", "2026-04-10T09:00:00Z")
	req.TxHash, req.PayerWallet, req.ReceiverWallet = payTx, chain.Payer(), chain.PayTo()
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	orig := res.Record
	if orig.Verification.Chain != "verified" || orig.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("settlement %s %s %v", orig.Verification.Chain, orig.ReviewStatus, orig.ReviewReasons)
	}

	refund := func(tx, amount string) (*refunds.Result, error) {
		return refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: amount,
			Transaction: &refunds.Transaction{Network: anviltest.Network, TxHash: tx}}, "")
	}
	size := e.Ledger().Size()
	// Wrong direction: another payment from the payer to the receiver.
	wrongSender := chain.Transfer(t, chain.Payer(), chain.PayTo(), big.NewInt(4_000_000))
	// Wrong amount: 3 USDC back, 4 claimed.
	wrongAmount := chain.Transfer(t, chain.PayTo(), chain.Payer(), big.NewInt(3_000_000))
	// Another token from the right sender to the right receiver.
	unknown := "0x" + strings.Repeat("ab", 32)
	for name, tx := range map[string]string{"wrong sender": wrongSender, "wrong amount": wrongAmount, "unknown tx": unknown} {
		_, err := refund(tx, "4")
		var fe *fiscal.Error
		if !asError(err, &fe) || fe.Code != fiscal.CodeChainVerifyFailed || fe.Field != "/transaction/txHash" {
			t.Errorf("%s: %v, want CHAIN_VERIFY_FAILED at /transaction/txHash", name, err)
		}
	}
	if e.Ledger().Size() != size {
		t.Fatalf("refused refunds wrote %d entries", e.Ledger().Size()-size)
	}

	good := chain.Transfer(t, chain.PayTo(), chain.Payer(), big.NewInt(4_000_000))
	ok, err := refund(good, "4")
	if err != nil {
		t.Fatal(err)
	}
	r := ok.Refund
	if r.Verification.Chain != "verified" || r.Verification.Facts == nil || r.Verification.Facts.From != strings.ToLower(chain.PayTo()) ||
		r.Verification.Facts.To != strings.ToLower(chain.Payer()) || r.Verification.Facts.Amount != "4000000" ||
		r.Transaction == nil || r.Transaction.TxHash != strings.ToLower(good) {
		t.Fatalf("refund %+v", r)
	}
	// The refund's date is the block's local day in Germany.
	if want := r.Verification.Facts.BlockTime.In(time.FixedZone("CEST", 2*3600)).Format(time.DateOnly); r.RefundDate != want {
		t.Errorf("refund date %s, block's local day %s", r.RefundDate, want)
	}
	verifyRefundReceipt(t, e, b, orig, r)
	// The same transfer cannot back a second refund of another amount,
	// and the same refund sent again (no key) answers the recorded one.
	if _, err := refund(good, "3"); fiscaltest.Code(err) != fiscal.CodeChainVerifyFailed && fiscaltest.Code(err) != fiscal.CodeSettlementConflict {
		t.Errorf("the transfer reused for another amount: %v", err)
	}
	again, err := refund(good, "4")
	if err != nil || again.Outcome != fiscal.Existing || again.Refund.ID != r.ID {
		t.Errorf("the same refund again: %+v %v", again, err)
	}
	// Refunding with the settlement's own payment is refused before the chain.
	if _, err := refund(payTx, "1"); fiscaltest.Code(err) != fiscal.CodeBadRequest {
		t.Errorf("the payment as its own refund: %v", err)
	}
}
