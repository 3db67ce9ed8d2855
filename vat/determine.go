package vat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// Determine classifies one supply under the EU ruleset (RulesetEU) or, for
// customers in the UK VAT area and for UK sellers with customers outside
// the EU, the experimental UK ruleset (RulesetUK). It is a pure function of
// its input and the embedded rate table: no clock, no network, no global
// state; it never panics. The package documentation lists the rules.
func Determine(in Input) Determination { return rates.determine(in) }

// builder collects a determination and its reasons.
type builder struct {
	d       Determination
	reviews []Reason
	notes   []Reason
	noteBuf [4]Reason // the first backing array of notes (Determine); a determination has at most a few

	// The sections d points to, held here so that a determination takes
	// one allocation for them all (the builder is on the heap anyway).
	rate      chargedRate      // setRate
	threshold thresholdFigures // threshold.go
	// evidence is where locateBuyer records an asserted location:
	// evidenceBuf for Determine's builder, a new one when nil (so that a
	// scratch builder that does not point to itself can stay on the stack).
	evidence    *assertedEvidence
	evidenceBuf assertedEvidence
	// confirmedB2B: a registry confirmed the customer's VAT number
	// (checkBuyer), so its establishment, not the Art. 24b presumptions,
	// locates it (finishEvidence). BuyerTreatment B2B alone does not say
	// so: outside the EU it labels a claim nobody checked.
	confirmedB2B bool
}

// chargedRate is the rate charged and its source (Determination.RatePercent
// and RateSource point here).
type chargedRate struct {
	percent Percent
	source  RateSource
}

// review records a reason for manual review; a nil builder discards it
// (a look-up whose failure is recorded later, threshold.go).
func (b *builder) review(code, format string, args ...any) {
	if b == nil {
		return
	}
	b.reviews = append(b.reviews, Reason{Code: code, Detail: fmt.Sprintf(format, args...)})
}

func (b *builder) note(code, format string, args ...any) {
	b.notes = append(b.notes, Reason{Code: code, Detail: fmt.Sprintf(format, args...)})
}

// result finalises the status. A manual review keeps the facts found so far
// (jurisdiction, regime, countries) as hints for the reviewer but drops
// everything an invoice would be built from.
func (b *builder) result() Determination {
	d := b.d
	if len(b.reviews) > 0 {
		d.Status = StatusManualReview
		d.Category, d.RatePercent, d.VATEX, d.ExemptionReason, d.InvoiceNote = "", nil, "", "", ""
		d.RateKind, d.RateSource, d.RateCondition = "", nil, nil
		d.Reasons = append(slices.Clip(b.reviews), b.notes...)
		return d
	}
	d.Status = StatusDetermined
	if len(b.notes) > 0 {
		d.Reasons = b.notes // nil when there is none, as before notes had a buffer
	}
	return d
}

func (t *RateTable) determine(in Input) Determination {
	b := &builder{d: Determination{Ruleset: RulesetEU}}
	b.notes, b.evidence = b.noteBuf[:0], &b.evidenceBuf
	seller := b.resolveSeller(in.Seller)
	buyer, buyerOK, evidence := b.locateBuyer(in.Buyer, in.Seller, seller) // evidence.go
	kindOK := b.checkKind(in.Supply.Kind)
	condOK := b.checkConditions(in.Supply.Conditions) // conditions.go
	dayOK := b.checkDate(t, in.Supply.Date)
	if !seller.ok || !buyerOK || !kindOK || !condOK || !dayOK {
		return b.result()
	}
	r := rules{t: t, b: b, in: in, seller: seller, buyer: buyer}
	switch {
	case !r.suppliesInOwnName(): // interface.go: Art. 9a presumption rebutted
	case buyer.inEU():
		r.eu()
	case buyer.inUK():
		r.uk()
	default:
		r.beyond() // coverage.go: corridors not covered, special territories, rows 9 and U5
	}
	r.finish()                 // finish.go: day of supply, Art. 59c totals, registrations, Art. 9a
	r.finishEvidence(evidence) // evidence.go
	return b.result()
}

// sellerInfo is the resolved seller profile.
type sellerInfo struct {
	ok      bool
	country string   // ISO 3166-1 code of the main establishment (GB for XI and IM, FR for MC)
	eu      bool     // main establishment in an EU member state
	uk      bool     // established in the UK VAT area
	other   []string // other EU member states with a fixed establishment, without the main one
}

func (b *builder) resolveSeller(s Seller) sellerInfo {
	info := sellerInfo{ok: true}
	cc := normalizeCountry(s.Country)
	switch loc, _, known := resolveLocation(cc, ""); {
	case cc == "":
		b.review(ReasonSellerCountryMissing, "The seller's country of establishment is not set in its profile.")
		info.ok = false
	case !known:
		b.review(ReasonSellerCountryUnknown, "The seller's country %s is not an ISO 3166-1 alpha-2 code.", shown.Quote(s.Country))
		info.ok = false
	case loc.outsideEUVAT():
		b.review(ReasonSellerSpecialTerritory, "The seller is established in %s, part of %s but outside the EU VAT territory (%s); its VAT status is not modelled.",
			loc.territory.name, loc.territory.parent, loc.territory.basis)
		info.ok = false
	default:
		info.country = loc.country
		info.eu = isEUMember(loc.country) // countryfacts.go
		info.uk = loc.country == "GB"
	}
	for _, e := range s.OtherEstablishments {
		ec := normalizeCountry(e)
		if !isEUMember(ec) {
			b.review(ReasonSellerEstablishment, "The seller's further establishment %s is not an EU member state.", shown.Quote(e))
			info.ok = false
			continue
		}
		if ec != info.country && !slices.Contains(info.other, ec) {
			info.other = append(info.other, ec)
		}
	}
	return info
}

func (b *builder) resolveBuyer(in Buyer) (location, bool) {
	cc := normalizeCountry(in.Country)
	if cc == "" {
		b.review(ReasonBuyerCountryMissing, "The buyer's country is not attested; the VAT cannot be determined and is not treated as 0 %%.")
		return location{}, false
	}
	loc, postal, known := resolveLocation(cc, in.PostalCode)
	switch {
	case !known:
		b.review(ReasonBuyerCountryUnknown, "The buyer's country %s is not an ISO 3166-1 alpha-2 code.", shown.Quote(in.Country))
		return location{}, false
	case postal == postalUnrecognised:
		b.review(ReasonPostalCodeUnrecognised, "The postal code %s is not a %s postal code this ruleset can read, so it cannot tell whether a special territory (Art. 6 Directive 2006/112/EC) applies.", shown.Quote(in.PostalCode), cc)
		return location{}, false
	case postal == postalShared:
		b.review(ReasonPostalCodeUnrecognised, "The postal code %s serves both Livigno (its frazione Trepalle), outside the EU VAT territory (Art. 6(2)(e) Directive 2006/112/EC), and communes of the Italian mainland, so it cannot tell whether the special territory applies; the customer's own postal code or address decides (Livigno's own code is 23041).", shown.Quote(in.PostalCode))
		return location{}, false
	case postal == postalConflict && loc.territory != nil:
		b.review(ReasonBuyerLocationConflict, "The postal code %s does not lie in %s, which the country code %s names.", shown.Quote(in.PostalCode), loc.territory.name, cc)
		return location{}, false
	case postal == postalConflict:
		b.review(ReasonBuyerLocationConflict, "The postal code %s is the German code of the Austrian communes Jungholz or Mittelberg, but the attested country is %s.", shown.Quote(in.PostalCode), cc)
		return location{}, false
	}
	return loc, true
}

var supplyKinds = map[string]bool{
	KindDigitalService: true, KindSaaS: true, KindStreaming: true, KindEbook: true, KindEpublication: true,
}

// SupplyKindCovered reports whether kind is one of the supply kinds the
// ruleset decides (the electronically supplied services above); any other
// is a manual-review reason, supply_kind_not_covered.
func SupplyKindCovered(kind string) bool { return supplyKinds[kind] }

func (b *builder) checkKind(kind string) bool {
	if supplyKinds[kind] {
		return true
	}
	if kind == "" {
		b.review(ReasonSupplyKindNotCovered, "No supply kind is given; only electronically supplied services are covered.")
	} else {
		b.review(ReasonSupplyKindNotCovered, "The supply kind %s is not covered by this ruleset; other services follow other place-of-supply rules (e.g. Art. 45 Directive 2006/112/EC).", shown.Quote(kind))
	}
	return false
}

// checkDate rejects a missing date, and a date outside the rate table in
// every time zone; the local day itself is fixed once the taxing territory
// is known (localday.go).
func (b *builder) checkDate(t *RateTable, date time.Time) bool {
	if date.IsZero() {
		b.review(ReasonSupplyDateMissing, "The supply date (chargeable event) is missing.")
		return false
	}
	if !t.coversSomewhere(date) {
		from, to := t.Coverage()
		b.review(ReasonDateOutsideRateTable, "The supply date %s is outside the period %s to %s that rate table %s and this ruleset vouch for; a rate table that covers it (vat.ParseRateTable, the server's -vat-rates) decides it.",
			date.UTC().Format(time.DateOnly), from.Format(time.DateOnly), to.Format(time.DateOnly), t.version)
		return false
	}
	return true
}

// buyerStatus is the outcome of checking a B2B claim.
type buyerStatus struct {
	b2b   bool     // a registry confirmed the number: the customer is a taxable person
	open  bool     // a B2B claim that is neither confirmed nor refuted
	notes []Reason // always recorded
	soft  []Reason // why the claim is open; blocking only where B2B and B2C differ
	hard  []Reason // blocking in every case: the location itself is in doubt
	// pending: the number, not yet confirmed, was issued by another state
	// than the attested location (foreignPending); it blocks a sale
	// Determine would decide as domestic (holdPending), not a person's
	// manual determination.
	pending []Reason
}

// checkBuyer applies Art. 18 Implementing Regulation 282/2011: a customer
// is treated as a taxable person only with a VAT number whose validity a
// registry confirmed; a B2B claim without a number, or with a number found
// invalid, is treated as B2C and says so; a number that could not be
// checked leaves the claim open.
func checkBuyer(in Buyer, loc location) buyerStatus {
	var st buyerStatus
	raw := strings.TrimSpace(in.VATNumber)
	if !in.Business && raw == "" {
		return st // no B2B claim
	}
	add := func(list *[]Reason, code, format string, args ...any) {
		*list = append(*list, Reason{Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	if raw == "" {
		add(&st.notes, ReasonB2BClaimWithoutNumber, "The buyer claims to be a business but gave no VAT number; treated as B2C (Art. 18(2) Implementing Regulation 282/2011).")
		return st
	}
	if q := QualifyNumber(raw, in.Country); q != raw {
		// Without its prefix the number says no issuing state: it is read
		// under the customer's attested country (Art. 215 Directive
		// 2006/112/EC: the prefix names the member state of issue), and
		// the record says so.
		add(&st.notes, ReasonVATNumberPrefixSupplied, "The VAT number %s was given without its country prefix; it is read as %s, under the prefix %s of the buyer's attested country %s (Art. 215 Directive 2006/112/EC: the prefix names the state that issued the number).",
			shown.Quote(raw), NormalizeNumber(q), q[:2], shown.Quote(in.Country))
		raw = q
	}
	n, syntaxErr := ValidateNumber(raw)
	reg := in.Registry
	if reg != nil && reg.Registry == "" && reg.Status == RegistryInvalid && syntaxErr != nil {
		reg = nil // refused on its syntax before any registry was asked (vies.FaultSyntax): say so, not "the registry answered"
	}
	if reg == nil {
		if syntaxErr != nil {
			add(&st.notes, ReasonVATNumberInvalid, "The VAT number %s is not well formed: %s; treated as B2C.", shown.Quote(raw), reasonText(syntaxErr))
			return st
		}
		st.open = true
		add(&st.soft, ReasonVATNumberUnverified, "The VAT number %s was not checked with a registry (VIES or HMRC); reverse charge needs a confirmed number (Art. 18(1) Implementing Regulation 282/2011).", n)
		st.foreignPending(n, loc, add)
		return st
	}
	num := raw
	if syntaxErr == nil {
		num = n.String()
	}
	switch reg.Status {
	case RegistryInvalid:
		add(&st.notes, ReasonVATNumberInvalid, "%s answered that the VAT number %s is invalid; treated as B2C.", registryName(reg), num)
		return st
	case RegistryUnavailable:
		st.open = true
		fault := ""
		if reg.Fault != "" {
			fault = " (" + reg.Fault + ")"
		}
		add(&st.soft, ReasonVATNumberUnverified, "%s could not confirm the VAT number %s%s; an unavailable registry is not an invalid number, so the claim stays open.", registryName(reg), num, fault)
		if syntaxErr == nil {
			st.foreignPending(n, loc, add)
		}
		return st
	case RegistryValid:
	default:
		st.open = true
		add(&st.soft, ReasonRegistryStatusUnknown, "The registry status %s for the VAT number %s is not one of valid, invalid, unavailable.", shown.Quote(reg.Status), num)
		return st
	}

	if reg.Number != "" && NormalizeNumber(reg.Number) != NormalizeNumber(num) {
		if rn, err := ValidateNumber(reg.Number); err != nil || syntaxErr != nil || rn != n && !hmrcVRNOfXI(reg, rn, n) {
			st.open = true
			add(&st.soft, ReasonVATNumberRegistryMismatch, "The registry confirmed %s, not the number the buyer gave (%s).", NormalizeNumber(reg.Number), num)
			return st
		}
	}
	prefix := numberPrefix(raw, n, syntaxErr)
	if want := expectedRegistry(prefix); reg.Registry != "" && !slices.Contains(want, reg.Registry) {
		st.open = true
		add(&st.soft, ReasonVATNumberRegistryMismatch, "A %s number cannot be confirmed by %s.", prefix, reg.Registry)
		return st
	}
	if !numberMatchesLocation(prefix, loc) {
		st.open = true
		add(&st.hard, ReasonVATNumberCountryMismatch, "The confirmed VAT number %s was issued by %s, but the buyer's attested location is %s; the customer's place of establishment decides the place of supply (Art. 44).",
			num, issuerName(prefix), loc.code())
		return st
	}
	if syntaxErr != nil {
		add(&st.notes, ReasonCheckDigitsDisagree, "%s confirmed %s although by this package's rules %s; the registry's answer is the legal proof.", registryName(reg), num, reasonText(syntaxErr))
	}
	if reg.RequestIdentifier == "" || reg.CheckedAt.IsZero() {
		add(&st.notes, ReasonRegistryProofIncomplete, "The registry confirmation of %s lacks a request identifier or a check time; keep the proof of the check with the record.", num)
	}
	st.b2b = true
	return st
}

// hmrcVRNOfXI reports whether an HMRC answer about rn, a GB number,
// confirms n, an XI number with the same VRN: HMRC gives a Northern
// Ireland trader "XI" in front of its usual VAT number
// (https://www.gov.uk/vat-registration/selling-or-moving-goods-in-northern-ireland)
// and answers the VRN under GB (expectedRegistry accepts HMRC for XI).
func hmrcVRNOfXI(reg *RegistryCheck, rn, n Number) bool {
	return reg.Registry == RegistryHMRC && n.Prefix == "XI" && rn.Prefix == "GB" && rn.Body == n.Body
}

// foreignPending holds a claim whose number, not yet confirmed, was issued
// by another state than the customer's attested location: confirmed, it
// puts the place of supply at the customer's establishment there (Art. 44
// Directive 2006/112/EC) and the sale goes to review as for a confirmed
// number (vat_number_country_mismatch); refuted, the customer is a consumer
// where it said (Art. 18(2) Implementing Regulation 282/2011). Until a
// registry answers, even a domestic sale cannot be decided.
func (st *buyerStatus) foreignPending(n Number, loc location, add func(*[]Reason, string, string, ...any)) {
	if n.Prefix == "EU" || numberMatchesLocation(n.Prefix, loc) {
		return // a non-Union OSS number identifies no customer's establishment (Art. 362 Directive 2006/112/EC): no registry answer can move the place
	}
	add(&st.pending, ReasonVATNumberCountryMismatch, "The VAT number %s, not yet confirmed by a registry, was issued by %s, but the buyer's attested location is %s; should a registry confirm it, the customer's place of establishment decides the place of supply (Art. 44), so the supply cannot be decided before the registry answers or a person does.",
		n, issuerName(n.Prefix), loc.code())
}

// outsideNumberConflict reviews a supply outside the EU and the UK (row 9,
// U5) whose customer gave a VAT number issued by a member state or the UK
// that a registry confirmed or has not refuted: the number places the
// customer's establishment, or a fixed establishment, in the issuing
// state, a fact the supplier must weigh (Art. 22(1) Implementing
// Regulation 282/2011), and the place of that establishment is the place
// of supply (Art. 44), as for a customer attested in another member state
// (checkBuyer, foreignPending). A number of no such state (CHE, NO), a
// non-Union OSS number, one a registry refuted, and one of the state whose
// special territory the customer is in contradict nothing.
func (r *rules) outsideNumberConflict() {
	in := r.in.Buyer
	raw := strings.TrimSpace(in.VATNumber)
	if raw == "" {
		return
	}
	raw = QualifyNumber(raw, in.Country)
	n, err := ValidateNumber(raw)
	reg := in.Registry
	prefix := numberPrefix(raw, n, err)
	if _, known := numberChecks[prefix]; !known || prefix == "EU" {
		return
	}
	switch {
	case reg != nil && reg.Status == RegistryInvalid:
		return
	case err != nil && (reg == nil || reg.Status != RegistryValid):
		return // refused on its syntax (checkBuyer's vat_number_invalid), nothing a registry confirmed
	}
	issuer := numberPrefixCountry(prefix)
	if t := r.buyer.asTerritory().territory; t != nil && t.parent == issuer {
		return // the Canary Islands' ES numbers, Heligoland's DE ones, ...
	}
	num := raw
	if err == nil {
		num = n.String()
	}
	status := "not yet confirmed by a registry"
	if reg != nil && reg.Status == RegistryValid {
		status = "confirmed by " + registryName(reg)
	}
	r.b.d.BuyerTreatment = ""
	r.b.review(ReasonVATNumberCountryMismatch, "The VAT number %s, %s, was issued by %s, but the buyer's attested location %s is outside the EU and the UK; a number of the state where the customer is established, or has the fixed establishment the service is supplied to, places the supply there (Art. 44 %s; Art. 22(1) Implementing Regulation 282/2011), so it is not decided as outside the scope of VAT before a person settles where the customer is established.",
		num, status, issuerName(prefix), r.buyer.code(), directive)
}

// reasonText says in words why ValidateNumber refused a number (its
// NumberError.Reason), for a reviewer who does not read the package.
func reasonText(err error) string {
	var ne *NumberError
	if errors.As(err, &ne) {
		switch ne.Reason {
		case InvalidPrefix:
			return "its country prefix is none of the EU member states', XI, GB or EU"
		case InvalidFormat:
			return "a character is not allowed where it stands"
		case InvalidLength:
			return "it has the wrong length for its country"
		case InvalidComponent:
			return "a part with a meaning (a date, an office code, a range) cannot exist"
		case InvalidChecksum:
			return "its check digit does not match"
		}
	}
	return "its syntax is not a VAT number's"
}

func registryName(reg *RegistryCheck) string {
	if reg.Registry == "" {
		return "The registry"
	}
	return reg.Registry
}

// numberPrefix is the prefix of the number as given, even when it failed
// validation.
func numberPrefix(raw string, n Number, err error) string {
	if err == nil {
		return n.Prefix
	}
	if s := NormalizeNumber(raw); len(s) >= 2 {
		return s[:2]
	}
	return ""
}

// expectedRegistry: VIES confirms EU numbers and XI numbers; HMRC confirms
// GB numbers (and the same VRN behind an XI number).
func expectedRegistry(prefix string) []string {
	switch prefix {
	case "GB":
		return []string{RegistryHMRC}
	case "XI":
		return []string{RegistryVIES, RegistryHMRC}
	}
	return []string{RegistryVIES}
}

func numberMatchesLocation(prefix string, loc location) bool {
	if prefix == "EU" || prefix == "" {
		return false // a non-Union OSS number identifies a non-EU supplier, not a customer's establishment
	}
	if loc.inUK() {
		return prefix == "GB" || prefix == "XI"
	}
	return numberPrefixCountry(prefix) == loc.country && prefix != "XI"
}

func issuerName(prefix string) string {
	switch prefix {
	case "EU":
		return "the non-Union OSS scheme (EU prefix)"
	case "XI":
		return "the United Kingdom for Northern Ireland (XI)"
	case "":
		return "an unknown state"
	}
	return numberPrefixCountry(prefix)
}

// applyStrict records a B2B check where B2B and B2C lead to different
// results: every open reason blocks.
func (b *builder) applyStrict(st buyerStatus) {
	b.notes = append(b.notes, st.notes...)
	b.reviews = append(b.reviews, st.hard...)
	b.reviews = append(b.reviews, st.soft...)
	b.confirmedB2B = st.b2b
	switch {
	case st.b2b:
		b.d.BuyerTreatment = TreatmentB2B
	case st.open:
		b.d.BuyerTreatment = "" // neither confirmed nor refuted
	default:
		b.d.BuyerTreatment = TreatmentB2C
	}
}

// applyAlike records a B2B check where B2B and B2C are taxed alike (a
// domestic supply): an unverified number is only a note.
func (b *builder) applyAlike(st buyerStatus) {
	b.notes = append(b.notes, st.notes...)
	b.reviews = append(b.reviews, st.hard...)
	for _, r := range st.soft {
		r.Detail += " A domestic supply is taxed alike for B2B and B2C, so this does not change the result."
		b.notes = append(b.notes, r)
	}
	b.confirmedB2B = st.b2b
	switch {
	case st.b2b:
		b.d.BuyerTreatment = TreatmentB2B
	case len(st.hard) > 0:
		b.d.BuyerTreatment = "" // the claim puts the customer's location in doubt
	default:
		b.d.BuyerTreatment = TreatmentB2C
	}
}

// holdPending holds a sale applyAlike decided as domestic while its
// customer's foreign VAT number awaits a registry (foreignPending).
func (b *builder) holdPending(st buyerStatus) {
	if len(st.pending) > 0 {
		b.reviews = append(b.reviews, st.pending...)
		b.d.BuyerTreatment = "" // neither confirmed nor refuted
	}
}

// rules applies one ruleset to a resolved input.
type rules struct {
	t      *RateTable
	b      *builder
	in     Input
	seller sellerInfo
	buyer  location
	day    int // day of supply (yyyymmdd) in the taxing territory's zone, once dayFixed

	dayFixed    bool            // localday.go
	threshold   *ThresholdCheck // threshold.go
	origin      rateResult      // threshold.go: the seller's rate on its day, once looked up
	originFound bool            // origin is set
	dateZone    *zone           // localday.go: the zone of date
	date        localDate       // the supply's date in dateZone

	manual  *manualChoice // manual.go: a person's determination, nil for Determine
	refusal *ManualError  // manual.go: why the person's determination is refused
}

const directive = "Directive 2006/112/EC"

// territoryBasis appends the legal basis of a territory that applied.
func territoryBasis(basis string, t *territory) string {
	if t == nil {
		return basis
	}
	return basis + "; " + t.name + ": " + t.basis
}

// eu applies rows 1–7 of the decision table (package documentation) to a
// buyer in the EU VAT territory.
func (r *rules) eu() {
	b, s, loc := r.b, r.seller, r.buyer
	r.euArea()
	st := checkBuyer(r.in.Buyer, loc)
	B := loc.country
	switch {
	case s.eu && s.country == B:
		// Row 1: supplier and customer in the same member state.
		b.applyAlike(st)
		b.holdPending(st)
		r.domestic(B, loc.territory, st.b2b)
	case slices.Contains(s.other, B):
		r.fixedEstablishmentInB(st)
	default:
		b.applyStrict(st)
		switch {
		case st.b2b:
			r.reverseCharge()
		case st.open:
			// Rows 5–8 hinge on the claim: nothing more can be said.
		default:
			r.consumerInOtherState() // threshold.go: row 2, or rows 3 and 4
		}
	}
}

// euArea records a place of supply in the EU VAT territory: the customer's
// location (a special territory with own rates included).
func (r *rules) euArea() {
	b, loc := r.b, r.buyer
	b.d.Jurisdiction = JurisdictionEU
	b.d.PlaceOfSupply = loc.code()
	if loc.territory != nil {
		b.d.Territory = loc.territory.name
	}
}

// domestic: row 1 (and a seller's fixed establishment in the customer's
// member state): the VAT of that member state, declared in its domestic
// return; OSS never covers supplies in a member state where the supplier is
// established (Art. 369b).
func (r *rules) domestic(cc string, t *territory, b2b bool) {
	b := r.b
	b.d.Regime = RegimeDomestic
	b.d.TaxingCountry = cc
	basis := "Art. 58(1) " + directive
	if b2b {
		basis = "Art. 44 " + directive
	}
	b.d.LegalBasis = territoryBasis(basis, t)
	r.chargeRate(cc, t)
}

// fixedEstablishmentInB: the seller has a fixed establishment in the
// customer's member state. For a consumer the place of supply is there
// (Art. 58) and the VAT goes on that member state's domestic return. For a
// business customer the reverse charge applies only if the establishment
// does not intervene in the supply (Art. 192a; Art. 53 Implementing
// Regulation 282/2011) – a fact this ruleset does not have.
func (r *rules) fixedEstablishmentInB(st buyerStatus) {
	b, B := r.b, r.buyer.country
	switch {
	case st.b2b:
		b.applyStrict(st)
		b.review(ReasonFixedEstablishment, "The seller has a fixed establishment in %s; reverse charge applies only if that establishment does not intervene in the supply (Art. 192a %s), which is not known here.", B, directive)
	case st.open:
		b.applyStrict(st)
	default:
		b.applyStrict(st)
		b.note(ReasonFixedEstablishment, "The seller has a fixed establishment in %s, so the supply is declared in %s's domestic return, not through the OSS (Art. 369b %s).", B, B, directive)
		r.domestic(B, r.buyer.territory, false)
	}
}

// reverseCharge: rows 5 and 6.
func (r *rules) reverseCharge() {
	b := r.b
	b.d.Regime = RegimeReverseChargeB2B
	b.d.Category = CategoryReverseCharge
	b.d.RatePercent = &Percent{d: decimal.Zero}
	b.d.TaxingCountry = r.buyer.country
	b.d.VATEX = VATEXReverseCharge
	b.d.ExemptionReason = "Reverse charge"
	b.d.InvoiceNote = "Reverse charge"
	b.d.LegalBasis = territoryBasis("Art. 44 and Art. 196 "+directive+"; invoice mention Art. 226(11a)", r.buyer.territory)
}

// originBelowThreshold: row 2. A seller established in one member state
// only, under the EUR 10,000 threshold and without the option, charges its
// own VAT (Art. 59c(1)); the customer's territory does not matter.
func (r *rules) originBelowThreshold() {
	b, S := r.b, r.seller.country
	b.d.Regime = RegimeDomestic
	b.d.TaxingCountry = S
	b.d.PlaceOfSupply = S
	b.d.Territory = ""
	b.d.LegalBasis = "Art. 59c(1) " + directive
	b.d.InvoiceNote = countryText(S, textOriginInvoiceNote) // texts.go
	b.notes = append(b.notes, Reason{Code: ReasonOriginTaxation, Detail: r.originNote()})
	r.chargeRate(S, nil)
}

// originInvoiceNote is the invoice note of row 2.
func originInvoiceNote(S string) string {
	return "Place of supply: " + S + " (Art. 59c " + directive + ")"
}

// oss: rows 3 and 4. Destination VAT declared through the Union scheme (a
// seller with an EU establishment) or the non-Union scheme.
func (r *rules) oss() {
	b, B := r.b, r.buyer.country
	b.d.Regime = RegimeOSSB2C
	b.d.TaxingCountry = B
	if r.seller.eu || len(r.seller.other) > 0 {
		b.d.Scheme = SchemeUnion
		b.d.LegalBasis = territoryBasis("Art. 58(1) "+directive+"; Union scheme Art. 369a–369k", r.buyer.territory)
	} else {
		b.d.Scheme = SchemeNonUnion
		b.d.LegalBasis = territoryBasis("Art. 58(1) "+directive+"; non-Union scheme Art. 358a–369", r.buyer.territory)
	}
	r.chargeRate(B, r.buyer.territory)
}

// uk applies rows U1–U4 to a customer in the UK VAT area (Great Britain,
// Northern Ireland for services, the Isle of Man).
func (r *rules) uk() {
	r.ukArea()
	st := checkBuyer(r.in.Buyer, r.buyer)
	switch {
	case r.seller.uk:
		// U1, U4: UK-established seller (an Isle of Man business is not a NETP).
		r.b.applyAlike(st)
		r.b.holdPending(st)
		r.ukDomestic()
	default:
		r.b.applyStrict(st)
		switch {
		case st.b2b:
			r.ukReverseCharge() // U3
		case st.open:
		default:
			r.ukB2C() // U2
		}
	}
	r.ukZeroRateBasis()
}

// ukArea records a place of supply in the UK VAT area: the UK ruleset, the
// customer's location, and the UK as the taxing country.
func (r *rules) ukArea() {
	b, loc := r.b, r.buyer
	b.d.Ruleset = RulesetUK
	b.d.Jurisdiction = JurisdictionUK
	b.d.PlaceOfSupply = loc.code()
	if loc.territory != nil {
		b.d.Territory = loc.territory.name
	}
	b.note(ReasonRulesetExperimental, "The UK ruleset %s is experimental.", RulesetUK)
	b.d.TaxingCountry = "GB"
}

// ukDomestic: U1, U4, a UK-established seller's supply in the UK.
func (r *rules) ukDomestic() {
	r.b.d.Regime = RegimeUKDomestic
	r.b.d.LegalBasis = "VATA 1994 s.7A (VAT Notice 741A)"
	r.chargeRate("GB", nil)
}

// ukReverseCharge: U3, the UK business customer accounts for the VAT
// (VATA 1994 s.8).
func (r *rules) ukReverseCharge() {
	b := r.b
	b.d.Regime = RegimeUKReverseCharge
	b.d.Category = CategoryReverseCharge
	b.d.RatePercent = &Percent{d: decimal.Zero}
	b.d.ExemptionReason = "Reverse charge"
	b.d.InvoiceNote = "Reverse charge: customer to account for VAT to HMRC"
	b.d.LegalBasis = "VATA 1994 s.7A and s.8 (reverse charge; VAT Notice 741A)"
}

// ukB2C: U2, a non-established taxable person registers from the first
// supply (no threshold, VATA 1994 Sch. 1A).
func (r *rules) ukB2C() {
	r.b.d.Regime = RegimeUKB2C
	r.b.d.LegalBasis = "VATA 1994 s.7A and Sch. 4A; NETP registration from the first supply, Sch. 1A (VAT Notice 741A)"
	r.chargeRate("GB", nil)
}

// ukZeroRateBasis cites the zero rate of e-publications.
func (r *rules) ukZeroRateBasis() {
	if r.b.d.Category == CategoryZero {
		r.b.d.LegalBasis += "; zero rate VATA 1994 Sch. 8 Group 3 (SI 2020/459)"
	}
}

// outside applies row 9 (EU ruleset) or U5 (UK ruleset, for a UK seller):
// the place of supply is outside the EU (and outside the UK), for a
// business customer (Art. 44) and a consumer (Art. 58) alike.
func (r *rules) outside() {
	b, loc := r.b, r.buyer
	b.d.Regime = RegimeOutsideScope
	b.d.Category = CategoryOutsideScope
	b.d.VATEX = VATEXOutsideScope
	b.d.ExemptionReason = "Not subject to VAT"
	b.d.PlaceOfSupply = loc.code()
	b.d.BuyerTreatment = TreatmentB2C
	if r.in.Buyer.Business || strings.TrimSpace(r.in.Buyer.VATNumber) != "" {
		b.d.BuyerTreatment = TreatmentB2B
	}
	where := loc.code()
	if loc.territory != nil {
		b.d.Territory = loc.territory.name
		where = loc.territory.name
	}
	if r.seller.uk {
		b.d.Ruleset = RulesetUK
		b.d.Jurisdiction = JurisdictionUK
		b.note(ReasonRulesetExperimental, "The UK ruleset %s is experimental.", RulesetUK)
		b.d.InvoiceNote = "Outside the scope of UK VAT – place of supply outside the UK (VATA 1994 s.7A)"
		b.d.LegalBasis = "VATA 1994 s.7A (VAT Notice 741A): place of supply outside the UK"
		r.attachLocalTax(where) // localtax.go
		return
	}
	b.d.Jurisdiction = JurisdictionEU
	if t := loc.territory; t != nil {
		b.d.InvoiceNote = "Not subject to EU VAT – place of supply " + t.name + ", outside the EU VAT territory (" + t.basis + "; Art. 44/58 " + directive + ")"
		b.d.LegalBasis = "Art. 44/58 " + directive + "; " + t.name + ": " + t.basis
	} else {
		b.d.InvoiceNote = "Not subject to EU VAT – place of supply outside the EU (Art. 44/58 " + directive + ")"
		b.d.LegalBasis = "Art. 44/58 " + directive
	}
	r.attachLocalTax(where) // localtax.go
}

// chargeRate looks up the rate for the supply kind in country cc (and a
// territory with own rates), and sets category S or Z, the rate, its kind
// and its source; or records why it cannot.
func (r *rules) chargeRate(cc string, t *territory) {
	b := r.b
	if !r.fixDay(placeZone(cc, t)) {
		return
	}
	if r.manual != nil {
		r.chargeManualRate(cc, t) // manual.go: the rate a person chose, checked against the table
		return
	}
	res, ok := r.originRate(cc, t) // threshold.go: already looked up for the Art. 59c test
	if !ok {
		res, ok = r.t.kindRate(b, cc, t, r.in.Supply.Kind, r.day)
	}
	if !ok || !r.conditionMet(res, cc) { // conditions.go
		return
	}
	r.setRate(res)
}

// setRate records a charged rate: category S, or Z for 0 %, the rate, its
// kind and its source.
func (r *rules) setRate(res rateResult) {
	b := r.b
	b.rate = chargedRate{Percent{d: res.rate}, res.source}
	b.d.RatePercent = &b.rate.percent
	b.d.RateKind = res.kind
	b.d.RateSource = &b.rate.source
	if res.rate.IsZero() {
		b.d.Category = CategoryZero // BR-Z-05: a 0 % rate is Z, never S (BR-S-05)
	} else {
		b.d.Category = CategoryStandard
	}
}

type rateResult struct {
	rate      decimal.Decimal
	kind      string
	source    RateSource
	condition string // a legal condition the rate depends on (conditions.go)
}

var kindSeries = map[string]string{
	KindDigitalService: seriesStandard,
	KindSaaS:           seriesStandard,
	KindStreaming:      seriesStreaming,
	KindEbook:          seriesEbook,
	KindEpublication:   seriesEpublication,
}

var seriesLabel = map[string]string{
	seriesStandard:     "standard",
	seriesStreaming:    "streaming",
	seriesEbook:        "e-book",
	seriesEpublication: "e-publication (newspapers and periodicals)",
}

// kindRate returns the rate for a supply kind on day. The standard kinds
// use the standard rate; streaming does too unless the table flags the
// country; e-books and e-publications need their own row.
func (t *RateTable) kindRate(b *builder, cc string, terr *territory, kind string, day int) (rateResult, bool) {
	tn, where := "", cc
	if terr != nil && terr.kind == ownRates {
		tn, where = terr.name, terr.name+" ("+cc+")"
	}
	std, ok := t.lookup(seriesKey{cc, tn, seriesStandard}, day)
	if !ok {
		b.review(ReasonRateUnverified, "No standard rate is recorded for %s on %s.", where, keyTime(day).Format(time.DateOnly))
		return rateResult{}, false
	}
	series := kindSeries[kind]
	row := std
	if series != seriesStandard {
		found, ok := t.lookup(seriesKey{cc, tn, series}, day)
		switch {
		case ok:
			row = found
		case series == seriesStreaming:
		default:
			b.review(ReasonRateUnverified, "No %s rate is recorded for %s; the standard rate is not assumed.", seriesLabel[series], where)
			return rateResult{}, false
		}
	}
	since := func() string {
		if row.from == 0 {
			return ""
		}
		return " from " + row.effectiveFrom
	}
	switch row.status {
	case statusUnverified:
		b.review(ReasonRateUnverified, "The %s rate of %s%s %s is not confirmed by a source: %s (%s).",
			seriesLabel[series], where, since(), candidate(row), row.note, row.source)
		return rateResult{}, false
	case statusItemDependent:
		b.review(ReasonRateDependsOnItem, "The %s rate of %s%s depends on the item %s: %s (%s).",
			seriesLabel[series], where, since(), candidate(row), row.note, row.source)
		return rateResult{}, false
	}
	res := rateResult{rate: row.percents[0], source: t.source(row), condition: row.condition}
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

// candidate describes the rate(s) a row names, e.g. "(candidate 13.5 %)".
func candidate(r rateRow) string {
	if len(r.percents) == 0 {
		return "(no candidate rate)"
	}
	ps := make([]string, len(r.percents))
	for i, p := range r.percents {
		ps[i] = p.String() + " %"
	}
	return "(candidate " + strings.Join(ps, " or ") + ")"
}
