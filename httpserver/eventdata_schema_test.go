package httpserver_test

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/vat"
)

// TestEventDataOfEveryEventTypeIsDocumented: GET /v1/events (and every
// webhook delivery) carries in `data` what the event's ledger entry
// stored. For account.threshold_crossed that is the account event
// (object account_event) and for invoice.summary_issued the summary
// invoice's document (object summary_invoice), as the README says; the
// OpenAPI document declared `data` as a record, a fiscal event or a
// refund only (oneOf with a discriminator on `object`), so a real
// backfill page broke the served document and a client generated from it
// could not decode those entries.
func TestEventDataOfEveryEventTypeIsDocumented(t *testing.T) {
	f := newFixture(t)
	accounts := testAccounts(t)
	// A seller under the Art. 59c threshold, invoicing by monthly summary:
	// its second sale of 9,000 USDC to a consumer in Germany takes its
	// year over EUR 10,000.
	accounts[0].Seller.OverThreshold = false
	accounts[0].Seller.Invoicing = fiscal.InvoicingSummaryMonthly
	accounts[0].Seller.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}}
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "9000", "txHash": txHash(960000 + i)})))
		if r.status != 201 {
			t.Fatalf("settlement %d: %d %s", i, r.status, r.body)
		}
	}
	if r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04"})); r.status != 201 {
		t.Fatalf("summary: %d %s", r.status, r.body)
	}
	doc := f.openAPIDocument(t)
	page := f.do("GET", "/v1/events?limit=200", keyA, nil)
	if page.status != 200 {
		t.Fatalf("events: %d %s", page.status, page.body)
	}
	seen := map[string]string{}
	for _, e := range page.json(t)["data"].([]any) {
		ev := e.(map[string]any)
		seen[ev["type"].(string)] = ev["id"].(string)
	}
	for _, typ := range []string{fiscal.EventAccountThresholdCrossed, invoicing.EventInvoiceSummaryIssued} {
		if seen[typ] == "" {
			t.Fatalf("no %s event in the backfill: %v", typ, seen)
		}
	}
	assertDocumented(t, doc, "GET", "/v1/events", page)
	for _, typ := range []string{fiscal.EventAccountThresholdCrossed, invoicing.EventInvoiceSummaryIssued} {
		assertDocumented(t, doc, "GET", "/v1/events/{id}", f.do("GET", "/v1/events/"+seen[typ], keyA, nil))
	}
	// The decisions in info.description say what the data of each event
	// is: they said "invoice.issued (its data is the summary invoice's
	// document)", the note of invoice.summary_issued left behind when
	// invoice.issued was appended, and nothing of the account event.
	desc, _ := doc["info"].(map[string]any)["description"].(string)
	var bullet string
	for _, line := range strings.Split(desc, "\n") {
		if strings.HasPrefix(line, "- **Event types**") {
			bullet = line
		}
	}
	for _, obj := range []string{fiscal.ObjectAccountEvent, invoicing.ObjectSummaryInvoice} {
		if !strings.Contains(bullet, "`"+obj+"`") {
			t.Errorf("the Event types decision does not say which events carry a %s document: %q", obj, bullet)
		}
	}
}
