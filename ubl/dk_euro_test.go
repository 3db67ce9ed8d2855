package ubl

import "testing"

// TestLawDanishVATInEuro: Denmark accepts an invoice's VAT amount in
// Danish kroner or in euro (momsbekendtgørelsen, BEK nr. 1435 af
// 29/11/2023, § 97, stk. 2, https://elov.dk/momsbekendtgorelsen/paragraf/97/),
// so an invoice in euro under Danish law meets Art. 230 Directive
// 2006/112/EC without a DKK figure, or with one; a tax currency other than
// DKK is still refused.
func TestLawDanishVATInEuro(t *testing.T) {
	dk := func() Invoice {
		inv := b2c("F402-1", "DK", "25", "100.00")
		inv.Seller, inv.TaxCountry, inv.SupplyDate = sellerDK, "DK", "2026-11-20"
		return inv
	}
	if _, err := RenderInvoice(dk()); err != nil {
		t.Errorf("a Danish invoice in euro without DKK: %v", err)
	}
	withDKK := dk()
	withDKK.TaxCurrency = &TaxCurrency{Code: "DKK", Rate: d("7.4604"), RateDate: "2026-11-19", RateSource: "ECB"}
	if _, err := RenderInvoice(withDKK); err != nil {
		t.Errorf("a Danish invoice in euro with DKK: %v", err)
	}
	withSEK := dk()
	withSEK.TaxCurrency = &TaxCurrency{Code: "SEK", Rate: d("10.9"), RateDate: "2026-11-19", RateSource: "ECB"}
	out, err := RenderInvoice(withSEK)
	expectProblem(t, out, err, wantProblem{"TaxCurrency.Code", RuleArt230, ErrMismatch})
}
