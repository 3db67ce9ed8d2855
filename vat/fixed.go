package vat

import (
	"cmp"
	"math"
	"math/bits"

	"github.com/shopspring/decimal"
)

// Decimal arithmetic of the threshold in machine words.
//
// shopspring/decimal computes with big.Int: every Add, comparison of
// figures with different exponents and division allocates. The figures
// Determine meets (EUR amounts, running totals to netPlaces places, rates
// in percent) have coefficients of at most 18 digits, so sum, comparison
// and the value exclusive of VAT are computed here in int64 and 128-bit
// words; each helper returns exactly what the decimal method returns
// (the same value and the same exponent), and falls back to that method
// whenever a coefficient or an intermediate does not fit. fixed_test.go
// compares both on random and edge values.

// pow10u holds 10^0 … 10^19, every power of ten a uint64 holds.
var pow10u = [20]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// coef64 is d's coefficient when it has at most 18 digits (|c| < 10^18).
func coef64(d decimal.Decimal) (int64, bool) {
	if d.NumDigits() > 18 {
		return 0, false
	}
	return d.CoefficientInt64(), true
}

// scale64 is c·10^k, when it fits an int64 (|c| < 10^18, k ≥ 0).
func scale64(c int64, k int64) (int64, bool) {
	if k > 18 {
		return 0, false
	}
	p := int64(pow10u[k])
	if c > math.MaxInt64/p || c < -math.MaxInt64/p {
		return 0, false
	}
	return c * p, true
}

// aligned returns the coefficients of x and y at the smaller of their
// exponents, and that exponent.
func aligned(x, y decimal.Decimal) (cx, cy int64, exp int32, ok bool) {
	cx, okx := coef64(x)
	cy, oky := coef64(y)
	if !okx || !oky {
		return 0, 0, 0, false
	}
	ex, ey := x.Exponent(), y.Exponent()
	switch {
	case ex > ey:
		cx, ok = scale64(cx, int64(ex)-int64(ey))
		return cx, cy, ey, ok
	case ey > ex:
		cy, ok = scale64(cy, int64(ey)-int64(ex))
		return cx, cy, ex, ok
	}
	return cx, cy, ex, true
}

// cmpDec is x.Cmp(y).
func cmpDec(x, y decimal.Decimal) int {
	if cx, cy, _, ok := aligned(x, y); ok {
		return cmp.Compare(cx, cy)
	}
	return x.Cmp(y)
}

// addDec is x.Add(y): the exact sum at the smaller exponent.
func addDec(x, y decimal.Decimal) decimal.Decimal {
	if cx, cy, exp, ok := aligned(x, y); ok {
		if s := cx + cy; (s > cx) == (cy > 0) || cy == 0 { // no overflow
			return decimal.New(s, exp)
		}
	}
	return x.Add(y)
}

// netOf64 is netOf for a positive gross amount and a rate of at least 0 %
// whose quotient fits an int64; ok is false otherwise. It follows
// Decimal.DivRound: with gross·100 = a·10^ea and 100 + rate = b·10^eb, the
// quotient at 10^-netPlaces is a·10^e / b for e = ea - eb + netPlaces
// (b·10^-e when e < 0), truncated, plus one when twice the remainder is at
// least the divisor.
func netOf64(gross, ratePercent decimal.Decimal) (decimal.Decimal, bool) {
	g, ok1 := coef64(gross)
	rc, ok2 := coef64(ratePercent)
	if !ok1 || !ok2 || g <= 0 || rc < 0 {
		return decimal.Decimal{}, false
	}
	// 100 + rate, as Decimal.Add forms it: at the smaller exponent.
	hundred, rate, eb, ok := aligned(hundred, ratePercent)
	if !ok || hundred > math.MaxInt64-rate {
		return decimal.Decimal{}, false
	}
	b := uint64(hundred + rate)
	// gross·100, as Decimal.Mul forms it: coefficient g·100, exponent ea.
	hi, lo := bits.Mul64(uint64(g), 100)
	e := int64(gross.Exponent()) - int64(eb) + netPlaces
	switch {
	case e < 0:
		if -e > 19 {
			return decimal.Decimal{}, false
		}
		var over uint64
		over, b = bits.Mul64(b, pow10u[-e])
		if over != 0 {
			return decimal.Decimal{}, false
		}
	case e > 0:
		if e > 19 {
			return decimal.Decimal{}, false
		}
		var carry, over uint64
		h1, l := bits.Mul64(lo, pow10u[e])
		over, h2 := bits.Mul64(hi, pow10u[e])
		hi, carry = bits.Add64(h1, h2, 0)
		lo = l
		if over != 0 || carry != 0 {
			return decimal.Decimal{}, false
		}
	}
	if hi >= b { // the quotient would not fit 64 bits
		return decimal.Decimal{}, false
	}
	q, r := bits.Div64(hi, lo, b)
	if q >= math.MaxInt64 { // q+1 must fit an int64 (and never wrap past 2^64)
		return decimal.Decimal{}, false
	}
	if r >= b-r {
		q++
	}
	return decimal.New(int64(q), -netPlaces), true
}
