package invoicelaw

import (
	"cmp"
	"strings"

	"github.com/fiscal402/fiscal402/vat"
)

// Directive names Directive 2006/112/EC in citations.
const Directive = "Directive 2006/112/EC"

// Law is the law an invoice follows.
type Law struct {
	// TaxCountry is the state whose invoicing rules apply (Art. 219a), ISO
	// 3166-1 (GR, not EL), or GB under UK law; "" when no EU or UK
	// invoicing rules apply.
	TaxCountry string
	// Basis cites the rule that chose TaxCountry.
	Basis string
	// SellerVAT is the identifier under which the seller makes the supply
	// (Art. 226(3); for GB, its VRN, VAT Regulations 1995 reg. 14(1)(c)).
	SellerVAT string
}

// For decides the invoicing law of a determined supply (Art. 219a
// Directive 2006/112/EC; datenbank.nwb.de/Dokument/Anzeigen/251304_219a,
// the text in force since 1 January 2019):
//
//   - UK ruleset (UK_DOMESTIC, UK_B2C, UK_REVERSE_CHARGE, and a UK seller's
//     supply outside the UK): GB. A UK VAT invoice carries the supplier's
//     VRN (VAT Regulations 1995, SI 1995/2518, reg. 14(1)) and the VAT in
//     sterling (https://www.gov.uk/guidance/vat-tertiary-legislation/valuation);
//     for the reverse charge UK VAT is due too, by the customer.
//   - DOMESTIC: the state where the supply is taxed (Art. 219a(1)).
//   - REVERSE_CHARGE_B2B by a seller established in the EU: its state of
//     establishment (Art. 219a(2)(a)(i): supplier not established where
//     the supply takes place, customer liable). A seller established
//     outside the EU has no such state, so paragraph 1 applies: the
//     customer's state, where the supply takes place.
//   - OSS_B2C: the member state of identification of the special scheme
//     the seller uses (Art. 219a(2)(b)): the oss_union or oss_non_union
//     registration's country; unstated, for the Union scheme the seller's
//     state of establishment (Art. 369a(2)) or its only EU fixed
//     establishment. A seller that declares the supply in the state of
//     consumption instead (a national registration there and no OSS) and
//     a non-Union seller whose state of identification is not stated
//     follow that state's rules (Art. 219a(1)); Seller.Registrations nil
//     means the seller is taken to be registered wherever its sales are
//     taxed.
//   - OUTSIDE_SCOPE (EU ruleset): the supplier's state of establishment
//     (Art. 219a(2)(a)(ii): supply deemed not to take place within the
//     Community).
//
// The national currency (Art. 230) follows TaxCountry: for OSS supplies
// the VAT payable is declared in the return of the member state of
// identification, in euro or that state's currency (Arts. 365, 369g; the
// return converts at the period end, Arts. 366(2), 369h(2)), not at the
// supply's rate in the currency of the state of consumption.
//
// Only the registrations that apply on the day of supply
// (det.SupplyDate, vat.Registration.AppliesOn) count: a special scheme
// the seller joined later, or left, names no member state of
// identification for this supply.
func For(det vat.Determination, s Seller) Law {
	s.Registrations = vat.RegistrationsOn(s.Registrations, det.SupplyDate)
	sellerCountry, sellerEU := vat.MemberStateOf(s.Country) // as Determine reads it: Monaco is France (Art. 7(1))
	switch {
	case det.Jurisdiction == vat.JurisdictionUK:
		return Law{TaxCountry: "GB", SellerVAT: ukVRN(s),
			Basis: "UK VAT law: VAT Regulations 1995 reg. 13 and 14 (VAT invoice, supplier's VRN), VAT in sterling (VAT tertiary legislation, valuation)"}
	case det.Regime == vat.RegimeDomestic:
		c := vatCountry(det.TaxingCountry)
		return Law{TaxCountry: c, SellerVAT: nationalNumber(s, c),
			Basis: "Art. 219a(1) " + Directive + ": the rules of the member state where the supply takes place"}
	case det.Regime == vat.RegimeReverseChargeB2B && sellerEU:
		return Law{TaxCountry: sellerCountry, SellerVAT: nationalNumber(s, sellerCountry),
			Basis: "Art. 219a(2)(a)(i) " + Directive + ": reverse charge, the rules of the supplier's member state of establishment"}
	case det.Regime == vat.RegimeReverseChargeB2B:
		c := vatCountry(det.TaxingCountry)
		return Law{TaxCountry: c, SellerVAT: s.VATNumber,
			Basis: "Art. 219a(1) " + Directive + ": a supplier established outside the EU has no member state of establishment whose rules Art. 219a(2)(a) could apply; the rules of the member state where the supply takes place"}
	case det.Regime == vat.RegimeOSSB2C:
		return ossLaw(det, s)
	case det.Regime == vat.RegimeOutsideScope && sellerEU:
		return Law{TaxCountry: sellerCountry, SellerVAT: s.VATNumber,
			Basis: "Art. 219a(2)(a)(ii) " + Directive + ": a supply outside the Community, the rules of the supplier's member state of establishment"}
	}
	return Law{SellerVAT: s.VATNumber, Basis: "no EU or UK invoicing rules apply to this supply"}
}

// Or is l when it is known (not zero: the law a document already
// followed, such as the invoice a credit note corrects), else the law For
// decides for det and s.
func (l Law) Or(det vat.Determination, s Seller) Law {
	if l != (Law{}) {
		return l
	}
	return For(det, s)
}

// The bases of the OSS schemes' invoicing rules (constants: they were
// built per supply).
const (
	ossBasisUnion    = "Art. 219a(2)(b) " + Directive + ": the rules of the member state of identification of the Union scheme"
	ossBasisNonUnion = "Art. 219a(2)(b) " + Directive + ": the rules of the member state of identification of the non-Union scheme"
	ossBasisNational = "Art. 219a(1) " + Directive + ": the seller declares the supply through its registration in the member state of consumption (Art. 214(1)(a)), not through the OSS"
	ossBasisUnstated = "Art. 219a(1) " + Directive + ": the seller's member state of identification is not stated (Seller.Registrations), so the rules of the member state where the supply takes place"
)

// OSSDeclaration reads, from the basis of an OSS_B2C supply's invoicing
// law (Law.Basis, which a record keeps as its invoice's taxBasis), how the
// seller declared the supply when it was made: through a special scheme
// whose member state of identification is the law's TaxCountry (Art.
// 219a(2)(b) Directive 2006/112/EC), or in the return of the member state
// of consumption where it is registered (Art. 219a(1), 214(1)(a)), or
// neither, the seller stating no member state of identification for the
// scheme then (unstated). All false for any other basis.
func OSSDeclaration(basis string) (throughOSS, national, unstated bool) {
	return strings.HasPrefix(basis, ossBasisUnion) || strings.HasPrefix(basis, ossBasisNonUnion), basis == ossBasisNational, basis == ossBasisUnstated
}

// ossLaw is For for OSS_B2C supplies.
func ossLaw(det vat.Determination, s Seller) Law {
	taxing := vatCountry(det.TaxingCountry)
	scheme, basis := vat.RegistrationOSSUnion, ossBasisUnion
	if det.Scheme != vat.SchemeUnion {
		scheme, basis = vat.RegistrationOSSNonUnion, ossBasisNonUnion
	}
	if g, ok := registration(s, scheme, ""); ok && vat.IsMemberState(vatCountry(g.Country)) {
		return Law{TaxCountry: vatCountry(g.Country), SellerVAT: cmp.Or(g.Number, s.VATNumber), Basis: basis}
	}
	if s.Registrations != nil {
		if _, ok := registration(s, vat.RegistrationNational, taxing); ok {
			return Law{TaxCountry: taxing, SellerVAT: nationalNumber(s, taxing),
				Basis: ossBasisNational}
		}
	}
	if det.Scheme == vat.SchemeUnion {
		if c, ok := vat.MemberStateOf(s.Country); ok {
			return Law{TaxCountry: c, SellerVAT: s.VATNumber, Basis: ossBasisUnion + " (Art. 369a(2): the member state of establishment)"}
		}
		var fixed []string
		for _, c := range s.OtherEstablishments {
			if c = vatCountry(c); vat.IsMemberState(c) {
				fixed = append(fixed, c)
			}
		}
		if len(fixed) == 1 {
			return Law{TaxCountry: fixed[0], SellerVAT: s.VATNumber, Basis: ossBasisUnion + " (Art. 369a(2): the only member state with a fixed establishment)"}
		}
	}
	return Law{TaxCountry: taxing, SellerVAT: s.VATNumber,
		Basis: ossBasisUnstated}
}

// registration is the seller's first registration of scheme (in country,
// when given).
func registration(s Seller, scheme, country string) (vat.Registration, bool) {
	for _, g := range s.Registrations {
		if g.Scheme == scheme && (country == "" || vatCountry(g.Country) == country) {
			return g, true
		}
	}
	return vat.Registration{}, false
}

// nationalNumber is the VAT number under which the seller supplies in
// country (Art. 226(3), Art. 214): the national registration's number
// there, else the seller's VAT number when it is that state's (prefix EL
// for Greece). A seller taxed in a state where it has no number the account
// states gets none: the invoice cannot be rendered (BR-S-02) and the record
// waits for review, rather than carrying another state's number.
func nationalNumber(s Seller, country string) string {
	if g, ok := registration(s, vat.RegistrationNational, country); ok && g.Number != "" {
		return withPrefix(g.Number, vatPrefix(country))
	}
	if strings.HasPrefix(s.VATNumber, vatPrefix(country)) {
		return s.VATNumber
	}
	return ""
}

// ukVRN is the seller's UK VAT registration number: its uk_vrn
// registration's number, else its VAT number when that is a UK one (GB,
// or XI for Northern Ireland). Never an EU number (reg. 14(1)(c)).
func ukVRN(s Seller) string {
	if g, ok := registration(s, vat.RegistrationUKVRN, ""); ok && g.Number != "" {
		n := strings.ToUpper(strings.ReplaceAll(g.Number, " ", ""))
		if strings.HasPrefix(n, "GB") || strings.HasPrefix(n, "XI") {
			return n
		}
		return "GB" + n
	}
	if strings.HasPrefix(s.VATNumber, "GB") || strings.HasPrefix(s.VATNumber, "XI") {
		return s.VATNumber
	}
	return ""
}

// withPrefix writes a registration number with its country prefix.
func withPrefix(n, prefix string) string {
	n = strings.ToUpper(strings.ReplaceAll(n, " ", ""))
	if strings.HasPrefix(n, prefix) {
		return n
	}
	return prefix + n
}

// vatPrefix is a member state's VAT-number prefix (Art. 215: EL for
// Greece).
func vatPrefix(country string) string {
	if country == "GR" {
		return "EL"
	}
	return country
}

// vatCountry normalises a country as package vat writes it: EL → GR,
// upper case; Monaco is France (Art. 7(1) Directive 2006/112/EC), so a
// registration or establishment stated in MC is a French one, as
// Determine reads it.
func vatCountry(c string) string {
	c = strings.ToUpper(strings.TrimSpace(c))
	switch c {
	case "EL":
		return "GR"
	case "MC":
		return "FR"
	}
	return c
}
