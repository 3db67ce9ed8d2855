package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/parties"
)

// TestQueuedKeyIsHeldAgainstOtherRequests: the Idempotency-Key of a queued
// x402 payment names that request while the payment waits in the queue, as
// a recorded payment's key does. A review found another recording call
// (POST /settlements here; fiscal events, refunds and resolutions commit
// the same way) taking the key meanwhile, and the acknowledged payment then
// failing for good with IDEMPOTENCY_CONFLICT when the queue ran. The other
// request is now the IDEMPOTENCY_CONFLICT (409), and the queued payment is
// recorded under its key.
func TestQueuedKeyIsHeldAgainstOtherRequests(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx, other, third := fakechain.Hash("tx queued key"), fakechain.Hash("tx other request"), fakechain.Hash("tx fiscal event")
	mineRV(node, tx, 10, 1_000_000)
	mineRV(node, other, 12, 2_000_000)
	mineRV(node, third, 14, 3_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "key-q")
	if err != nil || q.Outcome != fiscal.Queued {
		t.Fatalf("enqueue: %v %+v", err, q)
	}
	b, _ := e.Books("acct_0")
	res, err := b.Settle(ctx, fiscal.SettlementRequest{AmountUSDC: "2", TxHash: other, Timestamp: "2026-04-10T09:00:24Z",
		PayerWallet: rvPayer, ReceiverWallet: rvPayTo, Network: "eip155:8453", ConsumerCountry: "DE"}, "key-q")
	if err == nil {
		t.Errorf("POST /settlements under the queued payment's key answered %v %s, want IDEMPOTENCY_CONFLICT", res.Outcome, res.Record.ID)
	} else {
		wantCode(t, err, fiscal.CodeIdempotencyConflict)
	}
	ev, err := fiscalevent.New(e.Engine).Record(ctx, "acct_0", fiscalevent.Request{
		Payment: fiscalevent.Payment{AmountUSDC: "3", TxHash: third, Timestamp: "2026-04-10T09:00:28Z",
			PayerWallet: rvPayer, ReceiverWallet: rvPayTo, Network: "eip155:8453"},
		Seller: parties.Seller{LegalName: irishSeller.LegalName, Country: "IE"},
		Buyer:  parties.Buyer{Country: "DE", BusinessStatus: "B2C"},
		Supply: parties.Supply{Kind: "digital_service"},
	}, "key-q")
	if err == nil {
		t.Errorf("POST /v1/fiscal-events under the queued payment's key answered %v %s, want IDEMPOTENCY_CONFLICT", ev.Outcome, ev.Event.ID)
	} else {
		wantCode(t, err, fiscal.CodeIdempotencyConflict)
	}
	if _, err := e.ProcessIngestQueue(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if err != nil || st.State != ingest.StateRecorded {
		t.Fatalf("queued payment: %+v (last error %+v) %v, want recorded", st, st.LastError, err)
	}
	// Its key now answers as a recorded one: the other request is still
	// the conflict.
	_, err = b.Settle(ctx, fiscal.SettlementRequest{AmountUSDC: "2", TxHash: other, Timestamp: "2026-04-10T09:00:24Z",
		PayerWallet: rvPayer, ReceiverWallet: rvPayTo, Network: "eip155:8453", ConsumerCountry: "DE"}, "key-q")
	wantCode(t, err, fiscal.CodeIdempotencyConflict)
}

// TestSyncReplayOfAQueuedKey: a synchronous x402 POST that repeats the
// request of a payment still in the queue, under its Idempotency-Key, is a
// replay of that request: it answers with the queue entry (202), without
// asking the chain, which the queue asks. A review found it going to the
// chain; here the node hangs, so asking it would be CHAIN_UNAVAILABLE.
// The same key with other buyer facts is an IDEMPOTENCY_CONFLICT, as
// EnqueueX402 answers.
func TestSyncReplayOfAQueuedKey(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	tx := fakechain.Hash("tx sync replay")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "key-s")
	if err != nil || q.Outcome != fiscal.Queued {
		t.Fatalf("enqueue: %v %+v", err, q)
	}
	node.SetHang(2 * time.Second)
	res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "key-s")
	if err != nil || res.Outcome != fiscal.Queued || res.Queued == nil || res.Queued.ID != q.Queued.ID || res.Queued.State != ingest.StateQueued || !res.Replayed || q.Replayed {
		t.Fatalf("sync replay of the queued request: %v %+v, want the queue entry %s", err, res, q.Queued.ID)
	}
	if again, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "key-s"); err != nil || !again.Replayed {
		t.Errorf("the queued request again, queued: %v %+v, want a replay", err, again)
	}
	other := buyerDE
	other.Country = "FR"
	_, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, other, "key-s")
	wantCode(t, err, fiscal.CodeIdempotencyConflict)
}
