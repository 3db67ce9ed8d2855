package ubl

import "github.com/shopspring/decimal"

// roundMoney is the one place where the renderer rounds money: to 2 decimal
// places, half away from zero (shopspring's Round), as EN 16931 requires of
// document-level amounts (BR-DEC-*) and as the Peppol BIS "calculation and
// rounding" guidance describes: round each VAT amount once per (category,
// rate) group, never per line, and compute totals as sums of rounded values
// without rounding again (BR-DEC-*, BR-CO-10 to BR-CO-17:
// https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-tc434/; Peppol BIS
// Billing 3.0, https://docs.peppol.eu/poacc/billing/3.0/bis/). Our own rule
// for money is the same: amounts are decimals, never floats, and a cent is
// rounded once, on the figure a document shows, never on an intermediate one.
//
// For the positive amounts of this renderer, half away from zero is the
// commercial "half up" the EN 16931 rules assume.
func roundMoney(d decimal.Decimal) decimal.Decimal {
	return d.Round(2)
}

// vatOf is the VAT of a taxable base at a rate in percent, rounded once.
// base × rate is exact in decimal arithmetic and so is the division by 100
// (a shift of the exponent), so no intermediate precision is lost.
func vatOf(base, ratePercent decimal.Decimal) decimal.Decimal {
	return roundMoney(exactVAT(base, ratePercent))
}

// exactVAT is base × rate / 100 without rounding.
func exactVAT(base, ratePercent decimal.Decimal) decimal.Decimal {
	return base.Mul(ratePercent).Shift(-2)
}

// Totals are the document-level amounts as RenderInvoice writes them. All
// amounts have 2 decimal places and satisfy BR-CO-10 … BR-CO-16 exactly.
type Totals struct {
	// Subtotals is the VAT breakdown (BG-23) in document order: one entry per
	// (category, rate), in the order the groups first occur in the lines.
	Subtotals []TaxSubtotal

	LineExtension decimal.Decimal // BT-106 = Σ line net amounts (BR-CO-10)
	TaxExclusive  decimal.Decimal // BT-109 = BT-106; no allowances or charges (BR-CO-13)
	Tax           decimal.Decimal // BT-110 = Σ subtotal VAT (BR-CO-14)
	TaxInclusive  decimal.Decimal // BT-112 = BT-109 + BT-110 (BR-CO-15)
	Prepaid       decimal.Decimal // BT-113 = BT-112 when paid in full, else 0 (not written)
	Payable       decimal.Decimal // BT-115 = BT-112 − BT-113 (BR-CO-16)

	// With Invoice.TaxCurrency set (Art. 230): the breakdown in the tax
	// currency, each amount converted at TaxCurrency.Rate and rounded once
	// (stated in the note), and BT-111, their VAT sum. Empty and zero
	// otherwise.
	TaxCurrencySubtotals []TaxSubtotal
	TaxCurrencyTax       decimal.Decimal // BT-111
}

// Totals validates inv exactly as RenderInvoice does and returns the VAT
// breakdown and document totals it would write, so that a fiscal record can
// carry the same figures as its invoice.
func (inv Invoice) Totals() (Totals, error) {
	p, err := prepare(&inv, nil)
	if err != nil {
		return Totals{}, err
	}
	return p.totals, nil
}
