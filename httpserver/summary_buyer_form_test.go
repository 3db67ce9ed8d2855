package httpserver_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestSummaryBuyerNeitherWalletNorVATNumberIsRefused: a buyer that is
// neither a payer wallet nor a well-formed VAT number (vat.ValidateNumber:
// a known prefix, the state's syntax and check digits) names no buyer:
// POST /v1/invoices/summaries answers 400 naming /buyer, as it promises
// for a malformed buyer, not 404 for a buyer without supplies. "not a
// wallet" was read as the VAT number NOTAWALLET and "-1" as 1. A
// well-formed number without supplies is still 404, and nothing is written.
func TestSummaryBuyerNeitherWalletNorVATNumberIsRefused(t *testing.T) {
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
	size := f.engine.Ledger().Size()
	for _, b := range []string{"not a wallet", "-1", "hello world", "DE#136695976", "XX123456789", "DE136695977"} {
		r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04", "buyer": b}))
		wantProblem(t, r, 400, string(fiscal.CodeBadRequest), "/buyer")
	}
	for _, b := range []string{"DE136695976", "de 136 695 976", "ATU13585627"} {
		r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04", "buyer": b}))
		wantProblem(t, r, 404, string(fiscal.CodeNotFound), "")
	}
	if got := f.engine.Ledger().Size(); got != size {
		t.Fatalf("refused requests wrote %d entries", got-size)
	}
}
