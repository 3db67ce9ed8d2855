package httpserver_test

import (
	"net/http"
	"testing"
)

// TestResolveWithoutFactsIsRefused: a resolution whose buyer states no fact
// at all ({"buyer":{}}, or only empty strings) resolves nothing. It was
// answered 201 with a new revision identical to the pending one (another
// ledger entry, receipt and settlement.pending_review event for a request
// that said nothing); it is a 400 naming /buyer, and the record, its history
// and the account's events stay as they were. A buyer that clears the
// location evidence ([]) does state a fact and is still accepted.
func TestResolveWithoutFactsIsRefused(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil})))
	if created.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	state := func() (float64, int, int) {
		rec := f.do("GET", "/settlements/"+id, keyA, nil)
		ev := f.do("GET", "/v1/events?limit=200", keyA, nil)
		if rec.status != http.StatusOK || ev.status != http.StatusOK {
			t.Fatalf("read back: %d %s / %d %s", rec.status, rec.body, ev.status, ev.body)
		}
		m := rec.json(t)
		return m["revision"].(float64), len(m["history"].([]any)), len(ev.json(t)["data"].([]any))
	}
	rev0, hist0, events0 := state()

	for _, body := range []string{
		`{"buyer":{},"resolvedBy":"ops@seller-a.example"}`,
		`{"buyer":{"consumerCountry":"","consumerName":"  "},"resolvedBy":"ops@seller-a.example"}`,
	} {
		r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(body), "Idempotency-Key", "nofacts-"+body[10:12])
		if r.status != http.StatusBadRequest || r.json(t)["code"] != "BAD_REQUEST" || r.json(t)["field"] != "/buyer" {
			t.Errorf("%s: %d %s, want 400 BAD_REQUEST at /buyer", body, r.status, r.body)
		}
		if rev, hist, events := state(); rev != rev0 || hist != hist0 || events != events0 {
			t.Errorf("%s changed the record: revision %v→%v, history %d→%d, events %d→%d", body, rev0, rev, hist0, hist, events0, events)
		}
	}

	// Clearing the evidence is a fact: accepted (the record stays pending,
	// its country still missing).
	if r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"locationEvidence":[]},"resolvedBy":"ops@seller-a.example"}`)); r.status != http.StatusCreated {
		t.Errorf("clearing the evidence: %d %s, want 201", r.status, r.body)
	}
}
