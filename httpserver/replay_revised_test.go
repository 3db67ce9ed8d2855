package httpserver_test

import (
	"bytes"
	"net/http"
	"testing"
)

// TestReplayAfterResolveIsFirstAnswer: a retry of POST /settlements (and of
// POST /v1/fiscal-events) with the Idempotency-Key and body of a request
// that was answered is that request's answer again (README: the same
// request sent again returns the same record; the original event, as
// draft-ietf-httpapi-idempotency-key-header has a retried request get the
// first result), byte for byte, even after a person resolved the
// record into a new revision: a client whose first answer was lost learns
// what its own request did (revision 1, pending review), not a state it did
// not cause. The current revision stays one GET away (Location). The
// replay used to answer with the current revision.
func TestReplayAfterResolveIsFirstAnswer(t *testing.T) {
	f := newFixture(t)
	body := mustJSON(t, settlement(map[string]any{"consumerCountry": nil}))
	first := f.do("POST", "/settlements", keyA, body, "Idempotency-Key", "settle-1")
	if first.status != http.StatusCreated || first.json(t)["reviewStatus"] != "PENDING_MANUAL_REVIEW" {
		t.Fatalf("settle: %d %s", first.status, first.body)
	}
	id := first.json(t)["id"].(string)
	if r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`)); r.status != http.StatusCreated || r.json(t)["revision"] != float64(2) {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	check := func(what string) {
		t.Helper()
		again := f.do("POST", "/settlements", keyA, body, "Idempotency-Key", "settle-1")
		if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Location") != "/settlements/"+id {
			t.Fatalf("%s: replay: %d %v %s", what, again.status, again.header, again.body)
		}
		if !bytes.Equal(again.body, first.body) {
			t.Errorf("%s: replay answered\n%s\nwant the first answer\n%s", what, again.body, first.body)
		}
		// Without the key, the payment is a duplicate: the existing
		// record as it is now.
		if dup := f.do("POST", "/settlements", keyA, body); dup.status != http.StatusOK || dup.json(t)["revision"] != float64(2) {
			t.Errorf("%s: duplicate without key: %d %s", what, dup.status, dup.body)
		}
	}
	check("after resolve")
	f.reopen()
	check("after restart")

	// A fiscal event: the same.
	evBody := mustJSON(t, fiscalEventBody(map[string]any{"buyer": nil}))
	evFirst := f.do("POST", "/v1/fiscal-events", keyA, evBody, "Idempotency-Key", "event-1")
	if evFirst.status != http.StatusCreated {
		t.Fatalf("fiscal event: %d %s", evFirst.status, evFirst.body)
	}
	evID := evFirst.json(t)["id"].(string)
	if r := f.do("POST", "/v1/fiscal-events/"+evID+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`)); r.status != http.StatusCreated {
		t.Fatalf("resolve event: %d %s", r.status, r.body)
	}
	evAgain := f.do("POST", "/v1/fiscal-events", keyA, evBody, "Idempotency-Key", "event-1")
	if evAgain.status != http.StatusCreated || evAgain.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(evAgain.body, evFirst.body) {
		t.Errorf("fiscal event replay: %d %v\n%s\nwant the first answer\n%s", evAgain.status, evAgain.header, evAgain.body, evFirst.body)
	}
}

// TestResolveReplayAfterLaterRevisionIsFirstAnswer: the replay of a
// resolution's Idempotency-Key is the revision that resolution made, as
// its first answer gave it, not a later revision made by another
// resolution; for settlements and fiscal events alike.
func TestResolveReplayAfterLaterRevisionIsFirstAnswer(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ create, base string }{
		{"/settlements", "/settlements/"},
		{"/v1/fiscal-events", "/v1/fiscal-events/"},
	} {
		body := mustJSON(t, settlement(map[string]any{"consumerCountry": nil}))
		if c.create == "/v1/fiscal-events" {
			body = mustJSON(t, fiscalEventBody(map[string]any{"buyer": nil}))
		}
		created := f.do("POST", c.create, keyA, body)
		if created.status != http.StatusCreated {
			t.Fatalf("%s: %d %s", c.create, created.status, created.body)
		}
		id := created.json(t)["id"].(string)
		// A resolution that leaves the record pending (revision 2) ...
		still := []byte(`{"buyer":{"locationEvidence":[]},"resolvedBy":"ops@seller-a.example"}`)
		first := f.do("POST", c.base+id+"/resolve", keyA, still, "Idempotency-Key", "still-"+c.create)
		if first.status != http.StatusCreated || first.json(t)["revision"] != float64(2) {
			t.Fatalf("%s: first resolution: %d %s", c.create, first.status, first.body)
		}
		// ... then another that ends the review (revision 3).
		if r := f.do("POST", c.base+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`)); r.status != http.StatusCreated || r.json(t)["revision"] != float64(3) {
			t.Fatalf("%s: second resolution: %d %s", c.create, r.status, r.body)
		}
		again := f.do("POST", c.base+id+"/resolve", keyA, still, "Idempotency-Key", "still-"+c.create)
		if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
			t.Errorf("%s: replay of the first resolution: %d %v\n%s\nwant its first answer\n%s", c.create, again.status, again.header, again.body, first.body)
		}
	}
}
