package httpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/fiscal402/fiscal402/httpserver"
)

// TestFiscalEventResolutionCounts: an accepted resolution of a fiscal
// event counts in fiscal402_settlements_total under source "resolve" (README
// "Metrics": payments accepted over HTTP, sources settlements, x402,
// fiscal_events, resolve), with its outcome and the event's determination
// status, as a settlement's resolution and every other accepted ingest do;
// its replay counts as replayed.
func TestFiscalEventResolutionCounts(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	r := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"buyer": nil})))
	var ev struct {
		ID            string
		Determination struct{ Status string }
	}
	if err := json.Unmarshal(r.body, &ev); err != nil || r.status != 201 || ev.Determination.Status != "MANUAL_REVIEW_REQUIRED" {
		t.Fatalf("fiscal event: %d %s", r.status, r.body)
	}
	body := []byte(`{"buyer":{"consumerCountry":"DE"},"resolvedBy":"ops@example.com"}`)
	r = f.do("POST", "/v1/fiscal-events/"+ev.ID+"/resolve", keyA, body, "Idempotency-Key", "resolve-1")
	if r.status != 201 {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &ev); err != nil {
		t.Fatal(err)
	}
	if r := f.do("POST", "/v1/fiscal-events/"+ev.ID+"/resolve", keyA, body, "Idempotency-Key", "resolve-1"); r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s", r.status, r.body)
	}
	after := f.scrape(t, operatorKey)
	for outcome, want := range map[string]float64{"created": 1, "replayed": 1} {
		labels := map[string]string{"source": "resolve", "outcome": outcome, "status": ev.Determination.Status}
		if got, ok := metricValue(after, "fiscal402_settlements_total", labels); got != want {
			t.Errorf("fiscal402_settlements_total%v = %v (present %v), want %v", labels, got, ok, want)
		}
	}
}
