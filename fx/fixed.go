package fx

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// Decimal arithmetic of a conversion in machine words.
//
// shopspring/decimal computes with big.Int, so every division, rounding and
// formatting of a settlement's figures allocates several times. A settled
// amount, an ECB rate and a VAT rate have coefficients of at most 18
// digits, and every quotient of a conversion (at most 12 decimals of an
// amount below 10^6 EUR, in practice) fits 64 bits, so these helpers
// compute in int64 and 128-bit words and return exactly what the decimal
// method returns: the same value with the same exponent, the same bytes.
// Whenever a coefficient or an intermediate does not fit, or the result is
// zero (a big.Int zero built here and one built by shopspring may differ in
// representation, which reflect.DeepEqual sees), they fall back to the
// method itself. fixed_test.go compares both on random and edge values.

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

// abs64 is |c| for |c| < 2^63.
func abs64(c int64) uint64 {
	if c < 0 {
		return uint64(-c)
	}
	return uint64(c)
}

// divRound64 is the coefficient of a·10^ea / (b·10^eb) rounded half away
// from zero at 10^-places, as Decimal.DivRound(…, places) computes it: with
// e = ea − eb + places, the quotient of a·10^e by b (of a by b·10^-e when
// e < 0), truncated, plus one in magnitude when twice the remainder is at
// least the divisor.
func divRound64(a int64, ea int32, b int64, eb int32, places int32) (int64, bool) {
	if b == 0 {
		return 0, false
	}
	num, div := abs64(a), abs64(b)
	var hi, lo uint64
	e := int64(ea) - int64(eb) + int64(places)
	switch {
	case e > 19 || e < -19:
		return 0, false
	case e >= 0:
		hi, lo = bits.Mul64(num, pow10u[e])
	default:
		var over uint64
		over, div = bits.Mul64(div, pow10u[-e])
		if over != 0 {
			return 0, false
		}
		lo = num
	}
	if hi >= div { // the quotient would not fit 64 bits
		return 0, false
	}
	q, r := bits.Div64(hi, lo, div)
	if q >= math.MaxInt64 { // q+1 must fit an int64 (and never wrap)
		return 0, false
	}
	if r >= div-r {
		q++
	}
	if (a < 0) != (b < 0) {
		return -int64(q), true
	}
	return int64(q), true
}

// divRound is n.DivRound(d, places).
func divRound(n, d decimal.Decimal, places int32) decimal.Decimal {
	if a, ok := coef64(n); ok {
		if b, ok := coef64(d); ok {
			if q, ok := divRound64(a, n.Exponent(), b, d.Exponent(), places); ok && q != 0 {
				return decimal.New(q, -places)
			}
		}
	}
	return n.DivRound(d, places)
}

// round64 is the coefficient at exponent -places of c·10^exp rounded half
// away from zero, as Decimal.Round(places) computes it.
func round64(c int64, exp, places int32) (int64, bool) {
	k := int64(exp) + int64(places)
	switch {
	case k >= 0:
		if k > 18 {
			return 0, c == 0
		}
		p := int64(pow10u[k])
		if c > math.MaxInt64/p || c < -math.MaxInt64/p {
			return 0, false
		}
		return c * p, true
	case k < -18:
		return 0, false
	}
	p := int64(pow10u[-k])
	q, r := c/p, c%p
	if r < 0 {
		r = -r
	}
	if r >= p-r { // 2r ≥ p without overflow
		if c < 0 {
			q--
		} else {
			q++
		}
	}
	return q, true
}

// roundDec is d.Round(places).
func roundDec(d decimal.Decimal, places int32) decimal.Decimal {
	if d.Exponent() == -places {
		return d // Round returns d itself
	}
	if c, ok := coef64(d); ok {
		if q, ok := round64(c, d.Exponent(), places); ok && q != 0 {
			return decimal.New(q, -places)
		}
	}
	return d.Round(places)
}

// subDec is x.Sub(y): the exact difference at the smaller exponent.
func subDec(x, y decimal.Decimal) decimal.Decimal {
	cx, okx := coef64(x)
	cy, oky := coef64(y)
	if okx && oky {
		ex, ey := x.Exponent(), y.Exponent()
		e := min(ex, ey)
		sx, ok1 := round64(cx, ex, -e) // exact: ex ≥ e
		sy, ok2 := round64(cy, ey, -e)
		if d := sx - sy; ok1 && ok2 && (d < sx) == (sy > 0) && d != 0 {
			return decimal.New(d, e)
		}
	}
	return x.Sub(y)
}

// StringFixed returns d.StringFixed(places) (for 0 ≤ places ≤ 18; any
// places works), in one allocation where the decimal method makes
// several: the engine writes a record's figures with it.
func StringFixed(d decimal.Decimal, places int32) string { return stringFixed(d, places) }

// stringFixed is d.StringFixed(places), for 0 ≤ places ≤ 18.
func stringFixed(d decimal.Decimal, places int32) string {
	var buf [48]byte
	return string(appendFixed(buf[:0], d, places))
}

// appendFixed appends d.StringFixed(places), for 0 ≤ places ≤ 18.
func appendFixed(b []byte, d decimal.Decimal, places int32) []byte {
	c, ok := coef64(d)
	var q int64
	if ok && places >= 0 && places <= 18 {
		q, ok = round64(c, d.Exponent(), places)
	} else {
		ok = false
	}
	if !ok {
		return append(b, d.StringFixed(places)...)
	}
	u := abs64(q)
	if q < 0 {
		b = append(b, '-')
	}
	p := pow10u[places]
	b = strconv.AppendUint(b, u/p, 10)
	if places == 0 {
		return b
	}
	frac := u % p
	b = append(b, '.')
	n := len(b)
	for range places {
		b = append(b, '0')
	}
	for i := len(b) - 1; i >= n; i-- {
		b[i] = byte('0' + frac%10)
		frac /= 10
	}
	return b
}
