package ingest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestFailedEntryFreesItsKey: a queue entry that failed for good (here
// tx_not_found after the grace) held its Idempotency-Key until it was
// pruned (30 days by default), so the corrected request a client makes
// under the same key (the right transaction, or the same one with
// corrected buyer facts) was IDEMPOTENCY_CONFLICT for a month. A
// synchronous request that the chain refuses (422) binds no key; the
// queued one's failure is that same answer, given later. The entry now
// frees its keys when it fails, and keeps the failure: its status stays
// failed with the error until pruned. The same documents under the key
// queue it again (README).
func TestFailedEntryFreesItsKey(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	node.Advance(5)
	wrong, fixed := fakechain.Hash("tx mistyped"), fakechain.Hash("tx right")
	d := rvDocs(t, wrong, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "K")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute)
	if _, err := e.ProcessIngestQueue(ctx); err != nil {
		t.Fatal(err)
	}
	failed := func() {
		t.Helper()
		st, err := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
		if err != nil || st.State != ingest.StateFailed || st.LastError == nil || st.LastError.Code != fiscal.CodeChainVerifyFailed {
			t.Fatalf("the failed entry: %+v %v, want failed with its error", st, err)
		}
	}
	failed()

	// The corrected request: the right transaction, under the same key.
	mineRV(node, fixed, 30, 1_000_000)
	node.Advance(3)
	dFixed := rvDocs(t, fixed, 1_000_000)
	res, err := e.IngestX402(ctx, "acct_0", dFixed.settle, dFixed.requirements, dFixed.payload, buyerDE, "K")
	if err != nil || res.Outcome != fiscal.Created {
		t.Fatalf("the corrected request under the failed entry's key: %v %+v, want Created", err, res)
	}
	if again, err := e.IngestX402(ctx, "acct_0", dFixed.settle, dFixed.requirements, dFixed.payload, buyerDE, "K"); err != nil || again.Outcome != fiscal.Replayed {
		t.Fatalf("the corrected request again: %v %+v, want its replay", err, again)
	}
	failed() // the failure is not lost

	// The same payment with corrected buyer facts, queued under the key
	// of its failed entry.
	late := fakechain.Hash("tx late")
	dLate := rvDocs(t, late, 2_000_000)
	ql, err := e.EnqueueX402(ctx, "acct_0", dLate.settle, dLate.requirements, dLate.payload, buyerDE, "L")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute)
	e.ProcessIngestQueue(ctx)
	corrected := buyerDE
	corrected.Country = "FR"
	r, err := e.EnqueueX402(ctx, "acct_0", dLate.settle, dLate.requirements, dLate.payload, corrected, "L")
	if err != nil || r.Outcome != fiscal.Queued || r.Queued.ID != ql.Queued.ID || r.Queued.State != ingest.StateQueued || r.Replayed {
		t.Fatalf("the failed payment with corrected buyer facts under its key: %v %+v, want it queued again", err, r)
	}
	mineRV(node, late, 40, 2_000_000)
	node.Advance(3)
	clock.Add(time.Hour)
	e.ProcessIngestQueue(ctx)
	st, err := e.IngestStatus(ctx, "acct_0", ql.Queued.ID)
	if err != nil || st.State != ingest.StateRecorded {
		t.Fatalf("the corrected entry: %+v %v, want recorded", st, err)
	}
	rec, _, err := e.Record(ctx, "acct_0", st.RecordURL[len("/settlements/"):])
	if err != nil || rec.Buyer.Country != "FR" {
		t.Fatalf("the corrected entry's record: %v %+v, want the corrected facts (FR)", err, rec)
	}
}

// TestQueueRunnerFreesKeysOfOlderFailures: entries that failed before a
// failing attempt freed their keys still hold them in an existing ledger,
// until pruned. The queue runner frees them when it starts.
func TestQueueRunnerFreesKeysOfOlderFailures(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	node.Advance(5)
	d := rvDocs(t, fakechain.Hash("tx failed long ago"), 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "old")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(ingest.NotFoundGrace + time.Minute)
	e.ProcessIngestQueue(ctx)
	// The key index as an older version left it: the failed entry holds
	// its key.
	key := []byte("acct_0\x00old")
	if err := e.Ledger().Update(func(tx ledger.Tx) error { return tx.Put(fiscal.BucketQueuedKeys, key, []byte(q.Queued.ID)) }); err != nil {
		t.Fatal(err)
	}
	newService(t, e.Engine, ingest.Options{}) // the queue runner
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.Ledger().Get(fiscal.BucketQueuedKeys, key); errors.Is(err, ledger.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failed entry still holds its key after the queue runner started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fixed := fakechain.Hash("tx of the corrected request")
	mineRV(node, fixed, 30, 1_000_000)
	node.Advance(3)
	dFixed := rvDocs(t, fixed, 1_000_000)
	if res, err := e.IngestX402(ctx, "acct_0", dFixed.settle, dFixed.requirements, dFixed.payload, buyerDE, "old"); err != nil || res.Outcome != fiscal.Created {
		t.Fatalf("the corrected request under the freed key: %v %+v", err, res)
	}
}
