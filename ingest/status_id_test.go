package ingest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/fakechain"
)

// TestStatusIDIsTheQueueEntrys: Service.Status is asked with the queue
// entry's id (Status.ID, fiscal.EventID of network and tx hash); the record
// the queue makes has an id of its own (keyed: fiscal doc.go, "Identifiers"),
// which Status does not know. Status's doc said its id is "the id the
// record gets", so a caller holding the record id asked with it and got
// NOT_FOUND for a payment it had queued.
func TestStatusIDIsTheQueueEntrys(t *testing.T) {
	node, _, e := rvSetup(t, evmverify.Policy{})
	ctx := context.Background()
	tx := fakechain.Hash("tx status id")
	mineRV(node, tx, 10, 1_000_000)
	node.Advance(3)
	d := rvDocs(t, tx, 1_000_000)
	q, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
	if err != nil || q.Outcome != fiscal.Queued {
		t.Fatalf("enqueue: %v %+v", err, q)
	}
	if _, err := e.ProcessIngestQueue(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := e.IngestStatus(ctx, "acct_0", q.Queued.ID)
	if err != nil || st.State != ingest.StateRecorded {
		t.Fatalf("Status(queue id): %+v %v, want recorded", st, err)
	}
	recordID := strings.TrimPrefix(st.RecordURL, "/settlements/")
	if recordID == q.Queued.ID || q.Queued.ID != fiscal.EventID("eip155:8453", strings.ToLower(tx)) {
		t.Fatalf("queue id %s, record id %s: the ids this test tells apart are not apart", q.Queued.ID, recordID)
	}
	if _, err := e.IngestStatus(ctx, "acct_0", recordID); err == nil {
		t.Fatalf("Status(record id) answered; the doc below would be right")
	} else {
		wantCode(t, err, fiscal.CodeNotFound)
	}
	src, err := os.ReadFile("queue.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	doc := text[strings.Index(text, "// Status returns"):strings.Index(text, "func (s *Service) Status(")]
	if strings.Contains(doc, "the id the record gets") || !strings.Contains(doc, "EventID") {
		t.Errorf("Service.Status's doc does not say its id is the queue entry's (fiscal.EventID), not the record's:\n%s", doc)
	}
}
