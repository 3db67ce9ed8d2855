package httpserver_test

import (
	"net/http"
	"testing"
)

// TestResolveOverHTTP: the review queue is GET /settlements?status=
// PENDING_MANUAL_REVIEW; POST /settlements/{id}/resolve supplies the
// missing country and answers 201 with the processed revision; the queue is
// then empty; bad resolutions are problems naming the field and change
// nothing; another account cannot resolve it.
func TestResolveOverHTTP(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerCountry": nil})))
	if created.status != http.StatusCreated {
		t.Fatalf("settle: %d %s", created.status, created.body)
	}
	id := created.json(t)["id"].(string)
	queue := func() []any {
		r := f.do("GET", "/settlements?status=PENDING_MANUAL_REVIEW", keyA, nil)
		if r.status != http.StatusOK {
			t.Fatalf("queue: %d %s", r.status, r.body)
		}
		return r.json(t)["data"].([]any)
	}
	if q := queue(); len(q) != 1 || q[0].(map[string]any)["id"] != id {
		t.Fatalf("queue before: %v", q)
	}
	if r := f.do("GET", "/settlements?status=DONE", keyA, nil); r.status != http.StatusBadRequest || r.json(t)["field"] != "status" {
		t.Errorf("status=DONE: %d %s", r.status, r.body)
	}

	for _, bad := range []struct {
		body  string
		field string
	}{
		{`{"buyer":{"consumerCountry":"DE"}}`, "/resolvedBy"},
		{`{"buyer":{"consumerCountry":"Germany"},"resolvedBy":"ops"}`, "/buyer/consumerCountry"},
		{`{"buyer":{"consumerCountry":"DE","extra":1},"resolvedBy":"ops"}`, "/buyer/extra"},
		{`{"determination":{"regime":"DOMESTIC","taxingCountry":"DE","ratePercent":"5","reason":"guess"},"resolvedBy":"ops"}`, "/determination/taxingCountry"}, // the record places the customer nowhere
		{`{"determination":{"regime":"DOMESTIC","taxingCountry":"DE","ratePercent":"1e1","reason":"guess"},"resolvedBy":"ops"}`, "/determination/ratePercent"}, // a decimal string, never an exponent
		{`{"determination":{"regime":"DOMESTIC","taxingCountry":"DE","ratePercent":"019","reason":"guess"},"resolvedBy":"ops"}`, "/determination/ratePercent"}, // nor a leading zero
	} {
		r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(bad.body))
		if r.status != http.StatusBadRequest || r.json(t)["field"] != bad.field {
			t.Errorf("%s: %d %s, want 400 at %s", bad.body, r.status, r.body, bad.field)
		}
	}
	if r := f.do("POST", "/settlements/"+id+"/resolve", keyB, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops"}`)); r.status != http.StatusNotFound {
		t.Errorf("another account: %d %s", r.status, r.body)
	}

	r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`), "Idempotency-Key", "res-1")
	if r.status != http.StatusCreated || r.header.Get("Location") != "/settlements/"+id {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	rec := r.json(t)
	if rec["reviewStatus"] != "PROCESSED" || rec["revision"] != float64(2) || rec["invoice"] == nil {
		t.Fatalf("resolved record: %s", r.body)
	}
	if q := queue(); len(q) != 0 {
		t.Errorf("queue after: %d records", len(q))
	}
	again := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@seller-a.example"}`), "Idempotency-Key", "res-1")
	if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %v", again.status, again.header)
	}
	if r := f.do("POST", "/settlements/"+id+"/resolve", keyA, []byte(`{"buyer":{"consumerCountry":"FR"},"resolvedBy":"ops"}`)); r.status != http.StatusConflict || r.json(t)["code"] != "RECORD_NOT_PENDING" {
		t.Errorf("resolving a processed record: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/settlements/"+id+"/ubl", keyA, nil); r.status != http.StatusOK {
		t.Errorf("invoice of the revision: %d", r.status)
	}
}

// TestFXStatus: the rates' state is public and says how old the newest rate
// is (a fixed table here: no refresh).
func TestFXStatus(t *testing.T) {
	f := newFixture(t)
	r := f.do("GET", "/v1/fx/status", "", nil)
	if r.status != http.StatusOK || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	m := r.json(t)
	if m["refresh"] != false || m["newest"] != "2026-04-13" || m["ageSeconds"].(float64) <= 0 {
		t.Errorf("status %s", r.body)
	}
}
