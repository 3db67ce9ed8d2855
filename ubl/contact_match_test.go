package ubl

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// contactMatchers are the matchers of validate.go and the expressions of
// the Peppol DE rules they replace.
var contactMatchers = []struct {
	name  string
	match func(string) bool
	re    *regexp.Regexp
	seeds []string
}{
	{"email", isEmail, regexp.MustCompile(`^[^@\s]+@([^@.\s]+\.)+[^@.\s]+$`),
		[]string{"billing@bench.example", "a@b.c", "a@b", "@b.c", "a@.b", "a@b..c", "a@b.c.", "a b@c.d", "a@b@c.d", "é@ü.de", "a\x0b@b.c", "\xff@b.c"}},
	{"telephone", isTelephone, regexp.MustCompile(`([0-9].*){3,}`),
		[]string{"+353 1 234 5678", "12", "1\n23", "12\n3", "a1b2c3", "1\r2\v3", "\xff1\xfe2\xfd3", "1\n2\n3\n456"}},
}

func mutateContact(r *rand.Rand, s string) string {
	const alphabet = "0123456789abz@.-+ \t\n\v\f\r\x00\x7f\x80\xff\xc3\xa9"
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

// TestContactMatchersAgreeWithRegexps compares each matcher with its
// expression on its seeds, every single byte and 40,000 mutation chains.
func TestContactMatchersAgreeWithRegexps(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 5))
	for _, m := range contactMatchers {
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
			for range 40000 / len(m.seeds) {
				for range 1 + r.IntN(3) {
					s = mutateContact(r, s)
				}
				if len(s) > 300 {
					s = m.seeds[0]
				}
				check(s)
			}
		}
	}
}

// FuzzContactMatchers: each matcher agrees with its expression on any
// input.
func FuzzContactMatchers(f *testing.F) {
	for _, m := range contactMatchers {
		for _, s := range m.seeds {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range contactMatchers {
			if got, want := m.match(s), m.re.MatchString(s); got != want {
				t.Fatalf("%s(%q) = %v, the expression says %v", m.name, s, got, want)
			}
		}
	})
}
