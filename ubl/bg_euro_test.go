package ubl

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

// TestLawBulgarianLevBeforeTheEuro: Bulgaria adopted the euro on
// 1 January 2026 (Council Decision (EU) 2025/1407); its national currency
// for a supply before that day was the lev. A Bulgarian supply of
// December 2025 invoiced in euro must state its VAT in BGN as well
// (Art. 230 Directive 2006/112/EC), as a Polish one does in PLN; one of
// 2026 needs no second currency.
func TestLawBulgarianLevBeforeTheEuro(t *testing.T) {
	bg := func(supplyDate string) Invoice {
		inv := b2c("F402-1", "BG", "20", "100.00")
		inv.TaxCountry, inv.SupplyDate = "BG", supplyDate
		inv.IssueDate = supplyDate
		return inv
	}
	if _, err := RenderInvoice(bg("2026-01-01")); err != nil {
		t.Fatalf("a Bulgarian supply of 2026 in euro: %v", err)
	}
	out, err := RenderInvoice(bg("2025-12-31"))
	expectProblem(t, out, err, wantProblem{"TaxCurrency", RuleArt230, ErrRequired})

	// With BGN stated, Art. 230 is met; the validation artefacts' ISO 4217
	// list (CEN 1.3.16) no longer has the lev, which BR-CL-05 reports (the
	// engine holds such a sale for review).
	withBGN := bg("2025-12-31")
	withBGN.TaxCurrency = &TaxCurrency{Code: "BGN", Rate: decimal.RequireFromString("1.9558"), RateDate: "2025-12-30", RateSource: "ECB"}
	out, err = RenderInvoice(withBGN)
	expectProblem(t, out, err, wantProblem{"TaxCurrency.Code", "BR-CL-05", ErrCode})
	var ve *ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			if p.Rule == RuleArt230 {
				t.Errorf("a Bulgarian supply of 2025 with its VAT in BGN: %v", p)
			}
		}
	}
	withSEK := bg("2025-12-31")
	withSEK.TaxCurrency = &TaxCurrency{Code: "SEK", Rate: decimal.RequireFromString("10.9"), RateDate: "2025-12-30", RateSource: "ECB"}
	out, err = RenderInvoice(withSEK)
	expectProblem(t, out, err, wantProblem{"TaxCurrency.Code", RuleArt230, ErrMismatch})
}
