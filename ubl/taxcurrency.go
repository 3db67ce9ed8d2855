package ubl

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// convertTaxCurrency states the VAT breakdown in the VAT accounting
// currency (BT-6): each group's taxable amount and VAT converted at rate,
// rounded once each with roundMoney, and BT-111 as the sum of the
// converted VAT amounts. Converting the VAT amount of each rate (rather
// than recomputing VAT on a converted base) is what Art. 230 asks ("the
// amount of VAT payable ... expressed in the national currency") and what
// the Polish VAT Act Art. 106e(11) and HMRC (VAT Notice 700 §16.3: "the
// amount of VAT, if any, at each rate") describe; BT-111 then equals the
// sum of the per-rate figures printed in the note. A caller's stated
// breakdown (TaxCurrency.Stated) replaces the conversions, each amount
// within 0.01 of its conversion. With the subtotals' exact amounts
// (TaxCurrency.Exact) those are converted instead of the cents: each
// figure in the tax currency is then rounded once, from the exact value.
func convertTaxCurrency(c *checker, t *Totals, rate decimal.Decimal, stated, exact []StatedAmount) {
	t.TaxCurrencySubtotals = make([]TaxSubtotal, len(t.Subtotals))
	t.TaxCurrencyTax = decimal.Zero
	if stated != nil && len(stated) != len(t.Subtotals) {
		c.addf("TaxCurrency.Stated", "", ErrMismatch, "states %d VAT subtotals in the tax currency; the document has %d", len(stated), len(t.Subtotals))
		return
	}
	if exact != nil && len(exact) != len(t.Subtotals) {
		c.addf("TaxCurrency.Exact", "", ErrMismatch, "states the exact amounts of %d VAT subtotals; the document has %d", len(exact), len(t.Subtotals))
		return
	}
	for i, s := range t.Subtotals {
		cs := TaxSubtotal{
			Category: s.Category, RatePercent: s.RatePercent,
			TaxableAmount: convertMoney(s.TaxableAmount, rate),
			TaxAmount:     convertMoney(s.TaxAmount, rate),
		}
		if exact != nil && checkExact(c, i, exact[i], s) {
			cs.TaxableAmount, cs.TaxAmount = roundMoney(exact[i].TaxableAmount.Mul(rate)), roundMoney(exact[i].TaxAmount.Mul(rate))
		}
		if stated != nil {
			st := stated[i]
			for _, a := range []struct {
				name        string
				given, conv decimal.Decimal
			}{{"TaxableAmount", st.TaxableAmount, cs.TaxableAmount}, {"TaxAmount", st.TaxAmount, cs.TaxAmount}} {
				f := fmt.Sprintf("TaxCurrency.Stated[%d].%s", i, a.name)
				switch {
				case a.given.IsNegative():
					c.addf(f, "", ErrRange, "%s is negative; amounts are positive, the document type gives the sign", a.given.String())
				case !hasPlaces(a.given, 2):
					c.addf(f, "", ErrRange, "%s has more than 2 decimals", a.given.String())
				case a.given.Sub(a.conv).Abs().GreaterThan(decimal.New(1, -2)):
					c.addf(f, "", ErrMismatch, "%s is not within 0.01 of %s converted at %s = %s", a.given.String(), a.name, rate.String(), a.conv.StringFixed(2))
				}
			}
			cs.TaxableAmount, cs.TaxAmount = st.TaxableAmount, st.TaxAmount
		}
		t.TaxCurrencySubtotals[i] = cs
		t.TaxCurrencyTax = addDec(t.TaxCurrencyTax, cs.TaxAmount)
		if cmpDec(cs.TaxableAmount, maxAmount) >= 0 {
			c.addf("TaxCurrency.Rate", "", ErrRange, "the taxable amount in the tax currency, %s, is not below 10^15", cs.TaxableAmount.StringFixed(2))
			return
		}
	}
}

// ExactToleranceCents is how far, in cents of the document currency, a
// subtotal's exact amounts (TaxCurrency.Exact) may lie from the cents it
// states: 2, so ExactTolerance is 0.02. An invoice's cents are its exact
// figures rounded once (within 0.005; its net, gross less VAT, within
// 0.01). A credit note crediting part of an invoice states the running
// difference of the credit notes (package refunds): the exact net
// credited so far, this note's included, rounded once (or, for the note
// that empties the invoice, the invoice's net), less what the notes before
// it credited, itself such a figure. Each of the two cumulative figures
// lies within 0.01 of the exact cumulative net, so the note's net lies
// within 0.02 of its exact share; its VAT lies within 0.01 of its net ×
// rate (the breakdown's consistency, BR-CO-17, which this package holds
// to 0.01), so within 0.01 + 0.02 × rate of its exact VAT (its exact
// net × rate): within 0.02 for any rate up to 50 %. With 0.01, such a
// note's exact share was refused, and its VAT in the tax currency was
// converted from its cents, which no longer add up, note by note, to what
// the invoice stated (Art. 230 Directive 2006/112/EC,
// https://eur-lex.europa.eu/eli/dir/2006/112/oj). invoicelaw.WithExact
// uses the same bound, so that the two cannot disagree.
const ExactToleranceCents = 2

// ExactTolerance is ExactToleranceCents in the document currency: 0.02.
func ExactTolerance() decimal.Decimal { return decimal.New(ExactToleranceCents, -2) }

// checkExact checks subtotal i's exact amounts (TaxCurrency.Exact): not
// negative, and within ExactTolerance of the cents the subtotal states
// (the exact share those cents stand for). It reports whether they are
// sound.
func checkExact(c *checker, i int, e StatedAmount, s TaxSubtotal) bool {
	ok := true
	for _, a := range []struct {
		name         string
		exact, cents decimal.Decimal
	}{{"TaxableAmount", e.TaxableAmount, s.TaxableAmount}, {"TaxAmount", e.TaxAmount, s.TaxAmount}} {
		f := fmt.Sprintf("TaxCurrency.Exact[%d].%s", i, a.name)
		switch {
		case !c.sane(f, a.exact):
			ok = false
		case a.exact.IsNegative():
			c.addf(f, "", ErrRange, "%s is negative; amounts are positive, the document type gives the sign", a.exact.String())
			ok = false
		case a.exact.Sub(a.cents).Abs().GreaterThan(ExactTolerance()):
			c.addf(f, "", ErrMismatch, "%s is not within %s of the subtotal's %s", a.exact.String(), ExactTolerance().StringFixed(2), a.cents.StringFixed(2))
			ok = false
		}
	}
	return ok
}

// noteWithTaxCurrency is BT-22 as written: the caller's note, followed
// (when a tax currency is set) by the rate with its date and source and
// the breakdown in the tax currency. UBL has cac:TaxExchangeRate for the
// rate, but EN 16931 has no business term for it (UBL-CR-490 warns), and
// Peppol allows one note (PEPPOL-EN16931-R002), so the statement joins the
// caller's note. Example:
//
//	VAT in PLN at 1 EUR = 4.2655 PLN, rate of 2026-11-18 (NBP average
//	rate, table 223/A/NBP/2026): S 23 %: taxable amount 426.55 PLN, VAT
//	98.11 PLN; total VAT 98.11 PLN.
func noteWithTaxCurrency(p *prepared) string {
	inv := p.inv
	tc := inv.TaxCurrency
	if tc == nil {
		return inv.Note
	}
	var b strings.Builder
	if inv.Note != "" {
		b.WriteString(inv.Note)
		b.WriteByte(' ')
	}
	b.WriteString("VAT in " + tc.Code + " at 1 " + inv.Currency + " = " + tc.Rate.String() + " " + tc.Code)
	b.WriteString(", rate of " + tc.RateDate + " (" + tc.RateSource + "):")
	for i, s := range p.totals.TaxCurrencySubtotals {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(" " + s.Category)
		if s.Category != "O" {
			b.WriteString(" " + s.RatePercent.String() + " %")
		}
		b.WriteString(": taxable amount " + s.TaxableAmount.StringFixed(2) + " " + tc.Code)
		b.WriteString(", VAT " + s.TaxAmount.StringFixed(2) + " " + tc.Code)
	}
	b.WriteString("; total VAT " + p.totals.TaxCurrencyTax.StringFixed(2) + " " + tc.Code + ".")
	return b.String()
}
