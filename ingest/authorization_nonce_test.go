package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// An x402 exact payment by EIP-3009 is settled by the facilitator calling
// transferWithAuthorization with the payload's authorization (x402 exact
// scheme on EVM, Phase 3,
// https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md),
// and the token marks that authorization used with the event
// AuthorizationUsed(authorizer, nonce) before its Transfer (EIP-3009,
// https://eips.ethereum.org/EIPS/eip-3009). A report whose authorization
// nonce the transaction did not use does not describe that transaction: it
// must not be recorded as the payment, with the record naming that nonce.
func TestX402AuthorizationNonceIsTheTransactions(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	usdc := fakechain.USDCBase
	nonceA, nonceB := fakechain.Hash("authorization A"), fakechain.Hash("authorization B")
	docs := func(tx, nonce string, amount int64) x402Docs {
		return sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: rvPayTo, nonce: nonce, amount: amount})
	}
	refused := func(t *testing.T, d x402Docs) {
		t.Helper()
		size := e.Ledger().Size()
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err == nil {
			t.Fatalf("recorded (%v) with x402 %+v, want CHAIN_VERIFY_FAILED", res.Outcome, res.Record.X402)
		}
		fe := wantCode(t, err, fiscal.CodeChainVerifyFailed)
		if !strings.HasPrefix(fe.Detail, evmverify.ReasonAuthorizationMismatch+":") || fe.Field != "/settleResponse/transaction" {
			t.Errorf("error %+v", fe)
		}
		if got := e.Ledger().Size(); got != size {
			t.Errorf("ledger grew from %d to %d", size, got)
		}
	}

	// transferWithAuthorization under nonce A, reported with nonce B: same
	// payer, payee and amount, another authorization.
	txA := fakechain.Hash("tx authorization A")
	node.Mine(txA, 10, "0x1",
		fakechain.AuthorizationUsedLog(0, usdc, rvPayer, nonceA),
		fakechain.TransferLog(1, usdc, rvPayer, rvPayTo, 1_000_000))
	// A plain transfer(), reported as an EIP-3009 payment.
	plain := fakechain.Hash("tx plain transfer")
	node.MineTransfer(plain, 11, rvPayer, rvPayTo, 1_000_000)
	// Nonce B used by another authorizer than the payer.
	other := fakechain.Hash("tx other authorizer")
	node.Mine(other, 12, "0x1",
		fakechain.AuthorizationUsedLog(0, usdc, fakechain.Sender, nonceB),
		fakechain.TransferLog(1, usdc, rvPayer, rvPayTo, 1_000_000))
	// A batch of two authorizations of the same payer, payee and amount:
	// each Transfer follows its AuthorizationUsed.
	batch := fakechain.Hash("tx batch")
	node.Mine(batch, 13, "0x1",
		fakechain.AuthorizationUsedLog(0, usdc, rvPayer, nonceA),
		fakechain.TransferLog(1, usdc, rvPayer, rvPayTo, 2_000_000),
		fakechain.AuthorizationUsedLog(2, usdc, rvPayer, nonceB),
		fakechain.TransferLog(3, usdc, rvPayer, rvPayTo, 2_000_000))
	node.Advance(3)

	t.Run("another nonce", func(t *testing.T) { refused(t, docs(txA, nonceB, 1_000_000)) })
	t.Run("no authorization used", func(t *testing.T) { refused(t, docs(plain, nonceA, 1_000_000)) })
	t.Run("nonce of another authorizer", func(t *testing.T) { refused(t, docs(other, nonceB, 1_000_000)) })

	t.Run("the batch's transfer of this authorization", func(t *testing.T) {
		d := docs(batch, nonceB, 2_000_000)
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil {
			t.Fatal(err)
		}
		if li := res.Record.Settlement.LogIndex; li == nil || *li != 3 || res.Record.X402.Nonce != nonceB {
			t.Fatalf("log index %v nonce %s, want the Transfer after AuthorizationUsed(payer, B) (log 3)", li, res.Record.X402.Nonce)
		}
	})

	t.Run("the transaction's own nonce", func(t *testing.T) {
		d := docs(txA, nonceA, 1_000_000)
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != fiscal.Created || res.Record.X402.Nonce != nonceA {
			t.Fatalf("outcome %v x402 %+v, want created with nonce A", res.Outcome, res.Record.X402)
		}
	})
}

// A transaction recorded from the report of its authorization (nonce A)
// is not the payment of a report naming another authorization (nonce B):
// that report is answered PAYMENT_CONFLICT, as one stating another amount
// or payee is (fiscal samePayment), not 200 with the record of A, which
// would tell the hook its payment B is recorded. A retry does not change
// the answer, and the report of A still finds its record.
func TestX402RecordedTransactionIsNotAnotherAuthorizationsPayment(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx recorded authorization")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	a := rvDocs(t, tx, 1_000_000) // nonce Hash("nonce "+tx), the one mined
	rec, err := e.IngestX402(ctx, "acct_0", a.settle, a.requirements, a.payload, buyerDE, "")
	if err != nil || rec.Outcome != fiscal.Created {
		t.Fatalf("%v %+v", err, rec)
	}
	b := sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: rvPayTo, nonce: fakechain.Hash("another authorization"), amount: 1_000_000})
	for i, key := range []string{"", "hook-b", "hook-b"} {
		res, err := e.IngestX402(ctx, "acct_0", b.settle, b.requirements, b.payload, buyerDE, key)
		if err == nil {
			t.Fatalf("report %d of another authorization: %v record %s (nonce %s), want PAYMENT_CONFLICT", i, res.Outcome, res.Record.ID, res.Record.X402.Nonce)
		}
		if fe := wantCode(t, err, fiscal.CodePaymentConflict); !strings.Contains(fe.Detail, fakechain.Hash("another authorization")) {
			t.Errorf("detail %q does not name the nonce", fe.Detail)
		}
	}
	again, err := e.IngestX402(ctx, "acct_0", a.settle, a.requirements, a.payload, buyerDE, "")
	if err != nil || again.Outcome != fiscal.Existing || again.Record.ID != rec.Record.ID {
		t.Fatalf("report of A again: %v %+v", err, again)
	}
}

// The same, while the report of A is still queued: a report naming nonce B
// is not that entry's payment (it would be answered with A's entry, and
// then told "recorded" with A's record), so it is refused as a report
// with other facts is; a report without the payment payload (no nonce)
// is still the same entry.
func TestX402QueuedEntryIsNotAnotherAuthorizationsPayment(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx queued authorization")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	a := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", a.settle, a.requirements, a.payload, buyerDE, "")
	if err != nil || q.Outcome != fiscal.Queued {
		t.Fatalf("%v %+v", err, q)
	}
	b := sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: rvPayTo, nonce: fakechain.Hash("another authorization"), amount: 1_000_000})
	if res, err := e.EnqueueX402(ctx, "acct_0", b.settle, b.requirements, b.payload, buyerDE, ""); err == nil {
		t.Fatalf("report of another authorization while A is queued: %v entry %s, want SETTLEMENT_CONFLICT", res.Outcome, res.Queued.ID)
	} else if fe := wantCode(t, err, fiscal.CodeSettlementConflict); !strings.Contains(fe.Detail, "nonce") {
		t.Errorf("detail %q", fe.Detail)
	}
	bare, err := e.EnqueueX402(ctx, "acct_0", a.settle, a.requirements, nil, buyerDE, "")
	if err != nil || bare.Outcome != fiscal.Queued || bare.Queued.ID != q.Queued.ID {
		t.Fatalf("report without payload: %v %+v", err, bare)
	}
}
