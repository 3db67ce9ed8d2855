package ingest_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestSamePaymentReportedWithAndWithoutPayload: the facilitator's hook
// and the resource server's hook may report one settlement, one with the
// payment payload and one without it (the settle response names the
// payer: x402/doc.go). Both say the same payment: the same transaction,
// amount, asset, payer and payee, and the same buyer facts. Once it is
// recorded the second report answers Existing (fiscal.Books.Recorded
// compares those facts); while it is queued the answer must agree, the
// entry already queued, not SETTLEMENT_CONFLICT claiming that "amount,
// payer, payTo or buyer facts differ" when none does. Reports whose
// facts do differ stay a conflict.
func TestSamePaymentReportedWithAndWithoutPayload(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx reported twice")
	d := rvDocs(t, tx, 1_000_000)

	first, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || first.Outcome != fiscal.Queued {
		t.Fatalf("first report: %v %+v", err, first)
	}
	again, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, nil, buyerDE, "")
	if err != nil {
		t.Fatalf("the same payment without its payment payload, while queued: %v", err)
	}
	if again.Outcome != fiscal.Queued || again.Queued.ID != first.Queued.ID || again.Queued.State != ingest.StateQueued {
		t.Fatalf("the same payment without its payment payload, while queued: %+v, want the entry %s", again, first.Queued.ID)
	}

	// Under a key of its own, the second report holds its key for the
	// entry, and repeating it answers the entry, not IDEMPOTENCY_CONFLICT.
	if res, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, nil, buyerDE, "hook-2"); err != nil || res.Queued == nil || res.Queued.ID != first.Queued.ID {
		t.Fatalf("the second report under its key: %v %+v", err, res)
	}
	if res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, nil, buyerDE, "hook-2"); err != nil || res.Outcome != fiscal.Queued || res.Queued.ID != first.Queued.ID {
		t.Fatalf("the second report repeated under its key: %v %+v", err, res)
	}

	// Other facts are still another payment's claim on the transaction.
	other := buyerDE
	other.Country = "FR"
	if _, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, nil, other, ""); err == nil {
		t.Fatal("the transaction reported with other buyer facts while queued: accepted")
	} else {
		wantCode(t, err, fiscal.CodeSettlementConflict)
	}
	moreAmount := rvDocs(t, tx, 2_000_000)
	if _, err := e.EnqueueX402(ctx, "acct_0", moreAmount.settle, moreAmount.requirements, nil, buyerDE, ""); err == nil {
		t.Fatal("the transaction reported with another amount while queued: accepted")
	} else {
		wantCode(t, err, fiscal.CodeSettlementConflict)
	}

	// Recorded, the same report answers the record (for comparison).
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	if n, err := e.ProcessIngestQueue(ctx); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	st, _ := e.IngestStatus(ctx, "acct_0", first.Queued.ID)
	if st.State != ingest.StateRecorded {
		t.Fatalf("entry %+v %+v", st, st.LastError)
	}
	rec, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, nil, buyerDE, "")
	if err != nil || rec.Outcome != fiscal.Existing {
		t.Fatalf("the same payment without its payment payload, recorded: %v %+v", err, rec)
	}
	if rec.Record.X402 == nil || rec.Record.X402.TransferMethod != "eip3009" {
		t.Errorf("record's x402 claims %+v: the first report's authorization is what was recorded", rec.Record.X402)
	}
}
