package vat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// Manual determinations.
//
// When the rules leave a supply to manual review, a person may decide its
// treatment: the regime, the member state whose VAT is due and the rate.
// DetermineManually checks that decision against the facts of the record
// (Input) and the law the rulesets apply, and writes it as a Determination
// exactly as complete as one Determine produces for that regime: the same
// wording, the day of supply in the taxing territory's zone, the rate's
// kind and source from the embedded table, the Art. 59c section, the
// registration check, the Art. 9a section and the location-evidence
// assessment, plus the note manual_determination quoting the person and
// the reason. A person decides what the facts leave open (which of two
// contradicting items of evidence is right, whether a fixed establishment
// intervenes, whether a rate the table does not vouch for applies); a
// decision the facts or the law contradict is refused with a *ManualError
// naming the field, and nothing is recorded. Facts that are missing or
// wrong (the customer's country, a VAT number, a registry check, the
// seller's profile, the supply date) are corrected in the record, after
// which Determine runs again; a manual determination never stands in for
// them.

// Manual is a person's determination of a supply the rules left to review.
// Its JSON form is the "determination" object of a resolution; the field
// of a *ManualError is a JSON pointer into it ("/determination/ratePercent").
type Manual struct {
	// Regime is one of the Regime constants.
	Regime string `json:"regime"`
	// TaxingCountry is the ISO 3166-1 alpha-2 code of the state whose VAT
	// is due (EL is read as GR, UK as GB): an EU member state for DOMESTIC,
	// OSS_B2C and REVERSE_CHARGE_B2B, GB for the UK regimes, empty for
	// OUTSIDE_SCOPE.
	TaxingCountry string `json:"taxingCountry,omitempty"`
	// RatePercent is the rate as a decimal string ("20", "5.5"), required
	// exactly when VAT is charged (DOMESTIC, OSS_B2C, UK_DOMESTIC,
	// UK_B2C) and empty otherwise.
	RatePercent string `json:"ratePercent,omitempty"`
	// Reason says why, in the person's words (at most
	// MaxManualReasonLength characters).
	Reason string `json:"reason"`
	// DecidedBy identifies the person (at most MaxManualDecidedByLength
	// characters). It is quoted in the record's reasons, never in the
	// invoice or the receipt; an opaque staff identifier is better than an
	// e-mail address.
	DecidedBy string `json:"decidedBy"`
}

// Limits of the texts of a Manual, in Unicode code points after trimming
// surrounding white space. A reason is a few sentences a tax reviewer
// reads on the record; an identifier is short.
const (
	MaxManualReasonLength    = 1000
	MaxManualDecidedByLength = 128
)

// ReasonManualDetermination: note. A person determined the supply; the
// detail quotes the person and the reason.
const ReasonManualDetermination = "manual_determination"

// EvidenceRuleManual: the customer's location was settled by a manual
// determination from the items of the record (EvidenceAssessment.Rule),
// where the items alone did not settle it or settled another place.
const EvidenceRuleManual = "manual_determination"

const basisManualEvidence = "Manual determination (reason manual_determination) from the facts of the record; Art. 24b(d), 24d and 24f Implementing Regulation (EU) 282/2011, which the merchant's records must support (Art. 63c)"

// ErrManualRefused is wrapped by every *ManualError; branch with errors.Is.
var ErrManualRefused = errors.New("vat: manual determination refused")

// ManualError says why a manual determination is refused. Its JSON form may
// be passed to the caller.
type ManualError struct {
	// Code is one of the Manual refusal constants, or, where a check that
	// Determine also makes refuses it, that check's Reason code
	// (seller_not_registered, date_outside_rate_table,
	// vat_number_unverified, reduced_rate_condition_unattested, ...).
	Code string `json:"code"`
	// Field is the JSON pointer of the offending field of the Manual
	// ("/determination/taxingCountry"), or "/determination" when no choice
	// of the person can be recorded until a fact is corrected.
	Field string `json:"field"`
	// Fact names the fact of the record (an Input field, as a dotted
	// lowerCamel path) that contradicts the choice or is missing
	// ("buyer.country", "buyer.evidence[1]", "buyer.vatNumber",
	// "seller.registrations", "supply.date"), when one does.
	Fact string `json:"fact,omitempty"`
	// Detail is one human sentence or two, citing the rule.
	Detail string `json:"detail"`
}

func (e *ManualError) Error() string {
	return "vat: manual determination refused: " + e.Field + ": " + e.Detail
}

// Unwrap returns ErrManualRefused.
func (e *ManualError) Unwrap() error { return ErrManualRefused }

// Refusal codes of manual determinations (ManualError.Code).
const (
	ManualRegimeUnknown    = "regime_unknown"         // Regime is not one of the Regime constants
	ManualTextInvalid      = "text_invalid"           // Reason or DecidedBy empty, too long, not UTF-8, or with control characters
	ManualCountryInvalid   = "taxing_country_invalid" // missing, unknown, not in the regime's area, or given for OUTSIDE_SCOPE
	ManualRateInvalid      = "rate_invalid"           // not a decimal between 0 and 100, given where no VAT is charged, or missing where it is
	ManualRateNotInForce   = "rate_not_in_force"      // not a rate the table has for that place and day
	ManualContradictsFacts = "contradicts_facts"      // the record's facts contradict the choice
	ManualContradictsLaw   = "contradicts_law"        // the law excludes the choice for these facts
	ManualFactMissing      = "fact_missing"           // the record lacks a fact the choice needs
)

// JSON pointers of the Manual fields.
const (
	fieldDetermination = "/determination"
	fieldRegime        = "/determination/regime"
	fieldTaxingCountry = "/determination/taxingCountry"
	fieldRatePercent   = "/determination/ratePercent"
	fieldReason        = "/determination/reason"
	fieldDecidedBy     = "/determination/decidedBy"
)

// manualChoice is a Manual after its own syntax was checked.
type manualChoice struct {
	regime  string
	country string           // normalised; "" for OUTSIDE_SCOPE
	rate    *decimal.Decimal // nil exactly when no VAT is charged
	reason  string           // trimmed
	by      string           // trimmed
}

// DetermineManually records a person's determination m of the supply in,
// or refuses it with a *ManualError (wrapping ErrManualRefused) that names
// the offending field. An accepted determination has Status
// StatusDetermined and the note manual_determination; everything else is
// written as Determine writes it for that regime. It is a pure function of
// its arguments and the embedded rate table and never panics. The package
// documentation lists what is refused.
func DetermineManually(in Input, m Manual) (Determination, error) {
	return rates.DetermineManually(in, m)
}

func (t *RateTable) determineManually(in Input, m Manual) (Determination, *ManualError) {
	mc, e := parseManual(m)
	if e != nil {
		return Determination{}, e
	}
	b := &builder{d: Determination{Ruleset: RulesetEU}}
	r := &rules{t: t, b: b, in: in, manual: &mc}
	r.manualRecord()
	if r.refuseOnReview(); r.refusal != nil {
		return Determination{}, r.refusal
	}
	switch mc.regime {
	case RegimeDomestic:
		r.manualDomestic()
	case RegimeOSSB2C:
		r.manualOSS()
	case RegimeReverseChargeB2B:
		r.manualReverseCharge()
	case RegimeOutsideScope:
		r.manualOutside()
	default:
		r.manualUK()
	}
	if r.refuseOnReview(); r.refusal != nil {
		return Determination{}, r.refusal
	}
	r.finish() // finish.go: day of supply, Art. 59c section, registrations, Art. 9a
	if r.refuseOnReview(); r.refusal != nil {
		return Determination{}, r.refusal
	}
	// Reasons in Determine's order (the evidence note comes first, then
	// those of the rules), after the person's.
	note := Reason{Code: ReasonManualDetermination, Detail: fmt.Sprintf("Determined manually by %q, who gives as the reason: %q.", mc.by, mc.reason)}
	b.notes = append(append([]Reason{note}, r.manualEvidence()...), b.notes...)
	// The person's words stay on the record (the note above); the legal
	// basis, which an invoice or a receipt may carry, only says that a
	// person decided.
	b.d.LegalBasis += "; determined manually (reason " + ReasonManualDetermination + ")"
	return b.result(), nil
}

func refusal(code, field, fact, format string, args ...any) *ManualError {
	return &ManualError{Code: code, Field: field, Fact: fact, Detail: fmt.Sprintf(format, args...)}
}

// refuse records the first refusal; later ones are dropped.
func (r *rules) refuse(code, field, fact, format string, args ...any) {
	if r.refusal == nil {
		r.refusal = refusal(code, field, fact, format, args...)
	}
}

// manualRegimes lists the regimes in the order of the error message.
var manualRegimes = []string{RegimeDomestic, RegimeOSSB2C, RegimeReverseChargeB2B, RegimeOutsideScope, RegimeUKDomestic, RegimeUKB2C, RegimeUKReverseCharge}

// chargesVAT: the regimes under which the seller charges VAT at a rate.
func chargesVAT(regime string) bool {
	switch regime {
	case RegimeDomestic, RegimeOSSB2C, RegimeUKDomestic, RegimeUKB2C:
		return true
	}
	return false
}

// parseManual checks the person's fields on their own: a known regime,
// the texts, a taxing country in the regime's area and a rate exactly
// where VAT is charged.
func parseManual(m Manual) (manualChoice, *ManualError) {
	mc := manualChoice{regime: strings.TrimSpace(m.Regime)}
	if !slices.Contains(manualRegimes, mc.regime) {
		return mc, refusal(ManualRegimeUnknown, fieldRegime, "", "The regime %s is not one of %s.", shown.Quote(m.Regime), strings.Join(manualRegimes, ", "))
	}
	var e *ManualError
	if mc.reason, e = manualText(m.Reason, fieldReason, "reason", MaxManualReasonLength); e != nil {
		return mc, e
	}
	if mc.by, e = manualText(m.DecidedBy, fieldDecidedBy, "identifier of the person who decides", MaxManualDecidedByLength); e != nil {
		return mc, e
	}
	if mc.country, e = manualCountry(mc.regime, m.TaxingCountry); e != nil {
		return mc, e
	}
	rate := strings.TrimSpace(m.RatePercent)
	switch charged := chargesVAT(mc.regime); {
	case charged && rate == "":
		return mc, refusal(ManualRateInvalid, fieldRatePercent, "", "The rate is missing: under %s the seller charges VAT, so the rate must be given.", mc.regime)
	case !charged && rate != "":
		return mc, refusal(ManualRateInvalid, fieldRatePercent, "", "A rate is given, but under %s the seller charges no VAT (%s), so no rate is recorded.", mc.regime, noRateWhy(mc.regime))
	case charged:
		if !PlainDecimal(rate) {
			return mc, refusal(ManualRateInvalid, fieldRatePercent, "", "The rate %s is not a decimal number between 0 and 100 written as a plain decimal string such as \"20\" or \"5.5\" (no sign, exponent or leading zeros).", shown.Quote(m.RatePercent))
		}
		d, err := parsePercentText(rate)
		if err != nil {
			return mc, refusal(ManualRateInvalid, fieldRatePercent, "", "The rate %s is not a decimal number between 0 and 100.", shown.Quote(m.RatePercent))
		}
		mc.rate = &d
	}
	return mc, nil
}

func noRateWhy(regime string) string {
	switch regime {
	case RegimeReverseChargeB2B, RegimeUKReverseCharge:
		return "the customer accounts for the VAT; the invoice shows category AE at 0 %, BR-AE-05"
	}
	return "category O carries no rate, BR-O-05"
}

// manualText trims s and checks it: present, valid UTF-8, at most max code
// points, and free of control and format characters (a line break or a
// bidirectional override would make a record read differently from what it
// holds).
func manualText(s, field, what string, max int) (string, *ManualError) {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return "", refusal(ManualTextInvalid, field, "", "The %s is missing.", what)
	case !utf8.ValidString(t):
		return "", refusal(ManualTextInvalid, field, "", "The %s is not valid UTF-8.", what)
	case utf8.RuneCountInString(t) > max:
		return "", refusal(ManualTextInvalid, field, "", "The %s has %d characters; at most %d are recorded.", what, utf8.RuneCountInString(t), max)
	}
	for i, c := range t {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return "", refusal(ManualTextInvalid, field, "", "The %s contains the control or format character %U at byte %d.", what, c, i)
		}
	}
	return t, nil
}

// manualCountry normalises the taxing country and checks it is in the
// regime's area: an EU member state (Art. 5 Directive 2006/112/EC) for the
// EU regimes, the United Kingdom for the UK regimes, none for a supply
// outside the scope of VAT (category O names no taxing country).
func manualCountry(regime, raw string) (string, *ManualError) {
	cc := normalizeCountry(raw)
	q := shown.Quote(raw)
	switch regime {
	case RegimeOutsideScope:
		if cc != "" {
			return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "A taxing country (%s) is given, but a supply outside the scope of VAT has none.", q)
		}
		return "", nil
	case RegimeUKDomestic, RegimeUKB2C, RegimeUKReverseCharge:
		switch {
		case cc == "":
			return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "The taxing country is missing; under %s it is GB.", regime)
		case cc != "GB":
			return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "The taxing country %s is not GB; UK VAT (%s) is due to the United Kingdom (VATA 1994 s.1).", q, regime)
		}
		return cc, nil
	}
	_, isTerritory := countryTerritories[cc]
	switch {
	case cc == "":
		return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "The taxing country is missing; under %s it is the EU member state whose VAT is due.", regime)
	case isTerritory:
		return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "%s names a territory, not a member state; the taxing country is the member state (the facts of the record place the customer in a territory).", q)
	case !isoCountries[cc]:
		return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "The taxing country %s is not an ISO 3166-1 alpha-2 code.", q)
	case !euMemberStates[cc]:
		return "", refusal(ManualCountryInvalid, fieldTaxingCountry, "", "The taxing country %s is not an EU member state (Art. 5 %s); %s is an EU regime.", cc, directive, regime)
	}
	return cc, nil
}

// manualRecord checks the facts every determination needs: the seller's
// establishment, a covered supply kind, known rate conditions, a supply
// date the table covers, and a supplier acting in its own name (Art. 9a).
func (r *rules) manualRecord() {
	b, in := r.b, r.in
	r.seller = b.resolveSeller(in.Seller)
	if !r.seller.ok {
		return // refuseOnReview names the seller fact
	}
	if !b.checkKind(in.Supply.Kind) {
		rv := b.reviews[0]
		r.refuse(rv.Code, fieldDetermination, "supply.kind", "%s A manual determination records an electronically supplied service in this ruleset's terms (Art. 58, Annex II %s); correct the supply kind first.", rv.Detail, directive)
		return
	}
	if !b.checkConditions(in.Supply.Conditions) || !b.checkDate(r.t, in.Supply.Date) {
		return
	}
	if s := in.Seller; s.ElectronicInterface && s.Art9aRebutted {
		r.refuse(ReasonUnderlyingProviderIsSupplier, fieldDetermination, "seller.art9aRebutted", "The account attests that the Art. 9a(1) presumption is rebutted, so the underlying provider is the supplier and accounts for the VAT (Art. 9a(1) second and third subparagraphs Implementing Regulation (EU) No 282/2011); nothing is determined in the interface's name.")
	}
}

// reviewFacts maps the review reasons the reused checks raise to the field
// and fact of a refusal.
var reviewFacts = map[string][2]string{
	ReasonSellerCountryMissing:            {fieldDetermination, "seller.country"},
	ReasonSellerCountryUnknown:            {fieldDetermination, "seller.country"},
	ReasonSellerSpecialTerritory:          {fieldDetermination, "seller.country"},
	ReasonSellerEstablishment:             {fieldDetermination, "seller.otherEstablishments"},
	ReasonConditionUnknown:                {fieldDetermination, "supply.conditions"},
	ReasonSupplyDateMissing:               {fieldDetermination, "supply.date"},
	ReasonDateOutsideRateTable:            {fieldDetermination, "supply.date"},
	ReasonRateUnverified:                  {fieldRatePercent, "supply.kind"},
	ReasonRateConditionUnattested:         {fieldRatePercent, "supply.conditions"},
	ReasonVATNumberCountryMismatch:        {fieldRegime, "buyer.vatNumber"},
	ReasonThresholdInputInvalid:           {fieldRegime, "seller.crossBorder"},
	ReasonSellerNotRegistered:             {fieldRegime, "seller.registrations"},
	ReasonSellerRegistrationsInconsistent: {fieldDetermination, "seller.registrations"},
	ReasonUnderlyingProviderMissing:       {fieldDetermination, "supply.provider"},
	ReasonUnderlyingProviderIsSupplier:    {fieldDetermination, "seller.art9aRebutted"},
}

// refuseOnReview turns the first review reason a reused check raised into
// the refusal: what would stop Determine stops a manual determination too,
// unless the person's choice is exactly what resolves it (those checks are
// not run here).
func (r *rules) refuseOnReview() {
	if r.refusal != nil || len(r.b.reviews) == 0 {
		return
	}
	rv := r.b.reviews[0]
	at, ok := reviewFacts[rv.Code]
	switch {
	case !ok:
		at = [2]string{fieldDetermination, ""}
	case rv.Code == ReasonThresholdInputInvalid && strings.HasPrefix(rv.Detail, "Supply.GrossEUR"):
		at[1] = "supply.grossEUR"
	}
	r.refusal = &ManualError{Code: rv.Code, Field: at[0], Fact: at[1], Detail: rv.Detail}
}

// customerFact is one fact of the record that places the customer.
type customerFact struct {
	loc  location
	name string // "buyer.country", "buyer.evidence[1]"
	// postal: Buyer.Country with a postal code that placed the customer;
	// within its state it decides the territory, as in locateBuyer.
	postal bool
}

// customerFacts lists where the record places the customer: Buyer.Country
// (refined by a postal code that can be read) and every well-formed item
// of location evidence. A postal code that cannot be read, or that
// belongs to another country, leaves the country alone: whether a special
// territory applies is then what the person decides (Determine reviews it,
// postal_code_unrecognised, buyer_location_conflict). A malformed item
// places the customer nowhere; the assessment lists it as not agreeing.
func customerFacts(in Buyer) []customerFact {
	var out []customerFact
	if cc := normalizeCountry(in.Country); cc != "" {
		if loc, postal, known := resolveLocation(cc, in.PostalCode); known {
			f := customerFact{loc: loc, name: "buyer.country"}
			if postal == postalOK {
				f.postal = strings.TrimSpace(in.PostalCode) != ""
			} else {
				f.loc, _, _ = resolveLocation(cc, "")
			}
			out = append(out, f)
		}
	}
	for i, e := range in.Evidence {
		if _, ok := evidenceArticle[e.Kind]; !ok || !evidenceSources[e.Source] {
			continue
		}
		if loc, _, known := resolveLocation(normalizeCountry(e.Country), ""); known {
			out = append(out, customerFact{loc: loc, name: fmt.Sprintf("buyer.evidence[%d]", i)})
		}
	}
	return out
}

// settle finds the one location the facts that keep selects agree on: the
// most specific one (a territory rather than its state), or, within its
// state, the place a postal code gives. n is how many facts were selected;
// ok is false when they disagree (two territories of a state, two states).
func settle(facts []customerFact, keep func(location) bool) (loc location, n int, ok bool) {
	var sel []customerFact
	for _, f := range facts {
		if keep(f.loc) {
			sel = append(sel, f)
		}
	}
	if len(sel) == 0 {
		return location{}, 0, true
	}
	loc = sel[0].loc
	for _, f := range sel[1:] {
		if loc.territory == nil && f.loc.territory != nil {
			loc = f.loc
		}
	}
	for _, f := range sel {
		if !compatible(loc, f.loc) {
			return location{}, len(sel), false
		}
	}
	for _, f := range sel {
		if f.postal {
			loc = f.loc
		}
	}
	return loc, len(sel), true
}

func inState(cc string) func(location) bool {
	return func(l location) bool { return l.country == cc }
}

// describeFacts lists facts for a refusal: "buyer.country=ES-CN, buyer.evidence[0]=FR".
func describeFacts(facts []customerFact, keep func(location) bool) string {
	var parts []string
	for _, f := range facts {
		if keep == nil || keep(f.loc) {
			parts = append(parts, f.name+"="+f.loc.code())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func firstFact(facts []customerFact, keep func(location) bool) string {
	for _, f := range facts {
		if keep == nil || keep(f.loc) {
			return f.name
		}
	}
	return "buyer.country"
}

// placeCustomer settles where the facts place the customer for a choice
// whose place of supply is that location (keep selects the facts that
// count). It refuses, and reports false, when no fact places the customer
// there or the facts that do disagree.
func (r *rules) placeCustomer(facts []customerFact, keep func(location) bool, where string) (location, bool) {
	loc, n, ok := settle(facts, keep)
	switch {
	case !ok:
		r.refuse(ManualContradictsFacts, fieldTaxingCountry, firstFact(facts, keep), "The facts of the record that place the customer %s disagree with one another (%s); correct them first.", where, describeFacts(facts, keep))
		return location{}, false
	case n == 0 && len(facts) == 0:
		r.refuse(ManualFactMissing, fieldTaxingCountry, "buyer.country", "No fact of the record places the customer (no buyer country, no item of location evidence); the customer's location decides the place of supply (Art. 44 and 58 %s; Art. 24b and 24f Implementing Regulation (EU) 282/2011): supply it first.", directive)
		return location{}, false
	case n == 0:
		r.refuse(ManualContradictsFacts, fieldTaxingCountry, firstFact(facts, nil), "No fact of the record places the customer %s (the facts: %s); the customer's location decides the place of supply (Art. 44 and 58 %s).", where, describeFacts(facts, nil), directive)
		return location{}, false
	}
	return loc, true
}

// insideEU refuses a place of supply in a territory outside the EU VAT
// territory (Art. 6 Directive 2006/112/EC), where no member state's VAT
// under this ruleset applies.
func (r *rules) insideEU(loc location, facts []customerFact) bool {
	if loc.inEU() {
		return true
	}
	r.refuse(ManualContradictsLaw, fieldTaxingCountry, firstFact(facts, inState(loc.country)), "The facts place the customer in %s (%s), outside the EU VAT territory (%s), where %s VAT under %s does not apply to this supply (Art. 44 and 58 %s); record OUTSIDE_SCOPE or correct the facts.",
		loc.territory.name, loc.code(), loc.territory.basis, loc.country, r.manual.regime, directive)
	return false
}

// asConsumer applies a B2C regime's premise: the customer is not a
// taxable person. A VAT number a registry confirmed refutes it (Art. 18(1)
// Implementing Regulation 282/2011); an open claim (a number not checked,
// a registry unavailable) is what the person resolved, and stays on the
// record as notes.
func (r *rules) asConsumer(st buyerStatus, premise string) bool {
	if st.b2b || len(st.hard) > 0 {
		also := ""
		if len(st.hard) > 0 {
			also = " " + st.hard[0].Detail
		}
		law := r.b2bLaw()
		r.refuse(ManualContradictsFacts, fieldRegime, "buyer.registry", "A registry confirmed the customer's VAT number %s, so the customer is a taxable person (%s): %s; a taxable person is taxed where it is established and accounts for the VAT itself when the supplier is not established there (%s).%s",
			strings.TrimSpace(r.in.Buyer.VATNumber), law.proof, premise, law.charge, also)
		return false
	}
	b := r.b
	b.notes = append(b.notes, st.notes...)
	for _, s := range st.soft {
		s.Detail += " The manual determination treats the customer as a non-taxable person."
		b.notes = append(b.notes, s)
	}
	b.d.BuyerTreatment = TreatmentB2C
	return true
}

// asBusiness applies a reverse charge's premise: the customer is a taxable
// person identified by a VAT number of the taxing country that a registry
// confirmed. The customer's number goes on the invoice (Art. 226(4)
// Directive 2006/112/EC: the number under which it received the supply,
// issued under Art. 214(1)(d) by the member state where it is liable);
// without a confirmation the supplier may not regard it as a taxable person
// (Art. 18(1) Implementing Regulation 282/2011). In the UK the customer
// accounts for the VAT only when it receives the service for its business
// (VATA 1994 s.8).
func (r *rules) asBusiness(st buyerStatus, taxing string) bool {
	in := r.in.Buyer
	raw := strings.TrimSpace(in.VATNumber)
	switch {
	case st.b2b:
		return true
	case raw == "" && !in.Business:
		r.refuse(ManualContradictsFacts, fieldRegime, "buyer.business", "The customer is a consumer in the record (no B2B claim, no VAT number); %s applies only to a taxable person (%s).", r.manual.regime, r.b2bLaw().charge)
	case raw == "":
		r.refuse(ManualFactMissing, fieldRegime, "buyer.vatNumber", "The customer claims to be a business but gave no VAT number; %s. Supply the number and its check first.", r.b2bLaw().number)
	default:
		var rv Reason
		switch {
		case len(st.hard) > 0:
			rv = st.hard[0]
		case len(st.soft) > 0:
			rv = st.soft[0]
		case len(st.notes) > 0:
			rv = st.notes[0]
		}
		fact := "buyer.registry"
		if rv.Code == ReasonVATNumberInvalid || rv.Code == ReasonVATNumberCountryMismatch {
			fact = "buyer.vatNumber"
		}
		r.refuse(rv.Code, fieldRegime, fact, "%s %s needs a VAT number issued for %s that a registry confirmed (%s).", rv.Detail, r.manual.regime, taxing, r.b2bLaw().confirmed)
	}
	return false
}

// b2bRules are the rules a refusal about the customer's status cites.
type b2bRules struct {
	proof     string // a confirmed number makes the customer a taxable person
	charge    string // a taxable customer accounts for the VAT
	number    string // the customer's number is needed
	confirmed string // the number must be of the taxing state and confirmed
}

// b2bLaw: the EU rules (Art. 18 Implementing Regulation 282/2011; Art.
// 44, 196, 214(1)(d) and 226(4) Directive 2006/112/EC) or, for the UK
// regimes, VATA 1994 s.8 as the UK ruleset applies it (row U3: a number
// HMRC confirmed).
func (r *rules) b2bLaw() b2bRules {
	switch r.manual.regime {
	case RegimeUKDomestic, RegimeUKB2C, RegimeUKReverseCharge:
		return b2bRules{
			proof:     "the UK ruleset treats a customer with a number HMRC confirmed as in business, VAT Notice 741A",
			charge:    "VATA 1994 s.8",
			number:    "the UK reverse charge (VATA 1994 s.8) is for a customer receiving the service for its business, which the UK ruleset establishes by a UK VAT number HMRC confirmed",
			confirmed: "VATA 1994 s.8; VAT Notice 741A",
		}
	}
	return b2bRules{
		proof:     "Art. 18(1) Implementing Regulation (EU) 282/2011",
		charge:    "Art. 44 and 196 " + directive,
		number:    "a reverse-charge invoice carries the customer's VAT identification number (Art. 226(4) " + directive + "), and only a number a registry confirmed lets the supplier treat the customer as a taxable person (Art. 18(1) Implementing Regulation (EU) 282/2011)",
		confirmed: "Art. 18(1) Implementing Regulation (EU) 282/2011; Art. 214(1)(d) and 226(4) " + directive,
	}
}

// manualDomestic records DOMESTIC in X: the VAT of a member state where
// the seller is established, for a customer there (Art. 44, 58) or, under
// the Art. 59c threshold, for a consumer in another member state; or the
// VAT of the consumer's member state declared in that state's own return
// instead of the OSS, which is an option (Art. 369b "shall permit", Art.
// 359).
func (r *rules) manualDomestic() {
	X, s, b := r.manual.country, r.seller, r.b
	facts := customerFacts(r.in.Buyer)
	established := X == s.country || slices.Contains(s.other, X)
	loc, n, ok := settle(facts, inState(X))
	if !ok {
		r.placeCustomer(facts, inState(X), "in "+X)
		return
	}
	if n == 0 {
		switch {
		case X == s.country:
			r.manualOrigin(facts)
		case established:
			r.refuse(ManualContradictsFacts, fieldTaxingCountry, firstFact(facts, nil), "The seller has a fixed establishment in %s, but no fact places the customer there (the facts: %s); its supplies to customers elsewhere are taxed where the customer is (Art. 44 and 58 %s).", X, describeFacts(facts, nil), directive)
		default:
			r.refuse(ManualContradictsFacts, fieldTaxingCountry, firstFact(facts, nil), "%s is neither the seller's member state of establishment (%s), one of its fixed establishments (%s), nor where the facts place the customer (%s).", X, orNone(s.country), orNone(strings.Join(s.other, ", ")), describeFacts(facts, nil))
		}
		return
	}
	if loc.territory == tAland && s.country == "FI" && X == "FI" {
		// The Finnish VAT Act applies in Åland: domestic, as Determine has it (localtax.go).
		r.buyer = loc
		r.parentStateTerritory()
		return
	}
	if !r.insideEU(loc, facts) {
		return
	}
	r.buyer = loc
	r.euArea()
	st := checkBuyer(r.in.Buyer, loc)
	switch {
	case X == s.country:
		b.applyAlike(st) // row 1
		r.domestic(X, loc.territory, st.b2b)
	case established:
		b.applyAlike(st)
		if st.b2b {
			b.note(ReasonFixedEstablishment, "The seller has a fixed establishment in %s which, by this manual determination, intervenes in the supply, so the seller accounts for the VAT of %s itself (Art. 192a %s; Art. 53 Implementing Regulation (EU) 282/2011).", X, X, directive)
		} else {
			b.note(ReasonFixedEstablishment, "The seller has a fixed establishment in %s, so the supply is declared in %s's domestic return, not through the OSS (Art. 369b %s).", X, X, directive)
		}
		r.domestic(X, loc.territory, st.b2b)
	default:
		// The consumer's member state, the seller not established there:
		// Art. 58 as for OSS_B2C, so only past the Art. 59c threshold.
		if !r.asConsumer(st, "the seller is not established in "+X+", so it charges the VAT of "+X+" only to a non-taxable person there (record REVERSE_CHARGE_B2B "+X+" for a business)") || !r.manualDestination() {
			return
		}
		r.domestic(X, loc.territory, false)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// manualOrigin records DOMESTIC in the seller's member state for a
// consumer in another member state: Art. 59c(1), only for a supplier
// established in one member state only, only for non-taxable customers,
// and only while the threshold is not exceeded (Art. 59c(2), (3)).
func (r *rules) manualOrigin(facts []customerFact) {
	S := r.seller.country
	other := func(l location) bool { return l.inEU() && l.country != S }
	if _, n, ok := settle(facts, other); ok && n == 0 {
		if len(facts) == 0 {
			r.placeCustomer(facts, other, "")
			return
		}
		r.refuse(ManualContradictsFacts, fieldTaxingCountry, firstFact(facts, nil), "The facts place the customer outside %s and outside the EU VAT territory of the other member states (%s); DOMESTIC %s applies to a customer in %s or, under Art. 59c %s, to a consumer in another member state (Art. 44 and 58).",
			S, describeFacts(facts, nil), S, S, directive)
		return
	}
	loc, ok := r.placeCustomer(facts, other, "in another member state")
	if !ok {
		return
	}
	if !r.subjectToThreshold() {
		r.refuse(ManualContradictsLaw, fieldTaxingCountry, "seller.otherEstablishments", "The seller is not established in %s only (further establishments: %s), so Art. 59c(1)(a) %s does not apply: a consumer in %s is taxed there (Art. 58); record OSS_B2C %s or DOMESTIC there.",
			S, orNone(strings.Join(r.seller.other, ", ")), directive, loc.country, loc.country)
		return
	}
	r.buyer = loc
	r.euArea()
	if !r.asConsumer(checkBuyer(r.in.Buyer, loc), "origin taxation under Art. 59c(1)(b) "+directive+" is only for supplies to non-taxable persons") {
		return
	}
	// The value this supply counts with is its value at the rate the
	// person chose, the rate of the seller's state on its day there.
	if !r.fixDay(placeZone(S, nil)) {
		return
	}
	res, ok := r.manualRate(S, nil)
	if !ok {
		return
	}
	gross := r.in.Supply.GrossEUR
	switch place, rule := r.decideThreshold(func() (decimal.Decimal, bool) { return netOf(gross, res.rate), true }); place {
	case thresholdInvalid:
		return // refuseOnReview names the figure
	case thresholdDestination:
		r.refuse(ManualContradictsLaw, fieldTaxingCountry, thresholdFact(rule), "%s, so the consumer's member state %s taxes this supply (%s); record OSS_B2C %s.", thresholdWhy(rule), loc.country, thresholdBasis[rule], loc.country)
		return
	case thresholdEither:
		// The person determines that the year was within when this
		// supply was made: taxed where the seller is, it did not take the
		// year over (Art. 59c(2): Art. 58 applies as of the supply that
		// does), although the sum recorded crosses with it; a supply
		// dated after it did.
		r.threshold.Crossed = false
	}
	r.originBelowThreshold()
}

// thresholdWhy says in words why the Art. 59c threshold led to
// destination taxation, or did not.
func thresholdWhy(rule string) string {
	switch rule {
	case ThresholdOpted:
		return "The seller opted for taxation where its consumers are (Seller.OptedForDestination)"
	case ThresholdStatedOver:
		return "The seller's account states that its cross-border B2C TBE supplies exceed EUR 10,000 (Seller.OverThreshold)"
	case ThresholdPreviousYear:
		return "The seller's cross-border B2C TBE supplies exceeded EUR 10,000 in the preceding year"
	case ThresholdCurrentYear:
		return "The seller's cross-border B2C TBE supplies already exceed EUR 10,000 this year"
	case ThresholdCrossed:
		return "This supply, at the rate given, takes the seller's cross-border B2C TBE supplies of the year over EUR 10,000"
	case ThresholdWithin:
		return "The seller's cross-border B2C TBE supplies, this one included, stay within EUR 10,000 in this and the preceding year"
	}
	return "The seller's account states neither that its cross-border B2C TBE supplies exceed EUR 10,000 (Seller.OverThreshold) nor an option for taxation at destination (Seller.OptedForDestination), and gives no running totals (Seller.CrossBorder)"
}

func thresholdFact(rule string) string {
	switch rule {
	case ThresholdOpted:
		return "seller.optedForDestination"
	case ThresholdStatedOver, "":
		return "seller.overThreshold"
	}
	return "seller.crossBorder"
}

// manualOSS records OSS_B2C in X: destination VAT for a consumer in X,
// declared through the Union or the non-Union scheme. The schemes are for
// supplies in a member state where the supplier has neither its business
// nor a fixed establishment (Art. 369a point 1 and Art. 369b; Art. 358a
// point 1 and Art. 359 Directive 2006/112/EC), to non-taxable persons; a
// seller established in one member state only is taxed there until the
// Art. 59c threshold is exceeded or it opts for destination taxation.
func (r *rules) manualOSS() {
	X, s := r.manual.country, r.seller
	switch {
	case X == s.country:
		r.refuse(ManualContradictsLaw, fieldTaxingCountry, "seller.country", "The seller is established in %s: the OSS covers only supplies in a member state where the supplier has neither its business nor a fixed establishment (Art. 369a point 1 and Art. 369b %s); a supply taxed in %s is declared in its domestic return: record DOMESTIC %s.", X, directive, X, X)
		return
	case slices.Contains(s.other, X):
		r.refuse(ManualContradictsLaw, fieldTaxingCountry, "seller.otherEstablishments", "The seller has a fixed establishment in %s: the OSS covers only supplies in a member state where the supplier has neither its business nor a fixed establishment (Art. 369a point 1 and Art. 369b %s); record DOMESTIC %s.", X, directive, X)
		return
	}
	facts := customerFacts(r.in.Buyer)
	loc, ok := r.placeCustomer(facts, inState(X), "in "+X)
	if !ok || !r.insideEU(loc, facts) {
		return
	}
	r.buyer = loc
	r.euArea()
	if !r.asConsumer(checkBuyer(r.in.Buyer, loc), "the OSS is for supplies to non-taxable persons (Art. 369b and 359 "+directive+")") {
		return
	}
	if !r.manualDestination() {
		return
	}
	r.oss()
}

// manualDestination applies Art. 59c to a person's choice of the
// consumer's member state as the place of supply (OSS_B2C there, or
// DOMESTIC there in that state's own return): for a seller established in
// one member state only, Art. 58 applies only past the EUR 10,000 or with
// the option (Art. 59c(1)-(3) Directive 2006/112/EC); the way the VAT is
// declared does not move the place of supply. It records the threshold
// section (the supply counts toward the totals) or refuses, and reports
// whether the choice stands.
func (r *rules) manualDestination() bool {
	if !r.subjectToThreshold() {
		return true
	}
	S := r.seller.country
	switch place, rule := r.decideThreshold(r.originNet); place {
	case thresholdInvalid:
		return false // refuseOnReview names the figure
	case thresholdOrigin:
		r.refuse(ManualContradictsLaw, fieldRegime, thresholdFact(rule), "%s, so under Art. 59c(1) %s the place of supply is the seller's member state %s; record DOMESTIC %s, or correct the account.", thresholdWhy(rule), directive, S, S)
		return false
	case thresholdOriginRateUnknown:
		r.refuse(ManualContradictsLaw, fieldRegime, "seller.crossBorder", "Whether this supply takes the seller's cross-border B2C TBE supplies over EUR 10,000 (Art. 59c(2) %s) depends on its value at the rate of %s, which the rate table does not establish for the supply kind %q; record DOMESTIC %s at the rate that applies there, or correct the totals.", directive, S, r.in.Supply.Kind, S)
		return false
	}
	return true
}

// manualReverseCharge records REVERSE_CHARGE_B2B in X: a taxable customer
// established in X accounts for the VAT of X (Art. 44 and 196 Directive
// 2006/112/EC). The supplier must not be established in X, except with a
// fixed establishment there that does not intervene in the supply (Art.
// 192a).
func (r *rules) manualReverseCharge() {
	X, s := r.manual.country, r.seller
	if X == s.country {
		r.refuse(ManualContradictsLaw, fieldTaxingCountry, "seller.country", "The seller is established in %s: the customer accounts for the VAT only where the supplier is not established in the member state where it is due (Art. 196 %s); a supply taxed in %s is domestic: record DOMESTIC %s.", X, directive, X, X)
		return
	}
	facts := customerFacts(r.in.Buyer)
	loc, n, ok := settle(facts, inState(X))
	switch {
	case !ok:
		r.placeCustomer(facts, inState(X), "in "+X)
		return
	case n == 0:
		// The VAT number, checked below, is what places the customer.
		loc = location{country: X}
	}
	if !r.insideEU(loc, facts) {
		return
	}
	st := checkBuyer(r.in.Buyer, loc)
	if !r.asBusiness(st, X) {
		return
	}
	r.buyer = loc
	r.euArea()
	r.b.applyStrict(st)
	if slices.Contains(s.other, X) {
		r.b.note(ReasonFixedEstablishment, "The seller has a fixed establishment in %s which, by this manual determination, does not intervene in the supply, so the seller is regarded as not established there and the customer accounts for the VAT (Art. 192a and 196 %s).", X, directive)
	}
	r.reverseCharge()
}

// frenchVATTerritories are the overseas departments where French VAT
// applies to services at the DOM rates (article 296 CGI; BOI-TVA-GEO-20-40):
// for a French seller's supply there, "not subject to VAT" would be wrong.
// French Guiana and Mayotte have no VAT (article 294(1) CGI).
var frenchVATTerritories = []*territory{tGuadeloupe, tMartinique, tReunion}

// manualOutside records OUTSIDE_SCOPE: the customer is outside the EU VAT
// territory and the UK VAT area (Art. 44 and 58 Directive 2006/112/EC;
// VATA 1994 s.7A), and one of the rulesets governs the seller's supply. A
// corridor neither ruleset covers is never recorded as free of VAT.
func (r *rules) manualOutside() {
	s := r.seller
	facts := customerFacts(r.in.Buyer)
	outside := func(l location) bool { return !l.inEU() && !l.inUK() }
	loc, ok := r.placeCustomer(facts, outside, "outside the EU VAT territory and the UK VAT area")
	if !ok {
		return
	}
	if c := coverageOf(s, loc); c.Status == CoverageNotCovered {
		r.refuse(ReasonCorridorNotCovered, fieldRegime, "seller.country", "%s A manual determination does not record such a supply as outside the scope of VAT.", c.Reasons[0].Detail)
		return
	}
	switch t := loc.territory; {
	case t == tAland && s.country == "FI":
		r.refuse(ManualContradictsLaw, fieldRegime, firstFact(facts, outside), "The Finnish VAT Act applies in Åland, and services between mainland Finland and Åland are domestic supplies (%s); record DOMESTIC FI.", srcAland)
		return
	case s.eu && s.country == "FR" && slices.Contains(frenchVATTerritories, t):
		r.refuse(ManualContradictsLaw, fieldRegime, firstFact(facts, outside), "French VAT applies to services in %s at the DOM rates, although it is outside the EU VAT territory (%s); a French seller's supply there is not \"not subject to VAT\", and the DOM rates are not in the rate table.", t.name, srcDOM)
		return
	}
	r.buyer = loc
	r.outside()
}

// manualUK records a UK regime: the customer is in the UK VAT area (Great
// Britain, Northern Ireland for services, the Isle of Man; VATA 1994 s.7A,
// VAT Notice 741A). UK_DOMESTIC is for a seller belonging in the UK
// (VATA 1994 s.9); UK_B2C and UK_REVERSE_CHARGE for one belonging outside
// it (s.8(1)(a); Sch. 1A).
func (r *rules) manualUK() {
	regime, s := r.manual.regime, r.seller
	switch {
	case regime == RegimeUKDomestic && !s.uk:
		r.refuse(ManualContradictsFacts, fieldRegime, "seller.country", "UK_DOMESTIC is for a seller belonging in the UK (VATA 1994 s.9); the seller is established in %s: record UK_B2C or UK_REVERSE_CHARGE.", s.country)
		return
	case regime != RegimeUKDomestic && s.uk:
		r.refuse(ManualContradictsFacts, fieldRegime, "seller.country", "The seller belongs in the UK, so its supply in the UK is UK_DOMESTIC: %s is for a supplier belonging outside the UK (VATA 1994 s.8(1)(a); NETP registration, Sch. 1A).", regime)
		return
	}
	facts := customerFacts(r.in.Buyer)
	inUK := func(l location) bool { return l.inUK() }
	loc, ok := r.placeCustomer(facts, inUK, "in the UK VAT area")
	if !ok {
		return
	}
	r.buyer = loc
	r.ukArea()
	st := checkBuyer(r.in.Buyer, loc)
	switch regime {
	case RegimeUKDomestic:
		r.b.applyAlike(st)
		r.ukDomestic()
	case RegimeUKB2C:
		if !r.asConsumer(st, "UK_B2C is for supplies to consumers (VATA 1994 Sch. 4A; record UK_REVERSE_CHARGE for a business)") {
			return
		}
		r.ukB2C()
	default:
		if !r.asBusiness(st, "GB") {
			return
		}
		r.b.applyStrict(st)
		r.ukReverseCharge()
	}
	r.ukZeroRateBasis()
}

// chargeManualRate is chargeRate for a manual determination: the rate the
// person chose, if the table has it for the place and the day of supply
// (already fixed in its zone by chargeRate).
func (r *rules) chargeManualRate(cc string, t *territory) {
	res, ok := r.manualRate(cc, t)
	if !ok || !r.conditionMet(res, cc) { // conditions.go: a conditional rate needs its condition attested
		return
	}
	r.setRate(res)
}

// manualRate finds the person's rate among the rates the table has for
// country cc (or a territory with its own rates) on the day of supply:
// the standard rate, the reduced rates, and the rates of the supply kind's
// own series (e-books, e-publications, streaming), also where no source
// confirms them or the item decides (that is what a person may settle).
// The source cited is the most specific row holding the rate.
func (r *rules) manualRate(cc string, t *territory) (rateResult, bool) {
	want := *r.manual.rate
	tn, where := "", cc
	if t != nil && t.kind == ownRates {
		tn, where = t.name, t.name+" ("+cc+")"
	}
	on := keyTime(r.day).Format(time.DateOnly)
	std, ok := r.t.lookup(seriesKey{cc, tn, seriesStandard}, r.day)
	if !ok {
		r.refuse(ReasonRateUnverified, fieldRatePercent, "supply.date", "No standard rate is recorded for %s on %s.", where, on)
		return rateResult{}, false
	}
	reduced, hasReduced := r.t.lookup(seriesKey{cc, tn, seriesReduced}, r.day)
	series := kindSeries[r.in.Supply.Kind]
	var kindRow rateRow
	hasKind := false
	if series != seriesStandard {
		kindRow, hasKind = r.t.lookup(seriesKey{cc, tn, series}, r.day)
	}
	var row rateRow
	fromKind := false
	switch {
	case hasKind && kindRow.status == statusSource && containsRate(kindRow.percents, want):
		row, fromKind = kindRow, true
	case std.percents[0].Equal(want):
		row = std
	case hasReduced && containsRate(reduced.percents, want):
		row = reduced
	case hasKind && containsRate(kindRow.percents, want):
		row, fromKind = kindRow, true
	default:
		allowed := []string{std.percents[0].String() + " % (standard)"}
		if hasReduced && len(reduced.percents) > 0 {
			allowed = append(allowed, joinRates(reduced.percents)+" (reduced)")
		}
		if hasKind {
			k := joinRates(kindRow.percents) + " (" + seriesLabel[series] + " rate"
			switch {
			case kindRow.condition != "":
				k += ", only with the condition " + kindRow.condition + " attested"
			case kindRow.status != statusSource:
				k += ", not confirmed by a source"
			}
			allowed = append(allowed, k+")")
		}
		r.refuse(ManualRateNotInForce, fieldRatePercent, "", "%s %% is not a rate in force in %s on %s (%s, the day of supply in %s): rate table %s has %s.",
			want.String(), where, on, r.b.d.TimeZone, where, r.t.version, strings.Join(allowed, "; "))
		return rateResult{}, false
	}
	res := rateResult{source: r.t.source(row)}
	for _, p := range row.percents {
		if p.Equal(want) {
			res.rate = p // the table's own form: "20", not "20.00"
			break
		}
	}
	if fromKind {
		res.condition = row.condition
	}
	switch {
	case res.rate.IsZero():
		res.kind = RateKindZero
	case res.rate.Equal(std.percents[0]):
		res.kind = RateKindStandard
	default:
		res.kind = RateKindReduced
	}
	return res, true
}

func containsRate(ps []decimal.Decimal, want decimal.Decimal) bool {
	return slices.ContainsFunc(ps, want.Equal)
}

func joinRates(ps []decimal.Decimal) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String() + " %"
	}
	return strings.Join(s, ", ")
}

// manualEvidence records the location-evidence assessment. Where the items
// settle the same place as the determination, it is Determine's own
// assessment; otherwise the person settled it (rule manual_determination)
// and each item says whether it agrees. It returns the notes of the
// assessment.
func (r *rules) manualEvidence() []Reason {
	in := r.in.Buyer
	sb := &builder{}
	loc, ok, st := sb.locateBuyer(in, r.in.Seller, r.seller)
	if ok && len(sb.reviews) == 0 && loc.code() == r.buyer.code() && (insufficiencyAfter(st, r.in, &r.b.d) == "" || r.b.d.BuyerTreatment == TreatmentB2B) { // evidence.go
		r.b.d.LocationEvidence = sb.d.LocationEvidence
		return sb.notes
	}
	a := &EvidenceAssessment{Rule: EvidenceRuleManual, Country: r.buyer.code(), Basis: basisManualEvidence, Items: []EvidenceItem{}}
	agrees := func(cc string) bool {
		l, _, known := resolveLocation(cc, "")
		return known && compatible(l, r.buyer)
	}
	if cc := normalizeCountry(in.Country); cc != "" && len(in.Evidence) == 0 {
		a.Items = append(a.Items, EvidenceItem{Index: -1, Kind: EvidenceMerchantAttested, Country: cc, Source: EvidenceSourceMerchant, Agrees: agrees(cc)})
	}
	for i, e := range in.Evidence {
		cc := normalizeCountry(e.Country)
		a.Items = append(a.Items, EvidenceItem{Index: i, Kind: e.Kind, Country: cc, Source: e.Source, Provider: e.Provider,
			Article: evidenceArticle[e.Kind], Personal: e.Value != "", Agrees: agrees(cc)})
	}
	r.b.d.LocationEvidence = a
	return nil
}
