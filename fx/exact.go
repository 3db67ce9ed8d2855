package fx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// ExactScale is the number of decimal places at which EUR amounts are kept
// between conversion and the one final rounding to cents: the exact gross of
// a settlement, its net and VAT, and every sum of them (issue 15).
//
// A USDC amount divided by an ECB rate has, in general, no finite decimal
// expansion (1.1684 = 2^2 × 23 × 127 / 10^4), so some rounding is unavoidable;
// it happens once per record, half away from zero, and bounds the error of
// each exact figure by 0.5 × 10^-12 EUR. A sum of n records is then off its
// true value by at most n × 0.5 × 10^-12: 0.0005 EUR for 10^9 records, a
// tenth of the half cent at which a cent rounding could flip. Ten places
// would allow 0.05 EUR over 10^9 records and could move a return's total by a
// cent; more than twelve buys nothing a return can show and costs time. The
// VAT of a record is gross − net (exact, no further rounding), so the VAT of
// n records differs from the rate applied to their summed net by at most
// n × 0.5 × 10^-12 × (1 + rate) (tested as n × 10^-10).
const ExactScale = 12

// DivExact returns n / d rounded once to ExactScale decimals, half away from
// zero, from the exact quotient (shopspring DivRound compares the exact
// remainder; no intermediate precision). It panics if d is zero.
func DivExact(n, d decimal.Decimal) decimal.Decimal { return divRound(n, d, ExactScale) }

// ConvertUSDCExact is ConvertUSDC that also records the exact EUR gross at
// ExactScale (GrossEURExact, "grossEurExact" and "exactScale" on the wire).
// GrossEUR and GrossEURString are exactly ConvertUSDC's: the exact quotient
// rounded once to cents (DivEUR), not the 12-place figure rounded again,
// which could round twice. The engine keeps GrossEURExact for splitting net
// and VAT (SplitGross) and for every sum; it shows GrossEUR on the invoice.
func ConvertUSDCExact(amount decimal.Decimal, usdPerEUR Rate) Conversion {
	c := ConvertUSDC(amount, usdPerEUR)
	c.GrossEURExact = DivExact(amount, usdPerEUR.Value)
	c.GrossEURExactString = stringFixed(c.GrossEURExact, ExactScale)
	c.ExactScale = ExactScale
	return c
}

// SplitGross splits a VAT-inclusive gross at ratePercent (21 for 21 %,
// 5.5 for 5.5 %) into net and VAT without losing anything a return could add
// up: net = gross × 100 / (100 + ratePercent), rounded once to ExactScale
// decimals, half away from zero; VAT = gross − net, exactly. So net + VAT is
// gross to the last digit, and nothing is rounded to cents here: round the
// figures shown on an invoice, and every sum, once, with RoundEUR. A zero
// rate gives (gross, 0). It panics on a negative rate, which no VAT rate is.
func SplitGross(gross, ratePercent decimal.Decimal) (net, vat decimal.Decimal) {
	if ratePercent.IsNegative() {
		panic(fmt.Sprintf("fx: SplitGross: negative VAT rate %s %%", ratePercent.String()))
	}
	if ratePercent.IsZero() {
		return gross, decimal.Zero
	}
	if net, ok := splitNet64(gross, ratePercent); ok {
		return net, subDec(gross, net)
	}
	hundred := decimal.NewFromInt(100)
	net = gross.Mul(hundred).DivRound(hundred.Add(ratePercent), ExactScale)
	return net, gross.Sub(net)
}

// Sum adds exact amounts. It exists to say the rule in one place: a total of
// records adds their exact figures (GrossEURExact, SplitGross's net and VAT)
// and rounds the sum once, with RoundEUR, never a sum of cent-rounded
// figures, whose error grows by up to half a cent per record.
func Sum(amounts ...decimal.Decimal) decimal.Decimal {
	total := decimal.Zero
	for _, a := range amounts {
		total = total.Add(a)
	}
	return total
}

// ErrDate means a date argument is not a valid YYYY-MM-DD calendar date.
var ErrDate = errors.New("fx: invalid date")

// PeriodEndRate returns the ECB rate of quote that converts the amounts of
// a tax period ending on lastDay (YYYY-MM-DD) for an OSS or IOSS return:
// the publication for that day, or, if there is none that day, the next one
// (PeriodEndOrNext). Art. 366(2) Directive 2006/112/EC (non-Union scheme):
// "The conversion shall be made by applying the exchange rates published by
// the European Central Bank for that day, or, if there is no publication on
// that day, on the next day of publication" (366(1): "the exchange rate
// applying on the last day of the tax period"; text read at
// datenbank.nwb.de, Art. 366; the consolidated Directive is
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112).
// Art. 369h(2) lays down the same rule for the Union scheme (same EUR-Lex
// text; its wording was not re-read for this package), and Art. 369xh(2), in force from 1 July 2028,
// repeats it word for word for transfers of own goods. The next publication lies
// after the period: until it is out the error wraps ErrNotYetPublished, and a
// return can be filed only then. A lastDay that is not a date wraps ErrDate.
func PeriodEndRate(ctx context.Context, src Source, quote, lastDay string) (Rate, error) {
	d, ok := parseISODate(lastDay)
	if !ok {
		return Rate{}, fmt.Errorf("%w: period end %q: want YYYY-MM-DD", ErrDate, lastDay)
	}
	return src.Rate(ctx, quote, dayNoonUTC(d), PeriodEndOrNext)
}

// ConvertUSDCPeriodTotal converts the exact USDC total of a tax period to
// EUR at the period-end rate (PeriodEndRate with quote USD), for the OSS
// return: the total of the settled USDC amounts, not the sum of the records'
// EUR figures, which were converted at each chargeable event's rate and can
// differ (Art. 91(2) for the event, Art. 366(2) / 369h(2) for the return).
// The result carries the exact EUR figure
// (ConvertUSDCExact); split it per VAT rate with SplitGross and round once.
func ConvertUSDCPeriodTotal(ctx context.Context, src Source, totalUSDC decimal.Decimal, lastDay string) (Conversion, error) {
	r, err := PeriodEndRate(ctx, src, "USD", lastDay)
	if err != nil {
		return Conversion{}, err
	}
	return ConvertUSDCExact(totalUSDC, r), nil
}

// dayNoonUTC is 12:00 UTC on d, an instant whose UTC date is d.
func dayNoonUTC(d day) time.Time {
	return time.Unix(int64(d)*secondsPerDay+12*3600, 0).UTC()
}

// splitNet64 is SplitGross's net, gross × 100 / (100 + ratePercent) at
// ExactScale, computed in machine words (fixed.go) when every figure fits:
// the coefficients of gross × 100 and of 100 + ratePercent are those
// Decimal.Mul and Decimal.Add form, so the quotient is DivRound's.
func splitNet64(gross, ratePercent decimal.Decimal) (decimal.Decimal, bool) {
	g, ok1 := coef64(gross)
	r, ok2 := coef64(ratePercent)
	if !ok1 || !ok2 || g > math.MaxInt64/100 || g < -math.MaxInt64/100 {
		return decimal.Decimal{}, false
	}
	// 100 + rate at the smaller of the exponents 0 and the rate's.
	er := ratePercent.Exponent()
	h, eh := int64(100), int32(0)
	var ok bool
	if er < 0 {
		h, ok = round64(100, 0, -er) // 100·10^-er, exact
		eh = er
	} else {
		r, ok = round64(r, er, 0) // r·10^er, exact
	}
	if !ok || h > math.MaxInt64-r {
		return decimal.Decimal{}, false
	}
	q, ok := divRound64(g*100, gross.Exponent(), h+r, eh, ExactScale)
	if !ok || q == 0 {
		return decimal.Decimal{}, false
	}
	return decimal.New(q, -ExactScale), true
}

// BasisPoints is bps basis points of an exact EUR amount (amount × bps /
// 10,000): exact, the product shifted by four places (no division), at
// ExactScale decimals, half away from zero, and in cents rounded once from
// that product (RoundEUR), never from amount already rounded to the cent.
// A fee on a micropayment is below a cent: cents 0.00, exact positive.
func BasisPoints(amount decimal.Decimal, bps int64) (exact, cents decimal.Decimal) {
	if bps == 0 {
		return decimal.Zero, decimal.Zero
	}
	p := amount.Mul(decimal.NewFromInt(bps)).Shift(-4)
	return roundDec(p, ExactScale), RoundEUR(p)
}
