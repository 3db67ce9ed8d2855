package parties

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
)

// Seller is a seller named in a request body. Only legalName and country
// are the basic fiscal-event seller; the other members are extensions
// that let the caller state the facts Art. 59c VAT Directive depends on. A fact
// left out is unknown, never assumed: when it would change the determination,
// the result is MANUAL_REVIEW_REQUIRED with reason seller_threshold_unknown.
type Seller struct {
	LegalName           string   `json:"legalName,omitempty"`
	Country             string   `json:"country"`
	VATNumber           string   `json:"vatNumber,omitempty"`
	OtherEstablishments []string `json:"otherEstablishments,omitempty"` // extension: further EU member states with a fixed establishment
	OverThreshold       *bool    `json:"overThreshold,omitempty"`       // extension: Art. 59c(1) EUR 10,000 threshold exceeded
	OptedForDestination *bool    `json:"optedForDestination,omitempty"` // extension: Art. 59c(3) option
}

// Buyer is the buyer as the caller attests it.
type Buyer struct {
	Country        string `json:"country,omitempty"`
	BusinessStatus string `json:"businessStatus,omitempty"` // "B2C" or "B2B"
	VATNumber      string `json:"vatNumber,omitempty"`      // extension: a B2B buyer's VAT number, looked up in VIES
	Name           string `json:"name,omitempty"`           // extension
	PostalCode     string `json:"postalCode,omitempty"`     // extension: special territories (Art. 6 Directive 2006/112/EC, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112; vat/territory.go)
	// LocationEvidence (extension) are items of the customer's location
	// (Art. 24b, 24f Implementing Regulation 282/2011), as POST
	// /settlements' locationEvidence, checked by the same rules.
	LocationEvidence []vat.Evidence `json:"locationEvidence,omitempty"`
	// Address (extension) is the customer's postal address, the one a
	// business sale's invoice states (Art. 226(5) Directive 2006/112/EC),
	// as POST /settlements' consumerAddress, checked by the same rules
	// (settlement.BuyerAddressAt): its country, if given, is country's;
	// its postal code stands for postalCode when that is not given.
	Address *invoicelaw.Address `json:"address,omitempty"`
}

// Supply is what was sold.
type Supply struct {
	Kind        string `json:"kind"`
	Description string `json:"description,omitempty"` // extension: the invoice line's item name
}

// Business statuses of a buyer ("B2C", a consumer; "B2B" is its
// counterpart, vat.TreatmentB2B).
const (
	BusinessStatusB2C = vat.TreatmentB2C
	BusinessStatusB2B = vat.TreatmentB2B
)

// ReasonSellerThresholdUnknown is the manual-review reason of a
// determination that depends on seller facts the request did not state.
const ReasonSellerThresholdUnknown = "seller_threshold_unknown"

// ReasonCorridorNotCovered is the manual-review reason of a fiscal event
// between parties that are both outside the EU and UK VAT areas.
const ReasonCorridorNotCovered = vat.ReasonCorridorNotCovered

// SellerFacts is a validated seller with its threshold facts; nil pointers
// are unknown.
type SellerFacts struct {
	LegalName           string
	Country             string
	VATNumber           string
	OtherEstablishments []string
	OverThreshold       *bool
	OptedForDestination *bool
	IsAccount           bool // the authenticated account's own seller
	// Profile is the account's seller when IsAccount: its registrations,
	// its choices for special territories and Art. 9a, and its attested
	// rate conditions decide as they do for POST /settlements.
	Profile *fiscal.Seller
	// CrossBorder are the account's Art. 59c running totals for the
	// supply's year (with IsAccount, read by the engine as for POST
	// /settlements); nil decides on the flags alone. Not part of the
	// facts a request states (and of its fingerprint).
	CrossBorder *vat.CrossBorderTotals `json:"-"`
}

// BuyerFacts is a validated buyer of a fiscal event or evaluation.
type BuyerFacts struct {
	Country        string
	BusinessStatus string // "B2C" or "B2B" after defaulting
	VATNumber      string
	Name           string
	PostalCode     string
	Evidence       []vat.Evidence      // items of the customer's location; nil: none
	Address        *invoicelaw.Address // the customer's postal address; nil: none
}

// ParseSeller validates a seller from a request body. field is the JSON
// pointer of the seller object; legalName is required when nameRequired.
func ParseSeller(field string, in Seller, nameRequired bool) (SellerFacts, error) {
	var s SellerFacts
	name, err := wire.Text(field+"/legalName", in.LegalName)
	if err != nil {
		return s, fiscal.InputError(err)
	}
	if name == "" && nameRequired {
		return s, badRequest(field+"/legalName", "is required")
	}
	s.LegalName = name
	if strings.TrimSpace(in.Country) == "" {
		return s, badRequest(field+"/country", "is required (ISO 3166-1 alpha-2, any country)")
	}
	if s.Country, err = ParseSellerCountry(field+"/country", in.Country); err != nil {
		return s, err
	}
	if s.VATNumber, err = wire.VATNumber(field+"/vatNumber", in.VATNumber); err != nil {
		return s, fiscal.InputError(err)
	}
	if len(in.OtherEstablishments) > memberStates {
		return s, badRequest(field+"/otherEstablishments", "lists more than the %d EU member states", memberStates)
	}
	for i, c := range in.OtherEstablishments {
		cc, err := wire.Country(fmt.Sprintf("%s/otherEstablishments/%d", field, i), c)
		if err != nil {
			return s, fiscal.InputError(err)
		}
		if !InEU27(cc) {
			return s, badRequest(fmt.Sprintf("%s/otherEstablishments/%d", field, i), "%s is not an EU member state; only EU establishments matter here (Art. 59c VAT Directive)", shown.Quote(c))
		}
		s.OtherEstablishments = append(s.OtherEstablishments, cc)
	}
	s.OverThreshold, s.OptedForDestination = in.OverThreshold, in.OptedForDestination
	return s, nil
}

// ParseSellerCountry accepts for the seller's establishment what
// parseBuyerCountry accepts for the customer's country, normalised as
// vat.Determine reads it (UK is GB): a seller in the Canary Islands (IC) or
// in Ceuta and Melilla (EA) is outside the EU VAT territory although in
// Spain (Art. 6(1)(b) Directive 2006/112/EC,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112),
// which "ES" cannot say; the engine leaves such a seller for review
// (seller_in_special_territory) rather than treating it as Spanish.
func ParseSellerCountry(field, v string) (string, error) {
	c, err := wire.Country(field, v)
	if err == nil {
		return c, nil
	}
	u := strings.ToUpper(strings.TrimSpace(v))
	if cc, ok := vat.BuyerCountry(u); ok && len(u) == 2 {
		return cc, nil
	}
	return "", badRequest(field, "%s is not an ISO 3166-1 alpha-2 country code (or EL, XI, UK, IC for the Canary Islands, EA for Ceuta and Melilla)", shown.Quote(v))
}

// parseBuyerCountry accepts for a customer's country what the engine
// accepts for consumerCountry: wire.Country's codes and those
// vat.Buyer documents beyond ISO 3166-1 (IC, EA, UK: vat.BuyerCountry).
func parseBuyerCountry(field, v string) (string, error) {
	c, err := wire.Country(field, v)
	if err == nil {
		return c, nil
	}
	u := strings.ToUpper(strings.TrimSpace(v))
	if _, ok := vat.BuyerCountry(u); ok && len(u) == 2 {
		return u, nil
	}
	return "", fiscal.InputError(err)
}

// ParseBuyer validates a buyer. A VAT number is a B2B claim (Art. 18(1)
// Implementing Regulation 282/2011), so "B2C" with a VAT number contradicts
// itself and is refused rather than resolved by a guess.
func ParseBuyer(field string, in Buyer) (BuyerFacts, error) {
	var b BuyerFacts
	var err error
	if in.Country != "" {
		if b.Country, err = parseBuyerCountry(field+"/country", in.Country); err != nil {
			return b, err
		}
	}
	if b.VATNumber, err = wire.VATNumber(field+"/vatNumber", in.VATNumber); err != nil {
		return b, fiscal.InputError(err)
	}
	switch in.BusinessStatus {
	case "":
		b.BusinessStatus = BusinessStatusB2C
		if b.VATNumber != "" {
			b.BusinessStatus = BusinessStatusB2B
		}
	case BusinessStatusB2C:
		if b.VATNumber != "" {
			return b, badRequest(field+"/businessStatus", "is B2C but a vatNumber is given; a VAT number is a B2B claim, so send businessStatus B2B (or no vatNumber)")
		}
		b.BusinessStatus = BusinessStatusB2C
	case BusinessStatusB2B:
		b.BusinessStatus = BusinessStatusB2B
	default:
		return b, badRequest(field+"/businessStatus", "%s is neither %q nor %q", shown.Quote(in.BusinessStatus), BusinessStatusB2C, BusinessStatusB2B)
	}
	if b.Name, err = wire.Text(field+"/name", in.Name); err != nil {
		return b, fiscal.InputError(err)
	}
	pc, err := wire.PostalCode(field+"/postalCode", in.PostalCode)
	if err != nil {
		return b, fiscal.InputError(err)
	}
	if pc != "" && b.Country == "" {
		return b, badRequest(field+"/postalCode", "needs %s/country: a postal code alone does not locate the buyer", field)
	}
	b.PostalCode = pc
	// The customer's location beyond its country, by the decoders POST
	// /settlements uses for its locationEvidence and consumerAddress.
	if b.Evidence, err = wire.Evidence(field+"/locationEvidence", in.LocationEvidence); err != nil {
		return b, fiscal.InputError(err)
	}
	if b.Address, b.PostalCode, err = settlement.BuyerAddressAt(settlement.BuyerFields{Address: field + "/address", Country: field + "/country", PostalCode: field + "/postalCode"},
		in.Address, b.Country, b.PostalCode); err != nil {
		return b, fiscal.InputError(err)
	}
	return b, nil
}

// ParseSupply validates the supply; the kind is required because it
// selects the place-of-supply rule (a kind the ruleset does not know is a
// manual-review reason, not an error).
func ParseSupply(field string, in Supply) (kind, description string, err error) {
	if in.Kind == "" {
		return "", "", badRequest(field+"/kind", "is required (e.g. %q)", vat.KindDigitalService)
	}
	if kind, err = parseToken(field+"/kind", in.Kind); err != nil {
		return "", "", err
	}
	if description, err = wire.Text(field+"/description", in.Description); err != nil {
		return "", "", fiscal.InputError(err)
	}
	return kind, description, nil
}

// AccountSeller returns the facts of the account's own seller, which
// are complete: the account states its Art. 59c position.
func AccountSeller(acc fiscal.Account) SellerFacts {
	over, opted := acc.Seller.OverThreshold, acc.Seller.OptedForDestination
	prof := acc.Seller
	return SellerFacts{
		LegalName:           acc.Seller.LegalName,
		Country:             acc.Seller.Country,
		VATNumber:           acc.Seller.VATNumber,
		OtherEstablishments: acc.Seller.OtherEstablishments,
		OverThreshold:       &over,
		OptedForDestination: &opted,
		IsAccount:           true,
		Profile:             &prof,
	}
}

// MatchAccountSeller reports whether the seller named in a body is the
// account's own seller: the same legal name (compared case-insensitively with
// runs of white space collapsed), the same country, and, when the body gives
// a VAT number, the account's VAT number. When it is, the account's profile
// is authoritative (the ingest key identifies the account and its seller
// establishment), and a threshold fact in the body that
// contradicts it is an error rather than silently overridden.
//
// A profile without overThreshold does not say the seller is under the
// threshold: the engine decides the account's sales on its running totals
// (AccountTotals). So overThreshold true in the body is no contradiction
// when totals (read only then; nil: none) say the account is already over
// EUR 10,000 (vat.CrossBorderTotals.Exceeded): the statement is true, and
// the sale is decided on the totals as without it.
func MatchAccountSeller(field string, s SellerFacts, acc fiscal.Account, totals func() (*vat.CrossBorderTotals, error)) (SellerFacts, bool, error) {
	same := strings.EqualFold(collapseSpace(s.LegalName), collapseSpace(acc.Seller.LegalName)) &&
		sameCountry(s.Country, acc.Seller.Country) &&
		// A number written without its prefix is read under the seller's
		// country, the state that issued it (Art. 215 Directive 2006/112/EC).
		(s.VATNumber == "" || vat.NormalizeNumber(vat.QualifyNumber(s.VATNumber, s.Country)) == vat.NormalizeNumber(acc.Seller.VATNumber))
	if !same {
		return s, false, nil
	}
	m := AccountSeller(acc)
	if s.OverThreshold != nil && *s.OverThreshold != *m.OverThreshold {
		var cb *vat.CrossBorderTotals
		if *s.OverThreshold && totals != nil {
			var err error
			if cb, err = totals(); err != nil {
				return s, false, err
			}
		}
		if cb == nil || !cb.Exceeded() {
			return s, false, badRequest(field+"/overThreshold", "contradicts the account's seller profile (%t) and its Art. 59c running totals, which are authoritative for the account's own seller", *m.OverThreshold)
		}
	}
	if s.OptedForDestination != nil && *s.OptedForDestination != *m.OptedForDestination {
		return s, false, badRequest(field+"/optedForDestination", "contradicts the account's seller profile (%t), which is authoritative for the account's own seller", *m.OptedForDestination)
	}
	if len(s.OtherEstablishments) > 0 && !sameStates(s.OtherEstablishments, acc.Seller.OtherEstablishments) {
		return s, false, badRequest(field+"/otherEstablishments", "contradicts the account's seller profile (%v), which is authoritative for the account's own seller", acc.Seller.OtherEstablishments)
	}
	return m, true, nil
}

// sameStates reports whether two lists of member states name the same
// states (sameCountry), whatever their order and repetitions: a seller's
// establishments are a set (Art. 59c(1)(a) Directive 2006/112/EC).
func sameStates(a, b []string) bool {
	covers := func(x, y []string) bool {
		for _, c := range x {
			if !slices.ContainsFunc(y, func(d string) bool { return sameCountry(c, d) }) {
				return false
			}
		}
		return true
	}
	return covers(a, b) && covers(b, a)
}

// StatedUnderContradicted refuses a body's overThreshold false for the
// account's own seller (matched, MatchAccountSeller) whose profile leaves
// the Art. 59c position to the running totals, when the determination d
// made on them finds the threshold already exceeded before the supply, in
// the previous or the current year (Art. 59c(1)(c) and (2) Directive
// 2006/112/EC): the statement contradicts the ledger, which is
// authoritative for the account's own seller. A supply that itself takes
// the year over, or whose order among the year's supplies is in doubt
// (threshold_order_in_doubt), does not contradict it. asked is the seller
// as the body states it; field is the seller object's pointer.
func StatedUnderContradicted(field string, asked, matched SellerFacts, d vat.Determination) error {
	if !matched.IsAccount || matched.Profile == nil || matched.Profile.OverThreshold || asked.OverThreshold == nil || *asked.OverThreshold || d.Threshold == nil {
		return nil
	}
	if r := d.Threshold.Rule; r != vat.ThresholdCurrentYear && r != vat.ThresholdPreviousYear {
		return nil
	}
	return badRequest(field+"/overThreshold", "contradicts the account's Art. 59c running totals, over EUR 10,000 before this supply (%s), which are authoritative for the account's own seller", d.Threshold.Rule)
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// sameCountry reports whether two country codes name the same country as
// the engine reads them (vat.BuyerCountry): EL and GR are Greece (Art. 215
// Directive 2006/112/EC), UK is GB; XI stays Northern Ireland. A review
// found an account in EL not matched by its own seller named in GR.
func sameCountry(a, b string) bool {
	x, _ := vat.BuyerCountry(a)
	y, _ := vat.BuyerCountry(b)
	return x == y
}

// DetermineWithUnknowns runs rates' Determine (the engine's rate table,
// fiscal.Config.Rates) for a seller whose Art. 59c facts may be unknown. It determines under both assumptions (below the threshold
// and not opted; above it and opted); when the two agree the facts do not
// matter and that is the answer, otherwise the answer is a manual review:
// the engine never guesses which VAT a seller owes.
func DetermineWithUnknowns(rates *vat.RateTable, s SellerFacts, buyer vat.Buyer, supply vat.Supply) vat.Determination {
	low, high := s.Input(buyer, supply), s.Input(buyer, supply)
	high.Seller.OverThreshold, high.Seller.OptedForDestination = boolOr(s.OverThreshold, true), boolOr(s.OptedForDestination, true)
	dLow := rates.Determine(low)
	if s.OverThreshold != nil && s.OptedForDestination != nil {
		return dLow
	}
	dHigh := rates.Determine(high)
	a, _ := json.Marshal(dLow)
	b, _ := json.Marshal(dHigh)
	if string(a) == string(b) {
		return dLow
	}
	return thresholdUnknown(dLow, dHigh)
}

// Input is the vat.Input of a supply by the seller: its stated facts (an
// unknown Art. 59c fact as false: under the threshold, not opted) and
// running totals, and with Profile the account's registrations, its
// choices for special territories and Art. 9a and its attested rate
// conditions. A manual determination (vat.DetermineManually) is checked
// against it, as Determine decides on it.
func (s SellerFacts) Input(buyer vat.Buyer, supply vat.Supply) vat.Input {
	in := vat.Input{
		Seller: vat.Seller{Country: s.Country, OtherEstablishments: s.OtherEstablishments, VATNumber: s.VATNumber, CrossBorder: s.CrossBorder,
			OverThreshold: boolOr(s.OverThreshold, false), OptedForDestination: boolOr(s.OptedForDestination, false)},
		Buyer:  buyer,
		Supply: supply,
	}
	if p := s.Profile; p != nil {
		in.Seller.Registrations, in.Seller.ElectronicInterface, in.Seller.Art9aRebutted, in.Seller.ReviewSpecialTerritories =
			p.Registrations, p.ElectronicInterface, p.Art9aRebutted, p.ReviewSpecialTerritories
		if len(p.RateConditions) > 0 {
			in.Supply.Conditions = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(supply.Conditions), p.RateConditions...))))
		}
	}
	return in
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// thresholdUnknown is the manual review of a supply whose VAT depends on the
// seller's Art. 59c position. Like every manual review of package vat it
// keeps the facts both answers share as hints for the reviewer and drops
// everything an invoice would be built from (vat: builder.result).
func thresholdUnknown(low, high vat.Determination) vat.Determination {
	d := vat.Determination{
		Status:         vat.StatusManualReview,
		Ruleset:        low.Ruleset,
		Jurisdiction:   low.Jurisdiction,
		BuyerTreatment: low.BuyerTreatment,
		Territory:      low.Territory,
	}
	if low.Regime == high.Regime {
		d.Regime = low.Regime
	}
	if low.TaxingCountry == high.TaxingCountry {
		d.TaxingCountry, d.PlaceOfSupply = low.TaxingCountry, low.PlaceOfSupply
	}
	d.Reasons = []vat.Reason{{
		Code: ReasonSellerThresholdUnknown,
		Detail: fmt.Sprintf("Whether the seller exceeded the EUR 10,000 threshold of Art. 59c(1) VAT Directive, or opted for taxation at destination (Art. 59c(3)), decides between %s VAT (%s) and %s VAT (%s); the request does not say. Send seller.overThreshold (and seller.optedForDestination).",
			low.TaxingCountry, low.Regime, high.TaxingCountry, high.Regime),
	}}
	seen := map[string]bool{ReasonSellerThresholdUnknown: true, vat.ReasonOriginTaxation: true}
	for _, r := range append(append([]vat.Reason(nil), low.Reasons...), high.Reasons...) {
		if !seen[r.Code] {
			seen[r.Code] = true
			d.Reasons = append(d.Reasons, r)
		}
	}
	return d
}

// memberStates is how many member states the European Union has (Art. 52
// TEU): no seller has more EU establishments than that.
const memberStates = 27

// InEU27 reports whether c (an upper-case country code; EL, Greece's VAT
// prefix, is accepted for GR) is one of the EU-27: package vat's list of
// member states (Art. 5 Directive 2006/112/EC), the engine's one list.
func InEU27(c string) bool {
	if c == "EL" {
		c = "GR"
	}
	return vat.IsMemberState(c)
}

// InUKVATArea reports whether c is in the UK VAT area the experimental UK
// ruleset covers: Great Britain, Northern Ireland (XI, for services) and the
// Isle of Man (package vat, "# Rulesets"), as vat.InUKVATArea reads it.
func InUKVATArea(c string) bool { return vat.InUKVATArea(c) }

// parseToken accepts a supply kind as the engine does: lower-case letters,
// digits and underscores, at most 64 characters (the ruleset decides
// whether it knows the kind).
func parseToken(field, v string) (string, error) {
	if len(v) > 64 || strings.IndexFunc(v, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
		return "", badRequest(field, "must be a lower-case token such as \"digital_service\"")
	}
	return v, nil
}

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}
