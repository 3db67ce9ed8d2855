package ingest_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/anviltest"
)

// BenchmarkEnqueueX402 is the cost an x402 hook adds to the buyer's
// request: parse and validate the three documents, and one fsynced write
// to the queue. The chain is never asked (its endpoint is a closed port).
func BenchmarkEnqueueX402(b *testing.B) {
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(b, "http://127.0.0.1:1", evmverify.Policy{}, clock)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(i))
		sum := sha256.Sum256(n[:])
		d := sdkDocs(b, 2, payment{tx: "0x" + hex.EncodeToString(sum[:]), payer: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
			payTo: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", nonce: "0x" + hex.EncodeToString(sum[:]), amount: 1_190_000})
		if _, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngestX402Anvil is the synchronous path end to end against a
// local node: the ledger check, the chain verification (five JSON-RPC
// calls), VAT, FX, the invoice, the signed receipt and one fsynced append.
// Making each payment on chain is outside the timer.
func BenchmarkIngestX402Anvil(b *testing.B) {
	chain := anviltest.StartWith(b, anviltest.Options{GenesisTime: genesis})
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(b, chain.RPCURL(), evmverify.Policy{}, clock)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		tx, nonce := chain.TransferWithAuthorization(b, chain.Payer(), chain.PayTo(), big.NewInt(10_000))
		d := sdkDocs(b, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 10_000})
		b.StartTimer()
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil || res.Outcome != fiscal.Created {
			b.Fatal(err)
		}
	}
}
