package httpserver_test

import (
	"slices"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestEventTypeEnumCoversEveryEvent: GET /v1/events (and every webhook
// delivery) carries the event type of its ledger entry, which may be
// fiscal_event.revised (a resolved fiscal event) or
// account.threshold_crossed. The OpenAPI schema of the event (EventPayload,
// EventDetail) closed its type with an enum of seven that lacked those
// two, so a real backfill page broke the document: a client generated
// from it fails to decode the revised event's entry.
func TestEventTypeEnumCoversEveryEvent(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	for _, name := range []string{"EventPayload", "EventDetail"} {
		enum := asStrings(doc.resolve("#/components/schemas/" + name)["properties"].(map[string]any)["type"].(map[string]any)["enum"])
		for _, typ := range []string{fiscal.EventSettlementProcessed, fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve,
			refunds.EventSettlementRefunded, fiscalevent.EventRecorded, fiscalevent.EventRevised,
			fiscal.EventAccountThresholdCrossed, invoicing.EventInvoiceSummaryIssued, invoicing.EventInvoiceIssued} {
			if !slices.Contains(enum, typ) {
				t.Errorf("%s.type does not list %s: %v", name, typ, enum)
			}
		}
	}
	pending := f.do("POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(map[string]any{"payment.txHash": txHash(950000), "buyer.country": nil})))
	if pending.status != 201 {
		t.Fatalf("%d %s", pending.status, pending.body)
	}
	id := pending.json(t)["id"].(string)
	if r := f.do("POST", "/v1/fiscal-events/"+id+"/resolve", keyA, mustJSON(t, map[string]any{"resolvedBy": "ops@example.com", "buyer": map[string]any{"consumerCountry": "FR"}})); r.status != 201 {
		t.Fatalf("resolve: %d %s", r.status, r.body)
	}
	page := f.do("GET", "/v1/events?limit=200", keyA, nil)
	if page.status != 200 || !slices.ContainsFunc(page.json(t)["data"].([]any), func(e any) bool { return e.(map[string]any)["type"] == fiscalevent.EventRevised }) {
		t.Fatalf("no %s event in the backfill: %d %.300s", fiscalevent.EventRevised, page.status, page.body)
	}
	assertDocumented(t, doc, "GET", "/v1/events", page)
}
