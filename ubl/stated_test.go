package ubl

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestTaxCurrencyStated: a caller may state the breakdown in the tax
// currency (a credit note crediting the running difference of an
// invoice's national VAT, Art. 230 Directive 2006/112/EC) in place of the
// conversion of each subtotal, within 0.01 of it; BT-111 and the note then
// carry the stated amounts. Off by more, negative, more than 2 decimals or
// not one per subtotal, it is refused naming the field.
func TestTaxCurrencyStated(t *testing.T) {
	base := lawPL()
	totals, err := base.Totals()
	if err != nil {
		t.Fatal(err)
	}
	conv := totals.TaxCurrencySubtotals[0]
	cent := decimal.New(1, -2)
	inv := lawPL()
	tc := *inv.TaxCurrency
	tc.Stated = []StatedAmount{{TaxableAmount: conv.TaxableAmount.Sub(cent), TaxAmount: conv.TaxAmount.Add(cent)}}
	inv.TaxCurrency = &tc
	got, err := inv.Totals()
	if err != nil {
		t.Fatal(err)
	}
	if !got.TaxCurrencyTax.Equal(conv.TaxAmount.Add(cent)) || !got.TaxCurrencySubtotals[0].TaxableAmount.Equal(conv.TaxableAmount.Sub(cent)) {
		t.Fatalf("stated %+v: BT-111 %s, subtotal %+v", tc.Stated, got.TaxCurrencyTax, got.TaxCurrencySubtotals[0])
	}
	out, err := RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	want := `<cbc:TaxAmount currencyID="PLN">` + conv.TaxAmount.Add(cent).StringFixed(2) + `</cbc:TaxAmount>`
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "VAT "+conv.TaxAmount.Add(cent).StringFixed(2)+" PLN") {
		t.Errorf("rendered invoice lacks the stated VAT %s:\n%s", want, out)
	}
	for _, c := range []struct {
		name   string
		stated []StatedAmount
		field  string
		err    error
	}{
		{"two cents off", []StatedAmount{{TaxableAmount: conv.TaxableAmount, TaxAmount: conv.TaxAmount.Add(cent.Add(cent))}}, "TaxCurrency.Stated[0].TaxAmount", ErrMismatch},
		{"negative", []StatedAmount{{TaxableAmount: conv.TaxableAmount.Neg(), TaxAmount: conv.TaxAmount}}, "TaxCurrency.Stated[0].TaxableAmount", ErrRange},
		{"three decimals", []StatedAmount{{TaxableAmount: conv.TaxableAmount, TaxAmount: conv.TaxAmount.Add(decimal.New(1, -3))}}, "TaxCurrency.Stated[0].TaxAmount", ErrRange},
		{"one too many", []StatedAmount{{TaxableAmount: conv.TaxableAmount, TaxAmount: conv.TaxAmount}, {}}, "TaxCurrency.Stated", ErrMismatch},
	} {
		inv := lawPL()
		tc := *inv.TaxCurrency
		tc.Stated = c.stated
		inv.TaxCurrency = &tc
		out, err := RenderInvoice(inv)
		expectProblem(t, out, err, wantProblem{c.field, "", c.err})
	}
}
