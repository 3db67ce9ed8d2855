package wire

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/vat"
)

// FieldError is a malformed request field: Field is its JSON pointer (or
// the header's name), Detail one sentence saying what is wrong. Code is
// the error code of the HTTP API (README "Errors") when it is not
// BAD_REQUEST ("" means BAD_REQUEST): the checks of package settlement say
// UNSUPPORTED_NETWORK, UNSUPPORTED_ASSET and UNSUPPORTED_SCHEME with it.
type FieldError struct {
	Code   string
	Field  string
	Detail string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Detail }

func bad(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// Limits on the request, our own choice; these are
// documented in the README and the OpenAPI document.
const (
	MaxTextLen = 200 // consumerName, description
	// MaxVATNumberLen, MaxPostalCodeLen and MaxTokenLen bound a VAT
	// number, a postal code and a token such as supplyKind, in characters
	// (the OpenAPI document states them as maxLength, which counts so).
	MaxVATNumberLen  = 32
	MaxPostalCodeLen = 16
	MaxTokenLen      = 64
	// MaxNoteLen bounds the note of a resolution, in characters.
	MaxNoteLen      = 2000
	maxEvidence     = 10 // items of location evidence of one buyer
	maxAmountDigits = 12 // integer digits of amountUsdc: < 10^12 USDC, above any USDC supply
	// maxIdempotencyKeyLen bounds an Idempotency-Key: visible ASCII only.
	maxIdempotencyKeyLen = 255
	// MaxClockSkew is how far in the future a settlement timestamp may lie
	// (clock skew between the chain, the merchant and us).
	MaxClockSkew = 5 * time.Minute
	usdcDecimals = evmverify.USDCDecimals
)

// The syntax of amounts, hashes, addresses and keys, as hand-written
// matchers of the regular expressions quoted (every settlement passes
// four of them; these take a few nanoseconds where the expressions took
// microseconds). TestMatchersAgreeWithRegexps and FuzzMatchers hold each
// one to its expression.

// isAmount: ^(0|[1-9][0-9]*)(\.[0-9]+)?$, the API's one decimal spelling
// (vat.PlainDecimal, which a manual ratePercent is read with too).
func isAmount(v string) bool { return vat.PlainDecimal(v) }

// isHex0x: ^0x[0-9a-fA-F]{n}$
func isHex0x(v string, n int) bool {
	if len(v) != 2+n || v[0] != '0' || v[1] != 'x' {
		return false
	}
	for i := 2; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f') {
			return false
		}
	}
	return true
}

// isIdempotencyKey: ^[\x21-\x7e]{1,255}$ (maxIdempotencyKeyLen)
func isIdempotencyKey(k string) bool {
	if k == "" || len(k) > maxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// IsTxHash reports whether v is 0x followed by 64 hexadecimal digits.
func IsTxHash(v string) bool { return isHex0x(v, 64) }

// USDCAmount accepts a positive decimal string with at most 6 decimals
// (USDC's precision) and at most 12 integer digits, and returns it with
// its canonical spelling. Exponents, signs, leading zeros and JSON numbers
// are refused: an amount has exactly one spelling family, and nothing is
// rounded.
func USDCAmount(field, v string) (decimal.Decimal, string, error) {
	if v == "" {
		return decimal.Decimal{}, "", bad(field, "is required (a decimal string such as \"1.50\")")
	}
	if strings.HasPrefix(v, "-") {
		return decimal.Decimal{}, "", bad(field, "must be greater than zero")
	}
	if !isAmount(v) {
		return decimal.Decimal{}, "", bad(field, "must be a plain decimal string such as \"1.50\" (no sign, exponent, spaces or leading zeros)")
	}
	intPart, frac, _ := strings.Cut(v, ".")
	if len(frac) > usdcDecimals {
		// Zeros past USDC's sixth decimal do not change the value
		// ("0.0510000" is 0.051): they are dropped. A non-zero digit there
		// is finer than the token's smallest unit and cannot have settled.
		if i := strings.IndexFunc(frac[usdcDecimals:], func(r rune) bool { return r != '0' }); i >= 0 {
			return decimal.Decimal{}, "", bad(field, "has a non-zero digit at decimal place %d; USDC's smallest unit is 0.000001 (%d decimals)", usdcDecimals+1+i, usdcDecimals)
		}
		v = intPart + "." + frac[:usdcDecimals]
	}
	if len(intPart) > maxAmountDigits {
		return decimal.Decimal{}, "", bad(field, "is too large (at most %d integer digits)", maxAmountDigits)
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		return decimal.Decimal{}, "", bad(field, "is not a decimal number")
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, "", bad(field, "must be greater than zero")
	}
	return d, v, nil
}

// Timestamp accepts RFC 3339 (an ISO-8601 profile) in UTC only: "Z" or
// "+00:00", not before 2015. Fractional seconds, if any, are "." and one to
// nine digits (RFC 3339 section 5.6: time-secfrac = "." 1*DIGIT; nine is
// the nanosecond the record keeps): a decimal comma, which time.Parse
// tolerates, and a tenth digit, which it would drop, are refused. A
// settlement cannot lie in the future beyond MaxClockSkew after now.
func Timestamp(field, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, bad(field, "is required (ISO-8601 UTC, e.g. \"2026-04-10T12:00:00Z\")")
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || !(strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "+00:00")) {
		return time.Time{}, bad(field, "must be an ISO-8601 UTC timestamp such as \"2026-04-10T12:00:00Z\"")
	}
	if msg := SecFrac(v); msg != "" {
		return time.Time{}, bad(field, "%s (RFC 3339 section 5.6), e.g. \"2026-04-10T12:00:00.5Z\"", msg)
	}
	t = t.UTC()
	if t.Year() < MinYear {
		return time.Time{}, bad(field, "is before %d; no USDC settlement can be that old", MinYear)
	}
	if err := NotFuture(field, t, now); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// MinYear is the first year a settlement can be dated: no EVM settlement
// predates Ethereum's launch (2015). Timestamps before it are refused, and
// so are calendar days (a capability check's or a preview's date).
const MinYear = 2015

// NotFuture refuses a settlement time t more than MaxClockSkew after now,
// the service's clock: no settlement lies in the future, and the Art. 59c
// order dates rely on it. field names it.
func NotFuture(field string, t, now time.Time) error {
	if t.After(now.Add(MaxClockSkew)) {
		return bad(field, "is in the future (%s is after the service time %s)", t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// SecFrac checks the fractional seconds of v, a timestamp time.Parse
// accepted as RFC 3339 (so "YYYY-MM-DDThh:mm:ss" are its first 19 bytes),
// and says what is wrong with them, "" when nothing is: Timestamp's check,
// and the list bounds' (httpserver).
func SecFrac(v string) string {
	const secEnd = len("2006-01-02T15:04:05")
	if len(v) <= secEnd || v[secEnd] != '.' && v[secEnd] != ',' {
		return ""
	}
	if v[secEnd] == ',' {
		return "must separate fractional seconds with \".\", not \",\""
	}
	n := 0
	for i := secEnd + 1; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		n++
	}
	if n == 0 || n > 9 {
		return fmt.Sprintf("has %d fractional-second digits; 1 to 9 are accepted", n)
	}
	return ""
}

// Address accepts a 20-byte EVM address, 0x-prefixed, and returns it in
// lower case. The EIP-55 mixed-case checksum is not checked: it needs
// Keccak-256, which the standard library lacks, and it protects typing, not
// settlement facts (evmverify checks those against the chain).
func Address(field, v string) (string, error) {
	if v == "" {
		return "", bad(field, "is required")
	}
	if !isHex0x(v, 40) {
		return "", bad(field, "must be an EVM address: 0x followed by 40 hexadecimal digits")
	}
	return strings.ToLower(v), nil
}

// Country accepts an ISO 3166-1 alpha-2 code (any case) and the two VAT
// prefixes that are not ISO codes but name places: EL (Greece, Art. 215 VAT
// Directive prefix) and XI (Northern Ireland, Windsor Framework). It
// returns the code in upper case.
func Country(field, v string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(v))
	if c == "EL" || c == "XI" {
		return c, nil
	}
	if !vat.IsISOCountry(c) {
		return "", bad(field, "%s is not an ISO 3166-1 alpha-2 country code", shown.Quote(v))
	}
	return c, nil
}

// BuyerCountry accepts, for where a customer is, what Country accepts and
// the codes vat.Buyer documents beyond ISO 3166-1 (IC for the Canary
// Islands, EA for Ceuta and Melilla, UK for GB: vat.BuyerCountry), so that
// a request is refused only for a code Determine refuses too.
func BuyerCountry(field, v string) (string, error) {
	c, err := Country(field, v)
	if err == nil {
		return c, nil
	}
	u := strings.ToUpper(strings.TrimSpace(v))
	if _, ok := vat.BuyerCountry(u); ok && len(u) == 2 {
		return u, nil
	}
	return "", bad(field, "%s is not an ISO 3166-1 alpha-2 country code (or EL, XI, UK, IC, EA)", shown.Quote(v))
}

// Token accepts "" or a lower-case token such as "digital_service" (at
// most 64 characters of a-z, 0-9 and _).
func Token(field, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if len(v) > MaxTokenLen || strings.IndexFunc(v, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
		return "", bad(field, "must be a lower-case token such as \"digital_service\"")
	}
	return v, nil
}

// Text accepts free text that will appear in the UBL invoice: at most
// MaxTextLen characters, no characters that XML 1.0 forbids (C0 controls
// other than tab, LF, CR; U+FFFE, U+FFFF; lone surrogates cannot occur in
// valid UTF-8) and no other control characters. It returns the text
// trimmed.
func Text(field, v string) (string, error) {
	if !utf8.ValidString(v) {
		return "", bad(field, "is not valid UTF-8")
	}
	v = strings.TrimSpace(v)
	if utf8.RuneCountInString(v) > MaxTextLen {
		return "", bad(field, "is longer than %d characters", MaxTextLen)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff {
			return "", bad(field, "contains the control character U+%04X, which an invoice cannot carry", r)
		}
	}
	return v, nil
}

// LongText is Text with its own limit of max characters (as Text counts
// them, and as the OpenAPI document's maxLength does).
func LongText(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if !utf8.ValidString(v) {
		return "", bad(field, "is not valid UTF-8")
	}
	if utf8.RuneCountInString(v) > max {
		return "", bad(field, "is longer than %d characters", max)
	}
	if len(v) <= MaxTextLen {
		return Text(field, v)
	}
	for _, c := range v {
		if c == 0xfffd || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return "", bad(field, "must be printable UTF-8 text")
		}
	}
	return v, nil
}

// IdempotencyKey reports whether k may be used as an Idempotency-Key: 1
// to 255 visible ASCII characters (no spaces), or "" for none. Every way
// in that takes one checks it so.
func IdempotencyKey(k string) error {
	if k == "" {
		return nil
	}
	if !isIdempotencyKey(k) {
		return bad("Idempotency-Key", "must be 1 to %d visible ASCII characters", maxIdempotencyKeyLen)
	}
	return nil
}

// Evidence checks items of location evidence: at most 10, each with a
// kind, a country and a source; the value is personal data kept on the
// record only.
func Evidence(field string, in []vat.Evidence) ([]vat.Evidence, error) {
	if len(in) > maxEvidence {
		return nil, bad(field, "at most %d items", maxEvidence)
	}
	out := make([]vat.Evidence, 0, len(in))
	for i, it := range in {
		at := fmt.Sprintf("%s/%d", field, i)
		var err error
		if it.Kind, err = Token(at+"/kind", it.Kind); err != nil {
			return nil, err
		}
		if it.Kind == "" {
			return nil, bad(at+"/kind", "is required")
		}
		if it.Source, err = Token(at+"/source", it.Source); err != nil {
			return nil, err
		}
		if it.Source == "" {
			return nil, bad(at+"/source", "is required")
		}
		if !slices.Contains(vat.EvidenceKinds(), it.Kind) {
			return nil, bad(at+"/kind", "%s is not a kind of location evidence: one of %s", shown.Quote(it.Kind), strings.Join(vat.EvidenceKinds(), ", "))
		}
		if !slices.Contains(vat.EvidenceSources(), it.Source) {
			return nil, bad(at+"/source", "%s is not a source of location evidence: one of %s", shown.Quote(it.Source), strings.Join(vat.EvidenceSources(), ", "))
		}
		if it.Country, err = BuyerCountry(at+"/country", it.Country); err != nil {
			return nil, err
		}
		if it.Provider, err = Text(at+"/provider", it.Provider); err != nil {
			return nil, err
		}
		if it.Value, err = LongText(at+"/value", it.Value, 500); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// printable reports whether s is valid UTF-8 without C0 controls or DEL.
func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0
}

// PostalCode accepts a postal code as a buyer states it: at most
// MaxPostalCodeLen printable characters, trimmed. Its form is the country's to judge
// (vat reads the codes that decide a territory).
func PostalCode(field, v string) (string, error) {
	pc := strings.TrimSpace(v)
	if !printable(pc) || utf8.RuneCountInString(pc) > MaxPostalCodeLen {
		return "", bad(field, "must be a postal code of at most %d printable characters", MaxPostalCodeLen)
	}
	return pc, nil
}

// VATNumber accepts a VAT number as a buyer states it: at most
// MaxVATNumberLen printable characters, trimmed. Its syntax and validity are the
// determination's (vat.ValidateNumber, the registry), which decide what a
// malformed one means for the tax, not the request's.
func VATNumber(field, v string) (string, error) {
	n := strings.TrimSpace(v)
	if !printable(n) || utf8.RuneCountInString(n) > MaxVATNumberLen {
		return "", bad(field, "must be a VAT number of at most %d printable characters", MaxVATNumberLen)
	}
	if i := strings.IndexFunc(n, reorders); i >= 0 {
		r, _ := utf8.DecodeRuneInString(n[i:])
		return "", bad(field, "holds the control character U+%04X, which would show another number than the one checked", r)
	}
	return n, nil
}

// reorders reports a character that changes how the text around it is
// shown without being seen itself: the bidirectional controls (Unicode
// Standard Annex #9, https://www.unicode.org/reports/tr9/: ALM, LRM, RLM,
// LRE to RLO, LRI to PDI), which make a document display another
// identifier than the one stored and checked (the "Trojan Source"
// reordering, CVE-2021-42574), the line and paragraph separators, and the
// C1 controls. Spaces and zero-width characters a copy-paste leaves are
// not among them: vat strips those when it reads a number.
func reorders(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f, r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// RateConditions checks attested rate conditions against the codes the
// rate table knows (vat.Rates().Conditions()) and returns them sorted,
// without repeats; nil for none.
func RateConditions(field string, in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, c := range vat.Rates().Conditions() {
		known[c.Code] = true
	}
	for i, c := range in {
		if !known[c] {
			return nil, bad(fmt.Sprintf("%s/%d", field, i), "%s is not a rate condition this ruleset knows", shown.Quote(c))
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(in))), nil
}
