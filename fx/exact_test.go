package fx

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// ratOf is the exact rational value of d.
func ratOf(d decimal.Decimal) *big.Rat {
	r, ok := new(big.Rat).SetString(d.String())
	if !ok {
		panic(d.String())
	}
	return r
}

// roundRat rounds q to scale decimals, half away from zero, in exact
// rational arithmetic: an implementation independent of shopspring's.
func roundRat(q *big.Rat, scale int) *big.Rat {
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	x := new(big.Rat).Mul(q, new(big.Rat).SetInt(pow))
	neg := x.Sign() < 0
	if neg {
		x.Neg(x)
	}
	// floor(x + 1/2)
	x.Add(x, big.NewRat(1, 2))
	n := new(big.Int).Quo(x.Num(), x.Denom())
	if neg {
		n.Neg(n)
	}
	return new(big.Rat).SetFrac(n, pow)
}

// randUSDC is a random amount in [0.000001, 10000] USDC with 6 decimals,
// spread over the orders of magnitude (micro-payments matter as much as
// large ones).
func randUSDC(rng *rand.Rand) decimal.Decimal {
	digits := 1 + rng.IntN(10) // 1..10 significant digits of base units
	max := int64(1)
	for range digits {
		max *= 10
	}
	units := 1 + rng.Int64N(min(max, 10_000_000_000))
	return decimal.New(units, -USDCDecimals)
}

// randRate is a random ECB-shaped rate: 4 to 6 significant digits, from
// 0.5 to 400 (the span of USD, GBP, CZK, HUF per EUR).
func randRate(rng *rand.Rand) decimal.Decimal {
	exp := rng.IntN(3) // 10^0 .. 10^2
	sig := 4 + rng.IntN(3)
	mant := int64(1)
	for range sig - 1 {
		mant *= 10
	}
	v := mant/2 + rng.Int64N(mant*4) // [0.5, 4.5) × 10^exp in sig digits
	return decimal.New(v, int32(exp-(sig-1)))
}

var vatRates = []string{"0", "5", "5.5", "7", "8.1", "9", "10", "13", "17", "19", "20", "21", "22", "23", "24", "25", "25.5", "27"}

func TestDivExactMatchesRationalArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n, d := randUSDC(rng), randRate(rng)
		if rng.IntN(5) == 0 {
			n = n.Neg()
		}
		want := roundRat(new(big.Rat).Quo(ratOf(n), ratOf(d)), ExactScale)
		if got := DivExact(n, d); ratOf(got).Cmp(want) != 0 {
			t.Fatalf("DivExact(%s, %s) = %s, want %s", n, d, got, want.FloatString(ExactScale))
		}
	}
	// A quotient exactly half way at the 13th place rounds away from zero.
	if got := DivExact(dec("0.0000000000005"), dec("1")); !got.Equal(dec("0.000000000001")) {
		t.Errorf("half way: %s", got)
	}
	if got := DivExact(dec("-0.0000000000005"), dec("1")); !got.Equal(dec("-0.000000000001")) {
		t.Errorf("negative half way: %s", got)
	}
}

func TestConvertUSDCExact(t *testing.T) {
	for _, tc := range []struct{ amount, rate, cents, exact string }{
		// 100 / 1.1684 = 85.587127695994522...: Python decimal, 60 digits, ROUND_HALF_UP.
		{"100", "1.1684", "85.59", "85.587127695995"},
		{"0.000001", "1.1684", "0.00", "0.000000855871"},
		{"1.17", "1.17", "1.00", "1.000000000000"},
		{"-100", "1.1684", "-85.59", "-85.587127695995"},
		{"10000", "0.8252", "12118.27", "12118.274357731459"},
	} {
		r := usdRate(tc.rate)
		c := ConvertUSDCExact(dec(tc.amount), r)
		plain := ConvertUSDC(dec(tc.amount), r)
		if c.GrossEURString != plain.GrossEURString || !c.GrossEUR.Equal(plain.GrossEUR) || c.GrossEURString != tc.cents {
			t.Errorf("%s at %s: cents %s, ConvertUSDC %s, want %s", tc.amount, tc.rate, c.GrossEURString, plain.GrossEURString, tc.cents)
		}
		if c.GrossEURExactString != tc.exact || !c.GrossEURExact.Equal(dec(tc.exact)) || c.ExactScale != 12 {
			t.Errorf("%s at %s: exact %s (%s, scale %d), want %s", tc.amount, tc.rate, c.GrossEURExactString, c.GrossEURExact, c.ExactScale, tc.exact)
		}
		if err := c.Check(); err != nil {
			t.Errorf("%s at %s: Check: %v", tc.amount, tc.rate, err)
		}
	}
}

// The exact fields are additions: ConvertUSDC's record does not change, and
// the exact record round-trips and is checked.
func TestConversionExactWireFormat(t *testing.T) {
	plain, _ := json.Marshal(ConvertUSDC(dec("100"), usdRate("1.1684")))
	if strings.Contains(string(plain), "Exact") || strings.Contains(string(plain), "exact") {
		t.Errorf("ConvertUSDC record mentions the exact figure: %s", plain)
	}
	c := ConvertUSDCExact(dec("100"), usdRate("1.1684"))
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(string(plain), "}") + `,"grossEurExact":"85.587127695995","exactScale":12}`
	if string(b) != want {
		t.Errorf("exact record\n got %s\nwant %s", b, want)
	}
	var back Conversion
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Check(); err != nil {
		t.Errorf("decoded exact record: Check: %v", err)
	}
	for name, mutate := range map[string]func(*Conversion){
		"exact digit":      func(c *Conversion) { c.GrossEURExactString = "85.587127695994" },
		"exact scale":      func(c *Conversion) { c.ExactScale = 10 },
		"exact short":      func(c *Conversion) { c.GrossEURExactString = "85.5871276960" },
		"exact value":      func(c *Conversion) { c.GrossEURExact = dec("85.5871") },
		"scale without it": func(c *Conversion) { c.GrossEURExactString = "" },
	} {
		m := c
		mutate(&m)
		if err := m.Check(); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: Check = %v, want ErrInconsistent", name, err)
		}
	}
}

func TestSplitGross(t *testing.T) {
	for _, tc := range []struct{ gross, rate, net, vat string }{
		// 121 / 1.21 = 100 exactly.
		{"121", "21", "100.000000000000", "21.000000000000"},
		// 85.587127695995 / 1.19 = 71.921956047054621848...
		{"85.587127695995", "19", "71.921956047055", "13.665171648940"},
		// 10 / 1.055 = 9.478672985781990521...
		{"10", "5.5", "9.478672985782", "0.521327014218"},
		{"-10", "5.5", "-9.478672985782", "-0.521327014218"},
		{"50", "0", "50", "0"},
	} {
		net, vat := SplitGross(dec(tc.gross), dec(tc.rate))
		if !net.Equal(dec(tc.net)) || !vat.Equal(dec(tc.vat)) {
			t.Errorf("SplitGross(%s, %s %%) = %s + %s, want %s + %s", tc.gross, tc.rate, net, vat, tc.net, tc.vat)
		}
		if !net.Add(vat).Equal(dec(tc.gross)) {
			t.Errorf("SplitGross(%s, %s): net + vat = %s", tc.gross, tc.rate, net.Add(vat))
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("negative rate accepted")
		}
	}()
	SplitGross(dec("1"), dec("-1"))
}

// TestPropertyExactSums is the property test. For random batches of
// settlements (0.000001 to 10,000 USDC, random ECB-shaped rates, random VAT
// rates) it checks, against exact rational arithmetic:
//
//  1. every exact figure is within 0.5 × 10^-12 of the true quotient;
//  2. Σ VAT_i − rate × Σ net_i is within n × 10^-10 (in fact n × 10^-12);
//  3. the sum of the exact grosses rounded once to cents is within half a
//     cent (plus n × 0.5 × 10^-12) of the true sum, and equals the true sum
//     rounded to cents unless that lies within n × 0.5 × 10^-12 of a
//     half-cent boundary;
//
// while the sum of cent-rounded figures, the thing not to do, is also
// measured, to show the test can tell the two apart.
func TestPropertyExactSums(t *testing.T) {
	batches, maxN := 400, 2000
	if testing.Short() {
		batches, maxN = 50, 500
	}
	rng := rand.New(rand.NewPCG(20260413, 15))
	halfCent := big.NewRat(5, 1000)
	perRecord := big.NewRat(5, 10_000_000_000_000) // 0.5 × 10^-12
	var records, worstCents int
	for b := range batches {
		n := 1 + rng.IntN(maxN)
		if b%10 == 0 {
			n = maxN
		}
		rate := randRate(rng)
		vatPct := dec(vatRates[rng.IntN(len(vatRates))])
		r := new(big.Rat).Quo(ratOf(vatPct), big.NewRat(100, 1))
		sumExact, sumNet, sumVAT, sumCents := decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
		trueSum := new(big.Rat)
		for range n {
			amount := randUSDC(rng)
			c := ConvertUSDCExact(amount, usdRate(rate.String()))
			q := new(big.Rat).Quo(ratOf(amount), ratOf(rate))
			if d := new(big.Rat).Sub(ratOf(c.GrossEURExact), q); d.Abs(d).Cmp(perRecord) > 0 {
				t.Fatalf("%s / %s: exact %s is %s off", amount, rate, c.GrossEURExact, d.FloatString(15))
			}
			net, vat := SplitGross(c.GrossEURExact, vatPct)
			sumExact = sumExact.Add(c.GrossEURExact)
			sumNet, sumVAT = sumNet.Add(net), sumVAT.Add(vat)
			sumCents = sumCents.Add(c.GrossEUR)
			trueSum.Add(trueSum, q)
		}
		records += n
		// 2. VAT of the parts against VAT of the summed net.
		diff := new(big.Rat).Sub(ratOf(sumVAT), new(big.Rat).Mul(r, ratOf(sumNet)))
		if bound := new(big.Rat).Mul(big.NewRat(int64(n), 1), big.NewRat(1, 10_000_000_000)); diff.Abs(diff).Cmp(bound) > 0 {
			t.Fatalf("batch %d (n=%d, VAT %s %%): Σ VAT − r Σ net = %s > n × 10^-10", b, n, vatPct, diff.FloatString(15))
		}
		// 3. One rounding of the exact sum.
		rounded := ratOf(RoundEUR(sumExact))
		slack := new(big.Rat).Mul(big.NewRat(int64(n), 1), perRecord)
		off := new(big.Rat).Sub(rounded, trueSum)
		if lim := new(big.Rat).Add(halfCent, slack); off.Abs(off).Cmp(lim) > 0 {
			t.Fatalf("batch %d: rounded exact sum %s is %s from the true sum", b, RoundEUR(sumExact), off.FloatString(15))
		}
		if want := roundRat(trueSum, 2); rounded.Cmp(want) != 0 {
			// Allowed only within the accumulated slack of a boundary.
			boundary := new(big.Rat).Add(roundRat(new(big.Rat).Sub(trueSum, halfCent), 2), halfCent)
			if d := new(big.Rat).Sub(trueSum, boundary); d.Abs(d).Cmp(slack) > 0 {
				t.Fatalf("batch %d: rounded exact sum %s, true sum rounds to %s", b, RoundEUR(sumExact), want.FloatString(2))
			}
		}
		// The sum of cent figures drifts; record how far, in cents.
		drift := new(big.Rat).Sub(ratOf(sumCents), trueSum)
		drift.Abs(drift).Mul(drift, big.NewRat(100, 1))
		worstCents = max(worstCents, int(new(big.Int).Quo(drift.Num(), drift.Denom()).Int64()))
	}
	t.Logf("%d batches, %d records; summing cent-rounded figures instead drifted up to %d cents", batches, records, worstCents)
	if worstCents == 0 && !testing.Short() {
		t.Error("summing cent-rounded figures never drifted a cent: the batches are too small to show the difference")
	}
}

func TestPeriodEndRate(t *testing.T) {
	tb := embedded(t)
	ctx := context.Background()
	// Art. 366(2): a period ending on Saturday 31 May 2025 converts at
	// Monday 2 June's publication, 1.1419 (the ECB's published value).
	r, err := PeriodEndRate(ctx, tb, "USD", "2025-05-31")
	if err != nil || r.RateDate != "2025-06-02" || r.Raw != "1.1419" || r.Policy != PeriodEndOrNext || r.Requested != "2025-05-31" {
		t.Errorf("PeriodEndRate = %+v, %v", r, err)
	}
	c, err := ConvertUSDCPeriodTotal(ctx, tb, dec("1234.567891"), "2025-05-31")
	if err != nil {
		t.Fatal(err)
	}
	// 1234.567891 / 1.1419 = 1081.1523697346527...: Python decimal, 60 digits.
	if c.GrossEURString != "1081.15" || c.GrossEURExactString != "1081.152369734653" || c.USDPerEUR.RateDate != "2025-06-02" {
		t.Errorf("period total: %s / %s at %s", c.GrossEURString, c.GrossEURExactString, c.USDPerEUR.RateDate)
	}
	if err := c.Check(); err != nil {
		t.Error(err)
	}
	// The period ending on the table's last day but one publication later is not out yet.
	if _, err := PeriodEndRate(ctx, tb, "USD", "2026-04-14"); !errors.Is(err, ErrNotYetPublished) {
		t.Errorf("future period end: %v", err)
	}
	for _, bad := range []string{"2025-02-29", "31.05.2025", "", "2025-5-31"} {
		if _, err := PeriodEndRate(ctx, tb, "USD", bad); !errors.Is(err, ErrDate) {
			t.Errorf("PeriodEndRate(%q): %v, want ErrDate", bad, err)
		}
	}
}

// TestBasisPoints: bps basis points of an exact amount, exact at
// ExactScale and in cents rounded once from the product: 50 bps of a
// micropayment's 0.000855826772 EUR are 0.000004279134 EUR (0.00 in
// cents, not nothing), of 0.999 EUR 0.004995 (0.00, where 1.00 rounded
// first would give 0.01), of 85.587127695995 EUR 0.427935638480.
func TestBasisPoints(t *testing.T) {
	for _, c := range []struct {
		amount       string
		bps          int64
		exact, cents string
	}{
		{"0.000855826772", 50, "0.000004279134", "0.00"},
		{"0.999", 50, "0.004995000000", "0.00"},
		{"85.587127695995", 50, "0.427935638480", "0.43"},
		{"1.000000000001", 5000, "0.500000000001", "0.50"},
		{"123.45", 0, "0.000000000000", "0.00"},
	} {
		exact, cents := BasisPoints(decimal.RequireFromString(c.amount), c.bps)
		if exact.StringFixed(ExactScale) != c.exact || cents.StringFixed(EURScale) != c.cents {
			t.Errorf("BasisPoints(%s, %d) = %s, %s; want %s, %s", c.amount, c.bps, exact.StringFixed(ExactScale), cents.StringFixed(EURScale), c.exact, c.cents)
		}
	}
}
