package ubl

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Implementation limits (not EN 16931 rules). The XSD layer's libxml2
// accepts at most 24 decimal digits in an xs:decimal; these limits keep every
// rendered number well inside that, and far above any real invoice.
var (
	maxAmount = decimal.New(1, 15) // money, quantities and prices: |x| < 10^15
	maxRate   = decimal.New(100, 0)
)

const (
	maxPriceDecimals = 6  // BT-146 and BT-129 are not limited by BR-DEC; USDC has 6
	maxRateDecimals  = 4  // BT-119/BT-152, e.g. 25.5, 5.5
	maxFXDecimals    = 10 // TaxCurrency.Rate: central banks publish 4 to 6 decimals
)

// The contact patterns of the Peppol DE national rules, applied to every
// contact (PEPPOL-EN16931-UBL.xslt variables XR-EMAIL-REGEX,
// XR-TELEPHONE-REGEX), as loops: a seller's contact is checked on every
// invoice, and the telephone's expression backtracks.
// TestContactMatchersAgreeWithRegexps and FuzzContactMatchers hold them
// to the expressions quoted.

// isEmail: ^[^@\s]+@([^@.\s]+\.)+[^@.\s]+$ (RE2's \s: tab, LF, FF, CR,
// space).
func isEmail(s string) bool {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.ContainsAny(local, " \t\n\f\r") || strings.ContainsAny(domain, "@ \t\n\f\r") {
		return false
	}
	// At least two labels, none empty.
	return strings.Contains(domain, ".") && domain[0] != '.' && domain[len(domain)-1] != '.' && !strings.Contains(domain, "..")
}

// isTelephone: ([0-9].*){3,}, unanchored: three digits on one line (the
// dot does not match a line feed).
func isTelephone(s string) bool {
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			digits = 0
		case c >= '0' && c <= '9':
			if digits++; digits == 3 {
				return true
			}
		}
	}
	return false
}

// docKind is the UBL document type being rendered.
type docKind int

const (
	kindInvoice docKind = iota
	kindCreditNote
)

// endpoint is a resolved electronic address.
type endpoint struct{ id, scheme string }

// prepared is a validated input plus everything derived from it that the
// XML needs. Rendering a prepared document cannot fail.
type prepared struct {
	kind     docKind
	inv      *Invoice
	cn       *CreditNote // nil for an invoice
	lineIDs  []string
	totals   Totals
	writeVAT bool // false when the document contains category O (BR-O-02..04)
	seller   endpoint
	buyer    endpoint

	// draft: the document number is not known yet (DraftInvoice); the
	// checks of the number run in Draft.Finish.
	draft bool
	// greekSeller: the Peppol Greek rules apply (GR-R-001 checks the number).
	greekSeller bool
	// note is BT-22 as written: Invoice.Note plus the tax-currency statement.
	note string
	// renderer remembers the seller's checks and party block; nil for the
	// package functions.
	renderer *Renderer
	// buf is the buffer render wrote into (Renderer.buffer).
	buf *[]byte
}

// checker collects validation problems in check order.
type checker struct {
	probs []*FieldError
}

func (c *checker) add(field, rule string, err error, detail string) {
	c.probs = append(c.probs, &FieldError{Field: field, Rule: rule, Err: err, Detail: detail})
}

func (c *checker) addf(field, rule string, err error, format string, args ...any) {
	c.add(field, rule, err, fmt.Sprintf(format, args...))
}

func (c *checker) err() error {
	if len(c.probs) == 0 {
		return nil
	}
	return &ValidationError{Problems: c.probs}
}

// xmlCharProblem describes the first byte sequence of s that cannot be
// written into an XML 1.0 document: invalid UTF-8 or a character outside
// Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
// (XML 1.0 fifth edition §2.2). Such text is rejected, never dropped.
func xmlCharProblem(s string) (string, bool) {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < utf8.RuneSelf {
			i++ // printable ASCII (and DEL): XML characters
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Sprintf("invalid UTF-8 byte 0x%02X at byte %d", s[i], i), true
		}
		if !isXMLChar(r) {
			return fmt.Sprintf("character U+%04X at byte %d", r, i), true
		}
		i += size
	}
	return "", false
}

func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// text checks that a set value is writable and not blank (Peppol R008
// forbids empty elements; a whitespace-only value would be one). It reports
// whether v is usable; an empty v is "not set" and returns false silently.
func (c *checker) text(field, v string) bool {
	if v == "" {
		return false
	}
	if d, bad := xmlCharProblem(v); bad {
		c.add(field, "", ErrXMLChar, d)
		return false
	}
	if strings.TrimSpace(v) == "" {
		c.add(field, "PEPPOL-EN16931-R008", ErrFormat, "blank value (only white space)")
		return false
	}
	return true
}

// required is text for a value that must be present under rule.
func (c *checker) required(field, rule, v string) bool {
	if v == "" {
		c.add(field, rule, ErrRequired, "")
		return false
	}
	return c.text(field, v)
}

// code checks a code value: set, writable, no surrounding white space.
func (c *checker) code(field, rule, v string) bool {
	if !c.required(field, rule, v) {
		return false
	}
	if strings.TrimSpace(v) != v {
		c.addf(field, rule, ErrFormat, "%q has surrounding white space", v)
		return false
	}
	return true
}

// identifier checks an identifier (UBL IdentifierType, an
// xsd:normalizedString): set, writable, one line without surrounding white
// space. A schema-aware reader would turn TAB, CR and LF into spaces, so
// they are rejected rather than silently changed.
func (c *checker) identifier(field, rule, v string) bool {
	if !c.code(field, rule, v) {
		return false
	}
	if strings.ContainsAny(v, "\t\r\n") {
		c.addf(field, rule, ErrFormat, "%q contains a TAB, CR or LF", v)
		return false
	}
	return true
}

// date checks a YYYY-MM-DD calendar date (PEPPOL-EN16931-F001; XML Schema
// xs:date has no year 0000).
func (c *checker) date(field, rule, v string) {
	if !c.code(field, rule, v) {
		return
	}
	year, ok := dateOnly(v)
	if !ok {
		c.addf(field, "PEPPOL-EN16931-F001", ErrFormat, "%q is not a YYYY-MM-DD date", v)
		return
	}
	if year == 0 {
		c.addf(field, "PEPPOL-EN16931-F001", ErrFormat, "%q: year 0000 does not exist in xs:date", v)
	}
}

// dateOnly reads a YYYY-MM-DD date as time.Parse(time.DateOnly, v) reads
// it (four-digit year, two-digit month 01-12, a day that the month has in
// that year), without its generic layout parser: time.Parse was 2 µs of
// every settlement's invoice checks.
func dateOnly(v string) (year int, ok bool) {
	if len(v) != len(time.DateOnly) || v[4] != '-' || v[7] != '-' {
		return 0, false
	}
	n := 0
	for i, c := range []byte(v) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	year, month, day := n/10000, n/100%100, n%100
	// Every month has 28 days; beyond, the month's length by the standard
	// library's calendar (proleptic Gregorian, as time.Parse): day 0 of
	// the next month is its last day.
	return year, month >= 1 && month <= 12 && day >= 1 && (day <= 28 || day <= time.Date(year, time.Month(month+1), 0, 0, 0, 0, 0, time.UTC).Day())
}

// Limits on the representation of a decimal, checked before any arithmetic:
// a decimal parsed from "1e999999999" is a small value in memory, but
// comparing or adding it would build a billion-digit integer. Any value
// within the limits above has a far smaller representation.
const (
	maxExponent        = 40
	maxCoefficientBits = 256
)

// coefficientBounds[e+maxExponent] are ±2^maxCoefficientBits at exponent
// e: a decimal compares with the one of its own exponent word by word,
// without copying or scaling its coefficient, however long it is.
var coefficientBounds = func() (b [2*maxExponent + 1][2]decimal.Decimal) {
	limit := new(big.Int).Lsh(big.NewInt(1), maxCoefficientBits)
	for i := range b {
		e := int32(i - maxExponent)
		b[i] = [2]decimal.Decimal{decimal.NewFromBigInt(new(big.Int).Neg(limit), e), decimal.NewFromBigInt(limit, e)}
	}
	return b
}()

// sane rejects decimals whose representation is too large to compute with:
// an exponent beyond ±maxExponent or a coefficient of more than
// maxCoefficientBits bits (|coefficient| ≥ 2^maxCoefficientBits).
func (c *checker) sane(field string, d decimal.Decimal) bool {
	e := d.Exponent()
	if e < -maxExponent || e > maxExponent || d.Cmp(coefficientBounds[e+maxExponent][0]) <= 0 || d.Cmp(coefficientBounds[e+maxExponent][1]) >= 0 {
		c.add(field, "", ErrRange, "number has too many digits")
		return false
	}
	return true
}

// amount checks a money amount: at most 2 decimals (rule), >= 0, < 10^15.
func (c *checker) amount(field, rule string, d decimal.Decimal) bool {
	if !c.sane(field, d) {
		return false
	}
	ok := c.bounded(field, d, false)
	if !hasPlaces(d, 2) {
		c.addf(field, rule, ErrDecimals, "%s has more than 2 decimal places", d.String())
		ok = false
	}
	return ok
}

// quantity checks a quantity or unit price: at most maxPriceDecimals
// decimals, >= 0 (> 0 when positive is set), < 10^15.
func (c *checker) quantity(field string, d decimal.Decimal, positive bool) bool {
	if !c.sane(field, d) {
		return false
	}
	ok := c.bounded(field, d, positive)
	return c.places(field, d, maxPriceDecimals) && ok
}

// bounded checks 0 <= d < 10^15 (or 0 < d when positive is set).
func (c *checker) bounded(field string, d decimal.Decimal, positive bool) bool {
	switch {
	case d.IsNegative():
		c.addf(field, "", ErrRange, "%s is negative; amounts are positive, the document type gives the sign", d.String())
	case positive && d.IsZero():
		c.add(field, "", ErrRange, "must be greater than zero")
	case cmpDec(d, maxAmount) >= 0: // d ≥ 0 here
		c.addf(field, "", ErrRange, "%s is not below 10^15", d.String())
	default:
		return true
	}
	return false
}

// places checks that d has at most n decimal places.
func (c *checker) places(field string, d decimal.Decimal, n int32) bool {
	if !hasPlaces(d, n) {
		c.addf(field, "", ErrDecimals, "%s has more than %d decimal places", d.String(), n)
		return false
	}
	return true
}

// prepare validates an invoice (cn == nil) or a credit note and derives the
// breakdown, totals and endpoints. Problems are reported in two passes: the
// values one by one, then (only when those are sound) the rules relating
// them, so that arithmetic and cross-field rules never run on malformed input.
func prepare(inv *Invoice, cn *CreditNote) (*prepared, error) {
	return prepareDoc(nil, inv, cn, false)
}

// prepareDoc is prepare; draft leaves the document number to Draft.Finish.
func prepareDoc(r *Renderer, inv *Invoice, cn *CreditNote, draft bool) (*prepared, error) {
	p := &prepared{kind: kindInvoice, inv: inv, cn: cn, draft: draft, renderer: r}
	if cn != nil {
		p.kind = kindCreditNote
	}
	c := &checker{}
	checkFields(c, p)
	if err := c.err(); err != nil {
		return nil, err
	}
	checkTax(c, p)
	p.greekSeller = isGreekSupplier(p)
	checkParties(c, p)
	if p.inv.TaxCountry != "" {
		checkLaw(c, p)
	}
	if p.inv.Profile == ProfilePeppol {
		checkPeppolNational(c, p)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	p.note = noteWithTaxCurrency(p)
	return p, nil
}

// checkFields is the first pass: every value on its own.
func checkFields(c *checker, p *prepared) {
	inv := p.inv
	switch inv.Profile {
	case ProfileEN16931, ProfilePeppol:
	case "":
		c.add("Profile", "BR-01", ErrRequired, "")
	default:
		c.addf("Profile", "BR-01", ErrCode, "%q is neither ProfileEN16931 nor ProfilePeppol", string(inv.Profile))
	}
	if !p.draft {
		c.identifier("ID", "BR-02", inv.ID)
	} else if inv.ID != "" {
		c.add("ID", "", ErrForbidden, "a draft has no number yet; Draft.Finish sets it")
	}
	c.date("IssueDate", "BR-03", inv.IssueDate)
	if c.code("Currency", "BR-05", inv.Currency) && !isFiatCurrency(inv.Currency) {
		c.addf("Currency", "BR-CL-04", ErrCode, "%q is not an ISO 4217 fiat currency; invoice in EUR and state a stablecoin settlement in Note", inv.Currency)
	}
	if inv.TaxCountry != "" && c.code("TaxCountry", "", inv.TaxCountry) {
		if _, ok := NationalCurrency(inv.TaxCountry); !ok {
			c.addf("TaxCountry", "", ErrUnsupported, "%q is not a member state (ISO code, GR for Greece) or GB; no invoicing rules known", inv.TaxCountry)
		}
	}
	if tc := inv.TaxCurrency; tc != nil {
		if c.code("TaxCurrency.Code", "", tc.Code) {
			switch {
			case !isFiatCurrency(tc.Code):
				c.addf("TaxCurrency.Code", "BR-CL-05", ErrCode, "%q is not an ISO 4217 fiat currency", tc.Code)
			case tc.Code == inv.Currency:
				c.addf("TaxCurrency.Code", "PEPPOL-EN16931-R005", ErrForbidden, "the VAT accounting currency must differ from the invoice currency %s", inv.Currency)
			}
		}
		if c.sane("TaxCurrency.Rate", tc.Rate) {
			if !tc.Rate.IsPositive() {
				c.add("TaxCurrency.Rate", "", ErrRange, "must be greater than zero")
			} else if cmpDec(tc.Rate, maxAmount) >= 0 {
				c.addf("TaxCurrency.Rate", "", ErrRange, "%s is not below 10^15", tc.Rate.String())
			} else {
				c.places("TaxCurrency.Rate", tc.Rate, maxFXDecimals)
			}
		}
		c.date("TaxCurrency.RateDate", "", tc.RateDate)
		c.required("TaxCurrency.RateSource", "", tc.RateSource)
	}
	if inv.SupplyDate != "" {
		c.date("SupplyDate", "", inv.SupplyDate)
	}
	if inv.Period != nil {
		checkPeriod(c, "Period", "BR-CO-19", "BR-29", *inv.Period)
	}
	if m := inv.MyDATA; m != nil {
		if c.identifier("MyDATA.MARK", "GR-R-004-1", m.MARK) && !reMARK.MatchString(m.MARK) {
			c.addf("MyDATA.MARK", "GR-R-004-2", ErrFormat, "%q is not a positive integer", m.MARK)
		}
		c.identifier("MyDATA.URL", "GR-R-008-3", m.URL)
	}
	c.text("Note", inv.Note)
	if inv.Profile == ProfilePeppol {
		c.identifier("BuyerReference", "PEPPOL-EN16931-R003", inv.BuyerReference)
	} else if inv.BuyerReference != "" {
		c.identifier("BuyerReference", "", inv.BuyerReference)
	}
	p.renderer.checkSeller(c, inv.Profile, inv.Seller)
	checkParty(c, inv.Profile, "Buyer", inv.Buyer, partyRules{name: "BR-07", country: "BR-11", endpointScheme: "BR-63"})
	checkLines(c, p)
	for i, s := range inv.Subtotals {
		checkSubtotal(c, itemName("Subtotals", i), s)
	}
	if pm := inv.PaymentMeans; pm != nil {
		if c.code("PaymentMeans.Code", "BR-49", pm.Code) && !inList(paymentMeansCodes, pm.Code) {
			c.addf("PaymentMeans.Code", "BR-CL-16", ErrUnsupported,
				"%q: only 1, 68 and ZZZ describe a stablecoin transfer without bank-account data (codes 30/58 need an account, BR-61)", pm.Code)
		}
		c.text("PaymentMeans.Name", pm.Name)
		if pm.PaymentID != "" {
			c.identifier("PaymentMeans.PaymentID", "", pm.PaymentID)
		}
	}
	if p.cn != nil {
		c.identifier("InvoiceRef", "BR-55", p.cn.InvoiceRef)
		if p.cn.InvoiceIssueDate != "" {
			c.date("InvoiceIssueDate", "", p.cn.InvoiceIssueDate)
		}
	}
}

// partyFields are the field names checkParty reports, spelt once per party
// so that checking an invoice does not build them again each time.
var partyFields = func() map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, f := range []string{"Seller", "Buyer"} {
		m[f] = map[string]string{}
		for _, s := range []string{".AdditionalStreet", ".AddressLine3", ".City", ".Contact.Email", ".Contact.Name", ".Contact.Telephone", ".Country", ".EndpointID", ".EndpointScheme", ".LegalID", ".LegalIDScheme", ".Name", ".PostalCode", ".Street", ".Subdivision", ".TaxRegistrationID", ".VATNumber"} {
			m[f][s] = f + s
		}
	}
	return m
}()

// partyFieldName names the fields of party f.
func partyFieldName(f string) func(suffix string) string {
	names := partyFields[f]
	return func(suffix string) string {
		if n, ok := names[suffix]; ok {
			return n
		}
		return f + suffix
	}
}

type partyRules struct{ name, country, endpointScheme string }

// sellerRules are the seller's rules of checkParty.
var sellerRules = partyRules{name: "BR-06", country: "BR-09", endpointScheme: "BR-62"}

func checkParty(c *checker, prof Profile, f string, pt Party, r partyRules) {
	fn := partyFieldName(f)
	c.required(fn(".Name"), r.name, pt.Name)
	if c.code(fn(".Country"), r.country, pt.Country) && !inList(countryCodes, pt.Country) {
		c.addf(fn(".Country"), "BR-CL-14", ErrCode, "%q is not an ISO 3166-1 alpha-2 code", pt.Country)
	}
	for _, t := range []struct{ field, v string }{
		{".Street", pt.Street}, {".AdditionalStreet", pt.AdditionalStreet}, {".AddressLine3", pt.AddressLine3},
		{".City", pt.City}, {".PostalCode", pt.PostalCode}, {".Subdivision", pt.Subdivision},
		{".Contact.Name", pt.Contact.Name},
	} {
		c.text(fn(t.field), t.v)
	}
	if c.text(fn(".Contact.Telephone"), pt.Contact.Telephone) && !isTelephone(pt.Contact.Telephone) {
		c.addf(fn(".Contact.Telephone"), "DE-R-027", ErrFormat, "%q has fewer than 3 digits", pt.Contact.Telephone)
	}
	if c.text(fn(".Contact.Email"), pt.Contact.Email) && !isEmail(pt.Contact.Email) {
		c.addf(fn(".Contact.Email"), "DE-R-028", ErrFormat, "%q is not an e-mail address", pt.Contact.Email)
	}
	if pt.VATNumber != "" && c.code(fn(".VATNumber"), "", pt.VATNumber) {
		switch {
		case !isVATNumberShape(pt.VATNumber):
			c.addf(fn(".VATNumber"), "", ErrFormat, "%q is not a country prefix followed by 2 to 13 letters or digits", pt.VATNumber)
		case !inList(vatPrefixes, pt.VATNumber[:2]):
			c.addf(fn(".VATNumber"), "BR-CO-09", ErrCode, "prefix %q is not an ISO 3166-1 alpha-2 code, EL or XI (a non-Union OSS \"EU\" number cannot be a seller VAT identifier)", pt.VATNumber[:2])
		case strings.HasPrefix(pt.VATNumber, "NL") && !hasShape(pt.VATNumber, shapeNLVAT):
			c.addf(fn(".VATNumber"), "PEPPOL-COMMON-R056-2", ErrFormat, "%q is not NL999999999B99", pt.VATNumber)
		}
	}
	if pt.TaxRegistrationID != "" {
		c.identifier(fn(".TaxRegistrationID"), "", pt.TaxRegistrationID)
	}
	if pt.LegalIDScheme != "" {
		if pt.LegalID == "" {
			c.add(fn(".LegalID"), "", ErrRequired, "LegalIDScheme is set")
		}
		if c.code(fn(".LegalIDScheme"), "", pt.LegalIDScheme) && !inList(icdSchemes, pt.LegalIDScheme) {
			c.addf(fn(".LegalIDScheme"), "BR-CL-11", ErrCode, "%q is not an ISO 6523 ICD", pt.LegalIDScheme)
		}
	}
	if pt.LegalID != "" && c.identifier(fn(".LegalID"), "", pt.LegalID) {
		checkSchemeSyntax(c, fn(".LegalID"), pt.LegalIDScheme, pt.LegalID)
	}
	switch {
	case pt.EndpointID != "" && pt.EndpointScheme == "":
		c.add(fn(".EndpointScheme"), r.endpointScheme, ErrRequired, "EndpointID is set")
	case pt.EndpointID == "" && pt.EndpointScheme != "":
		c.add(fn(".EndpointID"), "", ErrRequired, "EndpointScheme is set")
	}
	if pt.EndpointScheme != "" && c.code(fn(".EndpointScheme"), "", pt.EndpointScheme) && !easAllowed(prof, pt.EndpointScheme) {
		rule := "BR-CL-25"
		if prof == ProfilePeppol && inList(cenEASCodes, pt.EndpointScheme) {
			rule = "PEPPOL-EN16931-CL008"
		}
		c.addf(fn(".EndpointScheme"), rule, ErrCode, "%q is not an electronic address scheme (EAS) of this profile", pt.EndpointScheme)
	}
	if pt.EndpointID != "" && c.identifier(fn(".EndpointID"), "", pt.EndpointID) {
		checkSchemeSyntax(c, fn(".EndpointID"), pt.EndpointScheme, pt.EndpointID)
	}
}

// checkSchemeSyntax applies the Peppol identifier rule of scheme, if any.
func checkSchemeSyntax(c *checker, field, scheme, id string) {
	if r, ok := schemeRuleFor(scheme); ok && !r.ok(id) {
		c.addf(field, r.rule, ErrFormat, "%q is not %s", id, r.want)
	}
}

// checkCategory accepts the UNCL5305 codes this renderer writes (BR-CL-18).
func checkCategory(c *checker, field, cat string) bool {
	if !c.code(field, "BR-CO-04", cat) {
		return false
	}
	switch cat {
	case "S", "Z", "AE", "O":
		return true
	case "E", "K", "G", "L", "M", "B":
		c.addf(field, "", ErrUnsupported, "VAT category %q is valid UNCL5305 but not rendered here (only S, Z, AE, O)", cat)
	default:
		c.addf(field, "BR-CL-18", ErrCode, "%q is not a UNCL5305 VAT category code", cat)
	}
	return false
}

// checkRate applies the rate rules of a category to a line or subtotal.
// The rate of O is ignored, but must still be a number one can compute with.
func checkRate(c *checker, field, cat string, rate decimal.Decimal) {
	if !c.sane(field, rate) {
		return
	}
	switch cat {
	case "S":
		if !rate.IsPositive() {
			c.addf(field, "BR-S-05", ErrRange, "standard-rated VAT rate %s must be greater than zero", rate.String())
		} else if cmpDec(rate, maxRate) >= 0 {
			c.addf(field, "", ErrRange, "VAT rate %s%% is not below 100%%", rate.String())
		}
		c.places(field, rate, maxRateDecimals)
	case "Z", "AE":
		if !rate.IsZero() {
			c.addf(field, "BR-"+cat+"-05", ErrRange, "category %s has rate 0, not %s", cat, rate.String())
		}
	}
}

// checkExemption applies BR-S-10 / BR-Z-10 (no exemption reason on S and Z)
// and the VATEX meaning of AE and O (Peppol P0105, P0107: VATEX-EU-O and
// VATEX-EU-AE belong to exactly those categories).
func checkExemption(c *checker, field, cat, code, reason string) {
	c.text(fieldName(field, ".ExemptionReason"), reason)
	switch cat {
	case "S", "Z":
		if code != "" || reason != "" {
			c.addf(field+".ExemptionCode", "BR-"+cat+"-10", ErrForbidden, "category %s has no exemption code or reason", cat)
		}
	case "AE":
		if code != "" && code != vatexAE && c.code(field+".ExemptionCode", "", code) {
			c.addf(field+".ExemptionCode", "PEPPOL-EN16931-P0107", ErrCode, "category AE takes %s, not %q", vatexAE, code)
		}
	case "O":
		if code != "" && code != vatexO && c.code(field+".ExemptionCode", "", code) {
			c.addf(field+".ExemptionCode", "PEPPOL-EN16931-P0105", ErrCode, "category O takes %s, not %q", vatexO, code)
		}
	}
}

func checkLines(c *checker, p *prepared) {
	lines := p.inv.Lines
	if len(lines) == 0 {
		c.add("Lines", "BR-16", ErrRequired, "at least one line")
		return
	}
	p.lineIDs = make([]string, len(lines))
	seen := make(map[string]int, len(lines))
	for i, l := range lines {
		f := itemName("Lines", i)
		id := l.ID
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		if l.ID == "" || c.identifier(fieldName(f, ".ID"), "BR-21", id) {
			if j, dup := seen[id]; dup {
				c.addf(fieldName(f, ".ID"), "", ErrMismatch, "line id %q is also the id of Lines[%d]", id, j)
			}
			seen[id] = i
			p.lineIDs[i] = id
		}
		c.required(fieldName(f, ".Name"), "BR-25", l.Name)
		if l.Period != nil && checkPeriod(c, fieldName(f, ".Period"), "BR-CO-20", "BR-30", *l.Period) && p.inv.Period != nil {
			checkWithin(c, fieldName(f, ".Period"), *l.Period, *p.inv.Period)
		}
		qtyOK := c.quantity(fieldName(f, ".Quantity"), l.Quantity, true)
		priceOK := c.quantity(fieldName(f, ".PriceAmount"), l.PriceAmount, false)
		netOK := c.amount(fieldName(f, ".NetAmount"), "BR-DEC-23", l.NetAmount)
		if checkCategory(c, fieldName(f, ".Category"), l.Category) {
			checkRate(c, fieldName(f, ".RatePercent"), l.Category, l.RatePercent)
			checkExemption(c, f, l.Category, l.ExemptionCode, l.ExemptionReason)
		}
		// PEPPOL-EN16931-R120: net = quantity × price (no base quantity,
		// allowances or charges here) within 0.02. Checked under both
		// profiles: a line whose net disagrees with its price is wrong anywhere.
		if !qtyOK || !priceOK || !netOK {
			continue
		}
		if !withinR120(l.NetAmount, l.Quantity, l.PriceAmount) {
			c.addf(fieldName(f, ".NetAmount"), "PEPPOL-EN16931-R120", ErrMismatch, "%s differs from quantity × price = %s by more than 0.02",
				l.NetAmount.String(), l.Quantity.Mul(l.PriceAmount).String())
		}
	}
}

func checkSubtotal(c *checker, f string, s TaxSubtotal) {
	if checkCategory(c, fieldName(f, ".Category"), s.Category) {
		checkRate(c, fieldName(f, ".RatePercent"), s.Category, s.RatePercent)
		checkExemption(c, f, s.Category, s.ExemptionCode, s.ExemptionReason)
	}
	c.amount(fieldName(f, ".TaxableAmount"), "BR-DEC-19", s.TaxableAmount)
	c.amount(fieldName(f, ".TaxAmount"), "BR-DEC-20", s.TaxAmount)
}

// group is one (category, rate) of the VAT breakdown while it is built.
type group struct {
	key          string
	cat          string
	rate         decimal.Decimal
	base         decimal.Decimal
	code, reason string
	given        int // index in Invoice.Subtotals, or -1
}

func groupKey(cat string, rate decimal.Decimal) string {
	if cat == "O" {
		return "O" // the rate of O is ignored (BR-O-05 .. BR-O-07)
	}
	var buf [48]byte
	b := append(buf[:0], cat...)
	b = append(b, '|')
	return string(appendString(b, rate)) // cat + "|" + rate.String()
}

// checkTax is the second pass: the VAT breakdown (BG-23), the category rules
// relating lines to each other, and the document totals (BG-22).
func checkTax(c *checker, p *prepared) {
	inv := p.inv
	var groups []*group
	byKey := map[string]*group{}
	for i, l := range inv.Lines {
		k := groupKey(l.Category, l.RatePercent)
		g := byKey[k]
		if g == nil {
			g = &group{key: k, cat: l.Category, rate: l.RatePercent, given: -1}
			if l.Category == "O" {
				g.rate = decimal.Zero
			}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.base = addDec(g.base, l.NetAmount)
		f := itemName("Lines", i)
		mergeExemption(c, f, &g.code, l.ExemptionCode, "ExemptionCode")
		mergeExemption(c, f, &g.reason, l.ExemptionReason, "ExemptionReason")
	}

	// BR-O-11 .. BR-O-14: an invoice with category O has no other category.
	hasO := byKey["O"] != nil
	if hasO && len(groups) > 1 {
		c.add("Lines", "BR-O-11", ErrMismatch, "category O (not subject to VAT) cannot be combined with other VAT categories in one invoice")
	}
	p.writeVAT = !hasO

	if len(inv.Subtotals) > 0 {
		matchSubtotals(c, inv.Subtotals, groups, byKey)
	}

	t := &p.totals
	t.Subtotals = make([]TaxSubtotal, len(groups))
	for i, g := range groups {
		s := TaxSubtotal{Category: g.cat, RatePercent: g.rate, TaxableAmount: g.base, ExemptionCode: g.code, ExemptionReason: g.reason}
		switch {
		case g.given >= 0:
			s.TaxAmount = inv.Subtotals[g.given].TaxAmount
		case g.cat == "S":
			s.TaxAmount = vatOfFast(g.base, g.rate)
		default:
			s.TaxAmount = decimal.Zero // BR-Z-09, BR-AE-09, BR-O-09
		}
		switch {
		case inv.TaxCountry == "GB" && g.cat == "AE":
			// UK law: no EU VATEX code; the text alone meets BR-AE-10.
			s.ExemptionReason = orDefault(s.ExemptionReason, ukReverseChargeReason)
		case inv.TaxCountry == "GB" && g.cat == "O":
			s.ExemptionReason = orDefault(s.ExemptionReason, ukOutsideScopeReason)
		case g.cat == "AE":
			s.ExemptionCode = orDefault(s.ExemptionCode, vatexAE)
			s.ExemptionReason = orDefault(s.ExemptionReason, vatexAEReason)
		case g.cat == "O":
			s.ExemptionCode = orDefault(s.ExemptionCode, vatexO)
			s.ExemptionReason = orDefault(s.ExemptionReason, vatexOReason)
		}
		t.Subtotals[i] = s
		t.Tax = addDec(t.Tax, s.TaxAmount)
		t.LineExtension = addDec(t.LineExtension, s.TaxableAmount)
	}
	t.TaxExclusive = t.LineExtension
	t.TaxInclusive = addDec(t.TaxExclusive, t.Tax)
	if inv.PaidInFull {
		t.Prepaid = t.TaxInclusive
	}
	t.Payable = subDec(t.TaxInclusive, t.Prepaid)
	if cmpDec(t.TaxInclusive, maxAmount) >= 0 {
		c.addf("Lines", "", ErrRange, "invoice total %s is not below 10^15", t.TaxInclusive.StringFixed(2))
		return
	}
	if tc := inv.TaxCurrency; tc != nil {
		convertTaxCurrency(c, t, tc.Rate, tc.Stated, tc.Exact)
	}
}

// checkPeriod checks a period's dates (PEPPOL-EN16931-F001), that one is
// given (oneRule: BR-CO-19 / BR-CO-20) and their order (orderRule: BR-29 /
// BR-30). It reports whether the period is sound.
func checkPeriod(c *checker, f, oneRule, orderRule string, pr Period) bool {
	if pr.Start == "" && pr.End == "" {
		c.add(f, oneRule, ErrRequired, "a period needs a start date, an end date or both")
		return false
	}
	n := len(c.probs)
	if pr.Start != "" {
		c.date(f+".Start", "", pr.Start)
	}
	if pr.End != "" {
		c.date(f+".End", "", pr.End)
	}
	if len(c.probs) > n {
		return false
	}
	// YYYY-MM-DD strings order as the dates do.
	if pr.Start != "" && pr.End != "" && pr.End < pr.Start {
		c.addf(f+".End", orderRule, ErrRange, "%s is before the start %s", pr.End, pr.Start)
		return false
	}
	return true
}

// checkWithin applies PEPPOL-EN16931-R110 and R111: a line period lies
// within the invoicing period. Peppol checks invoices only; the renderer
// holds credit notes to the same rule.
func checkWithin(c *checker, f string, line, doc Period) {
	if line.Start != "" && (doc.Start != "" && line.Start < doc.Start || doc.End != "" && line.Start > doc.End) {
		c.addf(f+".Start", "PEPPOL-EN16931-R110", ErrRange, "%s is outside the invoicing period", line.Start)
	}
	if line.End != "" && (doc.Start != "" && line.End < doc.Start || doc.End != "" && line.End > doc.End) {
		c.addf(f+".End", "PEPPOL-EN16931-R111", ErrRange, "%s is outside the invoicing period", line.End)
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// mergeExemption keeps one exemption code and reason per breakdown group:
// lines of one group may leave them empty but must not disagree.
func mergeExemption(c *checker, f string, have *string, v, name string) {
	switch {
	case v == "":
	case *have == "":
		*have = v
	case *have != v:
		c.addf(f+"."+name, "", ErrMismatch, "%q differs from %q on another line of the same VAT category and rate; the breakdown has one", v, *have)
	}
}

// matchSubtotals checks caller-given subtotals against the lines: exactly
// one per group, the base exact (BR-S-08, BR-Z-08, BR-AE-08, BR-O-08), the
// VAT within 0.01 of base × rate for S (stricter than BR-CO-17's 1.00) and
// zero otherwise (BR-Z-09, BR-AE-09, BR-O-09).
func matchSubtotals(c *checker, subs []TaxSubtotal, groups []*group, byKey map[string]*group) {
	for i, s := range subs {
		f := itemName("Subtotals", i)
		g := byKey[groupKey(s.Category, s.RatePercent)]
		switch {
		case g == nil:
			c.addf(f, "BR-"+s.Category+"-08", ErrMismatch, "no line has VAT category %s at rate %s", s.Category, s.RatePercent.String())
			continue
		case g.given >= 0:
			c.addf(f, "BR-CO-18", ErrMismatch, "second subtotal for VAT category %s at rate %s (first: Subtotals[%d])", g.cat, g.rate.String(), g.given)
			continue
		}
		g.given = i
		if cmpDec(s.TaxableAmount, g.base) != 0 {
			c.addf(f+".TaxableAmount", "BR-"+g.cat+"-08", ErrMismatch, "%s is not the sum of its lines' net amounts, %s",
				s.TaxableAmount.StringFixed(2), g.base.StringFixed(2))
		}
		if g.cat == "S" {
			if !withinCent(s.TaxAmount, g.base, g.rate) {
				want := exactVAT(g.base, g.rate)
				c.addf(f+".TaxAmount", "BR-CO-17", ErrMismatch, "%s is not within 0.01 of base × rate = %s",
					s.TaxAmount.StringFixed(2), want.String())
			}
		} else if !s.TaxAmount.IsZero() {
			c.addf(f+".TaxAmount", "BR-"+g.cat+"-09", ErrMismatch, "category %s has no VAT, not %s", g.cat, s.TaxAmount.StringFixed(2))
		}
		mergeExemption(c, f, &g.code, s.ExemptionCode, "ExemptionCode")
		mergeExemption(c, f, &g.reason, s.ExemptionReason, "ExemptionReason")
	}
	for _, g := range groups {
		if g.given < 0 {
			c.addf("Subtotals", "BR-"+g.cat+"-01", ErrRequired, "no subtotal for VAT category %s at rate %s", g.cat, g.rate.String())
		}
	}
}

// checkParties applies the rules that relate the parties to the VAT
// categories and resolves the electronic addresses.
func checkParties(c *checker, p *prepared) {
	inv := p.inv
	cats := map[string]bool{}
	for _, s := range p.totals.Subtotals {
		cats[s.Category] = true
	}
	if p.writeVAT && inv.Seller.VATNumber == "" && inv.Seller.TaxRegistrationID == "" {
		// BR-S-02, BR-Z-02, BR-AE-02: the seller's VAT identifier (BT-31)
		// or tax registration identifier (BT-32); a tax representative
		// (BT-63) is not rendered here.
		for _, cat := range []string{"S", "Z", "AE"} {
			if cats[cat] {
				c.addf("Seller.VATNumber", "BR-"+cat+"-02", ErrRequired, "category %s needs the seller's VAT identifier or tax registration identifier", cat)
				break
			}
		}
	}
	if inv.MyDATA != nil && !p.greekSeller {
		c.add("MyDATA", "", ErrForbidden, "myDATA references belong to invoices of Greek sellers only")
	}
	if inv.Buyer.TaxRegistrationID != "" {
		c.add("Buyer.TaxRegistrationID", "", ErrForbidden, "EN 16931 has a tax registration identifier (BT-32) for the seller only")
	}
	if cats["AE"] && inv.Buyer.VATNumber == "" && inv.Buyer.LegalID == "" {
		c.add("Buyer.VATNumber", "BR-AE-02", ErrRequired, "reverse charge needs the buyer's VAT identifier (or legal registration identifier)")
	}
	if (!p.writeVAT || inv.Seller.VATNumber == "") && inv.Seller.LegalID == "" {
		detail := "the seller needs a VAT identifier or a legal registration identifier"
		if !p.writeVAT {
			detail = "a category-O invoice carries no VAT identifier (BR-O-02), so the seller needs a legal registration identifier"
		}
		c.add("Seller.LegalID", "BR-CO-26", ErrRequired, detail)
	}
	p.seller = resolveEndpoint(c, p, "Seller", inv.Seller, "PEPPOL-EN16931-R020")
	p.buyer = resolveEndpoint(c, p, "Buyer", inv.Buyer, "PEPPOL-EN16931-R010")
}

// resolveEndpoint returns the electronic address written for a party: the
// given one, or under Peppol the party's VAT number under the EAS of its
// prefix. A category-O invoice never derives one (no VAT ids anywhere).
func resolveEndpoint(c *checker, p *prepared, f string, pt Party, rule string) endpoint {
	if pt.EndpointID != "" {
		return endpoint{pt.EndpointID, pt.EndpointScheme}
	}
	if p.inv.Profile != ProfilePeppol {
		return endpoint{}
	}
	var detail string
	switch {
	case !p.writeVAT:
		detail = "a category-O invoice carries no VAT identifier, so none is derived from the VAT number; give EndpointID and EndpointScheme"
	case pt.VATNumber == "":
		detail = "Peppol needs an electronic address; give EndpointID and EndpointScheme or a VAT number to derive it from"
	default:
		scheme, ok := EASForVATNumber(pt.VATNumber)
		if !ok {
			detail = fmt.Sprintf("Peppol has no address scheme for %s VAT numbers; give EndpointID and EndpointScheme", pt.VATNumber[:2])
			break
		}
		if r, ok := schemeRuleFor(scheme); ok && !r.ok(pt.VATNumber) {
			c.addf(f+".VATNumber", r.rule, ErrFormat, "%q, used as the Peppol address under scheme %s, is not %s", pt.VATNumber, scheme, r.want)
			return endpoint{}
		}
		if scheme == "9933" {
			// Greek participants are registered under their TIN, without
			// the EL prefix (GR-R-009, GR-R-010 check the TIN).
			return endpoint{pt.VATNumber[2:], scheme}
		}
		return endpoint{pt.VATNumber, scheme}
	}
	c.add(f+".EndpointID", rule, ErrRequired, detail)
	return endpoint{}
}

// isVATNumberShape reports whether v is a country prefix followed by 2 to
// 13 letters or digits, ^[A-Z]{2}[0-9A-Z+*]{2,13}$ (a loop: every invoice
// checks its parties' numbers).
func isVATNumberShape(v string) bool {
	if len(v) < 4 || len(v) > 15 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'A' && c <= 'Z':
		case i >= 2 && (c >= '0' && c <= '9' || c == '+' || c == '*'):
		default:
			return false
		}
	}
	return true
}
