package ingest_test

// The tests of a review of the ingest queue (stop 52), each a fault it
// found and the fix made: see the commit that added this file.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

func rvClock() *movingClock { return &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)} }

// Sanity: the happy path through the queue against the fake node.
func TestQueueOnAFakeNode(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	tx := fakechain.Hash("tx sanity")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	res, err := e.EnqueueX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("%v %+v", err, res)
	}
	if n, err := e.ProcessIngestQueue(context.Background()); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	st, _ := e.IngestStatus(context.Background(), "acct_0", res.Queued.ID)
	if st.State != ingest.StateRecorded {
		t.Fatalf("%+v %+v", st, st.LastError)
	}
}

// F1: a chain endpoint that hangs past the policy's Timeout is "a chain that
// cannot be asked": RecordX402 must answer CHAIN_UNAVAILABLE (503,
// Retry-After), not a bare context error.
func TestHangingRPCIsChainUnavailable(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{Timeout: 200 * time.Millisecond})
	tx := fakechain.Hash("tx hang")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	node.SetHang(2 * time.Second)
	d := rvDocs(t, tx, 1_000_000)
	_, err := e.IngestX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != fiscal.CodeChainUnavailable || fe.RetryAfter <= 0 {
		t.Fatalf("RecordX402 against a hanging endpoint: %T %v, want CHAIN_UNAVAILABLE with Retry-After", err, err)
	}
}

// F1b: the same through the queue: the entry's lastError should say
// CHAIN_UNAVAILABLE, not INTERNAL "internal error".
func TestHangingRPCQueueLastError(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{Timeout: 200 * time.Millisecond})
	tx := fakechain.Hash("tx hang q")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	node.SetHang(2 * time.Second)
	d := rvDocs(t, tx, 1_000_000)
	res, err := e.EnqueueX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ProcessIngestQueue(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, _ := e.IngestStatus(context.Background(), "acct_0", res.Queued.ID)
	if st.State != ingest.StateQueued || st.LastError == nil || st.LastError.Code != fiscal.CodeChainUnavailable {
		t.Fatalf("status %+v lastError %+v, want queued with CHAIN_UNAVAILABLE", st, st.LastError)
	}
}

// F2: the x402 documents claim 2 USDC in a transaction that is recorded as
// a 1 USDC transfer. RecordX402 "answers Existing / Replayed as
// fiscal.Books.Settle does"; Settle answers PAYMENT_CONFLICT for a
// duplicate with other facts, and the chain contradicts the claim
// (CHAIN_VERIFY_FAILED). Either is right; 200 Existing is not.
func TestX402DuplicateWithOtherFactsIsAConflict(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx dup")
	node.MineTransfer(tx, 10, rvPayer, rvPayTo, 1_000_000)
	node.Advance(3)
	if res, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 0, buyerDE, ""); err != nil || res.Outcome != fiscal.Created {
		t.Fatalf("transfer: %v %+v", err, res)
	}
	// The facilitator's documents claim another amount and another payTo.
	d := sdkDocs(t, 2, payment{tx: tx, payer: rvPayer, payTo: "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc", nonce: fakechain.Hash("n"), amount: 2_000_000})
	// And Settle with the same contradicting facts refuses, for comparison.
	b, _ := e.Books("acct_0")
	_, serr := b.Settle(ctx, fiscal.SettlementRequest{AmountUSDC: "2", TxHash: tx, Timestamp: "2026-04-10T09:00:20Z",
		PayerWallet: rvPayer, ReceiverWallet: "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc", Network: "eip155:8453", ConsumerCountry: "DE"}, "")
	t.Logf("Settle with the same facts: %v", serr)
	res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err == nil {
		t.Fatalf("RecordX402 of a contradicting claim answered %v with record amount %s receiver %s; want PAYMENT_CONFLICT or CHAIN_VERIFY_FAILED",
			res.Outcome, res.Record.Settlement.AmountUSDC, res.Record.Settlement.ReceiverWallet)
	}
}

// F3: acct_0's hook enqueued a payment (acknowledged: Queued). Before the
// queue runs, acct_1 records the same transaction directly. EnqueueX402 for
// acct_1 would have been refused ("already queued for another account"),
// but RecordX402 is not, and the acknowledged acct_0 entry then fails for
// good: the acknowledged payment is lost to acct_0. Now the direct record
// is SETTLEMENT_CONFLICT (a commit check reads the queue entry) and acct_0's
// entry is recorded.
func TestQueuedForOneAccountIsNotRecordedByAnother(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx two accounts")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || q.Outcome != fiscal.Queued {
		t.Fatal(err)
	}
	if _, err := e.EnqueueX402(ctx, "acct_1", d.settle, d.requirements, d.payload, buyerDE, ""); err == nil {
		t.Fatal("enqueue for acct_1 accepted")
	}
	res, err := e.IngestX402(ctx, "acct_1", d.settle, d.requirements, d.payload, buyerDE, "")
	if err == nil {
		e.ProcessIngestQueue(ctx)
		st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
		t.Fatalf("RecordX402 for acct_1 of a payment acct_0 queued: %v (record account %s); acct_0's acknowledged entry is now %s %+v",
			res.Outcome, res.Record.Account, st.State, st.LastError)
	}
	if fiscaltest.Code(err) != fiscal.CodeSettlementConflict {
		t.Fatalf("RecordX402 for acct_1: %v, want SETTLEMENT_CONFLICT", err)
	}
	e.ProcessIngestQueue(ctx)
	if st, err := e.IngestStatus(ctx, "acct_0", q.Queued.ID); err != nil || st.State != ingest.StateRecorded {
		t.Fatalf("acct_0's acknowledged entry: %+v %v, want recorded", st, err)
	}
}

// F4: an entry failed with tx_not_found after NotFoundGrace and is queued
// again ("a failed entry is queued again"): it gets no grace at all, since
// the grace is counted from the first enqueue's createdAt. Its first
// attempt fails it again at once, while the transaction is still not
// visible (a private mempool), seconds after the re-enqueue.
func TestRequeuedEntryGetsItsOwnNotFoundGrace(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx late")
	node.Advance(5)
	d := rvDocs(t, tx, 1_000_000).withSettle(t, map[string]any{"success": false, "errorReason": "settlement_pending"})
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute)
	e.ProcessIngestQueue(ctx)
	st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if st.State != ingest.StateFailed {
		t.Fatalf("after grace: %+v", st)
	}
	// Queued again by the operator/facilitator.
	if r, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, ""); err != nil || r.Queued.State != ingest.StateQueued {
		t.Fatalf("requeue: %v %+v", err, r)
	}
	clock.Add(time.Second)
	e.ProcessIngestQueue(ctx)
	st, _ = e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if st.State != ingest.StateQueued {
		t.Fatalf("re-queued entry failed at its first attempt, 1 s after the re-enqueue: %s %+v", st.State, st.LastError)
	}
	// and once mined it would be recorded
	mineRV(node, tx, 20, 1_000_000)
	node.Advance(2)
	clock.Add(time.Hour)
	e.ProcessIngestQueue(ctx)
	st, _ = e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if st.State != ingest.StateRecorded {
		t.Fatalf("%+v", st)
	}
}

func rvEngineAccounts(t testing.TB, dir, url string, clock *movingClock, sellers ...fiscal.Seller) *env {
	t.Helper()
	e, err := fiscal.New(fiscal.Config{
		Dir: dir, Accounts: fiscaltest.Accounts(sellers...), Chain: baseVerifier(t, url, evmverify.Policy{}),
		Clock: clock.Now, Rand: &fiscaltest.Rand{}, Logger: fiscaltest.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{Engine: e, svc: newService(t, e, ingest.Options{NoQueue: true})}
}

// F5: a queued entry of an account that a restart left out of the
// configuration (an accounts file edited, a typo, a deploy that lost an
// account for a while) fails for good at its first attempt; when the
// account comes back, the acknowledged payment stays unrecorded. A network
// whose chain mode is off after a restart keeps its entries queued instead
// (Process doc); an account missing for a while is the same kind of
// operator state, not an answer about the payment.
func TestEntryOfAMissingAccountWaitsForIt(t *testing.T) {
	node, url := newRVNode(t)
	clock := rvClock()
	dir := t.TempDir()
	ctx := context.Background()
	tx := fakechain.Hash("tx account gone")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)

	e := rvEngineAccounts(t, dir, url, clock, irishSeller, germanSeller)
	q, err := e.EnqueueX402(ctx, "acct_1", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	e.Close()

	only0 := rvEngineAccounts(t, dir, url, clock, irishSeller) // acct_1 missing for a while
	only0.ProcessIngestQueue(ctx)
	only0.Close()

	clock.Add(time.Hour)
	back := rvEngineAccounts(t, dir, url, clock, irishSeller, germanSeller)
	defer back.Close()
	back.ProcessIngestQueue(ctx)
	st, err := back.IngestStatus(ctx, "acct_1", q.Queued.ID)
	if err != nil || st.State != ingest.StateRecorded {
		t.Fatalf("acknowledged entry after the account came back: %v %s %+v", err, st.State, st.LastError)
	}
}

// F6: one queue entry that cannot be read (an entry written by a newer
// release's format after a downgrade, or a damaged value) stops every pass
// at that entry: the other due entries are never attempted.
func TestOneUnreadableEntryDoesNotStopTheQueue(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	// A due entry of an unknown format, due first.
	err := e.Ledger().Update(func(tx ledger.Tx) error {
		key := binary.BigEndian.AppendUint64(nil, uint64(clock.Now().Add(-time.Hour).UnixNano()))
		key = append(key, "x402-bad"...)
		if err := tx.Put("ingest-due", key, []byte("x402-bad")); err != nil {
			return err
		}
		return tx.Put("ingest", []byte("x402-bad"), []byte(`{"format":"fiscal402.ingest/2","status":{"id":"x402-bad","state":"queued"}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	tx := fakechain.Hash("tx behind poison")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		clock.Add(time.Minute)
		n, err := e.ProcessIngestQueue(ctx)
		t.Logf("pass %d: %d %v", i, n, err)
	}
	st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if st.State != ingest.StateRecorded {
		t.Fatalf("a good entry behind an unreadable one: %s attempts %d", st.State, st.Attempts)
	}
}

// F7: a payment queued under key K1, failed, and queued again under key K2
// keeps K1 as its entry's key, while the key index also maps K2 to it.
// Prune removes the entry and K1's index entry only: K2 stays held by an
// entry that no longer exists, so K2 can never be used again for another
// payment (Prune's doc: "the failed entry's Idempotency-Key is free for
// another payment").
func TestPruneFreesEveryKeyOfAnEntry(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	node.Advance(5)
	txA := fakechain.Hash("tx never mined")
	d := rvDocs(t, txA, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "K1")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute)
	e.ProcessIngestQueue(ctx)
	if r, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "K2"); err != nil || r.Queued.State != ingest.StateQueued {
		t.Fatalf("requeue: %v", err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute) // queued again: a grace of its own
	e.ProcessIngestQueue(ctx)
	if st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID); st.State != ingest.StateFailed {
		t.Fatalf("%+v", st)
	}
	clock.Add(48 * time.Hour)
	if n, err := e.svc.Prune(ctx, clock.Now().Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune: %d %v", n, err)
	}
	// K2 for another payment, which the chain has.
	txB := fakechain.Hash("tx B")
	mineRV(node, txB, 30, 3_000_000)
	node.Advance(2)
	dB := rvDocs(t, txB, 3_000_000)
	if _, err := e.IngestX402(ctx, "acct_0", dB.settle, dB.requirements, dB.payload, buyerDE, "K2"); err != nil {
		t.Fatalf("K2 after the entry holding it was pruned: %v", err)
	}
}

// Probe: the same payment concurrently through every way in, two accounts.
func TestConcurrentSamePaymentEveryWayIn(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx conc")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var res *ingest.Result
			var err error
			switch i % 4 {
			case 0:
				res, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "k")
			case 1:
				res, err = e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "k")
			case 2:
				res, err = e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 1, buyerDE, "")
			case 3:
				_, err = e.ProcessIngestQueue(ctx)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				outcomes[fmt.Sprintf("%d err %v", i%4, err)]++
			} else if res != nil {
				outcomes[fmt.Sprintf("%d %v", i%4, res.Outcome)]++
			}
		}(i)
	}
	wg.Wait()
	e.ProcessIngestQueue(ctx)
	t.Logf("outcomes %v, ledger size %d", outcomes, e.Ledger().Size())
	if e.Ledger().Size() != 1 {
		t.Fatalf("ledger size %d", e.Ledger().Size())
	}
}

// F8: a block whose timestamp is ahead of the engine clock by more than
// wire.MaxClockSkew (5 min) fails the queued entry for good with
// BAD_REQUEST /timestamp "is in the future", although the chain confirmed
// the payment and the same attempt a few minutes later would record it.
// The chain's block time is a fact, not caller input: a clock behind the
// chain is an operator state to retry through, as CHAIN_VERIFICATION_REQUIRED is.
func TestBlockAheadOfTheClockIsNotInTheFuture(t *testing.T) {
	node, url := newRVNode(t)
	// engine clock 10 minutes behind block 300's time (genesis + 600 s)
	clock := &movingClock{now: time.Unix(rvGenesis, 0).UTC()}
	e := rvEngine(t, t.TempDir(), url, evmverify.Policy{}, clock)
	defer e.Close()
	ctx := context.Background()
	tx := fakechain.Hash("tx ahead")
	mineRV(node, tx, 300, 1_000_000)
	node.Advance(2)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	e.ProcessIngestQueue(ctx)
	st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	t.Logf("after the first attempt: %s %+v", st.State, st.LastError)
	clock.Add(time.Hour) // the clock is right again
	e.ProcessIngestQueue(ctx)
	st, _ = e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if st.State != ingest.StateRecorded {
		t.Fatalf("a chain-confirmed payment ahead of the engine clock: %s %+v", st.State, st.LastError)
	}
}
