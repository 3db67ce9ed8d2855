package vat

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// Number is a VAT identification number split into its prefix and body.
// Prefix is the two-letter code that VIES and EN 16931 (BR-CO-09) use: ISO
// 3166-1 alpha-2 for the member states except Greece (EL), XI for Northern
// Ireland, GB for the United Kingdom, and EU for the identification numbers
// of the non-Union OSS scheme (Art. 362 Directive 2006/112/EC). Body is the
// rest in its canonical form (digits and letters only, old short forms
// padded: BE to 10 digits, EL to 9).
type Number struct{ Prefix, Body string }

// String returns the number as written on an invoice and sent to VIES:
// prefix and body without separators, e.g. "ATU13585627".
func (n Number) String() string { return n.Prefix + n.Body }

// Reasons a VAT number is invalid (NumberError.Reason). They follow the
// error classes of python-stdnum
// (https://github.com/arthurdejong/python-stdnum/tree/006192e59be8ed6e08fd680256868a6c31eb2ba9).
const (
	InvalidPrefix    = "prefix"    // no known country prefix
	InvalidFormat    = "format"    // characters not allowed where they are
	InvalidLength    = "length"    // wrong number of characters
	InvalidChecksum  = "checksum"  // check digit or check letter does not match
	InvalidComponent = "component" // a part with a meaning is impossible (date, office code, range)
)

// ErrInvalidNumber is wrapped by every *NumberError, so that
// errors.Is(err, ErrInvalidNumber) tells a malformed number from other errors.
var ErrInvalidNumber = errors.New("vat: invalid VAT number")

// NumberError says why ValidateNumber refused a number. The verdict is
// final: syntax and check digits do not depend on any registry being up.
type NumberError struct {
	Input  string // the string given to ValidateNumber
	Reason string // InvalidPrefix, InvalidFormat, InvalidLength, InvalidChecksum or InvalidComponent
}

func (e *NumberError) Error() string {
	in := e.Input
	if len(in) > 64 {
		in = in[:64] + "..."
	}
	return fmt.Sprintf("vat: invalid VAT number %s: %s", shown.Quote(in), e.Reason)
}

// Unwrap returns ErrInvalidNumber.
func (e *NumberError) Unwrap() error { return ErrInvalidNumber }

// NormalizeNumber removes what people put into VAT numbers (white space,
// '-', '.', '/', ':', ',', '(', ')', '_' and Unicode dashes), upper-cases
// ASCII letters and writes Greece's prefix GR as EL. It does not validate.
// Invalid UTF-8 is replaced by U+FFFD first, so that the result is valid
// UTF-8 and NormalizeNumber(NormalizeNumber(s)) == NormalizeNumber(s).
func NormalizeNumber(s string) string {
	if isNormal(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteByte(byte(r - 'a' + 'A'))
		case isNumberSeparator(r):
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if strings.HasPrefix(out, "GR") {
		out = "EL" + out[2:]
	}
	return out
}

// isNormal reports whether s is already normalised: only upper-case ASCII
// letters, digits and '+', '*' (old Irish numbers), and no GR prefix.
func isNormal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '*') {
			return false
		}
	}
	return !strings.HasPrefix(s, "GR")
}

func isNumberSeparator(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case '-', '.', '/', ':', ',', '(', ')', '_',
		'\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', // dashes and minus
		'\u200B', '\uFEFF': // zero-width space, byte-order mark
		return true
	}
	return false
}

// ValidateNumber normalises s (NormalizeNumber) and checks the prefix, the
// syntax and the check digits of the body for every EU member state, XI, GB
// (9 and 12 digits, GD and HA) and EU (non-Union OSS). A nil error means the
// number is well formed, not that it is registered: only a registry (VIES,
// HMRC) can say that. The error is a *NumberError.
func ValidateNumber(s string) (Number, error) {
	n := NormalizeNumber(s)
	fail := func(reason string) (Number, error) {
		return Number{}, &NumberError{Input: s, Reason: reason}
	}
	if len(n) < 2 || !isUpper(n[0]) || !isUpper(n[1]) {
		return fail(InvalidPrefix)
	}
	check, ok := numberChecks[n[:2]]
	if !ok {
		return fail(InvalidPrefix)
	}
	body, reason := check(n[2:])
	if reason != "" {
		return fail(reason)
	}
	return Number{Prefix: n[:2], Body: body}, nil
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// numberChecks maps each prefix to its body check. A check returns the
// canonical body, or a reason when the body is invalid.
var numberChecks = map[string]func(string) (string, string){
	"AT": checkAT, "BE": checkBE, "BG": checkBG, "CY": checkCY, "CZ": checkCZ,
	"DE": checkDE, "DK": checkDK, "EE": checkEE, "EL": checkEL, "ES": checkES,
	"FI": checkFI, "FR": checkFR, "HR": checkHR, "HU": checkHU, "IE": checkIE,
	"IT": checkIT, "LT": checkLT, "LU": checkLU, "LV": checkLV, "MT": checkMT,
	"NL": checkNL, "PL": checkPL, "PT": checkPT, "RO": checkRO, "SE": checkSE,
	"SI": checkSI, "SK": checkSK, "GB": checkGB, "XI": checkGB, "EU": checkEU,
}

// numberPrefixCountry maps a VAT-number prefix to the ISO 3166-1 country of
// the state that issued it: EL is Greece (GR); XI numbers are issued by the
// United Kingdom for Northern Ireland; EU numbers belong to no country.
func numberPrefixCountry(prefix string) string {
	switch prefix {
	case "EL":
		return "GR"
	case "XI":
		return "GB"
	case "EU":
		return ""
	}
	return prefix
}
