package vat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Registrations (Seller.Registrations) say where the seller is identified
// for VAT. A determination that needs a registration the seller does not
// list is a manual review (seller_not_registered): the seller cannot
// lawfully charge, or declare, that VAT, and a silently charged rate would
// be wrong. nil means "not stated" and skips the check; an empty, non-nil
// list states that the seller has none.
//
// What each outcome needs (after the place of supply and the regime are
// decided):
//
//   - DOMESTIC in X (same state, Art. 59c origin taxation, a fixed
//     establishment in the customer's state): a national registration in X
//     (Art. 213 and 214(1)(a) Directive 2006/112/EC).
//   - OSS_B2C, Union scheme: the Union OSS with the member state of
//     identification of Art. 369a(2) (the state of establishment; for a
//     seller established outside the EU, a state where it has a fixed
//     establishment), or a national registration in the state of
//     consumption: the special scheme is an option (Art. 369b: member
//     states "shall permit" its use), and a seller that does not use it is
//     identified where the supply is taxed (Art. 214(1)(a)).
//   - OSS_B2C, non-Union scheme: the non-Union OSS (Art. 359, 358a(2)), or
//     a national registration in the state of consumption (Art. 214(1)(a)).
//   - REVERSE_CHARGE_B2B by an EU-established seller: a national
//     registration in its own member state (Art. 214(1)(e): a taxable
//     person established there supplying services for which the recipient
//     is liable under Art. 196 in another member state; its number goes on
//     the invoice, Art. 226(3), and on the recapitulative statement, Art.
//     262). A seller established outside the EU needs none.
//   - UK_DOMESTIC and UK_B2C: a UK VAT registration number. Only a taxable
//     person, one registered or required to be, charges VAT (VATA 1994 s.3
//     and s.4, https://www.legislation.gov.uk/ukpga/1994/23/section/3); a
//     non-established taxable person registers from its first UK supply
//     (Sch. 1A; HMRC VATREG37150).
//   - UK_REVERSE_CHARGE (the customer accounts, VATA 1994 s.8) and
//     OUTSIDE_SCOPE: none.
//
// The import scheme (IOSS, Art. 369l–369x) covers distance sales of
// imported goods, never services: it is accepted in the list but satisfies
// no requirement here.
//
// A list that contradicts the seller's profile is a manual review
// (seller_registrations_inconsistent): an unknown scheme, a country that is
// not an EU member state for an EU scheme (or not GB for a UK VRN), a Union
// OSS whose member state of identification is not the one Art. 369a(2)
// prescribes, more than one member state of identification for one scheme,
// or a non-Union OSS for a seller established or with a fixed establishment
// in the EU (Art. 358a(1)).

// Registration is one VAT identification of the seller.
type Registration struct {
	// Scheme is one of the Registration constants.
	Scheme string `json:"scheme"`
	// Country is the member state of identification (OSS, IOSS), the
	// member state of a national registration, or GB for a UK VRN (may be
	// empty; XI and IM read as GB). EL is read as GR, MC (Monaco, Art.
	// 7(1)) as FR. An empty Union OSS state is, for a seller established
	// in the EU, its state of establishment (Art. 369a(2)).
	Country string `json:"country,omitempty"`
	// Number is the identification number, informational.
	Number string `json:"number,omitempty"`
	// ValidFrom is the first day (YYYY-MM-DD) the registration applies
	// to; empty: it applies to every supply before ValidTo. A special
	// scheme applies from the first day of the calendar quarter after the
	// seller's notice, or from its first supply when notified by the 10th
	// of the next month (Art. 57d Implementing Regulation (EU) No
	// 282/2011, https://www.legislation.gov.uk/eur/2011/282/article/57d);
	// a new member state of identification from the day the old one
	// ceased to qualify (Art. 57f(2)).
	ValidFrom string `json:"validFrom,omitempty"`
	// ValidTo is the last day (YYYY-MM-DD, inclusive) the registration
	// applies to; empty: still in force. A seller leaving a special scheme
	// leaves it at the end of a calendar quarter (Art. 57g), an excluded
	// one as Art. 58 says.
	ValidTo string `json:"validTo,omitempty"`
}

// A supply is dated, for its registrations, by its day of supply in the
// taxing territory's time zone (Determination.SupplyDate, localday.go): the
// day its rate and its OSS return period are decided by.

// window is the registration's days as yyyymmdd keys (0: open) and
// whether both bounds are dates in their one spelling, from ≤ to.
func (g Registration) window() (from, to int, ok bool) {
	from, okFrom := registrationDay(g.ValidFrom)
	to, okTo := registrationDay(g.ValidTo)
	return from, to, okFrom && okTo && (from == 0 || to == 0 || from <= to)
}

// registrationDay reads a ValidFrom or ValidTo: 0 for "", false for
// anything but a calendar date YYYY-MM-DD.
func registrationDay(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	if len(s) != len("2006-01-02") || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, okY := digits(s[0:4])
	m, okM := digits(s[5:7])
	d, okD := digits(s[8:10])
	// time.Date normalises 30 February to 2 March: a day it moves is none.
	if !okY || !okM || !okD || m < 1 || m > 12 || d < 1 || time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
		return 0, false
	}
	return y*10000 + m*100 + d, true
}

// digits reads s, ASCII digits only (no sign, no space), as a number.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// AppliesOn reports whether the registration applies to a supply of day
// (YYYY-MM-DD, the supply's Determination.SupplyDate). A registration
// whose window is not valid (CheckWindow) applies to no day; a day that is
// not a date is within every valid window.
func (g Registration) AppliesOn(day string) bool {
	if g.ValidFrom == "" && g.ValidTo == "" {
		return true // the common case, read without the day
	}
	k, ok := registrationDay(day)
	if !ok {
		k = 0
	}
	return g.appliesOn(k)
}

// appliesOn is AppliesOn for a day key (0: undated, within every valid
// window).
func (g Registration) appliesOn(day int) bool {
	from, to, ok := g.window()
	return ok && (day == 0 || (from == 0 || day >= from) && (to == 0 || day <= to))
}

// RegistrationsOn is the registrations of regs that apply on day
// (AppliesOn): regs itself when all do, else a new, non-nil list (a stated
// list stays stated on a day none of it applies).
func RegistrationsOn(regs []Registration, day string) []Registration {
	for i, g := range regs {
		if g.AppliesOn(day) {
			continue
		}
		out := append(make([]Registration, 0, len(regs)-1), regs[:i]...)
		for _, h := range regs[i+1:] {
			if h.AppliesOn(day) {
				out = append(out, h)
			}
		}
		return out
	}
	return regs
}

// AppliesWithin reports whether the registration applies on some day from
// first to last (YYYY-MM-DD, inclusive): a return period it covers at
// least in part.
func (g Registration) AppliesWithin(first, last string) bool {
	from, to, ok := g.window()
	f, okF := registrationDay(first)
	l, okL := registrationDay(last)
	return ok && okF && okL && (to == 0 || f <= to) && (from == 0 || from <= l)
}

// Check reports a registration a seller profile cannot state: a scheme
// that is not one of the Registration constants (exactly so spelled), or
// a window that is not one (CheckWindow). The country is the caller's to
// check.
func (g Registration) Check() error {
	if _, ok := registrationSchemes[g.Scheme]; !ok {
		return fmt.Errorf("scheme %q: want oss_union, oss_non_union, ioss, national or uk_vrn", g.Scheme)
	}
	return g.CheckWindow()
}

// CheckWindow reports, as an error naming the member (validFrom or
// validTo), a bound that is not a calendar date YYYY-MM-DD or a ValidTo
// before ValidFrom.
func (g Registration) CheckWindow() error {
	if _, ok := registrationDay(g.ValidFrom); !ok {
		return fmt.Errorf("validFrom %q: want a calendar date YYYY-MM-DD", g.ValidFrom)
	}
	if _, ok := registrationDay(g.ValidTo); !ok {
		return fmt.Errorf("validTo %q: want a calendar date YYYY-MM-DD", g.ValidTo)
	}
	if _, _, ok := g.window(); !ok {
		return fmt.Errorf("validTo %s is before validFrom %s", g.ValidTo, g.ValidFrom)
	}
	return nil
}

// overlaps reports whether two registrations with valid windows share a
// day.
func (g Registration) overlaps(h Registration) bool {
	gf, gt, _ := g.window()
	hf, ht, _ := h.window()
	return (gt == 0 || hf == 0 || hf <= gt) && (ht == 0 || gf == 0 || gf <= ht)
}

// Registration schemes (Registration.Scheme).
const (
	RegistrationOSSUnion    = "oss_union"     // Union scheme, Art. 369a–369k
	RegistrationOSSNonUnion = "oss_non_union" // non-Union scheme, Art. 358a–369
	RegistrationIOSS        = "ioss"          // import scheme, Art. 369l–369x (goods only)
	RegistrationNational    = "national"      // VAT identification in one member state, Art. 214
	RegistrationUKVRN       = "uk_vrn"        // UK VAT registration number (VATA 1994)
)

// Reason codes of the registration check.
const (
	ReasonSellerNotRegistered             = "seller_not_registered"             // review: the outcome needs a registration the seller does not list
	ReasonSellerRegistrationsInconsistent = "seller_registrations_inconsistent" // review: the list contradicts the profile or the law
)

var registrationSchemes = map[string]string{
	RegistrationOSSUnion:    "the Union OSS",
	RegistrationOSSNonUnion: "the non-Union OSS",
	RegistrationIOSS:        "the import OSS (IOSS)",
	RegistrationNational:    "a national VAT registration",
	RegistrationUKVRN:       "a UK VAT registration (VRN)",
}

// registrationNeed is one registration that satisfies a requirement: in
// country, or in one of countries, or (both empty) in any country.
type registrationNeed struct {
	scheme    string
	country   string
	countries []string
}

func (n registrationNeed) accepts(g Registration) bool {
	switch {
	case g.Scheme != n.scheme:
		return false
	case n.country != "":
		return g.Country == n.country
	case n.countries != nil:
		return slices.Contains(n.countries, g.Country)
	}
	return true
}

func (n registrationNeed) String() string {
	s := registrationSchemes[n.scheme]
	where := n.countries
	if n.country != "" {
		where = []string{n.country}
	}
	switch {
	case n.scheme == RegistrationUKVRN:
	case len(where) == 0 && n.countries != nil:
		s += " (the seller has no EU establishment to be identified in)"
	case len(where) == 0:
		s += " (any member state of identification)"
	case n.scheme == RegistrationNational:
		s += " in " + strings.Join(where, " or ")
	default:
		s += " with " + strings.Join(where, " or ") + " as member state of identification"
	}
	return s
}

func normalizeRegistration(g Registration) Registration {
	g.Scheme = strings.TrimSpace(g.Scheme)
	g.Country = normalizeCountry(g.Country)
	if g.Scheme == RegistrationUKVRN && (g.Country == "" || g.Country != "GB" && InUKVATArea(g.Country)) {
		// Northern Ireland and the Isle of Man (Art. 7(1); VAT Notice
		// 741A) are in the UK VAT area, whose numbers are GB ones.
		g.Country = "GB"
	}
	if g.Scheme != RegistrationUKVRN && g.Country != "" && !isEUMember(g.Country) {
		// Monaco is France for VAT (Art. 7(1)), as a seller or customer
		// there is: its registrations are French ones. A special
		// territory outside the EU VAT territory stays what it is.
		if c, ok := MemberStateOf(g.Country); ok {
			g.Country = c
		}
	}
	return g
}

// checkRegistrations applies the rules above once the regime is decided.
func (r *rules) checkRegistrations() {
	regs := r.in.Seller.Registrations
	if regs == nil {
		return
	}
	// Normalised once; a list of a few entries stays on the stack.
	var buf [4]Registration
	norm := buf[:0]
	for _, g := range regs {
		g = normalizeRegistration(g)
		if g.Scheme == RegistrationOSSUnion && g.Country == "" && r.seller.eu {
			// Art. 369a(2): a seller established in the EU is identified
			// where it is established; the invoicing law and the OSS
			// return read an unnamed state so.
			g.Country = r.seller.country
		}
		norm = append(norm, g)
	}
	r.checkRegistrationList(norm)
	needs, n, basis := r.requiredRegistrations()
	if n == 0 {
		return
	}
	var outside []string // registrations that would do, on other days
	var laws []string    // the law of their start and end, per kind
	for _, need := range needs[:n] {
		for _, g := range norm {
			switch {
			case !need.accepts(g):
			case g.appliesOn(r.registrationDay()):
				return
			default:
				outside = append(outside, describeRegistration(g))
				if l := windowLaw[g.Scheme]; !slices.Contains(laws, l) {
					laws = append(laws, l)
				}
			}
		}
	}
	alts := make([]string, n)
	for i, need := range needs[:n] {
		alts[i] = need.String()
	}
	when := ""
	if len(outside) > 0 {
		when = fmt.Sprintf(" on the day of supply %s (%s): %s does not apply that day (%s)",
			r.b.d.SupplyDate, r.b.d.TimeZone, strings.Join(outside, " and "), strings.Join(laws, "; "))
	}
	r.b.review(ReasonSellerNotRegistered, "The seller is not registered where this supply is taxed%s: %s %s needs %s (%s); the seller's registrations are %s.",
		when, r.b.d.Regime, r.b.d.TaxingCountry, strings.Join(alts, ", or "), basis, listRegistrations(regs))
}

// windowLaw is the law of when a registration of each scheme starts and
// ends: the special schemes' rules for the OSS schemes only.
var windowLaw = map[string]string{
	RegistrationOSSUnion:    "Art. 57d, 57f and 57g Implementing Regulation (EU) No 282/2011",
	RegistrationOSSNonUnion: "Art. 57d, 57f and 57g Implementing Regulation (EU) No 282/2011",
	RegistrationNational:    "a national identification takes effect from the date the member state identifies the seller from, Art. 214 " + directive,
	RegistrationUKVRN:       "a UK registration takes effect from the date HMRC registers the seller from, VATA 1994 Sch. 1 and 1A",
}

// registrationDay is the day registrations are judged on: the day of
// supply once fixed, else 0 (undated: the missing date is its own review).
func (r *rules) registrationDay() int {
	if !r.dayFixed {
		return 0
	}
	return r.day
}

// Legal bases of the requirements.
const (
	basisDomestic      = "Art. 213 and 214(1)(a) " + directive
	basisUnion         = "Union scheme Art. 369b and 369a(2), or identification in the member state of consumption Art. 214(1)(a) " + directive
	basisNonUnion      = "non-Union scheme Art. 359 and 358a(2), or identification in the member state of consumption Art. 214(1)(a) " + directive
	basisReverseCharge = "Art. 214(1)(e) " + directive + "; the supplier's number on the invoice, Art. 226(3), and the recapitulative statement, Art. 262"
	basisUK            = "VATA 1994 s.3 and s.4; non-established taxable persons from the first supply, Sch. 1A (HMRC VATREG37150)"
)

// requiredRegistrations: the n alternatives the decided outcome needs, and
// their legal basis; n is 0 when the outcome needs no registration.
func (r *rules) requiredRegistrations() (needs [2]registrationNeed, n int, basis string) {
	d, s := &r.b.d, &r.seller
	switch d.Regime {
	case RegimeDomestic:
		needs[0] = registrationNeed{scheme: RegistrationNational, country: d.TaxingCountry}
		return needs, 1, basisDomestic
	case RegimeOSSB2C:
		needs[1] = registrationNeed{scheme: RegistrationNational, country: d.TaxingCountry}
		if d.Scheme != SchemeUnion {
			needs[0] = registrationNeed{scheme: RegistrationOSSNonUnion}
			return needs, 2, basisNonUnion
		}
		needs[0] = registrationNeed{scheme: RegistrationOSSUnion, countries: s.other}
		if s.eu {
			needs[0] = registrationNeed{scheme: RegistrationOSSUnion, country: s.country}
		}
		return needs, 2, basisUnion
	case RegimeReverseChargeB2B:
		if s.eu {
			needs[0] = registrationNeed{scheme: RegistrationNational, country: s.country}
			return needs, 1, basisReverseCharge
		}
	case RegimeUKDomestic, RegimeUKB2C:
		needs[0] = registrationNeed{scheme: RegistrationUKVRN, country: "GB"}
		return needs, 1, basisUK
	}
	return needs, 0, ""
}

// checkRegistrationList records contradictions in the stated list
// (normalised).
func (r *rules) checkRegistrationList(regs []Registration) {
	s := r.seller
	for i, g := range regs {
		field := registrationField(i)
		if _, ok := registrationSchemes[g.Scheme]; !ok {
			r.b.review(ReasonSellerRegistrationsInconsistent, "%s.Scheme %q is not one of oss_union, oss_non_union, ioss, national, uk_vrn.", field, g.Scheme)
			continue
		}
		if err := g.CheckWindow(); err != nil {
			r.b.review(ReasonSellerRegistrationsInconsistent, "%s.%s.", field, err)
			continue
		}
		if g.Scheme == RegistrationUKVRN {
			if g.Country != "GB" {
				r.b.review(ReasonSellerRegistrationsInconsistent, "%s is a UK VRN but names %q as its country.", field, g.Country)
			}
			continue
		}
		if !isEUMember(g.Country) {
			r.b.review(ReasonSellerRegistrationsInconsistent, "%s (%s) names %q, which is not an EU member state.", field, registrationSchemes[g.Scheme], g.Country)
			continue
		}
		switch active := g.appliesOn(r.registrationDay()); {
		case !active:
			// Another period's registration: the seller's establishment
			// of today need not fit it (Art. 57f).
		case g.Scheme == RegistrationOSSUnion:
			switch {
			case s.eu && g.Country != s.country:
				r.b.review(ReasonSellerRegistrationsInconsistent, "%s names %s as the Union OSS member state of identification, but the seller is established in %s, which must be its member state of identification (Art. 369a(2) %s).", field, g.Country, s.country, directive)
			case !s.eu && !slices.Contains(s.other, g.Country):
				r.b.review(ReasonSellerRegistrationsInconsistent, "%s names %s as the Union OSS member state of identification, but the seller, established outside the EU, has no fixed establishment there (Art. 369a(2) %s).", field, g.Country, directive)
			}
		case g.Scheme == RegistrationOSSNonUnion:
			if s.eu || len(s.other) > 0 {
				r.b.review(ReasonSellerRegistrationsInconsistent, "%s is a non-Union OSS registration, which is only for a seller with neither its business nor a fixed establishment in the EU (Art. 358a(1) %s).", field, directive)
			}
		}
		if g.Scheme == RegistrationNational {
			continue
		}
		for _, e := range regs[:i] {
			if e.Scheme == g.Scheme && e.Country != g.Country && e.CheckWindow() == nil && e.overlaps(g) {
				r.b.review(ReasonSellerRegistrationsInconsistent, "%s names %s as the member state of identification for %s, which an earlier entry names as %s for days it shares; a scheme has one member state of identification at a time (a change applies from a date, Art. 57f(2) Implementing Regulation (EU) No 282/2011).", field, g.Country, registrationSchemes[g.Scheme], e.Country)
				break
			}
		}
	}
}

// registrationField names entry i for a reason detail.
type registrationField int

func (i registrationField) String() string {
	return "Seller.Registrations[" + strconv.Itoa(int(i)) + "]"
}

func listRegistrations(regs []Registration) string {
	if len(regs) == 0 {
		return "none"
	}
	parts := make([]string, len(regs))
	for i, g := range regs {
		parts[i] = describeRegistration(normalizeRegistration(g))
	}
	return strings.Join(parts, ", ")
}

// describeRegistration is "scheme:country", with its window when it has
// one ("oss_union:IE from 2026-07-01 to 2026-12-31").
func describeRegistration(g Registration) string {
	s := g.Scheme
	if g.Country != "" {
		s += ":" + g.Country
	}
	if g.ValidFrom != "" {
		s += " from " + g.ValidFrom
	}
	if g.ValidTo != "" {
		s += " to " + g.ValidTo
	}
	return s
}
