package ubl

import (
	"testing"

	"github.com/shopspring/decimal"
)

// TestTaxCurrencyExact: given the subtotals' exact amounts (a supply's
// exact net and VAT before they were rounded to the cent), the breakdown
// in the tax currency converts those and rounds once (Art. 230 Directive
// 2006/112/EC: the VAT payable in the national currency), not the cents
// converted and rounded again: 100.00 net and 23.00 VAT in cents, exactly
// 100.004 and 22.996, at 4.2655 PLN are 426.57 and 98.09 PLN, not 426.55
// and 98.11. Exact figures more than 0.02 (ExactTolerance) from their
// cents, negative, or
// not one per subtotal are refused naming the field; stated figures are
// then held within 0.01 of the exact conversions.
func TestTaxCurrencyExact(t *testing.T) {
	inv := lawPL()
	rate := inv.TaxCurrency.Rate
	exact := StatedAmount{TaxableAmount: decimal.RequireFromString("100.004"), TaxAmount: decimal.RequireFromString("22.996")}
	inv.TaxCurrency.Exact = []StatedAmount{exact}
	got, err := inv.Totals()
	if err != nil {
		t.Fatal(err)
	}
	wantNet, wantVAT := exact.TaxableAmount.Mul(rate).Round(2), exact.TaxAmount.Mul(rate).Round(2)
	if s := got.TaxCurrencySubtotals[0]; !s.TaxableAmount.Equal(wantNet) || !s.TaxAmount.Equal(wantVAT) || !got.TaxCurrencyTax.Equal(wantVAT) {
		t.Fatalf("exact %+v at %s: subtotal %s / %s, BT-111 %s; want %s / %s", exact, rate, s.TaxableAmount, s.TaxAmount, got.TaxCurrencyTax, wantNet, wantVAT)
	}
	if twice := d("23.00").Mul(rate).Round(2); twice.Equal(wantVAT) {
		t.Fatalf("the cents converted, %s, are the exact VAT converted: the case shows nothing", twice)
	}
	if _, err := RenderInvoice(inv); err != nil {
		t.Fatal(err)
	}
	// A credit note's cents, a running difference, lie up to 0.02 from
	// its exact share (ExactTolerance): accepted.
	two := lawPL()
	tcTwo := *two.TaxCurrency
	tcTwo.Exact = []StatedAmount{{TaxableAmount: d("100.02"), TaxAmount: d("22.98")}}
	two.TaxCurrency = &tcTwo
	if _, err := RenderInvoice(two); err != nil {
		t.Fatalf("exact figures 0.02 from their cents: %v", err)
	}
	cent := decimal.New(1, -2)
	for _, c := range []struct {
		name   string
		exact  []StatedAmount
		stated []StatedAmount
		field  string
		err    error
	}{
		{"three cents from the cents", []StatedAmount{{TaxableAmount: d("100.00"), TaxAmount: d("23.03")}}, nil, "TaxCurrency.Exact[0].TaxAmount", ErrMismatch},
		{"negative", []StatedAmount{{TaxableAmount: d("-100.00"), TaxAmount: d("23.00")}}, nil, "TaxCurrency.Exact[0].TaxableAmount", ErrRange},
		{"one too many", []StatedAmount{exact, exact}, nil, "TaxCurrency.Exact", ErrMismatch},
		{"stated two cents from the exact conversion", []StatedAmount{exact}, []StatedAmount{{TaxableAmount: wantNet, TaxAmount: wantVAT.Add(cent).Add(cent)}}, "TaxCurrency.Stated[0].TaxAmount", ErrMismatch},
	} {
		inv := lawPL()
		tc := *inv.TaxCurrency
		tc.Exact, tc.Stated = c.exact, c.stated
		inv.TaxCurrency = &tc
		out, err := RenderInvoice(inv)
		expectProblem(t, out, err, wantProblem{c.field, "", c.err})
	}
}
