package httpserver_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestSummaryRequestFieldsAreChecked: POST /v1/invoices/summaries names a
// buyer (a payer wallet, or a business customer's VAT number) and, among
// one buyer's summaries, the state whose invoicing rules apply. A review
// found a malformed wallet ("0xdead") and a state that is no country
// ("XX", or one carrying a NUL that cut into the ledger's index key)
// answered 404 NOT_FOUND, "supplies ... not found", as if the request were
// well formed and merely had no supplies. They are 400 BAD_REQUEST naming
// the field, and change nothing; the well-formed forms (a wallet in any
// case, a state in lower case, EL for Greece) still reach their summary,
// or its absence (404).
func TestSummaryRequestFieldsAreChecked(t *testing.T) {
	f, _ := newSummaryFixture(t)
	sale := settlement(map[string]any{"amountUsdc": "1.19"})
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, sale)); r.status != 201 {
		t.Fatalf("settlement: %d %s", r.status, r.body)
	}
	wallet := sale["payerWallet"].(string)
	size := f.engine.Ledger().Size()
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"period": "2026-04", "buyer": "0xdead"}, "/buyer"},
		{map[string]any{"period": "2026-04", "buyer": wallet + "00"}, "/buyer"},
		{map[string]any{"period": "2026-04", "buyer": wallet + "\x00IE"}, "/buyer"},
		{map[string]any{"period": "2026-04", "buyer": "DE 123\x07456"}, "/buyer"},
		{map[string]any{"period": "2026-04", "buyer": wallet, "taxCountry": "XX"}, "/taxCountry"},
		{map[string]any{"period": "2026-04", "buyer": wallet, "taxCountry": "IRL"}, "/taxCountry"},
		{map[string]any{"period": "2026-04", "buyer": wallet, "taxCountry": "IE\x00"}, "/taxCountry"},
	} {
		r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, c.body))
		wantProblem(t, r, 400, string(fiscal.CodeBadRequest), c.field)
	}
	if got := f.engine.Ledger().Size(); got != size {
		t.Fatalf("refused requests wrote %d entries", got-size)
	}
	// Well-formed: a state with no supplies of this buyer is 404; the
	// wallet in upper case and the state in lower case issue the summary.
	wantProblem(t, f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04", "buyer": wallet, "taxCountry": "EL"})), 404, string(fiscal.CodeNotFound), "")
	if r := f.do("POST", "/v1/invoices/summaries", keyA, mustJSON(t, map[string]any{"period": "2026-04", "buyer": "0X" + wallet[2:], "taxCountry": "ie"})); r.status != 201 {
		t.Fatalf("summary: %d %s", r.status, r.body)
	}
}
