package vat

import "fmt"

// Coverage: which ruleset governs a supply.
//
// The EU ruleset governs a supply whose place of supply is in the EU VAT
// territory, and the supply of a seller established in the EU (main or
// fixed establishment) wherever its customer is: an EU seller's supply to
// a customer outside the EU is a real EU determination, outside the scope
// of EU VAT (Art. 44, 58 Directive 2006/112/EC), with the local-tax
// statement. The experimental UK ruleset likewise governs a supply whose
// place of supply is in the UK VAT area (VAT Notice 741A) and the supply of
// a UK-established seller. Where neither governs – a Swiss seller and a
// Swiss consumer, a US seller and a US consumer, a US seller and a customer
// in the Canary Islands – the supply is outside both rulesets: the record
// must not read "not subject to VAT", because the law of the place of
// supply (Swiss VAT, US sales taxes, IGIC, ...) may well tax it. Determine
// then answers StatusManualReview with the reason corridor_not_covered,
// whose detail and Determination.LocalTax name the law that governs; no
// category, rate or invoice text is produced, so no production receipt can
// claim the supply was determined.
//
// Manual review was chosen over a separate NOT_COVERED determination
// status: every consumer of a determination (the engine's record
// statuses, list filters, webhooks, the receipt invariants, the OpenAPI
// enums) already treats MANUAL_REVIEW_REQUIRED as "not determined, no
// production receipt", so the corridor is fail-closed everywhere without
// teaching each of them a new status; the reason code carries the
// distinction for whoever needs it, and Coverage below gives the same
// answer without a full determination (for the capability check).

// Corridor coverage statuses (CorridorCoverage.Status).
const (
	CoverageCovered      = "COVERED"      // the EU or the UK ruleset governs the supply
	CoverageNotCovered   = "NOT_COVERED"  // neither governs; Governing names the law that does
	CoverageUndetermined = "UNDETERMINED" // the facts do not say (seller or buyer country missing, contradictory evidence); Reasons say why
)

// ReasonCorridorNotCovered: review. Neither the EU nor the UK ruleset
// governs the supply; the detail names the law that does. The same code
// the engine used for fiscal events, now decided here for every caller.
const ReasonCorridorNotCovered = "corridor_not_covered"

// CorridorCoverage says which ruleset governs a supply between a seller
// and a buyer. Its JSON form may be passed through by the capability
// check.
type CorridorCoverage struct {
	Status       string `json:"status"`
	Ruleset      string `json:"ruleset,omitempty"`      // RulesetEU or RulesetUK when covered
	Jurisdiction string `json:"jurisdiction,omitempty"` // JurisdictionEU or JurisdictionUK when covered
	// PlaceOfSupply is the code of the customer's location that decided
	// the coverage (ISO 3166-1 or 3166-2, as in Determination).
	PlaceOfSupply string `json:"placeOfSupply,omitempty"`
	// Governing names the law that governs a supply that is not covered.
	Governing *LocalTax `json:"governing,omitempty"`
	// Reasons: corridor_not_covered when not covered; the manual-review
	// reasons of the seller or buyer facts when undetermined.
	Reasons []Reason `json:"reasons,omitempty"`
}

// Coverage decides which ruleset governs a supply from seller to buyer,
// with exactly the rule Determine applies: for the same seller and buyer,
// Determine answers corridor_not_covered if and only if Coverage answers
// CoverageNotCovered. It reads the seller's establishments and the buyer's
// country, postal code and location evidence; the supply kind, the date
// and the B2B claim do not matter. It is a pure function.
func Coverage(seller Seller, buyer Buyer) CorridorCoverage {
	b := &builder{d: Determination{Ruleset: RulesetEU}}
	s := b.resolveSeller(seller)
	loc, ok, _ := b.locateBuyer(buyer, seller, s)
	if !s.ok || !ok {
		return CorridorCoverage{Status: CoverageUndetermined, Reasons: b.reviews}
	}
	return coverageOf(s, loc)
}

// coverageOf is the coverage rule on resolved facts.
func coverageOf(s sellerInfo, loc location) CorridorCoverage {
	c := CorridorCoverage{Status: CoverageCovered, PlaceOfSupply: loc.code()}
	switch {
	case loc.inEU(), !loc.inUK() && (s.eu || len(s.other) > 0):
		c.Ruleset, c.Jurisdiction = RulesetEU, JurisdictionEU
	case loc.inUK(), s.uk:
		c.Ruleset, c.Jurisdiction = RulesetUK, JurisdictionUK
	default:
		c.Status = CoverageNotCovered
		c.Governing = localTaxFor(loc)
		where := loc.code()
		if loc.territory != nil {
			where = loc.territory.name + " (" + loc.code() + ")"
		}
		detail := fmt.Sprintf("Neither the EU ruleset %s nor the UK ruleset %s governs this supply: the seller is established in %s, outside the EU and the UK, and the place of supply is %s, outside both VAT areas. It is governed by %s (%s), which fiscal402 does not determine; the supply is not recorded as free of tax. %s",
			RulesetEU, RulesetUK, s.country, where, c.Governing.Name, c.Governing.Source, c.Governing.Note)
		if own := localTaxFor(location{country: s.country}); s.country != loc.country && own.Name != c.Governing.Name {
			detail += fmt.Sprintf(" The seller's own obligations at home follow %s.", own.Name)
		}
		c.Reasons = []Reason{{Code: ReasonCorridorNotCovered, Detail: detail}}
	}
	return c
}

// beyond applies the rules to a customer outside the EU VAT territory and
// the UK VAT area: a corridor neither ruleset covers is a manual review; a
// seller in the member state whose VAT law reaches the territory is handled
// by parentStateTerritory; otherwise row 9 or U5 (outside scope, with the
// local-tax statement), or the manual review the account chose for special
// territories.
func (r *rules) beyond() {
	b := r.b
	if c := coverageOf(r.seller, r.buyer); c.Status == CoverageNotCovered {
		b.d.PlaceOfSupply = r.buyer.code()
		if t := r.buyer.territory; t != nil {
			b.d.Territory = t.name
		}
		b.d.LocalTax = c.Governing
		b.reviews = append(b.reviews, c.Reasons...)
		return
	}
	if r.parentStateTerritory() {
		return
	}
	r.outside()
	r.outsideNumberConflict() // determine.go
	if t := r.buyer.territory; r.in.Seller.ReviewSpecialTerritories && r.buyer.outsideEUVAT() {
		lt := b.d.LocalTax
		b.review(ReasonSpecialTerritoryReviewChosen, "The account chose manual review instead of category O for customers in special territories outside the EU VAT area; the customer is in %s (%s), where the tax to consider is %s (%s). %s",
			t.name, t.basis, lt.Name, lt.Source, lt.Note)
	}
}
