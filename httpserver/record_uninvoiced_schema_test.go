package httpserver_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// TestProcessedRecordWithoutItsOwnInvoiceIsDocumented: under
// summary_monthly a consumer supply gets no invoice of its own (a monthly
// summary covers it, Art. 223 Directive 2006/112/EC) and under none_b2c
// none at all (Art. 219a(2)(b), 220(1)); its PROCESSED record has no
// `invoice` member and says so in `invoicing`, as the README's "Invoicing
// modes" table says. The OpenAPI document required `invoice` on every
// PROCESSED record, so GET /settlements/{id} of such a record broke the
// served document, and a client validating against it refused the
// record.
func TestProcessedRecordWithoutItsOwnInvoiceIsDocumented(t *testing.T) {
	f := newFixture(t)
	doc := f.openAPIDocument(t)
	for i, mode := range []string{fiscal.InvoicingSummaryMonthly, fiscal.InvoicingNoneB2C} {
		accounts := testAccounts(t)
		accounts[0].Seller.Invoicing = mode
		accounts[0].Seller.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "IE"}, {Scheme: vat.RegistrationOSSUnion, Country: "IE"}}
		if err := f.engine.SetAccounts(accounts); err != nil {
			t.Fatal(err)
		}
		r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(970000 + i)})))
		if r.status != 201 {
			t.Fatalf("%s: %d %s", mode, r.status, r.body)
		}
		rec := r.json(t)
		inv, _ := rec["invoicing"].(map[string]any)
		if rec["reviewStatus"] != fiscal.StatusProcessed || rec["invoice"] != nil || inv == nil {
			t.Fatalf("%s: want a PROCESSED record without an invoice of its own: %.600s", mode, r.body)
		}
		assertDocumented(t, doc, "POST", "/settlements", r)
		assertDocumented(t, doc, "GET", "/settlements/{id}", f.do("GET", "/settlements/"+rec["id"].(string), keyA, nil))
	}
}
