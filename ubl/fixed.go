package ubl

import (
	"cmp"
	"math"
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// Decimal arithmetic of the renderer in machine words.
//
// shopspring/decimal computes with big.Int: comparing figures of different
// exponents, truncating, rounding and formatting all allocate. The figures
// of an invoice (amounts below 10^15 with 2 decimals, quantities and prices
// with a few more, rates in percent) have coefficients of at most 18
// digits, so these helpers compute in int64 (and 128-bit products) and
// return exactly what the decimal method returns: the same value with the
// same exponent, the same bytes. Whenever a coefficient or an intermediate
// does not fit, or the result would be zero (a big.Int zero built here and
// one built by shopspring may differ in representation, which
// reflect.DeepEqual sees), they fall back to the method itself.
// fixed_test.go compares both on random and edge values.

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

// scale64 is c·10^k, when it fits an int64 (k ≥ 0).
func scale64(c int64, k int64) (int64, bool) {
	if k > 18 {
		return 0, c == 0
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
		// A sum with zero is the other term when its exponent is the
		// sum's: the value shopspring returns, a copy of the same big.Int.
		switch {
		case cx == 0 && cy != 0 && x.Exponent() >= y.Exponent():
			return y
		case cy == 0 && cx != 0 && y.Exponent() >= x.Exponent():
			return x
		}
		if s, ok := add64(cx, cy); ok && s != 0 {
			return decimal.New(s, exp)
		}
	}
	return x.Add(y)
}

// subDec is x.Sub(y): the exact difference at the smaller exponent.
func subDec(x, y decimal.Decimal) decimal.Decimal {
	if cx, cy, exp, ok := aligned(x, y); ok && cy != math.MinInt64 {
		s, ok := add64(cx, -cy)
		switch {
		case ok && s != 0:
			return decimal.New(s, exp)
		case ok && cx != 0 && cy != 0 && exp >= -zeroExps && exp <= zeroExps:
			// The difference of equal non-zero terms (the payable amount
			// of an invoice paid in full): shopspring's zero, shared.
			return differenceZeros[exp+zeroExps]
		}
	}
	return x.Sub(y)
}

// differenceZeros[e+zeroExps] is zero at exponent e as Decimal.Sub writes
// the difference of two equal non-zero values: its big.Int has an empty,
// non-nil word slice (reflect.DeepEqual tells it from big.NewInt(0)).
// Decimals are immutable, so one value serves every such difference.
const zeroExps = 20

var differenceZeros = func() (z [2*zeroExps + 1]decimal.Decimal) {
	for i := range z {
		one := decimal.New(1, int32(i-zeroExps))
		z[i] = one.Sub(one)
	}
	return z
}()

// add64 is x + y when it does not overflow.
func add64(x, y int64) (int64, bool) {
	s := x + y
	if (s > x) != (y > 0) {
		return 0, false
	}
	return s, true
}

// mul64 is x·y when it fits an int64 (with |x|, |y| < 2^63).
func mul64(x, y int64) (int64, bool) {
	ax, ay := uint64(x), uint64(y)
	if x < 0 {
		ax = -ax
	}
	if y < 0 {
		ay = -ay
	}
	hi, lo := bits.Mul64(ax, ay)
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if (x < 0) != (y < 0) {
		return -int64(lo), true
	}
	return int64(lo), true
}

// mulCoef is the coefficient and exponent of x.Mul(y), when they fit.
func mulCoef(x, y decimal.Decimal) (int64, int32, bool) {
	cx, okx := coef64(x)
	cy, oky := coef64(y)
	e := int64(x.Exponent()) + int64(y.Exponent())
	if !okx || !oky || e > math.MaxInt32 || e < math.MinInt32 {
		return 0, 0, false
	}
	p, ok := mul64(cx, cy)
	return p, int32(e), ok
}

// round2 is the coefficient at exponent -2 of c·10^exp rounded half away
// from zero, as Decimal.Round(2) computes it.
func round2(c int64, exp int32) (int64, bool) {
	switch {
	case exp >= -2:
		return scale64(c, int64(exp)+2)
	case exp < -2-18:
		return 0, false
	}
	p := int64(pow10u[-2-exp])
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

// roundMoneyFast is roundMoney(d).
func roundMoneyFast(d decimal.Decimal) decimal.Decimal {
	if d.Exponent() == -2 {
		return d // Round returns d itself
	}
	if c, ok := coef64(d); ok {
		if q, ok := round2(c, d.Exponent()); ok && q != 0 {
			return decimal.New(q, -2)
		}
	}
	return d.Round(2)
}

// vatOfFast is vatOf(base, rate): round2(base × rate / 100).
func vatOfFast(base, ratePercent decimal.Decimal) decimal.Decimal {
	if p, e, ok := mulCoef(base, ratePercent); ok && int64(e)-2 >= math.MinInt32 {
		if e-2 == -2 {
			if p != 0 {
				return decimal.New(p, -2) // Round(2) returns the shifted product
			}
		} else if q, ok := round2(p, e-2); ok && q != 0 {
			return decimal.New(q, -2)
		}
	}
	return vatOf(base, ratePercent)
}

// hasPlaces reports whether d has at most n decimal places, as
// d.Truncate(n).Equal(d) does.
func hasPlaces(d decimal.Decimal, n int32) bool {
	e := d.Exponent()
	if e >= -n {
		return true
	}
	if c, ok := coef64(d); ok {
		k := -int64(e) - int64(n)
		if k > 18 {
			return c == 0
		}
		return c%int64(pow10u[k]) == 0
	}
	return d.Truncate(n).Equal(d)
}

// appendFixed2 appends d.StringFixed(2).
func appendFixed2(b []byte, d decimal.Decimal) []byte {
	c, ok := coef64(d)
	var q int64
	if ok {
		q, ok = round2(c, d.Exponent())
	}
	if !ok {
		return append(b, d.StringFixed(2)...)
	}
	u := uint64(q)
	if q < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/100, 10)
	f := u % 100
	return append(b, '.', byte('0'+f/10), byte('0'+f%10))
}

// fixed2 is d.StringFixed(2).
func fixed2(d decimal.Decimal) string {
	var buf [32]byte
	return string(appendFixed2(buf[:0], d))
}

// appendString appends d.String(): the value without trailing fractional
// zeros, no exponent.
func appendString(b []byte, d decimal.Decimal) []byte {
	c, ok := coef64(d)
	e := d.Exponent()
	if ok && e > 0 {
		c, ok = scale64(c, int64(e))
		e = 0
	}
	if !ok || e < -18 {
		return append(b, d.String()...)
	}
	u := uint64(c)
	if c < 0 {
		b = append(b, '-')
		u = -u
	}
	if e == 0 {
		return strconv.AppendUint(b, u, 10)
	}
	p := pow10u[-e]
	b = strconv.AppendUint(b, u/p, 10)
	frac := u % p
	if frac == 0 {
		return b
	}
	// -e digits with leading zeros, then the trailing zeros dropped.
	var digits [20]byte
	n := int(-e)
	for i := n - 1; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	for n > 0 && digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// appendPrice appends priceString(d).
func appendPrice(b []byte, d decimal.Decimal) []byte {
	if !hasPlaces(d, 2) {
		return appendString(b, d)
	}
	return appendFixed2(b, d)
}

// convertMoney is roundMoney(amount.Mul(rate)).
func convertMoney(amount, rate decimal.Decimal) decimal.Decimal {
	if p, e, ok := mulCoef(amount, rate); ok {
		if e == -2 {
			if p != 0 {
				return decimal.New(p, -2) // Round(2) returns the product
			}
		} else if q, ok := round2(p, e); ok && q != 0 {
			return decimal.New(q, -2)
		}
	}
	return roundMoney(amount.Mul(rate))
}

// withinR120 reports whether |net − quantity × price| ≤ 0.02
// (PEPPOL-EN16931-R120).
func withinR120(net, quantity, price decimal.Decimal) bool {
	if p, e, ok := mulCoef(quantity, price); ok {
		if n, ok := coef64(net); ok {
			// Both at the smaller of their exponents and of -2's.
			m := min(e, net.Exponent(), -2)
			pp, ok1 := scale64(p, int64(e)-int64(m))
			nn, ok2 := scale64(n, int64(net.Exponent())-int64(m))
			tol, ok3 := scale64(2, -2-int64(m))
			if ok1 && ok2 && ok3 && pp > math.MinInt64/2 && nn > math.MinInt64/2 && pp < math.MaxInt64/2 && nn < math.MaxInt64/2 {
				d := nn - pp
				return -tol <= d && d <= tol
			}
		}
	}
	return !net.Sub(quantity.Mul(price)).Abs().GreaterThan(decimal.New(2, -2))
}

// withinCent reports whether |vat − base × rate / 100| ≤ 0.01 (BR-CO-17
// as matchSubtotals applies it).
func withinCent(vat, base, ratePercent decimal.Decimal) bool {
	if p, e, ok := mulCoef(base, ratePercent); ok && int64(e)-2 >= math.MinInt32 {
		e -= 2 // the division by 100
		if v, ok := coef64(vat); ok {
			m := min(e, vat.Exponent(), -2)
			pp, ok1 := scale64(p, int64(e)-int64(m))
			vv, ok2 := scale64(v, int64(vat.Exponent())-int64(m))
			tol, ok3 := scale64(1, -2-int64(m))
			if ok1 && ok2 && ok3 && pp > math.MinInt64/2 && vv > math.MinInt64/2 && pp < math.MaxInt64/2 && vv < math.MaxInt64/2 {
				d := vv - pp
				return -tol <= d && d <= tol
			}
		}
	}
	return !vat.Sub(exactVAT(base, ratePercent)).Abs().GreaterThan(decimal.New(1, -2))
}

// The field names of the first lines and subtotals, spelt once, so that
// checking an invoice does not build them again each time (they are only
// read when a problem is reported).
const namedItems = 8

var (
	itemNames = func() map[string]*[namedItems]string {
		m := map[string]*[namedItems]string{}
		for _, list := range []string{"Lines", "Subtotals"} {
			var names [namedItems]string
			for i := range names {
				names[i] = list + "[" + strconv.Itoa(i) + "]"
			}
			m[list] = &names
		}
		return m
	}()
	fieldNames = func() map[string]string {
		m := map[string]string{}
		for _, names := range itemNames {
			for _, f := range names {
				for _, s := range []string{".ID", ".Name", ".Period", ".Quantity", ".PriceAmount", ".NetAmount", ".Category",
					".RatePercent", ".ExemptionReason", ".ExemptionCode", ".TaxableAmount", ".TaxAmount"} {
					m[f+s] = f + s
				}
			}
		}
		return m
	}()
)

// itemName is list + "[" + i + "]".
func itemName(list string, i int) string {
	if names := itemNames[list]; names != nil && i >= 0 && i < namedItems {
		return names[i]
	}
	return list + "[" + strconv.Itoa(i) + "]"
}

// fieldName is f + suffix.
func fieldName(f, suffix string) string {
	if n, ok := fieldNames[f+suffix]; ok { // the key is built on the stack
		return n
	}
	return f + suffix
}
