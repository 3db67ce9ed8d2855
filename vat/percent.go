package vat

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Percent is a VAT rate in percent, e.g. 25.5 for 25.5 %. In JSON it is a
// number literal (classification.ratePercent of a fiscal record),
// written from its decimal string and read back through decimal parsing, so
// that no float64 ever touches it: 25.5 stays exactly 25.5.
type Percent struct{ d decimal.Decimal }

// NewPercent wraps a decimal rate.
func NewPercent(d decimal.Decimal) Percent { return Percent{d: d} }

// ParsePercent parses a decimal string such as "25.5" or "0". The value
// must lie between 0 and 100.
func ParsePercent(s string) (Percent, error) {
	d, err := parsePercentText(s)
	if err != nil {
		return Percent{}, fmt.Errorf("vat: percent %q: %w", s, err)
	}
	return Percent{d: d}, nil
}

// errPercentRange is returned for a rate below 0, above 100, or written with
// an absurd exponent or length.
var errPercentRange = errors.New("not a rate between 0 and 100")

// parsePercentText parses s and bounds it before any arithmetic: a short
// input with a huge exponent ("1e99999999") would otherwise make comparisons
// allocate a number with millions of digits.
func parsePercentText(s string) (decimal.Decimal, error) {
	if len(s) > 40 {
		return decimal.Decimal{}, errPercentRange
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if e := d.Exponent(); e < -30 || e > 30 {
		return decimal.Decimal{}, errPercentRange
	}
	if d.IsNegative() || d.GreaterThan(hundred) {
		return decimal.Decimal{}, errPercentRange
	}
	return d, nil
}

var hundred = decimal.NewFromInt(100)

// PlainDecimal reports whether s is a decimal string in the one spelling
// the API reads its decimal strings in (amounts, rates):
// ^(0|[1-9][0-9]*)(\.[0-9]+)?$ — digits, without a leading zero unless the
// integer part is "0", and an optional "." with at least one digit after
// it. Signs, exponents, spaces and a bare point are not: a value has one
// spelling. internal/wire reads amounts with it (held to that expression
// by its matcher tests).
func PlainDecimal(s string) bool {
	intPart, frac, dot := strings.Cut(s, ".")
	return (intPart == "0" || intPart != "" && intPart[0] != '0' && digitsOnly(intPart)) &&
		(!dot || frac != "" && digitsOnly(frac))
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Decimal returns the rate as a decimal.
func (p Percent) Decimal() decimal.Decimal { return p.d }

// String returns the shortest decimal form: "25.5", "20", "0".
func (p Percent) String() string { return p.d.String() }

// IsZero reports whether the rate is 0 %.
func (p Percent) IsZero() bool { return p.d.IsZero() }

// MarshalJSON writes the rate as a JSON number literal.
func (p Percent) MarshalJSON() ([]byte, error) {
	return []byte(p.d.String()), nil
}

// errPercentJSON is returned for anything but a JSON number literal.
var errPercentJSON = errors.New("vat: percent: want a JSON number")

// UnmarshalJSON reads a JSON number literal between 0 and 100. Strings,
// booleans, objects and arrays are refused; JSON null leaves the value
// unchanged, as for the standard library's own types.
func (p *Percent) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) || !json.Valid(b) {
		return errPercentJSON
	}
	d, err := parsePercentText(string(b))
	if err != nil {
		return fmt.Errorf("vat: percent %.40s: %w", b, err)
	}
	p.d = d
	return nil
}
