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

// QualifyNumber reads a VAT number that may have been given without its
// country prefix under country, the customer's attested country: when the
// number, normalised (NormalizeNumber), does not begin with a prefix
// ValidateNumber knows (and, beginning with two other letters, which may
// be a prefix of a state outside its list, is valid under country's
// prefix), it returns country's VAT-number prefix followed by the number
// normalised, e.g. "136 695 976" under "DE" is "DE136695976". Otherwise, or when country names no state that issues
// VAT numbers under a prefix of its own (empty, unknown, a territory code
// such as IC, MC or IM, a third country), the number is returned unchanged:
// a number is never read under a guessed country. The result is not
// validated; ValidateNumber and the registry still decide it.
//
// A number beginning with a known prefix keeps it, even where the same
// characters could begin a prefix-less body (a French key of two letters,
// "FRXX999999999", given without "FR").
func QualifyNumber(number, country string) string {
	prefix := countryNumberPrefix(country)
	n := NormalizeNumber(number)
	if prefix == "" || n == "" {
		return number
	}
	q := prefix + n
	if len(n) >= 2 && isUpper(n[0]) && isUpper(n[1]) {
		if _, ok := numberChecks[n[:2]]; ok {
			return number
		}
		// Two letters may be a prefix this package does not know (CHE,
		// NO): read under country only where that makes a valid number
		// (GB's GD and HA, a French key of two letters).
		if _, err := ValidateNumber(q); err != nil {
			return number
		}
	}
	return q
}

// countryNumberPrefix is the prefix of the VAT numbers a customer
// established in country holds, "" for none this package reads. The prefix
// is the ISO 3166-1 alpha-2 code of the member state that issued the number,
// except EL for Greece (Art. 215 Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112); XI
// is Northern Ireland's, the prefix HMRC gives a trader there in front of
// its usual VAT number, "XI 123456789 instead of GB 123456789"
// (https://www.gov.uk/vat-registration/selling-or-moving-goods-in-northern-ireland),
// which VIES answers; GB the United Kingdom's (UK accepted), which HMRC
// answers. Territory codes (IC, EA, AX, MC, IM, ...) are none: which
// state's number such a customer holds is not the code's to say.
func countryNumberPrefix(country string) string {
	c := strings.ToUpper(strings.TrimSpace(country))
	switch c {
	case "GR":
		return "EL"
	case "UK":
		return "GB"
	case "EU":
		return "" // the non-Union OSS scheme's prefix, no country
	}
	if _, ok := numberChecks[c]; ok && len(c) == 2 {
		return c
	}
	return ""
}

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
