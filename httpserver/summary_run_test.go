package httpserver_test

import (
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
)

// TestSummaryRunThatIssuesNothingIsItsError: POST /v1/invoices/summaries
// for a month whose every summary fails answered 200 with an empty list
// and `failures`, a success status for a call that did nothing. A run
// that issues none (and finds none issued before) now answers the problem
// of its first failure: here 422 INVOICE_RULES_FAILED, as the request for
// that buyer alone answers, the detail naming the buyer.
func TestSummaryRunThatIssuesNothingIsItsError(t *testing.T) {
	f, accounts := newSummaryFixture(t)
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "1.19"}))); r.status != 201 {
		t.Fatalf("settlement: %d %s", r.status, r.body)
	}
	// The seller's profile now puts April's supplies under Germany's
	// invoicing rules, without dating the change: their summary cannot
	// be issued (it follows the rules they were recorded under).
	accounts[0].Seller.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: "DE", Number: "DE123456789"}}
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04"}))
	p := wantProblem(t, r, 422, string(fiscal.CodeInvoiceRulesFailed), "")
	if d, _ := p["detail"].(string); !strings.Contains(d, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8") || !strings.Contains(d, "no summary invoice was issued") {
		t.Errorf("detail %q, want it to name the failed buyer", d)
	}
}
