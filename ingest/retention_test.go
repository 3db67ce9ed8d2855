package ingest_test

import (
	"context"
	"math/big"
	"path"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/anviltest"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestQueueStatsAndPrune: QueueStats counts the queued entries; Prune
// removes the entries that ended (recorded, failed) before the cutoff and
// never a queued one, a record or a claim: the recorded payment stays
// readable and its replay still answers with the one record.
func TestQueueStatsAndPrune(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: genesis})
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(t, chain.RPCURL(), evmverify.Policy{}, clock)
	ctx := context.Background()

	// A: recorded. B: the chain contradicts its amount, failed. C: a
	// transaction no node knows, retried within NotFoundGrace: queued.
	txA, nonceA := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
	a := sdkDocs(t, 2, payment{tx: txA, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonceA, amount: 1_000_000})
	txB, nonceB := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
	b := sdkDocs(t, 2, payment{tx: txB, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonceB, amount: 2_000_000})
	c := sdkDocs(t, 2, payment{tx: "0x" + "ab" + txA[4:], payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonceA, amount: 1_000_000})
	ids := map[string]string{}
	for name, d := range map[string]x402Docs{"a": a, "b": b, "c": c} {
		res, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "key-"+name)
		if err != nil || res.Outcome != fiscal.Queued {
			t.Fatalf("enqueue %s: %v %+v", name, err, res)
		}
		ids[name] = res.Queued.ID
	}
	if st, err := e.svc.QueueStats(); err != nil || st.Queued != 3 || !st.OldestDue.Equal(clock.Now()) {
		t.Fatalf("stats before processing: %+v %v", st, err)
	}
	if n, err := e.ProcessIngestQueue(ctx); err != nil || n != 3 {
		t.Fatalf("process: %d %v", n, err)
	}
	var recordA string
	for name, want := range map[string]string{"a": ingest.StateRecorded, "b": ingest.StateFailed, "c": ingest.StateQueued} {
		st, err := e.IngestStatus(ctx, "acct_0", ids[name])
		if err != nil || st.State != want {
			t.Fatalf("%s: %+v %v, want %s", name, st, err, want)
		}
		if name == "a" {
			recordA = path.Base(st.RecordURL)
		}
	}
	st, err := e.svc.QueueStats()
	if err != nil || st.Queued != 1 || !st.OldestDue.After(clock.Now()) {
		t.Fatalf("stats after processing: %+v %v (want 1 queued, due later)", st, err)
	}

	if n, err := e.svc.Prune(ctx, clock.Now().Add(-time.Minute)); err != nil || n != 0 {
		t.Fatalf("prune with an old cutoff: %d %v", n, err)
	}
	clock.Add(time.Minute)
	if n, err := e.svc.Prune(ctx, clock.Now()); err != nil || n != 2 {
		t.Fatalf("prune: %d %v, want 2 (a recorded, b failed)", n, err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := e.IngestStatus(ctx, "acct_0", ids[name]); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Errorf("%s after prune: %v, want NOT_FOUND", name, err)
		}
	}
	if st, err := e.IngestStatus(ctx, "acct_0", ids["c"]); err != nil || st.State != ingest.StateQueued {
		t.Fatalf("c after prune: %+v %v", st, err)
	}
	if _, _, err := e.Record(ctx, "acct_0", recordA); err != nil {
		t.Fatalf("the record of a after prune: %v", err)
	}
	// The ledger's claims still make the payment one record.
	again, err := e.EnqueueX402(ctx, "acct_0", a.settle, a.requirements, a.payload, buyerDE, "key-a")
	if err != nil || again.Outcome != fiscal.Replayed {
		t.Fatalf("a again after prune: %v %+v, want the replay of its record", err, again)
	}
	if e.Ledger().Size() != 1 {
		t.Fatalf("ledger size %d, want 1", e.Ledger().Size())
	}
	// b's key is free again: b, fixed, is queued under it.
	b2 := sdkDocs(t, 2, payment{tx: txB, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonceB, amount: 1_000_000})
	if res, err := e.EnqueueX402(ctx, "acct_0", b2.settle, b2.requirements, b2.payload, buyerDE, "key-b"); err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("b fixed, under its key, after prune: %v %+v", err, res)
	}
	if err := e.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}
