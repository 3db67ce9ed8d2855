package httpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestRefundOverHTTPOfASupplyWhoseSummaryIsRefused: a consumer named at
// one April payment and located in France at the next; the month's
// summary invoice names one customer and is refused (422
// INVOICE_RULES_FAILED: Art. 226(5) Directive 2006/112/EC). A refund of
// the first supply answered 422 CREDIT_NOTE_REFUSED, "issue it, then
// refund", for a summary no call could issue. It now invoices the supply
// on its own (served as GET /settlements/{id}/invoiced-by names it) and
// corrects that invoice: 201, originalInvoiceId its number.
func TestRefundOverHTTPOfASupplyWhoseSummaryIsRefused(t *testing.T) {
	f, _ := newSummaryFixture(t)
	first := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"consumerName": "Alice Muster"})))
	if first.status != 201 {
		t.Fatalf("first settlement: %d %s", first.status, first.body)
	}
	second := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{
		"amountUsdc": "2.40", "consumerCountry": "FR", "timestamp": "2026-04-11T10:00:00Z",
		"txHash": "0x6f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f"})))
	if second.status != 201 {
		t.Fatalf("second settlement: %d %s", second.status, second.body)
	}
	var rec struct {
		ID        string `json:"id"`
		Invoicing struct {
			Invoice string `json:"invoice"`
		} `json:"invoicing"`
	}
	if err := json.Unmarshal(first.body, &rec); err != nil || rec.Invoicing.Invoice != "summary" {
		t.Fatalf("first settlement %s: %v; want one a summary covers", first.body, err)
	}
	wantProblem(t, f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04"})), 422, string(fiscal.CodeInvoiceRulesFailed), "")

	r := f.do("POST", "/settlements/"+rec.ID+"/refunds", keyA, mustJSON(t, map[string]any{"amountUsdc": "1.00"}))
	if r.status != 201 {
		t.Fatalf("refund of a supply whose summary is refused: %d %s; want 201 against an invoice of its own", r.status, r.body)
	}
	var ref struct {
		ID                string `json:"id"`
		OriginalInvoiceID string `json:"originalInvoiceId"`
	}
	if err := json.Unmarshal(r.body, &ref); err != nil {
		t.Fatal(err)
	}
	cov := f.do("GET", "/settlements/"+rec.ID+"/invoiced-by", keyA, nil)
	var c struct {
		InvoiceID string `json:"invoiceId"`
		SummaryID string `json:"summaryId"`
	}
	if err := json.Unmarshal(cov.body, &c); err != nil || cov.status != 200 || c.InvoiceID == "" || c.InvoiceID != ref.OriginalInvoiceID {
		t.Fatalf("invoiced-by %d %s; the refund corrects %q", cov.status, cov.body, ref.OriginalInvoiceID)
	}
	if u := f.do("GET", "/v1/invoices/summaries/"+c.SummaryID+"/ubl", keyA, nil); u.status != 200 {
		t.Errorf("the supply's own invoice: %d %s", u.status, u.body)
	}
	if u := f.do("GET", "/settlements/"+rec.ID+"/refunds/"+ref.ID+"/ubl", keyA, nil); u.status != 200 {
		t.Errorf("the credit note: %d %s", u.status, u.body)
	}
}
