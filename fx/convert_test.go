package fx

import (
	"encoding/json"
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func usdRate(raw string) Rate {
	return Rate{Base: "EUR", Quote: "USD", Raw: raw, Value: dec(raw), RateDate: "2026-04-13",
		Requested: "2026-04-13", Policy: ForDayOrPrevious, Source: SourceECB, Snapshot: "test:x"}
}

// TestConvertUSDC: expected values computed independently with Python's
// decimal module at 60 digits, quantized ROUND_HALF_UP (half away from zero).
func TestConvertUSDC(t *testing.T) {
	for _, tc := range []struct{ amount, rate, want string }{
		{"100", "1.1684", "85.59"}, // contract vector: 85.5871276959945224...
		{"0.000001", "1.1684", "0.00"},
		{"0.01", "1.1684", "0.01"},
		{"1", "0.8252", "1.21"},
		{"12.345678", "1.599", "7.72"},
		{"999999.999999", "1.1711", "853898.04"},
		{"5.845", "1.1690", "5.00"},
		{"1.17", "1.17", "1.00"},
		{"0.005845", "1.169", "0.01"}, // exactly 0.005: half rounds away from zero
		{"-0.005845", "1.169", "-0.01"},
		{"2.3375", "1.1", "2.13"}, // exactly 2.125
		{"-100", "1.1684", "-85.59"},
	} {
		c := ConvertUSDC(dec(tc.amount), usdRate(tc.rate))
		if c.GrossEURString != tc.want || !c.GrossEUR.Equal(dec(tc.want)) {
			t.Errorf("%s USDC at %s = %s (%s), want %s", tc.amount, tc.rate, c.GrossEURString, c.GrossEUR, tc.want)
		}
		if c.AmountUSDC != tc.amount || c.Pair != "USDC/EUR" || c.USDCUSD != USDCPeg() ||
			c.Rounding != "half-away-from-zero" || c.Scale != 2 || c.USDPerEUR.Raw != tc.rate {
			t.Errorf("%s at %s: record %+v", tc.amount, tc.rate, c)
		}
		if err := c.Check(); err != nil {
			t.Errorf("%s at %s: Check: %v", tc.amount, tc.rate, err)
		}
	}
}

func TestRoundEUR(t *testing.T) {
	for in, want := range map[string]string{
		"0.125": "0.13", "-0.125": "-0.13", "0.124999": "0.12", "0.005": "0.01", "-0.005": "-0.01",
		"2.675": "2.68", "2.665": "2.67", "1": "1", "85.5871276959945224": "85.59", "0.0049999999": "0",
	} {
		if got := RoundEUR(dec(in)); !got.Equal(dec(want)) {
			t.Errorf("RoundEUR(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestDivEURRoundsOnce: rounding to 16 places first and then to cents gives
// the wrong cent for this quotient; DivEUR does not.
func TestDivEURRoundsOnce(t *testing.T) {
	n, d := dec("1"), dec("200.0000000000000016") // 1/d = 0.00499999999999999996...
	if twice := RoundEUR(n.DivRound(d, 16)); !twice.Equal(dec("0.01")) {
		t.Fatalf("premise: double rounding gives %s", twice)
	}
	if got := DivEUR(n, d); !got.Equal(decimal.Zero) {
		t.Errorf("DivEUR = %s, want 0", got)
	}
}

// exactRoundCents rounds the rational n/d to cents half away from zero with
// math/big, independently of the decimal package.
func exactRoundCents(n, d *big.Rat) *big.Rat {
	q := new(big.Rat).Quo(n, d)
	q.Mul(q, big.NewRat(100, 1))
	neg := q.Sign() < 0
	q.Abs(q)
	q.Add(q, big.NewRat(1, 2))
	i := new(big.Int).Quo(q.Num(), q.Denom()) // floor for non-negative
	if neg {
		i.Neg(i)
	}
	return new(big.Rat).SetFrac(i, big.NewInt(100))
}

func TestDivEURMatchesExactArithmetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		amount := decimal.New(rng.Int64N(2_000_000_000_000)-1_000_000_000_000, -int32(rng.IntN(7)))
		rate := decimal.New(rng.Int64N(2_000_000)+1, -int32(rng.IntN(7)))
		got := DivEUR(amount, rate)
		want := exactRoundCents(amount.Rat(), rate.Rat())
		if got.Rat().Cmp(want) != 0 {
			t.Fatalf("DivEUR(%s, %s) = %s, exact %s", amount, rate, got, want.FloatString(2))
		}
	}
}

func TestConvertUSDCPanicsOnHandBuiltRate(t *testing.T) {
	for name, r := range map[string]Rate{
		"zero":     {},
		"inverted": {Base: "USD", Quote: "EUR", Raw: "0.85", Value: dec("0.85")},
		"negative": {Base: "EUR", Quote: "USD", Raw: "-1", Value: dec("-1")},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			ConvertUSDC(dec("1"), r)
		}()
	}
}

func TestCanonicalDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"100.000000": "100", "0.50": "0.5", "1e2": "100", "-1.250": "-1.25", "0.000001": "0.000001",
		"0": "0", "-0.0": "0", "1234567.000100": "1234567.0001",
	} {
		if got := canonicalDecimal(dec(in)); got != want {
			t.Errorf("canonicalDecimal(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseUSDC(t *testing.T) {
	for _, ok := range []string{"1", "100", "0.000001", "12.5", "12.500000", "999999999.999999", "0.1",
		"0.0510000", "1.0000000000", "0.0000010", "7." + strings.Repeat("0", 60)} {
		d, err := ParseUSDC(ok)
		if err != nil || !d.Equal(dec(ok)) {
			t.Errorf("ParseUSDC(%q) = %s, %v", ok, d, err)
		}
	}
	for _, bad := range []string{"", "0", "0.000000", "0.0000000", "-1", "+1", "1e6", "1.", ".5", "01", "1.0000001",
		" 1", "1 ", "1,5", "0x10", "NaN", "١", strings.Repeat("9", 31), "1." + strings.Repeat("0", 80)} {
		if _, err := ParseUSDC(bad); !errors.Is(err, ErrAmount) {
			t.Errorf("ParseUSDC(%q): err = %v, want ErrAmount", bad, err)
		}
	}
	// The error names the first decimal place finer than USDC.
	for in, want := range map[string]string{
		"1.0000001":   "decimal place 7",
		"0.05100009":  "decimal place 8",
		"0.000000100": "decimal place 7",
	} {
		if _, err := ParseUSDC(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseUSDC(%q): err = %v, want it to name %q", in, err, want)
		}
	}
}

// TestConversionWireFormat: the "fx" object of the fiscal record, as JSON,
// and its round trip.
func TestConversionWireFormat(t *testing.T) {
	r, err := embedded(t).Lookup("USD", noon(t, "2026-04-13"), ForDayOrPrevious)
	if err != nil {
		t.Fatal(err)
	}
	c := ConvertUSDC(dec("100"), r)
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "conversion.golden.json", append(b, '\n'))

	var back Conversion
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.USDPerEUR.Value.Equal(dec("1.1684")) {
		t.Errorf("decoded rate Value = %s, want it parsed from raw", back.USDPerEUR.Value)
	}
	if err := back.Check(); err != nil {
		t.Errorf("Check of the decoded record: %v", err)
	}
	if again := ConvertUSDC(dec(back.AmountUSDC), back.USDPerEUR); again.GrossEURString != c.GrossEURString {
		t.Errorf("reconverted %s, want %s", again.GrossEURString, c.GrossEURString)
	}
}

func TestConversionCheckDetectsTampering(t *testing.T) {
	good := ConvertUSDC(dec("100"), usdRate("1.1684"))
	for name, mutate := range map[string]func(*Conversion){
		"gross":        func(c *Conversion) { c.GrossEURString = "85.58" },
		"gross digits": func(c *Conversion) { c.GrossEURString = "85.590" },
		"gross value":  func(c *Conversion) { c.GrossEUR = dec("85.6") },
		"amount":       func(c *Conversion) { c.AmountUSDC = "100.01" },
		"raw":          func(c *Conversion) { c.USDPerEUR.Raw = "1.1685" },
		"peg":          func(c *Conversion) { c.USDCUSD.Rate = "0.9998" },
		"pair":         func(c *Conversion) { c.Pair = "USDT/EUR" },
		"rounding":     func(c *Conversion) { c.Rounding = "half-even" },
		"scale":        func(c *Conversion) { c.Scale = 4 },
		"inverted":     func(c *Conversion) { c.USDPerEUR.Base, c.USDPerEUR.Quote = "USD", "EUR" },
	} {
		c := good
		mutate(&c)
		if err := c.Check(); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: Check = %v, want ErrInconsistent", name, err)
		}
	}
	c := good
	c.AmountUSDC = "100.0"
	if err := c.Check(); !errors.Is(err, ErrAmount) {
		t.Errorf("non-canonical amount: Check = %v, want ErrAmount", err)
	}
}

func TestRateUnmarshalJSON(t *testing.T) {
	var r Rate
	if err := json.Unmarshal([]byte(`{"base":"EUR","quote":"USD","raw":"1.1711","rateDate":"2026-04-10"}`), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Value.Equal(dec("1.1711")) || r.RateDate != "2026-04-10" {
		t.Errorf("decoded %+v", r)
	}
	for _, bad := range []string{`{"raw":""}`, `{"raw":"1e3"}`, `{"raw":"-1.1"}`, `{"raw":1.1}`, `{}`} {
		var r Rate
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("Unmarshal(%s) succeeded: %+v", bad, r)
		}
	}
}

func FuzzParseUSDC(f *testing.F) {
	for _, s := range []string{"100", "0.000001", "12.500000", "1e6", "-1", "01", "1.0000001", "0.0510000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseUSDC(s)
		if err != nil {
			if !errors.Is(err, ErrAmount) {
				t.Fatalf("error does not wrap ErrAmount: %v", err)
			}
			return
		}
		if !d.IsPositive() || d.Exponent() < -USDCDecimals {
			t.Fatalf("ParseUSDC(%q) = %s", s, d)
		}
		back, err := ParseUSDC(canonicalDecimal(d))
		if err != nil || !back.Equal(d) {
			t.Fatalf("canonical form %q does not parse back: %v", canonicalDecimal(d), err)
		}
	})
}

// FuzzConversionCheck: Check never panics on a decoded record, and a record
// it accepts is exactly what ConvertUSDC produces from the same inputs.
func FuzzConversionCheck(f *testing.F) {
	good, _ := json.Marshal(ConvertUSDC(dec("100"), usdRate("1.1684")))
	f.Add(string(good))
	f.Add(strings.Replace(string(good), `"85.59"`, `"85.58"`, 1))
	f.Add(strings.Replace(string(good), `"100"`, `"0.000001"`, 1))
	f.Fuzz(func(t *testing.T, in string) {
		var c Conversion
		if json.Unmarshal([]byte(in), &c) != nil {
			return
		}
		if c.Check() != nil {
			return
		}
		again := ConvertUSDC(dec(c.AmountUSDC), c.USDPerEUR)
		if again.GrossEURString != c.GrossEURString || again.AmountUSDC != c.AmountUSDC {
			t.Fatalf("Check accepted %+v, ConvertUSDC gives %+v", c, again)
		}
	})
}
