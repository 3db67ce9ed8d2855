package ubl

import (
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// Supply is one supply to be invoiced on a summary invoice (Art. 223
// Directive 2006/112/EC: one invoice for several separate supplies within
// a calendar month), e.g. one paid API request.
type Supply struct {
	// Date is the day of the supply, YYYY-MM-DD, the local day in the
	// taxing state (Art. 226(7)).
	Date string `json:",omitzero"`

	// Name is the item name of the supply's own line (SummaryPerSupply);
	// empty means the summary's item name.
	Name string `json:",omitzero"`

	// NetAmount is the exact net amount in the document currency: >= 0,
	// at most 6 decimal places (the precision of USDC), not rounded to the
	// cent. The VAT is computed on the sum of these exact amounts.
	NetAmount decimal.Decimal `json:",omitzero"`

	// Category, RatePercent, ExemptionCode and ExemptionReason are those of
	// Line.
	Category        string          `json:",omitzero"`
	RatePercent     decimal.Decimal `json:",omitzero"`
	ExemptionCode   string          `json:",omitzero"`
	ExemptionReason string          `json:",omitzero"`
}

// SummaryMode chooses how a summary invoice lists its supplies.
type SummaryMode int

const (
	// SummaryPerRate writes one line per VAT category and rate: the
	// number of supplies and their dates in the name, the exact sum as
	// the price (BT-146, up to 6 decimals), the sum rounded to the cent as
	// the line net amount (BT-131), the first and last day as the line
	// period (BG-26). Works for any amounts, including sub-cent ones.
	SummaryPerRate SummaryMode = iota

	// SummaryPerSupply writes one line per supply with its day as the line
	// period. A line net amount has at most 2 decimals (BR-DEC-23), so
	// every supply must be a whole number of cents; a sub-cent supply is
	// rejected (ErrDecimals) rather than rounded, which would change the
	// VAT base.
	SummaryPerSupply
)

// Summary is what Summarize returns: the lines, the VAT breakdown computed
// on the exact amounts, and the period, for Invoice.Lines,
// Invoice.Subtotals and Invoice.Period.
type Summary struct {
	Lines     []Line
	Subtotals []TaxSubtotal
	Period    Period

	// Exact is, per entry of Subtotals, the exact sum of the supplies' net
	// amounts (before rounding to the cent).
	Exact []decimal.Decimal
}

// Summarize turns supplies into the lines and VAT breakdown of a summary
// invoice. itemName names the per-rate lines ("API requests" gives
// "API requests: 10000 supplies, 2026-11-01 to 2026-11-30").
//
// The VAT of each (category, rate) group is roundMoney(Σ exact net ×
// rate / 100): computed on the exact amounts and rounded once. The
// group's taxable amount (BT-116) is the sum of its lines' net amounts
// (BR-S-08, BR-CO-10 hold exactly); in SummaryPerRate mode that is the
// exact sum rounded once to the cent, so the VAT differs from BT-116 ×
// rate by less than 0.01 (|round(S·r) − round(S)·r| ≤ 0.005 + 0.005·r),
// within RenderInvoice's tolerance for caller subtotals and far within
// BR-CO-17's. The invoice takes Lines, Subtotals and Period as they are.
//
// It returns a *ValidationError naming Supplies[i].<field> on bad input.
func Summarize(itemName string, mode SummaryMode, supplies []Supply) (Summary, error) {
	c := &checker{}
	if mode != SummaryPerRate && mode != SummaryPerSupply {
		c.addf("mode", "", ErrCode, "%d is not a SummaryMode", int(mode))
	}
	if len(supplies) == 0 {
		c.add("Supplies", "BR-16", ErrRequired, "at least one supply")
	}
	if mode == SummaryPerRate {
		c.required("itemName", "BR-25", itemName)
	} else {
		c.text("itemName", itemName)
	}
	for i, s := range supplies {
		f := "Supplies[" + strconv.Itoa(i) + "]"
		c.date(f+".Date", "", s.Date)
		if mode == SummaryPerSupply && s.Name == "" && itemName == "" {
			c.add(f+".Name", "BR-25", ErrRequired, "")
		}
		c.text(f+".Name", s.Name)
		if c.sane(f+".NetAmount", s.NetAmount) && c.bounded(f+".NetAmount", s.NetAmount, false) && c.places(f+".NetAmount", s.NetAmount, maxPriceDecimals) &&
			mode == SummaryPerSupply && !s.NetAmount.Truncate(2).Equal(s.NetAmount) {
			c.addf(f+".NetAmount", "BR-DEC-23", ErrDecimals, "%s is not a whole number of cents; a line per supply cannot carry it exactly (use SummaryPerRate)", s.NetAmount.String())
		}
		if checkCategory(c, f+".Category", s.Category) {
			checkRate(c, f+".RatePercent", s.Category, s.RatePercent)
			checkExemption(c, f, s.Category, s.ExemptionCode, s.ExemptionReason)
		}
	}
	if err := c.err(); err != nil {
		return Summary{}, err
	}

	type acc struct {
		s           Supply // category, rate, exemption of the group
		exact       decimal.Decimal
		n           int
		first, last string
	}
	var groups []*acc
	byKey := map[string]*acc{}
	var sum Summary
	for i, s := range supplies {
		k := groupKey(s.Category, s.RatePercent)
		g := byKey[k]
		if g == nil {
			g = &acc{s: s, first: s.Date, last: s.Date}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.exact = g.exact.Add(s.NetAmount)
		g.n++
		g.first, g.last = min(g.first, s.Date), max(g.last, s.Date)
		// One exemption code and reason per breakdown group, as the
		// renderer requires of lines (stricter: an empty value differs too).
		if g.s.ExemptionCode != s.ExemptionCode {
			c.addf("Supplies["+strconv.Itoa(i)+"].ExemptionCode", "", ErrMismatch, "%q differs from %q of an earlier supply of the same VAT category and rate; the breakdown has one", s.ExemptionCode, g.s.ExemptionCode)
		}
		if g.s.ExemptionReason != s.ExemptionReason {
			c.addf("Supplies["+strconv.Itoa(i)+"].ExemptionReason", "", ErrMismatch, "%q differs from %q of an earlier supply of the same VAT category and rate; the breakdown has one", s.ExemptionReason, g.s.ExemptionReason)
		}
		if sum.Period.Start == "" || s.Date < sum.Period.Start {
			sum.Period.Start = s.Date
		}
		sum.Period.End = max(sum.Period.End, s.Date)
		if mode == SummaryPerSupply {
			name := s.Name
			if name == "" {
				name = itemName
			}
			sum.Lines = append(sum.Lines, Line{
				Name: name, Quantity: decimal.New(1, 0), PriceAmount: s.NetAmount, NetAmount: s.NetAmount,
				Category: s.Category, RatePercent: s.RatePercent, ExemptionCode: s.ExemptionCode, ExemptionReason: s.ExemptionReason,
				Period: &Period{Start: s.Date, End: s.Date},
			})
		}
	}
	if err := c.err(); err != nil {
		return Summary{}, err
	}
	for _, g := range groups {
		base := roundMoney(g.exact)
		if mode == SummaryPerRate {
			dates := g.first
			if g.last != g.first {
				dates += " to " + g.last
			}
			sum.Lines = append(sum.Lines, Line{
				Name:        fmt.Sprintf("%s: %d supplies, %s", itemName, g.n, dates),
				Quantity:    decimal.New(1, 0),
				PriceAmount: g.exact, NetAmount: base,
				Category: g.s.Category, RatePercent: g.s.RatePercent, ExemptionCode: g.s.ExemptionCode, ExemptionReason: g.s.ExemptionReason,
				Period: &Period{Start: g.first, End: g.last},
			})
		}
		vat := decimal.Zero
		if g.s.Category == "S" {
			vat = vatOf(g.exact, g.s.RatePercent)
		}
		sum.Subtotals = append(sum.Subtotals, TaxSubtotal{Category: g.s.Category, RatePercent: g.s.RatePercent, TaxableAmount: base, TaxAmount: vat})
		sum.Exact = append(sum.Exact, g.exact)
	}
	return sum, nil
}
