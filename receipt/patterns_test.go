package receipt

import (
	"encoding/base64"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/fiscal402/fiscal402/internal/regexptest"
	"github.com/shopspring/decimal"
)

// patternRegexps are the regular expressions the hand-written matchers of
// patterns.go replace (and the syntax doc.go "# Claims" states).
var patternRegexps = []struct {
	name string
	pat  pattern
	re   *regexp.Regexp
	seed []string
}{
	{"event id", patEventID, regexp.MustCompile(`^x402-[0-9A-Za-z_-]{1,128}$`), []string{"x402-a", "x402-9f2c4e1a0b7d3c5e0a"}},
	{"event id v3", patEventIDV3, regexp.MustCompile(`^x402-[0-9A-Za-z_-]{32,128}$`), []string{"x402-7c1e9a40d2b35f86a0c4e1b7d9f20300", "x402-sandbox-0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"}},
	{"CAIP-2", patCAIP2, regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`), []string{"eip155:8453", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"}},
	{"EVM hash", patEVMHash, regexp.MustCompile(`^0x[0-9a-f]{64}$`), []string{"0x4a1f0c3b2e5d6f7a8b9c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c"}},
	{"EVM address", patEVMAddress, regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`), []string{"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}},
	{"USDC", patUSDC, regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$`), []string{"12.100000", "0", "1.5"}},
	{"money", patMoney2, regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]{2}$`), []string{"10.33", "-0.01", "0.00"}},
	{"rate", patRate, regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`), []string{"1.1711", "20", "0.274551635213"}},
	{"exact", patExact, regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]{1,12})?$`), []string{"10.332166339339", "-8.4", "0"}},
	{"country", patCountry, regexp.MustCompile(`^[A-Z]{2}$`), []string{"PL", "GB"}},
	{"currency", patCurrency, regexp.MustCompile(`^[A-Z]{3}$`), []string{"PLN", "GBP"}},
	{"SHA-256 hex", patSHA256Hex, regexp.MustCompile(`^[0-9a-f]{64}$`), []string{"5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"}},
	{"evidence kind", patEvidenceKind, regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`), []string{"ip_address", "a"}},
}

// mutations covers every class of byte the patterns use.
const mutations = "0123456789abcdefxAFXZaz_-.:+ \xff"

// mutate derives a nearby string (regexptest.Mutate over mutations).
func mutate(r *rand.Rand, s string) string { return regexptest.Mutate(r, s, mutations) }

// TestPatternsAgreeWithRegexps compares every matcher with its regular
// expression on the seeds and 20,000 mutations each.
func TestPatternsAgreeWithRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range patternRegexps {
		accepted := 0
		for _, seed := range p.seed {
			s := seed
			for range 20000 {
				if p.pat(s) != p.re.MatchString(s) {
					t.Fatalf("%s: %q: matcher %v, regexp %v", p.name, s, p.pat(s), p.re.MatchString(s))
				}
				if p.pat(s) {
					accepted++
				}
				if s = mutate(r, s); len(s) > 300 || r.IntN(8) == 0 {
					s = seed
				}
			}
		}
		if accepted == 0 {
			t.Errorf("%s: no string accepted: the test cannot tell the two apart", p.name)
		}
	}
}

// FuzzPatterns: every matcher agrees with its regular expression.
func FuzzPatterns(f *testing.F) {
	for _, p := range patternRegexps {
		for _, s := range p.seed {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range patternRegexps {
			if p.pat(s) != p.re.MatchString(s) {
				t.Fatalf("%s: %q: matcher %v, regexp %v", p.name, s, p.pat(s), p.re.MatchString(s))
			}
		}
	})
}

// FuzzStrictBase64: the strict decoders accept exactly the strings that
// re-encode to themselves (the one canonical spelling), as the first
// version checked by re-encoding.
func FuzzStrictBase64(f *testing.F) {
	for _, s := range []string{"", "AA", "AB", "AAA", "AAE", "YQ==", "YR==", "YQ", "A\nA", "AAAA\r", "_-_-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := decodeB64URLStrict(s)
		raw, ref := base64.RawURLEncoding.DecodeString(s)
		if canonical := ref == nil && base64.RawURLEncoding.EncodeToString(raw) == s; (err == nil) != canonical || err == nil && string(b) != string(raw) {
			t.Fatalf("url %q: strict %v, canonical %v", s, err, canonical)
		}
		b2, err2 := decodeB64URLStrictBytes([]byte(s))
		if (err2 == nil) != (err == nil) || err == nil && string(b2) != string(b) {
			t.Fatalf("url bytes %q: %v vs %v", s, err2, err)
		}
		b, err = decodeB64StdStrict(s)
		raw, ref = base64.StdEncoding.DecodeString(s)
		if canonical := ref == nil && base64.StdEncoding.EncodeToString(raw) == s; (err == nil) != canonical || err == nil && string(b) != string(raw) {
			t.Fatalf("std %q: strict %v, canonical %v", s, err, canonical)
		}
	})
}

// TestAddsUpAgreesWithDecimal holds the 64-bit fast path of addsUp to
// decimal.Decimal arithmetic, across the boundary where it gives up.
func TestAddsUpAgreesWithDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	num := func() string {
		s := strconv.FormatInt(r.Int64N(1_000_000_000), 10)
		s = s[:1+r.IntN(len(s))]
		if len(s) > 1 && s[0] == '0' {
			s = s[1:]
		}
		if r.IntN(2) == 0 {
			f := strconv.FormatInt(r.Int64N(1_000_000_000_000), 10)
			s += "." + f[:1+r.IntN(len(f))]
		}
		if r.IntN(4) == 0 && s != "0" {
			s = "-" + s
		}
		return s
	}
	for range 20000 {
		n, vat := num(), num()
		sum := decimal.RequireFromString(n).Add(decimal.RequireFromString(vat))
		gross := sum.String()
		if r.IntN(2) == 0 {
			gross = sum.Add(decimal.New(1, -12)).String()
		}
		if !patExact(n) || !patExact(vat) || !patExact(gross) {
			continue
		}
		v := &checker{}
		v.addsUp("/fx", amount{"gross", gross}, amount{"net", n}, amount{"vat", vat})
		want := decimal.RequireFromString(n).Add(decimal.RequireFromString(vat)).Equal(decimal.RequireFromString(gross))
		if (v.err == nil) != want {
			t.Fatalf("%s + %s = %s: checker %v, decimal %v", n, vat, gross, v.err, want)
		}
	}
}
