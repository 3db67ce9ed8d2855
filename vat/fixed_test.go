package vat

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"
)

// sameDecimal: the same value at the same exponent, so that every
// rendering (String, StringFixed, JSON) and Exponent agree.
func sameDecimal(x, y decimal.Decimal) bool {
	return x.Exponent() == y.Exponent() && x.Equal(y)
}

// fixedCases are figures of every shape the word arithmetic meets or must
// refuse: zero (also the zero Decimal), cents, the engine's 10 places,
// positive exponents, 18 and 19 digits, negative values.
var fixedCases = []string{
	"0", "0.00", "1", "0.01", "10.17", "9999.99", "10000", "10000.00", "10000.0000000001",
	"420.1680672000", "8.2682926829", "5123.3882674409", "1e3", "12e5", "1e15", "5e-12",
	"999999999999999999", "9999999999999999999", "123456789.123456789", "0.000000000000000001",
	"-1", "-0.01", "-10000.01", "-999999999999999999", "92233720368.54775807", "1e-20",
}

var fixedRates = []string{"0", "5", "5.5", "7", "9.5", "13.5", "17", "19", "20", "21", "23", "25", "27", "0.001", "100", "1e1", "3e-18", "-5"}

func randomDecimal(r *rand.Rand) decimal.Decimal {
	digits := r.IntN(21) + 1
	var c int64
	if digits <= 18 {
		c = r.Int64N(int64(pow10u[digits]))
	} else {
		c = r.Int64()
	}
	if r.IntN(8) == 0 {
		c = -c
	}
	return decimal.New(c, int32(r.IntN(26)-20))
}

func TestFixedAgreesWithDecimal(t *testing.T) {
	check := func(x, y decimal.Decimal) {
		t.Helper()
		if got, want := cmpDec(x, y), x.Cmp(y); got != want {
			t.Fatalf("cmpDec(%s, %s) = %d, Cmp %d", x, y, got, want)
		}
		if got, want := addDec(x, y), x.Add(y); !sameDecimal(got, want) {
			t.Fatalf("addDec(%s, %s) = %s (exp %d), Add %s (exp %d)", x, y, got, got.Exponent(), want, want.Exponent())
		}
	}
	checkNet := func(g, rate decimal.Decimal) {
		t.Helper()
		want := g.Mul(hundred).DivRound(hundred.Add(rate), netPlaces)
		if got := netOf(g, rate); !sameDecimal(got, want) {
			t.Fatalf("netOf(%s, %s) = %s (exp %d), DivRound %s (exp %d)", g, rate, got, got.Exponent(), want, want.Exponent())
		}
	}
	var all []decimal.Decimal
	for _, s := range fixedCases {
		all = append(all, dec(s))
	}
	all = append(all, decimal.Decimal{}, thresholdLimit, decimal.New(1<<62, 0), decimal.New(-1<<63, -3))
	for _, x := range all {
		for _, y := range all {
			check(x, y)
		}
		for _, rs := range fixedRates {
			if !hundred.Add(dec(rs)).IsZero() {
				checkNet(x, dec(rs))
			}
		}
	}
	r := rand.New(rand.NewPCG(59, 3))
	for range 200_000 {
		x, y := randomDecimal(r), randomDecimal(r)
		check(x, y)
		if rate := dec(fixedRates[r.IntN(len(fixedRates))]); !hundred.Add(rate).IsZero() {
			checkNet(x, rate)
		}
		// Rates as the table holds them: up to one decimal place.
		checkNet(x, decimal.New(r.Int64N(300), -int32(r.IntN(2))))
	}
	// Ties: gross·100 / (100 + rate) exactly half a unit of the last place.
	for _, s := range []string{"0.00000000005", "1.00000000005", "0.000000000123", "2.25e-10"} {
		for _, rate := range []string{"0", "25"} {
			g := dec(s).Mul(hundred.Add(dec(rate))).Div(hundred)
			checkNet(g, dec(rate))
		}
	}
}

// FuzzFixed compares the word arithmetic with shopspring/decimal.
func FuzzFixed(f *testing.F) {
	f.Add(int64(1017), int32(-2), int64(4201680672000), int32(-10), int64(23), int32(0))
	f.Add(int64(-5), int32(3), int64(1), int32(-20), int64(135), int32(-1))
	f.Fuzz(func(t *testing.T, a int64, ea int32, b int64, eb int32, rate int64, er int32) {
		if ea < -40 || ea > 40 || eb < -40 || eb > 40 || er < -20 || er > 3 {
			return
		}
		x, y, rt := decimal.New(a, ea), decimal.New(b, eb), decimal.New(rate, er)
		if got, want := cmpDec(x, y), x.Cmp(y); got != want {
			t.Fatalf("cmpDec(%s, %s) = %d, Cmp %d", x, y, got, want)
		}
		if got, want := addDec(x, y), x.Add(y); !sameDecimal(got, want) {
			t.Fatalf("addDec(%s, %s) = %s, Add %s", x, y, got, want)
		}
		if d := hundred.Add(rt); d.IsZero() || d.Exponent() < -30 {
			return
		}
		want := x.Mul(hundred).DivRound(hundred.Add(rt), netPlaces)
		if got := netOf(x, rt); !sameDecimal(got, want) {
			t.Fatalf("netOf(%s, %s) = %s, DivRound %s", x, rt, got, want)
		}
	})
}

// TestFixedAllocations: the word arithmetic allocates only its result.
func TestFixedAllocations(t *testing.T) {
	x, y, rate := dec("420.1680672000"), dec("10.17"), dec("23")
	for name, f := range map[string]func(){
		"cmpDec": func() { _ = cmpDec(x, thresholdLimit) },
		"addDec": func() { _ = addDec(x, y) },
		"netOf":  func() { _ = netOf(y, rate) },
	} {
		want := 2.0 // decimal.New: the big.Int and its words
		if name == "cmpDec" {
			want = 0
		}
		if n := testing.AllocsPerRun(100, f); n > want {
			t.Errorf("%s: %s allocations, want at most %s", name, strconv.FormatFloat(n, 'f', -1, 64), strconv.FormatFloat(want, 'f', -1, 64))
		}
	}
}
