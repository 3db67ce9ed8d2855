package ubl

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/fiscal402/fiscal402/internal/regexptest"
)

// contactMatchers are the matchers of validate.go and the expressions of
// the Peppol DE rules they replace.
var contactMatchers = []regexptest.Matcher{
	{Name: "email", Match: isEmail, Re: regexp.MustCompile(`^[^@\s]+@([^@.\s]+\.)+[^@.\s]+$`),
		Seeds: []string{"billing@bench.example", "a@b.c", "a@b", "@b.c", "a@.b", "a@b..c", "a@b.c.", "a b@c.d", "a@b@c.d", "é@ü.de", "a\x0b@b.c", "\xff@b.c"}},
	{Name: "telephone", Match: isTelephone, Re: regexp.MustCompile(`([0-9].*){3,}`),
		Seeds: []string{"+353 1 234 5678", "12", "1\n23", "12\n3", "a1b2c3", "1\r2\v3", "\xff1\xfe2\xfd3", "1\n2\n3\n456"}},
}

// contactMutations is an alphabet of every class the contact expressions
// tell apart.
const contactMutations = "0123456789abz@.-+ \t\n\v\f\r\x00\x7f\x80\xff\xc3\xa9"

// TestContactMatchersAgreeWithRegexps compares each matcher with its
// expression on its seeds, every single byte and 40,000 mutation chains.
func TestContactMatchersAgreeWithRegexps(t *testing.T) {
	regexptest.Agree(t, rand.New(rand.NewPCG(22, 5)), contactMatchers, contactMutations, 40000, 300)
}

// FuzzContactMatchers: each matcher agrees with its expression on any
// input.
func FuzzContactMatchers(f *testing.F) { regexptest.Fuzz(f, contactMatchers) }
