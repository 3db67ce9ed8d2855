package evmverify_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/anviltest"
)

// These tests run against a real EVM node (anvil) with Circle's USDC at
// the real Base address; they skip when the npm packages are missing and
// fail under FISCAL402_STRICT=1 (see internal/anviltest).

func anvilVerifier(t testing.TB, urls []string, p evmverify.Policy) *evmverify.Verifier {
	t.Helper()
	p.Mode = evmverify.ModeRequired
	p.RPCURLs = urls
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase:     p,
		evmverify.NetworkEthereum: p, // the same node: a wrong chain for eip155:1
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func usdc(units int64) *big.Int { return big.NewInt(units) }

func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var rej *evmverify.RejectedError
	if !errors.As(err, &rej) || rej.Reason != reason {
		t.Fatalf("error %v, want rejection %s", err, reason)
	}
}

func TestAnvil(t *testing.T) {
	chain := anviltest.Start(t)
	v := anvilVerifier(t, []string{chain.RPCURL()}, evmverify.Policy{})
	ctx := context.Background()
	amount := usdc(1_500_000) // 1.5 USDC

	t.Run("plain transfer", func(t *testing.T) {
		// A block time after the chain's genesis, which anvil stamps with
		// the wall clock: a fixed date fails once the clock passes it.
		at := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Second)
		chain.SetNextBlockTime(t, at)
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), amount)
		head := chain.Head(t)
		// Hash and receiver in upper case: any case is accepted.
		f, err := v.Verify(ctx, evmverify.Claim{
			Network: evmverify.NetworkBase, TxHash: "0x" + strings.ToUpper(tx[2:]),
			Payer: chain.Payer(), Receiver: "0x" + strings.ToUpper(chain.PayTo()[2:]), Amount: amount,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := evmverify.Facts{
			Network:       "eip155:8453",
			TxHash:        strings.ToLower(tx),
			LogIndex:      0,
			BlockNumber:   head,
			BlockHash:     f.BlockHash, // random per chain; checked below
			BlockTime:     at,
			Confirmations: 1,
			Finalized:     false,
			Token:         "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
			From:          chain.Payer(),
			To:            chain.PayTo(),
			Amount:        "1500000",
		}
		if f != want {
			t.Errorf("facts\n got %+v\nwant %+v", f, want)
		}
		var blk struct{ Hash string }
		chain.Call(t, "eth_getBlockByNumber", []any{"latest", false}, &blk)
		if f.BlockHash != blk.Hash {
			t.Errorf("block hash %s, chain says %s", f.BlockHash, blk.Hash)
		}
	})

	t.Run("x402 transferWithAuthorization", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), amount)
		c := evmverify.Claim{
			Network: evmverify.NetworkBase, TxHash: tx, Asset: chain.USDC(),
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount,
		}
		f, err := v.Verify(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		// The authorization's nonce is the one Circle's USDC marked used.
		withNonce := c
		withNonce.Nonce = nonce
		if fn, err := v.Verify(ctx, withNonce); err != nil || fn != f {
			t.Errorf("with the authorization's nonce: %v %+v", err, fn)
		}
		// AuthorizationUsed is log 0, Transfer log 1; the sender was the
		// facilitator, yet the facts name the payer.
		if f.LogIndex != 1 || f.From != chain.Payer() || f.To != chain.PayTo() || f.Amount != "1500000" {
			t.Errorf("facts %+v", f)
		}
		// Claiming the facilitator (tx.from) as payer is refused.
		c.Payer = chain.Facilitator()
		_, err = v.Verify(ctx, c)
		wantReason(t, err, evmverify.ReasonPayerMismatch)

		rf, err := v.ReadTransfer(ctx, evmverify.NetworkBase, tx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if rf != f {
			t.Errorf("ReadTransfer %+v\n   Verify %+v", rf, f)
		}
		_, err = v.ReadTransfer(ctx, evmverify.NetworkBase, tx, 0)
		wantReason(t, err, evmverify.ReasonLogNotTransfer)

		// The nonce of the payer's other authorization (same parties and
		// amount) is not this transaction's.
		_, otherNonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), amount)
		withNonce.Nonce = otherNonce
		_, err = v.Verify(ctx, withNonce)
		wantReason(t, err, evmverify.ReasonAuthorizationMismatch)
	})

	t.Run("wrong amount", func(t *testing.T) {
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), usdc(1_000_000))
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: usdc(1_000_001)})
		wantReason(t, err, evmverify.ReasonAmountMismatch)
	})

	t.Run("wrong receiver", func(t *testing.T) {
		tx := chain.Transfer(t, chain.Payer(), chain.Stranger(), amount)
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount})
		wantReason(t, err, evmverify.ReasonReceiverMismatch)
	})

	t.Run("impostor token", func(t *testing.T) {
		tx := chain.TransferToken(t, chain.Impostor(), chain.Payer(), chain.PayTo(), amount)
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount})
		wantReason(t, err, evmverify.ReasonAssetMismatch)
	})

	t.Run("reverted", func(t *testing.T) {
		tx := chain.Revert(t)
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount})
		wantReason(t, err, evmverify.ReasonTxReverted)
	})

	t.Run("unknown tx hash", func(t *testing.T) {
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkBase,
			TxHash: "0x" + strings.Repeat("5a", 32),
			Payer:  chain.Payer(), Receiver: chain.PayTo(), Amount: amount})
		wantReason(t, err, evmverify.ReasonTxNotFound)
	})

	t.Run("wrong chain", func(t *testing.T) {
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), amount)
		_, err := v.Verify(ctx, evmverify.Claim{Network: evmverify.NetworkEthereum, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount})
		wantReason(t, err, evmverify.ReasonWrongChain)
	})

	t.Run("confirmations after anvil_mine", func(t *testing.T) {
		deep := anvilVerifier(t, []string{chain.RPCURL()}, evmverify.Policy{MinConfirmations: 12})
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), amount)
		c := evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount}
		_, err := deep.Verify(ctx, c)
		var nf *evmverify.NotFinalError
		if !errors.As(err, &nf) || nf.Confirmations != 1 || nf.Required != 12 {
			t.Fatalf("error %v, want NotFinalError 1 of 12", err)
		}
		chain.Mine(t, 10)
		if _, err = deep.Verify(ctx, c); !errors.As(err, &nf) || nf.Confirmations != 11 {
			t.Fatalf("error %v, want NotFinalError 11 of 12", err)
		}
		chain.Mine(t, 1)
		f, err := deep.Verify(ctx, c)
		if err != nil || f.Confirmations != 12 {
			t.Fatalf("facts %+v, err %v", f, err)
		}
	})

	t.Run("finalized after anvil_mine", func(t *testing.T) {
		final := anvilVerifier(t, []string{chain.RPCURL()}, evmverify.Policy{RequireFinalized: true})
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), amount)
		c := evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
			Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount}
		_, err := final.Verify(ctx, c)
		var nf *evmverify.NotFinalError
		if !errors.As(err, &nf) || nf.Finalized || !nf.RequireFinalized {
			t.Fatalf("error %v, want not finalized", err)
		}
		// anvil's finalized tag trails latest by 64 blocks.
		chain.Mine(t, 64)
		f, err := final.Verify(ctx, c)
		if err != nil || !f.Finalized || f.Confirmations != 65 {
			t.Fatalf("facts %+v, err %v", f, err)
		}
	})
}

func TestAnvilDown(t *testing.T) {
	chain := anviltest.Start(t)
	dead := anviltest.Start(t)
	amount := usdc(2_000_000)
	tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), amount)
	c := evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
		Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount}
	dead.Stop() // its RPC URL now refuses connections
	ctx := context.Background()

	v := anvilVerifier(t, []string{dead.RPCURL()}, evmverify.Policy{Timeout: 2 * time.Second})
	_, err := v.Verify(ctx, c)
	if !errors.Is(err, evmverify.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
	var rej *evmverify.RejectedError
	if errors.As(err, &rej) {
		t.Fatalf("down RPC reported as rejection %v", rej)
	}

	failover := anvilVerifier(t, []string{dead.RPCURL(), chain.RPCURL()}, evmverify.Policy{Timeout: 2 * time.Second})
	f, err := failover.Verify(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if f.From != chain.Payer() || f.Amount != "2000000" {
		t.Errorf("facts %+v", f)
	}
}

// BenchmarkVerifyAnvil measures one full verification (five JSON-RPC calls
// over loopback HTTP) against anvil. Informational: it times anvil as much
// as this package.
func BenchmarkVerifyAnvil(b *testing.B) {
	chain := anviltest.Start(b)
	v := anvilVerifier(b, []string{chain.RPCURL()}, evmverify.Policy{})
	amount := usdc(1_500_000)
	tx, _ := chain.TransferWithAuthorization(b, chain.Payer(), chain.PayTo(), amount)
	c := evmverify.Claim{Network: evmverify.NetworkBase, TxHash: tx,
		Payer: chain.Payer(), Receiver: chain.PayTo(), Amount: amount}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}
