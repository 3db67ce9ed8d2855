// Package regexptest holds hand-written matchers to the regular
// expressions they replace on hot paths (internal/wire, ubl, receipt): the
// same answer on every single byte, on seeds and on chains of mutations of
// them, and under the fuzzer. It serves tests only.
package regexptest

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// Matcher is a hand-written matcher and the expression it replaces.
type Matcher struct {
	Name  string
	Match func(string) bool
	Re    *regexp.Regexp
	Seeds []string
}

func (m Matcher) check(t testing.TB, s string) {
	t.Helper()
	if got, want := m.Match(s), m.Re.MatchString(s); got != want {
		t.Fatalf("%s(%q) = %v, the expression says %v", m.Name, s, got, want)
	}
}

// Mutate derives a nearby string from s: a byte replaced by one of
// alphabet, one of alphabet inserted, a byte deleted, or s doubled.
// alphabet should hold every class of byte the expressions tell apart.
func Mutate(r *rand.Rand, s, alphabet string) string {
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

// Agree compares every matcher with its expression on every single byte,
// on its seeds and on about total strings reached from them by chains of
// one to three mutations (Mutate with alphabet); a string past maxLen
// starts again from the first seed.
func Agree(t testing.TB, r *rand.Rand, ms []Matcher, alphabet string, total, maxLen int) {
	t.Helper()
	for _, m := range ms {
		for c := range 256 {
			m.check(t, string([]byte{byte(c)}))
		}
		for _, s := range m.Seeds {
			m.check(t, s)
			for range total / len(m.Seeds) {
				for range 1 + r.IntN(3) {
					s = Mutate(r, s, alphabet)
				}
				if len(s) > maxLen {
					s = m.Seeds[0]
				}
				m.check(t, s)
			}
		}
	}
}

// Fuzz seeds f with every matcher's seeds and holds every matcher to its
// expression on any input.
func Fuzz(f *testing.F, ms []Matcher) {
	for _, m := range ms {
		for _, s := range m.Seeds {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range ms {
			m.check(t, s)
		}
	})
}
