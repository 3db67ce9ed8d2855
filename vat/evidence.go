package vat

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/shown"
)

// Customer-location evidence.
//
// For electronically supplied services to a consumer who is not at a fixed
// line, a SIM-identified mobile network or a decoder, the supplier
// identifies the customer's location from two items of non-contradictory
// evidence listed in Art. 24f Implementing Regulation (EU) 282/2011 (Art.
// 24b(d)). Under the second subparagraph of Art. 24b(d), added by
// Implementing Regulation (EU) 2017/2459
// (http://data.europa.eu/eli/reg_impl/2017/2459/oj), a supplier established
// in a member state whose cross-border supplies of these services to
// consumers in other member states stay within EUR 100,000 (excluding VAT)
// in the current and the preceding calendar year may rely on one item,
// listed in points (a) to (e) of Art. 24f and provided by a person involved
// in the supply other than the supplier or the customer (a payment
// provider, a network operator). Art. 24d lets a tax authority rebut any
// presumption on indications of misuse; Art. 63c requires the OSS records
// to keep the information used to determine the customer's location.
//
// Buyer.Evidence carries the items; Determination.LocationEvidence is the
// assessment, listing the items (kind, country, source, whether personal)
// but never an item's value, which is personal data: the caller stores the
// values on its record and only a keyed hash of them in a receipt.
//
//   - No items: Buyer.Country alone decides, as the merchant's single
//     assertion (rule merchant_assertion, note location_single_assertion).
//   - Items that contradict one another or Buyer.Country: manual review,
//     location_evidence_contradictory, the detail listing the items. An
//     item naming only a state (an IP address geolocated to ES) does not
//     contradict one naming a special territory of that state (IC); the
//     more specific location is the one settled.
//   - Two agreeing items of different Art. 24f points: rule two_items.
//   - One agreeing item: rule one_item_below_limit where the EU ruleset
//     governs, the seller is established in the EU, Seller.CrossBorder
//     shows both years within EUR 100,000, this supply included (third
//     subparagraph: the rule ends with the supply that exceeds the limit),
//     and the item is third-party evidence of points (a)–(e); otherwise
//     manual review,
//     location_evidence_insufficient (unless the customer turns out to be
//     a registry-confirmed business, whose location the VAT number
//     establishes, Art. 18 and 44).
//
// The UK ruleset knows no one-item rule here: a UK place of supply needs
// two items.

// Evidence kinds (Evidence.Kind), each an item of Art. 24f Implementing
// Regulation 282/2011 except EvidenceMerchantAttested.
const (
	EvidenceBillingAddress = "billing_address" // Art. 24f(a): the customer's billing address
	EvidenceIPAddress      = "ip_address"      // Art. 24f(b): the IP address of the device, or any geolocation
	EvidenceBank           = "bank"            // Art. 24f(c): the location of the bank account, or the billing address the bank holds
	EvidencePaymentCard    = "payment_card"    // Art. 24f(c): the country of the card issuer (bank details)
	EvidenceSIM            = "sim"             // Art. 24f(d): the mobile country code of the IMSI on the SIM card
	EvidenceFixedLine      = "fixed_line"      // Art. 24f(e): the location of the fixed land line
	EvidenceOther          = "other"           // Art. 24f(f): other commercially relevant information
	// EvidenceMerchantAttested: the merchant's own statement of the
	// country; recorded, never counted as an Art. 24f item.
	EvidenceMerchantAttested = "merchant_attested"
)

// Evidence sources (Evidence.Source): who provided the item.
const (
	// EvidenceSourceThirdParty: a person involved in the supply other than
	// the supplier and the customer (payment provider, network operator).
	EvidenceSourceThirdParty = "third_party"
	EvidenceSourceMerchant   = "merchant" // the supplier's own systems (e.g. its IP geolocation)
	EvidenceSourceCustomer   = "customer" // the customer's own statement (e.g. a billing address typed in)
)

// Evidence assessment rules (EvidenceAssessment.Rule).
const (
	EvidenceRuleMerchantAssertion = "merchant_assertion"   // Buyer.Country alone, no items
	EvidenceRuleTwoItems          = "two_items"            // Art. 24b(d) first subparagraph
	EvidenceRuleOneItem           = "one_item_below_limit" // Art. 24b(d) second subparagraph
	EvidenceRuleContradictory     = "contradictory"        // items disagree: review
	EvidenceRuleInsufficient      = "insufficient"         // too few items: review
	EvidenceRuleInvalid           = "invalid"              // an item is malformed: review
)

// Reason codes of location evidence.
const (
	// ReasonLocationSingleAssertion: note. The location rests on
	// Buyer.Country alone, the merchant's single assertion.
	ReasonLocationSingleAssertion = "location_single_assertion"
	// ReasonLocationEvidenceContradictory: review. The items of location
	// evidence (or Buyer.Country) point to different places.
	ReasonLocationEvidenceContradictory = "location_evidence_contradictory"
	// ReasonLocationEvidenceInsufficient: review. Fewer items than Art.
	// 24b(d) requires for this seller.
	ReasonLocationEvidenceInsufficient = "location_evidence_insufficient"
	// ReasonLocationEvidenceInvalid: review. An item has an unknown kind or
	// source, or a country that is no ISO 3166-1 code; the detail names
	// the field (buyer.evidence[i].kind).
	ReasonLocationEvidenceInvalid = "location_evidence_invalid"
)

// Evidence is one item of location evidence.
type Evidence struct {
	Kind    string `json:"kind"`    // an Evidence kind constant
	Country string `json:"country"` // where the item places the customer: ISO 3166-1 alpha-2, or a code Buyer.Country accepts (IC, EA, XI, ...)
	Source  string `json:"source"`  // an EvidenceSource constant
	// Provider names who supplied the item, e.g. "Stripe" or "MaxMind
	// GeoIP2"; not personal.
	Provider string `json:"provider,omitempty"`
	// Value is the datum itself (an IP address, a billing address, a card
	// BIN), personal data. Determine does not read it and never copies it
	// into a determination; the caller keeps it on the record and puts
	// only a keyed hash of it in a receipt.
	Value string `json:"value,omitempty"`
}

// EvidenceAssessment is how the customer's location was established. Its
// JSON form is part of the record ("locationEvidence").
type EvidenceAssessment struct {
	Rule string `json:"rule"` // an EvidenceRule constant
	// Country is the settled location (a place-of-supply code), empty when
	// the evidence does not settle one.
	Country string         `json:"country,omitempty"`
	Items   []EvidenceItem `json:"items"`
	// Basis cites the rule applied.
	Basis string `json:"basis"`
}

// EvidenceItem is an item as assessed, without its personal value.
type EvidenceItem struct {
	Index    int    `json:"index"` // position in Buyer.Evidence; -1 for Buyer.Country
	Kind     string `json:"kind"`
	Country  string `json:"country"`
	Source   string `json:"source"`
	Provider string `json:"provider,omitempty"`
	Article  string `json:"article,omitempty"` // the point of Art. 24f, e.g. "24f(a)"
	// Agrees: the item is consistent with the settled location.
	Agrees bool `json:"agrees"`
	// Personal: the item carried a value (personal data, kept by the
	// caller, hashed in a receipt).
	Personal bool `json:"personal,omitempty"`
}

// Art. 24f points of the evidence kinds.
var evidenceArticle = map[string]string{
	EvidenceBillingAddress: "24f(a)", EvidenceIPAddress: "24f(b)", EvidenceBank: "24f(c)", EvidencePaymentCard: "24f(c)",
	EvidenceSIM: "24f(d)", EvidenceFixedLine: "24f(e)", EvidenceOther: "24f(f)", EvidenceMerchantAttested: "",
}

var evidenceSources = map[string]bool{EvidenceSourceThirdParty: true, EvidenceSourceMerchant: true, EvidenceSourceCustomer: true}

// OneItemLimitEUR is the Art. 24b(d) second-subparagraph limit.
var oneItemLimitEUR = decimal.NewFromInt(100000)

const (
	basisTwoItems  = "Art. 24b(d) first subparagraph and Art. 24f Implementing Regulation (EU) 282/2011: two items of non-contradictory evidence"
	basisOneItem   = "Art. 24b(d) second subparagraph Implementing Regulation (EU) 282/2011, as amended by Implementing Regulation (EU) 2017/2459: one third-party item of Art. 24f(a)-(e) while cross-border TBE supplies stay within EUR 100,000"
	basisAssertion = "Buyer country as asserted by the merchant; Art. 24b(d) and 24f Implementing Regulation (EU) 282/2011 require the merchant to hold the evidence"
)

// evidenceState carries what the assessment leaves for after the rules:
// an insufficiency that a confirmed business customer would cure.
type evidenceState struct {
	insufficient string // detail of location_evidence_insufficient, "" if sufficient
	// oneItem: the one-item rule placed the customer on the totals before
	// this supply; it holds only if this supply keeps the year within
	// EUR 100,000 (oneItemExceeded).
	oneItem bool
}

// locateBuyer resolves the buyer's location from Buyer.Country, the postal
// code and the location evidence, and records the assessment. It replaces
// resolveBuyer for Determine and Coverage.
func (b *builder) locateBuyer(in Buyer, s Seller, seller sellerInfo) (location, bool, evidenceState) {
	if len(in.Evidence) == 0 {
		loc, ok := b.resolveBuyer(in)
		if ok {
			a := b.evidence
			if a == nil {
				a = new(assertedEvidence)
			}
			a.items = [1]EvidenceItem{{Index: -1, Kind: EvidenceMerchantAttested, Country: normalizeCountry(in.Country), Source: EvidenceSourceMerchant, Agrees: true}}
			a.assessment = EvidenceAssessment{Rule: EvidenceRuleMerchantAssertion, Country: loc.code(), Basis: basisAssertion, Items: a.items[:]}
			b.d.LocationEvidence = &a.assessment
			b.notes = append(b.notes, Reason{Code: ReasonLocationSingleAssertion, Detail: countryText(loc.code(), textSingleAssertion)}) // texts.go
		}
		return loc, ok, evidenceState{}
	}

	a := &EvidenceAssessment{Rule: EvidenceRuleInvalid, Basis: basisTwoItems}
	b.d.LocationEvidence = a
	type placed struct {
		item EvidenceItem
		loc  location
	}
	var items []placed
	valid := true
	for i, e := range in.Evidence {
		cc := normalizeCountry(e.Country)
		it := EvidenceItem{Index: i, Kind: e.Kind, Country: cc, Source: e.Source, Provider: e.Provider, Article: evidenceArticle[e.Kind], Personal: e.Value != ""}
		a.Items = append(a.Items, it)
		_, kindOK := evidenceArticle[e.Kind]
		loc, _, known := resolveLocation(cc, "")
		switch {
		case !kindOK:
			b.review(ReasonLocationEvidenceInvalid, "buyer.evidence[%d].kind %s is not one of %s.", i, shown.Quote(e.Kind), strings.Join(evidenceKinds(), ", "))
			valid = false
		case !evidenceSources[e.Source]:
			b.review(ReasonLocationEvidenceInvalid, "buyer.evidence[%d].source %s is not one of %s, %s, %s.", i, shown.Quote(e.Source), EvidenceSourceThirdParty, EvidenceSourceMerchant, EvidenceSourceCustomer)
			valid = false
		case cc == "" || !known:
			b.review(ReasonLocationEvidenceInvalid, "buyer.evidence[%d].country %s is not an ISO 3166-1 alpha-2 code.", i, shown.Quote(e.Country))
			valid = false
		default:
			items = append(items, placed{it, loc})
		}
	}
	if !valid {
		return location{}, false, evidenceState{}
	}

	// The merchant's asserted country, if any, must agree with the items.
	claim := normalizeCountry(in.Country)
	var claimLoc location
	if claim != "" {
		loc, _, known := resolveLocation(claim, "")
		if !known {
			b.review(ReasonBuyerCountryUnknown, "The buyer's country %s is not an ISO 3166-1 alpha-2 code.", shown.Quote(in.Country))
			return location{}, false, evidenceState{}
		}
		claimLoc = loc
	}

	// Settle the most specific location all items (and the claim) share.
	settled := items[0].loc.asTerritory()
	consistent := true
	all := make([]location, 0, len(items)+1)
	for _, p := range items {
		all = append(all, p.loc.asTerritory())
	}
	if claim != "" {
		all = append(all, claimLoc.asTerritory())
	}
	for _, l := range all {
		if !compatible(settled, l) {
			consistent = false
			break
		}
		if settled.territory == nil && l.territory != nil {
			settled = l
		}
	}
	if consistent {
		for _, l := range all {
			if !compatible(settled, l) {
				consistent = false
			}
		}
	}
	if !consistent {
		a.Rule = EvidenceRuleContradictory
		var list []string
		for _, p := range items {
			list = append(list, describeItem(p.item))
		}
		if claim != "" {
			list = append(list, "consumer country="+claim+" (merchant)")
		}
		b.review(ReasonLocationEvidenceContradictory, "The items of location evidence contradict one another, so Art. 24b(d) Implementing Regulation 282/2011 does not settle the customer's location: %s.", strings.Join(list, "; "))
		return location{}, false, evidenceState{}
	}
	for i := range a.Items {
		a.Items[i].Agrees = true
	}

	// The postal code refines the location as it refines Buyer.Country;
	// the result must still agree with every item. Without a postal code,
	// a territory the items name stands even if the claim names only its
	// state.
	base := in
	base.Country = claim
	if claim == "" {
		base.Country = inputCode(settled)
	}
	loc, ok := b.resolveBuyer(base)
	if !ok {
		return location{}, false, evidenceState{}
	}
	if strings.TrimSpace(in.PostalCode) == "" && loc.asTerritory().territory == nil && settled.territory != nil {
		loc = settled
	}
	// A postal code that places the customer outside every special
	// territory of a state whose postal codes name them (postalTerritory)
	// contradicts an item naming one: a review found a Madrid postal code
	// and a billing address in the Canary Islands charged Spanish VAT.
	mainland := strings.TrimSpace(in.PostalCode) != "" && loc.territory == nil && hasTerritories(loc.country)
	for _, p := range items {
		if !compatible(loc, p.loc) || mainland && p.loc.asTerritory().territory != nil {
			a.Rule = EvidenceRuleContradictory
			b.review(ReasonLocationEvidenceContradictory, "The country and postal code place the customer in %s, but %s places it elsewhere.", loc.code(), describeItem(p.item))
			return location{}, false, evidenceState{}
		}
	}
	a.Country = loc.code()

	// Count the Art. 24f points the agreeing items cover.
	points := map[string]bool{}
	var thirdParty []EvidenceItem
	for _, p := range items {
		art := p.item.Article
		if art == "" {
			continue // the merchant's own statement is no Art. 24f item
		}
		points[art] = true
		if p.item.Source == EvidenceSourceThirdParty && art != "24f(f)" {
			thirdParty = append(thirdParty, p.item)
		}
	}
	switch {
	case len(points) >= 2:
		a.Rule, a.Basis = EvidenceRuleTwoItems, basisTwoItems
		return loc, true, evidenceState{}
	case len(points) == 1 && len(thirdParty) > 0 && oneItemAllowed(s, seller, loc):
		a.Rule, a.Basis = EvidenceRuleOneItem, basisOneItem
		return loc, true, evidenceState{oneItem: true}
	}
	a.Rule = EvidenceRuleInsufficient
	a.Basis = basisTwoItems
	return loc, true, evidenceState{insufficient: insufficiency(len(points), len(thirdParty) > 0, s, seller, loc)}
}

// singleAssertionNote is the detail of location_single_assertion for a
// customer located in code.
func singleAssertionNote(code string) string {
	return "The customer's location " + code + " rests on the merchant's single assertion of the country, without items of evidence; Art. 24b(d) and 24f Implementing Regulation 282/2011 require two non-contradictory items (or one third-party item below EUR 100,000), which the merchant must hold."
}

// assertedEvidence is the assessment of a location resting on Buyer.Country
// alone and its one item (Determination.LocationEvidence points here).
type assertedEvidence struct {
	assessment EvidenceAssessment
	items      [1]EvidenceItem
}

// oneItemAllowed: the second subparagraph of Art. 24b(d) (Implementing
// Regulation (EU) No 282/2011 as amended by Regulation (EU) 2017/2459)
// applies to a supplier established in only one member state (its main
// establishment there and no fixed establishment in another, or its one
// fixed establishment in the EU), for an EU place of supply, while its
// cross-border TBE supplies to consumers stay within EUR 100,000 in both
// years. A review found it applied to a seller with establishments in two.
func oneItemAllowed(s Seller, seller sellerInfo, loc location) bool {
	if loc.inUK() || !inOneMemberState(seller) || s.CrossBorder == nil {
		return false
	}
	t := s.CrossBorder
	return cmpDec(t.PreviousYear, oneItemLimitEUR) <= 0 && cmpDec(t.CurrentYear, oneItemLimitEUR) <= 0 && !totalsShort(s) // fixed.go
}

// totalsShort: the seller states it is over the Art. 59c threshold
// (OverThreshold), yet its totals show neither year over it, so they leave
// out supplies (made before the ledger, with no opening figure) and cannot
// show the EUR 100,000 of the one-item rule kept.
func totalsShort(s Seller) bool {
	t := s.CrossBorder
	return s.OverThreshold && cmpDec(t.PreviousYear, thresholdLimit) <= 0 && cmpDec(t.CurrentYear, thresholdLimit) <= 0
}

// inOneMemberState: the seller is established in exactly one EU member
// state (other holds the member states of its fixed establishments other
// than its main one).
func inOneMemberState(seller sellerInfo) bool {
	return seller.eu && len(seller.other) == 0 || !seller.eu && len(seller.other) == 1
}

func insufficiency(points int, thirdParty bool, s Seller, seller sellerInfo, loc location) string {
	why := ""
	switch {
	case points == 0:
		why = "no item is one of Art. 24f (a merchant's own statement is not)"
	case loc.inUK():
		why = "the place of supply is in the UK VAT area, where this ruleset requires two items"
	case !inOneMemberState(seller):
		why = "the one-item rule of Art. 24b(d) second subparagraph is for suppliers established in only one member state, and this seller is not"
	case s.CrossBorder == nil:
		why = "the seller's cross-border TBE totals (Seller.CrossBorder) are not given, so the EUR 100,000 limit cannot be checked"
	case cmpDec(s.CrossBorder.PreviousYear, oneItemLimitEUR) > 0 || cmpDec(s.CrossBorder.CurrentYear, oneItemLimitEUR) > 0:
		why = fmt.Sprintf("the seller's cross-border TBE supplies (EUR %s last year, EUR %s this year before this supply) exceed EUR 100,000",
			s.CrossBorder.PreviousYear.StringFixed(2), s.CrossBorder.CurrentYear.StringFixed(2))
	case !thirdParty:
		why = "the single item was not provided by a third party involved in the supply (payment provider, network operator) or is of Art. 24f(f)"
	case totalsShort(s):
		why = fmt.Sprintf("the seller states its cross-border TBE supplies exceed EUR 10,000 (overThreshold), but its totals (EUR %s last year, EUR %s this year before this supply) do not, so they leave out supplies and cannot show the EUR 100,000 kept (state them as opening totals)",
			s.CrossBorder.PreviousYear.StringFixed(2), s.CrossBorder.CurrentYear.StringFixed(2))
	}
	return fmt.Sprintf("The customer's location %s rests on %d item(s) of Art. 24f Implementing Regulation 282/2011; Art. 24b(d) requires two non-contradictory items, and one suffices only below EUR 100,000 with third-party evidence: %s.", loc.code(), points, why)
}

// oneItemExceeded: the one-item rule was applied on the totals before this
// supply, and this supply takes the current year over EUR 100,000. The
// third subparagraph of Art. 24b(d) Implementing Regulation (EU) No
// 282/2011 (as amended by Implementing Regulation (EU) 2017/2459): where
// the threshold is exceeded during a calendar year, the one-item rule does
// not apply from that time; like "as of that time" in Art. 59c(2)
// (threshold.go), the supply that exceeds it is the first so made. The
// value the supply adds is the one the Art. 59c section counts (exclusive
// of VAT); without a section (a seller whose only EU establishment is a
// fixed one), an OSS supply's VAT-inclusive amount bounds it.
func oneItemExceeded(in Input, d *Determination) (after decimal.Decimal, over bool) {
	t := in.Seller.CrossBorder
	var added decimal.Decimal
	switch th := d.Threshold; {
	case t == nil:
		return decimal.Decimal{}, false
	case th != nil && th.Counts && th.Counted != nil:
		added = *th.Counted
	case th != nil:
		return decimal.Decimal{}, false // not counted, or not known (reviewed already)
	case d.Regime == RegimeOSSB2C:
		added = in.Supply.GrossEUR
	default:
		return decimal.Decimal{}, false
	}
	after = addDec(t.CurrentYear, added) // fixed.go
	return after, cmpDec(after, oneItemLimitEUR) > 0
}

// limitInsufficiency is the detail of location_evidence_insufficient for a
// one-item location whose supply takes the year over EUR 100,000.
func limitInsufficiency(loc string, before, after decimal.Decimal) string {
	return fmt.Sprintf("The customer's location %s rests on one item of Art. 24f Implementing Regulation 282/2011; one item suffices only while the seller's cross-border TBE supplies do not exceed EUR 100,000, and this supply takes this year's total from EUR %s to EUR %s, so from it on Art. 24b(d) requires two non-contradictory items (third subparagraph, Implementing Regulation (EU) 2017/2459).",
		loc, before.StringFixed(2), after.StringFixed(2))
}

// insufficiencyAfter is the detail of location_evidence_insufficient once
// the supply is decided: st's, or the one-item rule's limit exceeded by
// this supply; "" when the evidence suffices.
func insufficiencyAfter(st evidenceState, in Input, d *Determination) string {
	if st.oneItem {
		if after, over := oneItemExceeded(in, d); over {
			loc := d.PlaceOfSupply
			if d.LocationEvidence != nil && d.LocationEvidence.Country != "" {
				loc = d.LocationEvidence.Country
			}
			return limitInsufficiency(loc, in.Seller.CrossBorder.CurrentYear, after)
		}
	}
	return st.insufficient
}

// finishEvidence turns an insufficient assessment into a manual review,
// unless the customer is a registry-confirmed business, whose place of
// establishment the VAT number establishes (Art. 18, 44). A business claim
// no registry confirmed (outside the EU it is labelled B2B all the same) is
// located like a consumer: on the customer's word alone a supply would
// otherwise leave the EU's VAT (Art. 18(2), 24b Implementing Regulation
// 282/2011).
func (r *rules) finishEvidence(st evidenceState) {
	b := r.b
	why := insufficiencyAfter(st, r.in, &b.d)
	if why == "" || b.confirmedB2B {
		return
	}
	if st.oneItem {
		a := b.d.LocationEvidence
		a.Rule, a.Basis = EvidenceRuleInsufficient, basisTwoItems
	}
	b.review(ReasonLocationEvidenceInsufficient, "%s", why)
}

// compatible: two locations do not contradict each other when they are the
// same, or one names a state without a territory and the other a territory
// of that state (an IP address in ES, a billing address in the Canary
// Islands).
func compatible(x, y location) bool {
	x, y = x.asTerritory(), y.asTerritory()
	if x.country != y.country {
		return false
	}
	if x.territory == nil || y.territory == nil || x.territory == y.territory {
		return true
	}
	// EA names Ceuta and Melilla together.
	part := func(t, whole *territory) bool { return whole == tCeutaMel && (t == tCeuta || t == tMelilla) }
	return part(x.territory, y.territory) || part(y.territory, x.territory)
}

// hasTerritories: cc is the state of a special territory that a country
// code names (countryTerritories, ownCodeTerritories), whose postal codes
// postalTerritory examines.
func hasTerritories(cc string) bool {
	for _, t := range countryTerritories {
		if t.parent == cc {
			return true
		}
	}
	for _, t := range ownCodeTerritories {
		if t.parent == cc {
			return true
		}
	}
	return false
}

// ownCodeTerritories are the territories found from a parent's postal code
// that have an ISO 3166-1 code of their own, by that code: Jersey's JE2
// 3AB names the place an item giving JE names.
var ownCodeTerritories = func() map[string]*territory {
	m := make(map[string]*territory)
	for _, t := range []*territory{tJersey, tGuernsey, tGibraltar, tSanMarino, tVatican, tGreenland, tFaroe,
		tStBarth, tStPierre, tTAAF, tWallis, tPolynesia, tCaledonia} {
		m[t.code] = t
	}
	return m
}()

// asTerritory is loc with a country code of ownCodeTerritories read as
// that territory of its parent, so that compatible compares places: JE as
// Jersey (GB), SM as San Marino (IT).
func (l location) asTerritory() location {
	if l.territory == nil {
		if t, ok := ownCodeTerritories[l.country]; ok {
			return location{country: t.parent, territory: t}
		}
	}
	return l
}

// inputCode is the Buyer.Country code that resolves to loc: the country
// code naming its territory (IC, AX, XI, ...; JE, SM, ... for
// ownCodeTerritories) or the country.
func inputCode(loc location) string {
	if loc.territory != nil && ownCodeTerritories[loc.territory.code] == loc.territory {
		return loc.territory.code
	}
	if loc.territory != nil {
		for cc, t := range countryTerritories {
			if t == loc.territory {
				return cc
			}
		}
	}
	return loc.country
}

func describeItem(it EvidenceItem) string {
	s := fmt.Sprintf("buyer.evidence[%d] %s=%s (%s", it.Index, it.Kind, it.Country, it.Source)
	if it.Provider != "" {
		s += ": " + it.Provider
	}
	return s + ")"
}

func evidenceKinds() []string {
	return []string{EvidenceBillingAddress, EvidenceIPAddress, EvidenceBank, EvidencePaymentCard, EvidenceSIM, EvidenceFixedLine, EvidenceOther, EvidenceMerchantAttested}
}

// EvidenceKinds lists the kinds an Evidence item may have (the Art. 24f
// items and EvidenceMerchantAttested); a request check refuses any other.
func EvidenceKinds() []string { return evidenceKinds() }

// EvidenceSources lists the sources an Evidence item may have.
func EvidenceSources() []string {
	return []string{EvidenceSourceThirdParty, EvidenceSourceMerchant, EvidenceSourceCustomer}
}
