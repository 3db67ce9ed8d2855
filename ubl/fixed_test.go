package ubl

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"
)

// sameDecimal reports whether a and b have the same value and exponent:
// the same bytes from every String method.
func sameDecimal(a, b decimal.Decimal) bool {
	// reflect.DeepEqual also sees the representation of the coefficient.
	return a.Exponent() == b.Exponent() && a.Coefficient().Cmp(b.Coefficient()) == 0 && reflect.DeepEqual(a, b)
}

// fixedEdges are coefficients at the limits of the int64 paths.
var fixedEdges = []int64{0, 1, -1, 2, 5, -5, 9, 10, 49, 50, 51, 99, 100, 149, 150, 151, 995, 1995, 2005,
	999999999999999999, -999999999999999999, 1000000000000000000, -1000000000000000000,
	math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 / 10, math.MaxInt32, 1 << 62}

// randDecimal draws values of the kinds an invoice has (cents, prices,
// rates) and others around the limits of int64.
func randDecimal(r *rand.Rand) decimal.Decimal {
	exp := int32(r.IntN(24)) - 20
	switch r.IntN(6) {
	case 0:
		return decimal.New(fixedEdges[r.IntN(len(fixedEdges))], exp)
	case 1: // beyond int64
		c := new(big.Int).Lsh(big.NewInt(r.Int64N(1000)+1), uint(60+r.IntN(40)))
		if r.IntN(2) == 0 {
			c.Neg(c)
		}
		return decimal.NewFromBigInt(c, exp)
	case 2: // money
		return decimal.New(r.Int64N(1e9), -2)
	case 3: // a rate in percent
		return decimal.New(r.Int64N(3000), -int32(r.IntN(3)))
	}
	c := r.Int64N(1 << uint(r.IntN(62)+1))
	if r.IntN(4) == 0 {
		c = -c
	}
	return decimal.New(c, exp)
}

// checkFixed holds every helper of fixed.go to the decimal method it
// replaces, for x, y and z.
func checkFixed(t *testing.T, x, y, z decimal.Decimal) {
	t.Helper()
	if got, want := cmpDec(x, y), x.Cmp(y); got != want {
		t.Fatalf("cmpDec(%s, %s) = %d, want %d", x, y, got, want)
	}
	if got, want := addDec(x, y), x.Add(y); !sameDecimal(got, want) {
		t.Fatalf("addDec(%s, %s) = %s e%d, want %s e%d", x, y, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := subDec(x, y), x.Sub(y); !sameDecimal(got, want) {
		t.Fatalf("subDec(%s, %s) = %s e%d, want %s e%d", x, y, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := roundMoneyFast(x), roundMoney(x); !sameDecimal(got, want) {
		t.Fatalf("roundMoneyFast(%s) = %s e%d, want %s e%d", x, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := vatOfFast(x, y), vatOf(x, y); !sameDecimal(got, want) {
		t.Fatalf("vatOfFast(%s, %s) = %s e%d, want %s e%d", x, y, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := convertMoney(x, y), roundMoney(x.Mul(y)); !sameDecimal(got, want) {
		t.Fatalf("convertMoney(%s, %s) = %s e%d, want %s e%d", x, y, got, got.Exponent(), want, want.Exponent())
	}
	for _, n := range []int32{0, 2, 4, 6} {
		if got, want := hasPlaces(x, n), x.Truncate(n).Equal(x); got != want {
			t.Fatalf("hasPlaces(%s, %d) = %v, want %v", x, n, got, want)
		}
	}
	if got, want := string(appendFixed2(nil, x)), x.StringFixed(2); got != want {
		t.Fatalf("appendFixed2(%s e%d) = %q, want %q", x, x.Exponent(), got, want)
	}
	if got, want := fixed2(x), x.StringFixed(2); got != want {
		t.Fatalf("fixed2(%s e%d) = %q, want %q", x, x.Exponent(), got, want)
	}
	if got, want := string(appendString(nil, x)), x.String(); got != want {
		t.Fatalf("appendString(%s e%d) = %q, want %q", x, x.Exponent(), got, want)
	}
	if got, want := string(appendPrice(nil, x)), priceString(x); got != want {
		t.Fatalf("appendPrice(%s e%d) = %q, want %q", x, x.Exponent(), got, want)
	}
	if got, want := withinR120(x, y, z), !x.Sub(y.Mul(z)).Abs().GreaterThan(decimal.New(2, -2)); got != want {
		t.Fatalf("withinR120(%s, %s, %s) = %v, want %v", x, y, z, got, want)
	}
	if got, want := withinCent(x, y, z), !x.Sub(exactVAT(y, z)).Abs().GreaterThan(decimal.New(1, -2)); got != want {
		t.Fatalf("withinCent(%s, %s, %s) = %v, want %v", x, y, z, got, want)
	}
}

// TestFixedMatchesDecimal: on random values and on every combination of
// edge values, each word-sized helper gives what shopspring gives.
func TestFixedMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for range 200000 {
		checkFixed(t, randDecimal(r), randDecimal(r), randDecimal(r))
	}
	// The values an invoice has: R120 and BR-CO-17 at their tolerances.
	for _, c := range []struct{ net, qty, price string }{
		{"100.02", "1", "100"}, {"100.03", "1", "100"}, {"99.98", "1", "100"}, {"99.97", "1", "100"},
		{"0.00", "3", "0.006666"}, {"0.02", "3", "0.006666"}, {"0.03", "3", "0.013333"}, {"10", "0.5", "20.04"},
	} {
		x, y, z := decimal.RequireFromString(c.net), decimal.RequireFromString(c.qty), decimal.RequireFromString(c.price)
		checkFixed(t, x, y, z)
	}
	var edges []decimal.Decimal
	for _, c := range fixedEdges {
		for _, e := range []int32{-20, -19, -18, -4, -3, -2, -1, 0, 1, 2} {
			edges = append(edges, decimal.New(c, e), decimal.New(-c, e))
		}
	}
	for i, x := range edges {
		for _, y := range edges {
			checkFixed(t, x, y, edges[(i*7)%len(edges)])
		}
	}
}

// FuzzFixedMatchesDecimal: the same comparison on values the fuzzer
// chooses.
func FuzzFixedMatchesDecimal(f *testing.F) {
	f.Add(int64(10002), int32(-2), int64(1), int32(0), int64(100), int32(0))
	f.Add(int64(math.MaxInt64), int32(-20), int64(-5), int32(-3), int64(19), int32(0))
	f.Fuzz(func(t *testing.T, a int64, ea int32, b int64, eb int32, c int64, ec int32) {
		clamp := func(e int32) int32 { return e%40 - 20 }
		checkFixed(t, decimal.New(a, clamp(ea)), decimal.New(b, clamp(eb)), decimal.New(c, clamp(ec)))
	})
}

// TestSaneMatchesBitLen: sane's comparison with ±2^256 at the value's own
// exponent accepts exactly the coefficients of at most 256 bits, as the
// BitLen test it replaces, and decides a coefficient of 200,000 digits
// without arithmetic on it.
func TestSaneMatchesBitLen(t *testing.T) {
	one := big.NewInt(1)
	limit := new(big.Int).Lsh(one, maxCoefficientBits)
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(200000), nil)
	for _, coef := range []*big.Int{big.NewInt(0), one, new(big.Int).Sub(limit, one), limit, new(big.Int).Add(limit, one), huge,
		new(big.Int).Lsh(one, 255), new(big.Int).Lsh(one, 64), big.NewInt(math.MaxInt64)} {
		for _, neg := range []bool{false, true} {
			c := new(big.Int).Set(coef)
			if neg {
				c.Neg(c)
			}
			for _, e := range []int32{-maxExponent - 1, -maxExponent, -2, 0, 3, maxExponent, maxExponent + 1} {
				d := decimal.NewFromBigInt(c, e)
				want := e >= -maxExponent && e <= maxExponent && c.BitLen() <= maxCoefficientBits
				if got := (&checker{}).sane("x", d); got != want {
					t.Errorf("sane(coefficient of %d bits, negative %v, exponent %d) = %v, want %v", c.BitLen(), neg, e, got, want)
				}
			}
		}
	}
}
