package ubl

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors. Every validation problem wraps exactly one of them, so a
// caller branches with errors.Is and never on message text.
var (
	// ErrRequired: a required value is missing or blank.
	ErrRequired = errors.New("required")
	// ErrFormat: a value is malformed (date, identifier syntax, check digit).
	ErrFormat = errors.New("malformed")
	// ErrCode: a code is not in the code list the cited rule uses.
	ErrCode = errors.New("not in code list")
	// ErrDecimals: an amount has more decimal places than allowed (BR-DEC-*).
	ErrDecimals = errors.New("too many decimal places")
	// ErrRange: a number is negative, zero or too large where that is not allowed.
	ErrRange = errors.New("out of range")
	// ErrMismatch: amounts or categories that must agree do not.
	ErrMismatch = errors.New("inconsistent")
	// ErrForbidden: a value is present where the cited rule forbids it.
	ErrForbidden = errors.New("not allowed")
	// ErrXMLChar: text contains invalid UTF-8 or a character XML 1.0
	// forbids (https://www.w3.org/TR/xml/#charsets); it is never written.
	ErrXMLChar = errors.New("invalid character for XML 1.0")
	// ErrUnsupported: the input asks for something this renderer does not
	// produce (a VAT category or national rule set it does not implement).
	// The case needs manual review; nothing is guessed.
	ErrUnsupported = errors.New("not supported; needs manual review")
)

// FieldError is one validation problem: which input field, which EN 16931 or
// Peppol rule the value would break, and why.
type FieldError struct {
	// Field is the path of the value in the input, e.g. "Seller.Name",
	// "Lines[2].NetAmount", "Subtotals[0].TaxAmount", "InvoiceRef".
	Field string
	// Rule is the rule identifier, e.g. "BR-CO-26", "PEPPOL-EN16931-R010",
	// "DE-R-002"; empty when the check is a limit of this renderer.
	Rule string
	// Err is one of the Err* sentinels.
	Err error
	// Detail says what was found and what was expected.
	Detail string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("ubl: ")
	b.WriteString(e.Field)
	if e.Rule != "" {
		b.WriteString(": ")
		b.WriteString(e.Rule)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every problem found in one input, in a fixed order
// (the order of the checks, then of the fields). errors.Is and errors.As see
// each problem.
type ValidationError struct {
	Problems []*FieldError
}

func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Error()
	}
	var b strings.Builder
	b.WriteString("ubl: ")
	b.WriteString(strconv.Itoa(len(e.Problems)))
	b.WriteString(" problems:")
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Rules returns the distinct rule identifiers of the problems, in the
// order they first occur, for a review record ("DE-R-002", "BR-S-02",
// "VAT-Art226(5)"); problems without a rule (the renderer's own limits)
// contribute their field instead, prefixed "field:".
func (e *ValidationError) Rules() []string {
	var out []string
	for _, p := range e.Problems {
		r := p.Rule
		if r == "" {
			r = "field:" + p.Field
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Unwrap exposes every problem to errors.Is and errors.As.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}
