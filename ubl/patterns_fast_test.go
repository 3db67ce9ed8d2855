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

// TestShapesMatchRegexps: each shape accepts exactly what the regular
// expression it replaced accepts (the rules' own spelling).
func TestShapesMatchRegexps(t *testing.T) {
	for _, c := range []struct {
		re    string
		shape string
	}{
		{`^[0-9]{8}$`, shapeDigits8}, {`^[0-9]{9}$`, shapeDigits9}, {`^[0-9]{10}$`, shapeDigits10},
		{`^[0-9]{11}$`, shapeDigits11}, {`^[0-9]{12}$`, shapeDigits12}, {`^[0-9]{20}$`, shapeDigits20},
		{`^DK[0-9]{8}$`, shapeDK8}, {`^NL[0-9]{9}B[0-9]{2}$`, shapeNLVAT}, {`^NO[0-9]{9}MVA$`, shapeNOVAT},
		{`^SE[0-9]{12}$`, shapeSEVAT}, {`^EU[0-9]{9}$`, shapeEUOSS},
	} {
		re := regexp.MustCompile(c.re)
		var matched, rejected int
		check := func(s string) {
			got, want := hasShape(s, c.shape), re.MatchString(s)
			if got != want {
				t.Fatalf("hasShape(%q, %q) = %v, %s says %v", s, c.shape, got, c.re, want)
			}
			if got {
				matched++
			} else {
				rejected++
			}
		}
		check("")
		check(c.shape)
		check(c.shape + "\n")
		// Strings of the shape's length (and one off) from the bytes the
		// expressions name plus neighbours: digits, the letters, '9' as a
		// literal, ASCII just outside 0-9, lower case and a multi-byte rune.
		alphabet := "0123456789BDEKLMNOSUVAbdk/:\n\xc3\xa9"
		r := rand.New(rand.NewPCG(22, uint64(len(c.shape))))
		for range 50000 {
			b := []byte(c.shape)
			if r.IntN(8) == 0 {
				b = b[:r.IntN(len(b)+1)]
			}
			for range 1 + r.IntN(3) {
				if len(b) > 0 {
					b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
				}
			}
			for i := range b { // digits where the shape has them, mostly
				if c.shape[i] == '9' && r.IntN(4) != 0 && b[i] == '9' {
					b[i] = byte('0' + r.IntN(10))
				}
			}
			if r.IntN(10) == 0 {
				b = append(b, alphabet[r.IntN(len(alphabet))])
			}
			check(string(b))
		}
		if matched < 1000 || rejected < 1000 {
			t.Fatalf("%s: %d matched, %d rejected: the comparison needs both", c.re, matched, rejected)
		}
	}
}

func FuzzShapes(f *testing.F) {
	f.Add("NL123456789B01")
	f.Add("EU372000041")
	f.Fuzz(func(t *testing.T, s string) {
		for re, shape := range map[string]string{`^NL[0-9]{9}B[0-9]{2}$`: shapeNLVAT, `^EU[0-9]{9}$`: shapeEUOSS, `^NO[0-9]{9}MVA$`: shapeNOVAT, `^[0-9]{9}$`: shapeDigits9} {
			if got, want := hasShape(s, shape), regexp.MustCompile(re).MatchString(s); got != want {
				t.Fatalf("hasShape(%q, %q) = %v, %s says %v", s, shape, got, re, want)
			}
		}
	})
}
