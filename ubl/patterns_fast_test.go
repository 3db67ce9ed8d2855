package ubl

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestLoopPatternsMatchRegexps: isDecimalText and isVATNumberShape accept
// exactly what the regular expressions they replace accept.
func TestLoopPatternsMatchRegexps(t *testing.T) {
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		fn   func(string) bool
	}{
		{"isDecimalText", regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`), isDecimalText},
		{"isVATNumberShape", regexp.MustCompile(`^[A-Z]{2}[0-9A-Z+*]{2,13}$`), isVATNumberShape},
	} {
		check := func(s string) {
			if got, want := c.fn(s), c.re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, the regexp says %v", c.name, s, got, want)
			}
		}
		for _, s := range []string{"", ".", "0", "0.", ".5", "1.5", "1.5.5", "11.90", "1.1711", "-1", "1e5", " 1", "1\n",
			"DE", "DE1", "DE12", "DE123456789", "EL123456789", "de123", "DE12345678901234", "DE1234567890123", "D1234",
			"DE+*", "+E12", "DE12\n", "ATU12345678", "NL123456789B01"} {
			check(s)
		}
		alphabet := "09AZaz.+*-\n é"
		r := rand.New(rand.NewPCG(22, 4))
		for range 100000 {
			b := make([]byte, r.IntN(17))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			check(string(b))
		}
	}
}
