package fx

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// sameDecimal reports whether a and b have the same value and exponent:
// the same bytes from every String method.
func sameDecimal(a, b decimal.Decimal) bool {
	// reflect.DeepEqual also sees the representation of the coefficient.
	return a.Exponent() == b.Exponent() && a.Coefficient().Cmp(b.Coefficient()) == 0 && reflect.DeepEqual(a, b)
}

// fixedEdges are coefficients at the limits of the word-sized paths.
var fixedEdges = []int64{0, 1, -1, 2, 5, -5, 9, 10, 49, 50, 51, 99, 100, 149, 150, 151, 995, 1995, 2005, 11684, 21, 55,
	999999999999999999, -999999999999999999, 1000000000000000000, -1000000000000000000,
	math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 / 10, math.MaxInt64 / 100, math.MaxInt32, 1 << 62}

// randDecimal draws values of the kinds a conversion has (USDC amounts,
// ECB rates, VAT rates, exact EUR figures) and others around the limits.
func randDecimal(r *rand.Rand) decimal.Decimal {
	exp := int32(r.IntN(26)) - 22
	switch r.IntN(7) {
	case 0:
		return decimal.New(fixedEdges[r.IntN(len(fixedEdges))], exp)
	case 1: // beyond int64
		c := new(big.Int).Lsh(big.NewInt(r.Int64N(1000)+1), uint(60+r.IntN(40)))
		if r.IntN(2) == 0 {
			c.Neg(c)
		}
		return decimal.NewFromBigInt(c, exp)
	case 2: // a USDC amount
		return decimal.New(r.Int64N(1e12), -int32(r.IntN(7)))
	case 3: // an ECB rate
		return decimal.New(r.Int64N(1e6)+1, -4)
	case 4: // an exact EUR figure
		return decimal.New(r.Int64N(1e18), -ExactScale)
	case 5: // a VAT rate in percent
		return decimal.New(r.Int64N(300), -int32(r.IntN(2)))
	}
	c := r.Int64N(1 << uint(r.IntN(62)+1))
	if r.IntN(4) == 0 {
		c = -c
	}
	return decimal.New(c, exp)
}

// canonicalRef is canonicalDecimal as written before fixed.go.
func canonicalRef(d decimal.Decimal) string {
	s := d.StringFixed(max(0, -d.Exponent()))
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// checkFixed holds every helper of fixed.go to the decimal method it
// replaces.
func checkFixed(t *testing.T, x, y decimal.Decimal) {
	t.Helper()
	for _, places := range []int32{0, 2, 6, 12, 18} {
		if got, want := roundDec(x, places), x.Round(places); !sameDecimal(got, want) {
			t.Fatalf("roundDec(%s, %d) = %s e%d, want %s e%d", x, places, got, got.Exponent(), want, want.Exponent())
		}
		if got, want := stringFixed(x, places), x.StringFixed(places); got != want {
			t.Fatalf("stringFixed(%s e%d, %d) = %q, want %q", x, x.Exponent(), places, got, want)
		}
		if !y.IsZero() {
			if got, want := divRound(x, y, places), x.DivRound(y, places); !sameDecimal(got, want) {
				t.Fatalf("divRound(%s, %s, %d) = %s e%d, want %s e%d", x, y, places, got, got.Exponent(), want, want.Exponent())
			}
		}
	}
	if got, want := subDec(x, y), x.Sub(y); !sameDecimal(got, want) {
		t.Fatalf("subDec(%s, %s) = %s e%d, want %s e%d", x, y, got, got.Exponent(), want, want.Exponent())
	}
	if got, want := canonicalDecimal(x), canonicalRef(x); got != want {
		t.Fatalf("canonicalDecimal(%s e%d) = %q, want %q", x, x.Exponent(), got, want)
	}
	if y.IsPositive() {
		hundred := decimal.NewFromInt(100)
		wantNet := x.Mul(hundred).DivRound(hundred.Add(y), ExactScale)
		net, vat := SplitGross(x, y)
		if !sameDecimal(net, wantNet) || !sameDecimal(vat, x.Sub(wantNet)) {
			t.Fatalf("SplitGross(%s, %s) = %s e%d, %s e%d; want %s e%d, %s", x, y, net, net.Exponent(), vat, vat.Exponent(),
				wantNet, wantNet.Exponent(), x.Sub(wantNet))
		}
	}
}

// TestFixedMatchesDecimal: on random values and on every combination of
// edge values, each word-sized helper gives what shopspring gives.
func TestFixedMatchesDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 2))
	for range 50000 {
		checkFixed(t, randDecimal(r), randDecimal(r))
	}
	// The conversions of the package examples and their neighbours.
	for _, c := range [][2]string{{"100", "1.1684"}, {"0.000001", "1.1684"}, {"0.005", "1"}, {"-0.005", "1"},
		{"85.587127695995", "21"}, {"85.587127695995", "5.5"}, {"1", "200.0000000000000016"}, {"999999.999999", "0.0001"}} {
		checkFixed(t, decimal.RequireFromString(c[0]), decimal.RequireFromString(c[1]))
	}
	var edges []decimal.Decimal
	for _, c := range fixedEdges {
		for _, e := range []int32{-19, -18, -12, -3, -2, 0, 1} {
			edges = append(edges, decimal.New(c, e), decimal.New(-c, e))
		}
	}
	for _, x := range edges {
		for _, y := range edges {
			checkFixed(t, x, y)
		}
	}
}

// FuzzFixedMatchesDecimal: the same comparison on values the fuzzer
// chooses.
func FuzzFixedMatchesDecimal(f *testing.F) {
	f.Add(int64(100), int32(0), int64(11684), int32(-4))
	f.Add(int64(math.MaxInt64), int32(-20), int64(-5), int32(-3))
	f.Fuzz(func(t *testing.T, a int64, ea int32, b int64, eb int32) {
		clamp := func(e int32) int32 { return e%40 - 20 }
		checkFixed(t, decimal.New(a, clamp(ea)), decimal.New(b, clamp(eb)))
	})
}
