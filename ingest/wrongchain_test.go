package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestQueueWaitsWhileTheEndpointServesAnotherChain: an RPC endpoint that
// serves another chain than its network's (the operator pointed Base's
// policy at a Base Sepolia node) says nothing about the payment: the
// claim's network chose the endpoint, so wrong_chain is a configuration
// fault of the operator, like verification turned off (which keeps the
// entries queued). An acknowledged queue entry must wait for a correct
// endpoint rather than fail for good; once the endpoint serves Base, the
// payment is recorded.
func TestQueueWaitsWhileTheEndpointServesAnotherChain(t *testing.T) {
	node, clock, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx wrong chain")
	mineRV(node, tx, 20, 1_000_000)
	node.Advance(2)
	node.SetChainID(84532) // Base Sepolia

	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Second)
	e.ProcessIngestQueue(ctx)
	st, err := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != ingest.StateQueued || st.LastError == nil || !strings.Contains(st.LastError.Detail, evmverify.ReasonWrongChain) {
		t.Fatalf("entry after an endpoint of the wrong chain: %s %+v, want queued with the wrong_chain error", st.State, st.LastError)
	}

	node.SetChainID(fakechain.BaseChainID) // the operator fixed the endpoint
	clock.Add(time.Hour)
	e.ProcessIngestQueue(ctx)
	if st, _ := e.IngestStatus(ctx, "acct_0", q.Queued.ID); st.State != ingest.StateRecorded {
		t.Fatalf("after the endpoint was fixed: %s %+v", st.State, st.LastError)
	}
}
