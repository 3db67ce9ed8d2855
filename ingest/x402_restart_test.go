package ingest_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestQueueSurvivesRestartOnAFakeNode: a settlement queued before the
// chain has it is still queued after the engine is closed and opened again
// on the same directory, and is recorded once the chain has it; reporting
// the same settlement again then answers the existing record, so one
// settlement is one record (TestIngestQueueSurvivesRestart needs anvil).
func TestQueueSurvivesRestartOnAFakeNode(t *testing.T) {
	node, url := newRVNode(t)
	dir := t.TempDir()
	clock := rvClock()
	tx := fakechain.Hash("tx restart")
	d := rvDocs(t, tx, 1_000_000)
	e := rvEngine(t, dir, url, evmverify.Policy{}, clock)
	res, err := e.EnqueueX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("%v %+v", err, res)
	}
	id := res.Queued.ID
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	e = rvEngine(t, dir, url, evmverify.Policy{}, clock)
	t.Cleanup(func() { e.Close() })
	st, err := e.IngestStatus(context.Background(), "acct_0", id)
	if err != nil || st.State != ingest.StateQueued {
		t.Fatalf("after restart: %+v %v", st, err)
	}
	if n, err := e.ProcessIngestQueue(context.Background()); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	st, _ = e.IngestStatus(context.Background(), "acct_0", id)
	if st.State != ingest.StateRecorded {
		t.Fatalf("%+v %+v", st, st.LastError)
	}
	for _, enqueue := range []bool{false, true} {
		var again *ingest.Result
		if enqueue {
			again, err = e.EnqueueX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		} else {
			again, err = e.IngestX402(context.Background(), "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		}
		if err != nil || again.Outcome != fiscal.Existing || again.Record == nil || "/settlements/"+again.Record.ID != st.RecordURL {
			t.Fatalf("enqueue=%v, the same settlement again: %v %+v, want Existing %s", enqueue, err, again, st.RecordURL)
		}
	}
}
