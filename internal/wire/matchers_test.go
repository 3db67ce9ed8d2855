package wire

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// matcherRegexps are the regular expressions the matchers replace.
var matcherRegexps = []struct {
	name  string
	match func(string) bool
	re    *regexp.Regexp
	seeds []string
}{
	{"amount", isAmount, regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`), []string{"0", "11.90", "0.051", "100", "1.", ".5", "01", "0.0", "-1", "1e3", "1,5"}},
	{"tx hash", IsTxHash, regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`), []string{"0x" + strings.Repeat("aF09", 16), "0X" + strings.Repeat("a", 64)}},
	{"address", func(s string) bool { return isHex0x(s, 40) }, regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`), []string{"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}},
	{"idempotency key", isIdempotencyKey, regexp.MustCompile(`^[\x21-\x7e]{1,255}$`), []string{"order-1", strings.Repeat("k", 255), strings.Repeat("k", 256), "a b", "~!"}},
}

// mutate derives a nearby string from an alphabet of every class the
// expressions tell apart (digits, hex letters in both cases, the bytes
// around each range's ends, control characters, non-ASCII).
func mutate(r *rand.Rand, s string) string {
	const alphabet = "0123456789abcdefgABCDEFGxX.-+ e\x00\x10\x16\x19\x20\x21\x7e\x7f\x80\xff/:@`[{"
	b := []byte(s)
	switch i := r.IntN(max(len(b), 1)); r.IntN(4) {
	case 0:
		if len(b) > 0 {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	case 1:
		b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
	case 2:
		if len(b) > 0 {
			b = append(b[:i], b[i+1:]...)
		}
	case 3:
		b = append(b, b...)
	}
	return string(b)
}

// TestMatchersAgreeWithRegexps compares every matcher with its regular
// expression on its seeds, every single byte, and 50,000 chains of
// mutations of the seeds.
func TestMatchersAgreeWithRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 4))
	for _, m := range matcherRegexps {
		check := func(s string) {
			if got, want := m.match(s), m.re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, the expression says %v", m.name, s, got, want)
			}
		}
		for c := range 256 {
			check(string([]byte{byte(c)}))
		}
		for _, s := range m.seeds {
			check(s)
			for range 50000 / len(m.seeds) {
				for range 1 + r.IntN(3) {
					s = mutate(r, s)
				}
				if len(s) > 600 {
					s = m.seeds[0]
				}
				check(s)
			}
		}
	}
}

// FuzzMatchers: every matcher agrees with its expression on any input.
func FuzzMatchers(f *testing.F) {
	for _, m := range matcherRegexps {
		for _, s := range m.seeds {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range matcherRegexps {
			if got, want := m.match(s), m.re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, the expression says %v", m.name, s, got, want)
			}
		}
	})
}
