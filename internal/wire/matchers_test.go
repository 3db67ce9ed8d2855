package wire

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/regexptest"
)

// matcherRegexps are the regular expressions the matchers replace.
var matcherRegexps = []regexptest.Matcher{
	{Name: "amount", Match: isAmount, Re: regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`), Seeds: []string{"0", "11.90", "0.051", "100", "1.", ".5", "01", "0.0", "-1", "1e3", "1,5"}},
	{Name: "tx hash", Match: IsTxHash, Re: regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`), Seeds: []string{"0x" + strings.Repeat("aF09", 16), "0X" + strings.Repeat("a", 64)}},
	{Name: "address", Match: func(s string) bool { return isHex0x(s, 40) }, Re: regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`), Seeds: []string{"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}},
	{Name: "idempotency key", Match: isIdempotencyKey, Re: regexp.MustCompile(`^[\x21-\x7e]{1,255}$`), Seeds: []string{"order-1", strings.Repeat("k", 255), strings.Repeat("k", 256), "a b", "~!"}},
}

// mutations is an alphabet of every class the expressions tell apart
// (digits, hex letters in both cases, the bytes around each range's ends,
// control characters, non-ASCII).
const mutations = "0123456789abcdefgABCDEFGxX.-+ e\x00\x10\x16\x19\x20\x21\x7e\x7f\x80\xff/:@`[{"

// TestMatchersAgreeWithRegexps compares every matcher with its regular
// expression on its seeds, every single byte, and 50,000 chains of
// mutations of the seeds.
func TestMatchersAgreeWithRegexps(t *testing.T) {
	regexptest.Agree(t, rand.New(rand.NewPCG(22, 4)), matcherRegexps, mutations, 50000, 600)
}

// FuzzMatchers: every matcher agrees with its expression on any input.
func FuzzMatchers(f *testing.F) { regexptest.Fuzz(f, matcherRegexps) }
