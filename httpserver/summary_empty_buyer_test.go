package httpserver_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestSummaryEmptyBuyerIsRefused: POST /v1/invoices/summaries with
// "buyer" given empty or null is a 400 naming /buyer, as " " already was,
// not the run for every buyer of the month that only a request without
// the member asks for. Each summary issued takes the next number of the
// account's invoice series and cannot be withdrawn, so a client whose
// buyer came out empty must not issue every buyer's invoice of the month;
// an empty redelivery endpoint and an empty refund amount are refused the
// same way (README "Webhooks", "Refunds and credit notes").
func TestSummaryEmptyBuyerIsRefused(t *testing.T) {
	f := newFixture(t)
	accounts := testAccounts(t)
	for i := range accounts {
		accounts[i].Seller.Invoicing = fiscal.InvoicingSummaryMonthly
	}
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "1.19"}))); r.status != 201 {
		t.Fatalf("settlement: %d %s", r.status, r.body)
	}
	for _, body := range []string{`{"period":"2026-04","buyer":""}`, `{"period":"2026-04","buyer":null}`, `{"buyer": null ,"period":"2026-04"}`} {
		p := wantProblem(t, f.do("POST", "/v1/invoices/summaries", keyA, []byte(body)), 400, string(fiscal.CodeBadRequest), "/buyer")
		_ = p
	}
	// Nothing was issued: the run for every buyer still issues the
	// month's one summary now, as new.
	r := f.do("POST", "/v1/invoices/summaries", keyA, []byte(`{"period":"2026-04"}`))
	if r.status != 201 {
		t.Fatalf("the run for every buyer after the refusals: %d %s, want 201 (a summary issued now)", r.status, r.body)
	}
}
