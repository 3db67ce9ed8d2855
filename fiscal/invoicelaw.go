package fiscal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// Invoicing law (issue 18). A determination says what VAT is due; the
// invoice must also follow the invoicing rules of one state: which state,
// in which currency the VAT is stated, which VAT number the seller invoices
// under, what the customer's details must be. This file decides those and
// hands them to package ubl (Invoice.TaxCountry turns on its law checks);
// whatever the invoice still lacks sends the record to review with a
// reason, never to a non-compliant invoice and never to a 500.

// Reason codes the invoicing law adds to a record pending review.
const (
	// ReasonNationalRateUnavailable: the VAT must be stated in the
	// national currency of the invoicing state (Art. 230 Directive
	// 2006/112/EC) and the rate source has no rate for it at the date the
	// state's rule selects (fx.ErrNationalRateUnavailable). The ECB feeds
	// (package rates) carry every currency; the embedded table holds USD
	// only.
	ReasonNationalRateUnavailable = "national_rate_unavailable"
	// ReasonNationalRateRequired: the invoicing state does not accept the
	// ECB rate and the engine has none of the rates it accepts
	// (fx.ErrNationalRateRequired): the United Kingdom, unless the seller
	// holds HMRC's agreement to the ECB rate (Seller.UKRateAgreement).
	ReasonNationalRateRequired = "national_rate_required"
	// ReasonBuyerAddressMissing: a business sale's invoice lacks the
	// customer's full name or address (Art. 226(5); Art. 220a(2) rules out
	// a simplified invoice for reverse charge): neither the request
	// (consumerName, consumerAddress) nor the registry gave them.
	ReasonBuyerAddressMissing = "buyer_address_missing"
	// ReasonInvoiceRulesFailed: the invoice would break rules of EN 16931,
	// Peppol (national rules included) or invoicing law; the detail lists
	// the rule ids (ubl.ValidationError.Rules) and what each needs.
	ReasonInvoiceRulesFailed = "invoice_rules_failed"
)

// directive names Directive 2006/112/EC in citations.
const directive = "Directive 2006/112/EC"

// invoiceLaw is the law an invoice follows.
type invoiceLaw struct {
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

// lawFor decides the invoicing law of a determined supply (Art. 219a
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
func lawFor(det vat.Determination, s Seller) invoiceLaw {
	sellerCountry := vatCountry(s.Country)
	switch {
	case det.Jurisdiction == vat.JurisdictionUK:
		return invoiceLaw{TaxCountry: "GB", SellerVAT: ukVRN(s),
			Basis: "UK VAT law: VAT Regulations 1995 reg. 13 and 14 (VAT invoice, supplier's VRN), VAT in sterling (VAT tertiary legislation, valuation)"}
	case det.Regime == vat.RegimeDomestic:
		c := vatCountry(det.TaxingCountry)
		return invoiceLaw{TaxCountry: c, SellerVAT: nationalNumber(s, c),
			Basis: "Art. 219a(1) " + directive + ": the rules of the member state where the supply takes place"}
	case det.Regime == vat.RegimeReverseChargeB2B && euMember(sellerCountry):
		return invoiceLaw{TaxCountry: sellerCountry, SellerVAT: nationalNumber(s, sellerCountry),
			Basis: "Art. 219a(2)(a)(i) " + directive + ": reverse charge, the rules of the supplier's member state of establishment"}
	case det.Regime == vat.RegimeReverseChargeB2B:
		c := vatCountry(det.TaxingCountry)
		return invoiceLaw{TaxCountry: c, SellerVAT: s.VATNumber,
			Basis: "Art. 219a(1) " + directive + ": a supplier established outside the EU has no member state of establishment whose rules Art. 219a(2)(a) could apply; the rules of the member state where the supply takes place"}
	case det.Regime == vat.RegimeOSSB2C:
		return ossLaw(det, s)
	case det.Regime == vat.RegimeOutsideScope && euMember(sellerCountry):
		return invoiceLaw{TaxCountry: sellerCountry, SellerVAT: s.VATNumber,
			Basis: "Art. 219a(2)(a)(ii) " + directive + ": a supply outside the Community, the rules of the supplier's member state of establishment"}
	}
	return invoiceLaw{SellerVAT: s.VATNumber, Basis: "no EU or UK invoicing rules apply to this supply"}
}

// ossLaw is lawFor for OSS_B2C supplies.
func ossLaw(det vat.Determination, s Seller) invoiceLaw {
	taxing := vatCountry(det.TaxingCountry)
	scheme, name := vat.RegistrationOSSUnion, "Union"
	if det.Scheme != vat.SchemeUnion {
		scheme, name = vat.RegistrationOSSNonUnion, "non-Union"
	}
	basis := "Art. 219a(2)(b) " + directive + ": the rules of the member state of identification of the " + name + " scheme"
	if g, ok := registration(s, scheme, ""); ok && euMember(vatCountry(g.Country)) {
		return invoiceLaw{TaxCountry: vatCountry(g.Country), SellerVAT: cmp.Or(g.Number, s.VATNumber), Basis: basis}
	}
	if s.Registrations != nil {
		if _, ok := registration(s, vat.RegistrationNational, taxing); ok {
			return invoiceLaw{TaxCountry: taxing, SellerVAT: nationalNumber(s, taxing),
				Basis: "Art. 219a(1) " + directive + ": the seller declares the supply through its registration in the member state of consumption (Art. 214(1)(a)), not through the OSS"}
		}
	}
	if det.Scheme == vat.SchemeUnion {
		if c := vatCountry(s.Country); euMember(c) {
			return invoiceLaw{TaxCountry: c, SellerVAT: s.VATNumber, Basis: basis + " (Art. 369a(2): the member state of establishment)"}
		}
		var fixed []string
		for _, c := range s.OtherEstablishments {
			if c = vatCountry(c); euMember(c) {
				fixed = append(fixed, c)
			}
		}
		if len(fixed) == 1 {
			return invoiceLaw{TaxCountry: fixed[0], SellerVAT: s.VATNumber, Basis: basis + " (Art. 369a(2): the only member state with a fixed establishment)"}
		}
	}
	return invoiceLaw{TaxCountry: taxing, SellerVAT: s.VATNumber,
		Basis: "Art. 219a(1) " + directive + ": the seller's member state of identification is not stated (Seller.Registrations), so the rules of the member state where the supply takes place"}
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
// upper case.
func vatCountry(c string) string {
	c = strings.ToUpper(strings.TrimSpace(c))
	if c == "EL" {
		return "GR"
	}
	return c
}

// euMember reports whether c (ISO, GR for Greece) is an EU member state.
func euMember(c string) bool {
	_, ok := ubl.NationalCurrency(c)
	return ok && c != "GB"
}

// sellerParty is the seller as the invoice under law shows it: the
// account's profile, with the VAT identifier of that law (a non-Union OSS
// number as its tax registration identifier, BT-32: BR-CO-09 keeps it out
// of BT-31).
func sellerParty(s Seller, law invoiceLaw) ubl.Party {
	p := ubl.Party{
		Name:              s.LegalName,
		LegalID:           s.LegalID,
		LegalIDScheme:     s.LegalIDScheme,
		TaxRegistrationID: s.TaxRegistrationID,
		Street:            s.Address.Street,
		AdditionalStreet:  s.Address.AdditionalStreet,
		City:              s.Address.City,
		PostalCode:        s.Address.PostalCode,
		Subdivision:       s.Address.Subdivision,
		Country:           isoCountry(cmp.Or(strings.ToUpper(s.Address.Country), strings.ToUpper(s.Country))),
		Contact:           ubl.Contact{Name: s.Contact.Name, Telephone: s.Contact.Telephone, Email: s.Contact.Email},
	}
	if ea := s.ElectronicAddress; ea != nil {
		p.EndpointID, p.EndpointScheme = ea.ID, ea.Scheme
	}
	if strings.HasPrefix(law.SellerVAT, "EU") {
		p.TaxRegistrationID = law.SellerVAT
	} else {
		p.VATNumber = law.SellerVAT
	}
	return p
}

// buyerParty is the customer as the invoice shows it, and what a business
// sale's invoice lacks of the customer's full name and address (Art.
// 226(5)): the name from the registry when it discloses one, else the
// request's; the address from the request's consumerAddress, else from the
// registry's answer (ubl.AddressFromRegistry; VIES's "---" is no address).
// A consumer without a name is a "Private customer" (BR-07 needs a name; a
// simplified invoice may omit the consumer's, Art. 226b); a business has
// no such fallback.
func buyerParty(r *Record) (ubl.Party, []string) {
	det := r.Classification
	b2b := det.BuyerTreatment == vat.TreatmentB2B
	reg := r.Buyer.Registry
	p := ubl.Party{Country: isoCountry(r.Buyer.Country), PostalCode: r.Buyer.PostalCode}
	if b2b && reg != nil {
		p.VATNumber = reg.CountryCode + reg.Number
	}
	switch {
	case b2b && reg != nil && disclosed(reg.Name):
		p.Name = strings.Join(strings.Fields(reg.Name), " ")
	case r.Buyer.Name != "":
		p.Name = r.Buyer.Name
	case !b2b:
		p.Name = "Private customer"
	}
	if a := r.Buyer.Address; a != nil {
		p.Street, p.AdditionalStreet, p.City, p.Subdivision = a.Street, a.AdditionalStreet, a.City, a.Subdivision
		if a.PostalCode != "" {
			p.PostalCode = a.PostalCode
		}
	} else if b2b && reg != nil {
		ra := ubl.AddressFromRegistry(reg.Address)
		p.Street, p.AdditionalStreet, p.AddressLine3, p.City = ra.Street, ra.AdditionalStreet, ra.AddressLine3, ra.City
	}
	if !b2b {
		return p, nil
	}
	var missing []string
	if p.Name == "" {
		missing = append(missing, "name")
	}
	if p.Street == "" {
		missing = append(missing, "street")
	}
	if p.City == "" {
		missing = append(missing, "town")
	}
	return p, missing
}

// disclosed reports whether a registry field says something: VIES sends
// "---" for what a member state does not disclose.
func disclosed(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && s != "---"
}

// addressReason is the review reason of a business sale whose invoice
// lacks the customer's name or address.
func addressReason(r *Record, missing []string) vat.Reason {
	tried := "the request gave no consumerAddress"
	if r.Buyer.Address != nil {
		tried = "the request's consumerAddress lacks them"
	}
	if reg := r.Buyer.Registry; reg != nil {
		switch {
		case r.Buyer.Address != nil:
		case !disclosed(reg.Address):
			tried += " and the registry (" + reg.Registry + ") disclosed no address"
		default:
			tried += " and the registry's address could not be read as street and town"
		}
	}
	return vat.Reason{Code: ReasonBuyerAddressMissing, Detail: fmt.Sprintf(
		"The invoice of a business sale must state the customer's full name and address (Art. 226(5) %s; Art. 220a(2) rules out a simplified invoice for a reverse charge); it lacks the customer's %s: %s. Resolve with consumerName and consumerAddress.",
		directive, strings.Join(missing, ", "), tried)}
}

// nationalVAT states the supply's VAT in the national currency of the
// invoicing state when it is not the euro (Art. 230 Directive
// 2006/112/EC; fx.NationalCurrencyFor: CZ, DK, HU, PL, RO, SE, BG before
// 1 January 2026, GB): the exact net and VAT converted with
// fx.ConvertEURToNational at the rate the state's rule selects, for the
// record, and the rate for the invoice (ubl converts the invoice's own
// breakdown at it, BT-111). A rate that cannot be had is a review reason,
// never a substitute rate; any other error is returned.
func (e *Engine) nationalVAT(ctx context.Context, r *Record, s Seller, law invoiceLaw, a amounts) (*RecordNationalFX, *ubl.TaxCurrency, *vat.Reason, error) {
	at, err := time.Parse(time.RFC3339Nano, r.Settlement.Timestamp)
	if err != nil {
		return nil, nil, nil, &Error{Code: CodeInternal, Detail: "the record's settlement time cannot be read", Err: err}
	}
	policy := fx.LatestPublishedAt
	if rt := r.FX.USDPerEUR; rt != nil && rt.Policy != "" {
		policy = rt.Policy // the Art. 91(2) reading the record's EUR conversion used
	}
	vatConv, netConv, reason, err := nationalConversion(ctx, e.cfg.FX, policy, s, law, at, a.vatExact, a.netExact)
	if err != nil || reason != nil || vatConv == nil {
		return nil, nil, reason, err
	}
	rate := vatConv.Rate
	rec := &RecordNationalFX{
		Country: vatConv.Country, Currency: vatConv.Currency, Basis: vatConv.basis, Rate: &rate, Rule: vatConv.Rule,
		NetExact: netConv.AmountExact, VATExact: vatConv.AmountExact, Rounding: vatConv.Rounding,
	}
	tc := &ubl.TaxCurrency{Code: vatConv.Currency, Rate: rate.Value, RateDate: rate.RateDate, RateSource: rateSource(rate, vatConv.Rule)}
	return rec, tc, nil, nil
}

// nationalConv is a conversion with the basis of its currency.
type nationalConv struct {
	fx.NationalConversion
	basis string
}

// nationalConversion converts the exact VAT and net of a supply at instant
// at into the national currency of law's tax country, when that is not the
// euro; (nil, nil, nil, nil) when no second currency is needed. A rate
// that cannot be had is a reason. For GB the ECB rate is refused
// (fx.ErrNationalRateRequired) unless the seller holds HMRC's written
// agreement to it (Seller.UKRateAgreement; VAT tertiary legislation on
// valuation, option (c)): the rule is then recorded as that agreement.
func nationalConversion(ctx context.Context, src fx.Source, policy fx.Policy, s Seller, law invoiceLaw, at time.Time, vatExact, netExact decimal.Decimal) (*nationalConv, *nationalConv, *vat.Reason, error) {
	if law.TaxCountry == "" {
		return nil, nil, nil, nil
	}
	nc, ok, err := fx.NationalCurrencyFor(law.TaxCountry, at)
	if errors.Is(err, fx.ErrNoNationalRule) {
		if cur, _ := ubl.NationalCurrency(law.TaxCountry); cur != "" && cur != "EUR" {
			return nil, nil, &vat.Reason{Code: ReasonNationalRateUnavailable, Detail: fmt.Sprintf(
				"The VAT must also be stated in %s (Art. 230 %s; %s), and no rate rule is known for a supply on %s: %v.", cur, directive, law.Basis, at.UTC().Format(time.DateOnly), err)}, nil
		}
		return nil, nil, nil, nil
	}
	if err != nil || !ok {
		return nil, nil, nil, err
	}
	if nc.Country == "GB" && strings.TrimSpace(s.UKRateAgreement) != "" {
		nc.Rule = fx.RateRule{
			ID: "gb-hmrc-agreed-ecb", ECB: fx.ECBAllowed, Timing: fx.TimingChargeableEvent,
			NationalRate: nc.Rule.NationalRate,
			Law: "VAT tertiary legislation on valuation (VATA 1994 Sch. 6 para 11; originally VAT Notice 700), option (c): a rate HMRC agreed in writing, " +
				"here the ECB euro foreign exchange reference rate, agreement " + strings.TrimSpace(s.UKRateAgreement) +
				" (https://www.gov.uk/guidance/vat-tertiary-legislation/valuation)",
		}
	}
	vatConv, err := fx.ConvertEURToNational(ctx, src, vatExact, nc, at, policy)
	var netConv fx.NationalConversion
	if err == nil {
		netConv, err = fx.ConvertEURToNational(ctx, src, netExact, nc, at, policy)
	}
	switch {
	case errors.Is(err, fx.ErrNationalRateRequired):
		return nil, nil, &vat.Reason{Code: ReasonNationalRateRequired, Detail: fmt.Sprintf(
			"The VAT must also be stated in %s (%s: %s), at %s; the ECB rate is none of these and the engine has no other rate. A seller with HMRC's written agreement to the ECB rate states it as seller.ukRateAgreement.",
			nc.Currency, nc.Basis, nc.Rule.Law, nc.Rule.NationalRate)}, nil
	case errors.Is(err, fx.ErrNationalRateUnavailable), errors.Is(err, fx.ErrNoRate), errors.Is(err, fx.ErrNotYetPublished):
		return nil, nil, &vat.Reason{Code: ReasonNationalRateUnavailable, Detail: fmt.Sprintf(
			"The VAT must also be stated in %s (Art. 230 %s; %s), converted under rule %s (%s), and the rate source has no such rate: %v. The ECB feeds carry it; no other rate is substituted.",
			nc.Currency, directive, law.Basis, nc.Rule.ID, nc.Rule.Law, err)}, nil
	case err != nil:
		return nil, nil, nil, &Error{Code: CodeInternal, Detail: "national-currency rate lookup failed", Err: err}
	}
	return &nationalConv{vatConv, nc.Basis}, &nationalConv{netConv, nc.Basis}, nil, nil
}

// NationalCurrencyReason predicts, for a determined supply by s at instant
// at, the review reason the invoicing law gives it when its VAT must also
// be stated in a national currency (Art. 230; the invoicing state is
// chosen as for the invoice, Art. 219a) and src has no rate the state
// accepts: national_rate_unavailable, or national_rate_required (the UK
// without Seller.UKRateAgreement). nil when no second currency is needed
// or the rate exists. The capability check (package catalog) predicts
// with it what recording the supply would give; the customer's details
// and the rules of the invoice itself are known only then.
func NationalCurrencyReason(ctx context.Context, src fx.Source, policy fx.Policy, det vat.Determination, s Seller, at time.Time) (*vat.Reason, error) {
	if !det.Determined() {
		return nil, nil
	}
	_, _, reason, err := nationalConversion(ctx, src, cmp.Or(policy, fx.LatestPublishedAt), s, lawFor(det, s), at, decimal.Zero, decimal.Zero)
	return reason, err
}

// rateSource is the invoice's statement of the national rate's source and
// rule (ubl appends it to the note with the rate and its date).
func rateSource(rate fx.Rate, rule fx.RateRule) string {
	when := "the latest published at the time of the supply"
	if rule.Timing == fx.TimingDayBefore {
		when = "published for the last day before the day of the supply"
	}
	return fmt.Sprintf("ECB euro foreign exchange reference rate %s, %s; rule %s under Art. 91(2) %s", rate.Source, when, rule.ID, directive)
}

// reverseChargeDeadline is the last day a reverse-charge invoice may be
// issued: the 15th of the month after the supply (Art. 222 Directive
// 2006/112/EC, for services under Art. 196). "" when the supply date
// cannot be read.
func reverseChargeDeadline(supplyDate string) string {
	d, err := time.Parse(time.DateOnly, supplyDate)
	if err != nil {
		return ""
	}
	return time.Date(d.Year(), d.Month()+1, 15, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// rulesReason is the review reason of an invoice that cannot be rendered:
// the rule ids and, per problem, the field and what it needs. skip are
// rules another reason of the record already explains.
func rulesReason(ve *ubl.ValidationError, law invoiceLaw, skip ...string) *vat.Reason {
	var rules, details []string
	for _, p := range ve.Problems {
		if p.Rule != "" && slices.Contains(skip, p.Rule) {
			continue
		}
		id := p.Rule
		if id == "" {
			id = "field:" + p.Field
		}
		if !slices.Contains(rules, id) {
			rules = append(rules, id)
		}
		details = append(details, p.Error())
	}
	if len(rules) == 0 {
		return nil
	}
	where := "no EU or UK invoicing law"
	if law.TaxCountry != "" {
		where = "the invoicing rules of " + law.TaxCountry
	}
	return &vat.Reason{Code: ReasonInvoiceRulesFailed, Detail: fmt.Sprintf(
		"The invoice cannot be issued under %s (%s): it would break %s. %s. The seller's account or the buyer facts must supply what is missing.",
		where, law.Basis, strings.Join(rules, ", "), strings.Join(details, "; "))}
}

// Kinds of sale of an InvoicingProblem.
const (
	SaleB2C              = "b2c"                // a sale to a consumer
	SaleB2BDomestic      = "b2b_domestic"       // a sale to a business in the tax country
	SaleB2BReverseCharge = "b2b_reverse_charge" // a reverse-charge sale to a business
	SaleEveryB2B         = "every_b2b_invoice"  // data each business invoice needs that no account holds
)

// InvoicingProblem is one reason an invoice of the seller could not be
// issued, found before any sale: for the sales of one kind under the
// invoicing rules of one country, the seller's field (a JSON pointer into
// the account's seller, or the renderer's field when the account has no
// such field) and the rule it would break.
type InvoicingProblem struct {
	TaxCountry string `json:"taxCountry"`
	Sale       string `json:"sale"`
	Field      string `json:"field"`
	Rule       string `json:"rule,omitempty"`
	Detail     string `json:"detail"`
}

func (p InvoicingProblem) String() string {
	rule := p.Rule
	if rule == "" {
		rule = "limit"
	}
	return fmt.Sprintf("%s %s: %s %s: %s", p.TaxCountry, p.Sale, p.Field, rule, p.Detail)
}

// InvoicingError lists the problems CheckInvoicing found.
type InvoicingError struct {
	Problems []InvoicingProblem
}

func (e *InvoicingError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "the seller cannot be invoiced for every sale; these sales would wait for review (invoice_rules_failed): " + strings.Join(parts, "; ")
}

// Rules returns the distinct rule ids of the problems, in order.
func (e *InvoicingError) Rules() []string {
	var out []string
	for _, p := range e.Problems {
		if p.Rule != "" && !slices.Contains(out, p.Rule) {
			out = append(out, p.Rule)
		}
	}
	return out
}

// CheckInvoicing tells, before any sale, which invoices of the seller could
// not be issued, so that an account is told when it is created rather than
// at its first sale (its sales would wait for review, invoice_rules_failed
// or national_rate_required). It runs ubl.CheckSeller under the invoicing
// rules of each country the seller's establishment and registrations imply
// (lawFor's choices):
//
//   - its EU state of establishment and each EU fixed establishment or
//     national registration: sales to consumers and to businesses there,
//     and, at home, reverse-charge sales to businesses elsewhere (Art.
//     219a(1), (2)(a)(i)); the seller shown with the VAT number of that
//     state (Art. 226(3));
//   - the member state of identification of its Union or non-Union OSS:
//     sales to consumers (Art. 219a(2)(b)), shown with the scheme's number;
//   - GB for a UK establishment or a UK VRN: UK sales, shown with the VRN
//     (VAT Regulations 1995 reg. 14), and the sterling rate (a UK invoice
//     without Seller.UKRateAgreement waits for review).
//
// Business invoices are Peppol invoices only when the seller has a Peppol
// address (given or derived from its VAT number); without one they are
// plain EN 16931 and the Peppol lists do not apply. It returns nil, or an
// *InvoicingError. Check the seller with Normalised first.
func (s Seller) CheckInvoicing() error {
	s = s.normalised()
	home := vatCountry(s.Country)
	type target struct {
		country string
		law     invoiceLaw
		sales   []string
	}
	var targets []target
	add := func(c string, law invoiceLaw, sales ...string) {
		for i, t := range targets {
			if t.country == c && t.law.SellerVAT == law.SellerVAT {
				for _, sale := range sales {
					if !slices.Contains(t.sales, sale) {
						targets[i].sales = append(targets[i].sales, sale)
					}
				}
				return
			}
		}
		targets = append(targets, target{c, law, sales})
	}
	if euMember(home) {
		add(home, invoiceLaw{TaxCountry: home, SellerVAT: nationalNumber(s, home)}, SaleB2C, SaleB2BDomestic, SaleB2BReverseCharge)
	}
	for _, c := range s.OtherEstablishments {
		if c = vatCountry(c); euMember(c) {
			add(c, invoiceLaw{TaxCountry: c, SellerVAT: nationalNumber(s, c)}, SaleB2C, SaleB2BDomestic)
		}
	}
	for _, g := range s.Registrations {
		c := vatCountry(g.Country)
		switch g.Scheme {
		case vat.RegistrationNational:
			if euMember(c) {
				add(c, invoiceLaw{TaxCountry: c, SellerVAT: nationalNumber(s, c)}, SaleB2C, SaleB2BDomestic)
			}
		case vat.RegistrationOSSUnion, vat.RegistrationOSSNonUnion:
			if euMember(c) {
				add(c, invoiceLaw{TaxCountry: c, SellerVAT: cmp.Or(g.Number, s.VATNumber)}, SaleB2C)
			}
		}
	}
	if _, vrn := registration(s, vat.RegistrationUKVRN, ""); vrn || home == "GB" {
		sales := []string{SaleB2C, SaleB2BReverseCharge}
		if home == "GB" {
			sales = []string{SaleB2C, SaleB2BDomestic}
		}
		add("GB", invoiceLaw{TaxCountry: "GB", SellerVAT: ukVRN(s)}, sales...)
	}
	var out []InvoicingProblem
	for _, t := range targets {
		party := sellerParty(s, t.law)
		check := ubl.CheckSeller(party, t.country)
		_, derived := ubl.EASForVATNumber(party.VATNumber)
		peppol := derived || party.EndpointID != ""
		lists := map[string][]*ubl.FieldError{SaleB2C: check.B2C}
		if peppol {
			lists[SaleB2BDomestic], lists[SaleB2BReverseCharge] = check.B2BStandard, check.B2BReverseCharge
		}
		// ubl.CheckSeller gives every seller with a Greek postal address
		// the myDATA references, whatever the tax country; an invoice
		// under another country's rules (a UK invoice with the GB VRN) is
		// no Greek invoice and carries none, so what CheckSeller says of
		// them there is not the seller's.
		greekRules := t.country == "GR"
		for _, sale := range t.sales {
			for _, fe := range lists[sale] {
				if fe.Field == "MyDATA" && !greekRules {
					continue
				}
				out = append(out, InvoicingProblem{TaxCountry: t.country, Sale: sale, Field: sellerField(fe.Field, t.law), Rule: fe.Rule, Detail: problemDetail(fe)})
			}
		}
		if peppol && greekRules && slices.ContainsFunc(t.sales, func(x string) bool { return x != SaleB2C }) {
			for _, fe := range check.PerInvoice {
				out = append(out, InvoicingProblem{TaxCountry: t.country, Sale: SaleEveryB2B, Field: fe.Field, Rule: fe.Rule,
					Detail: problemDetail(fe) + " (the engine does not transmit invoices to myDATA)"})
			}
			{
				// GR-R-001: a Greek seller's Peppol invoice is numbered
				// TIN|date|branch|type|series|number (ubl.GreekInvoiceNumber)
				// with a sequential number; the engine numbers invoices
				// with their record ids.
				out = append(out, InvoicingProblem{TaxCountry: t.country, Sale: SaleEveryB2B, Field: "ID", Rule: "GR-R-001",
					Detail: "a Greek seller's Peppol invoice number has the form TIN|DD/MM/YYYY|branch|type|series|number with a sequential number; the engine numbers invoices with their record ids"})
			}
		}
		if t.country == "GB" && strings.TrimSpace(s.UKRateAgreement) == "" {
			out = append(out, InvoicingProblem{TaxCountry: "GB", Sale: SaleB2C, Field: "/seller/ukRateAgreement", Rule: ubl.RuleArt230,
				Detail: "a UK VAT invoice states the VAT in sterling at a rate HMRC accepts (VAT tertiary legislation, valuation); the engine has only ECB rates, which need HMRC's written agreement: every UK invoice waits for review (national_rate_required)"})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &InvoicingError{Problems: out}
}

// problemDetail is a renderer problem without its field and rule, which
// InvoicingProblem states apart.
func problemDetail(fe *ubl.FieldError) string {
	if fe.Detail == "" {
		return fe.Err.Error()
	}
	return fe.Err.Error() + ": " + fe.Detail
}

// sellerField maps a renderer field of the seller to the account's JSON
// pointer.
func sellerField(f string, law invoiceLaw) string {
	switch f {
	case "Seller.Name":
		return "/seller/legalName"
	case "Seller.VATNumber":
		if law.TaxCountry == "GB" {
			return "/seller/registrations (uk_vrn number)"
		}
		return "/seller/vatNumber"
	case "Seller.TaxRegistrationID":
		return "/seller/taxRegistrationId"
	case "Seller.LegalID":
		return "/seller/legalId"
	case "Seller.LegalIDScheme":
		return "/seller/legalIdScheme"
	case "Seller.Contact":
		return "/seller/contact"
	case "Seller.EndpointID", "Seller.EndpointScheme":
		return "/seller/electronicAddress"
	case "Seller.Street", "Seller.AdditionalStreet", "Seller.City", "Seller.PostalCode", "Seller.Subdivision", "Seller.Country":
		f = strings.TrimPrefix(f, "Seller.")
		return "/seller/address/" + strings.ToLower(f[:1]) + f[1:]
	}
	if c, ok := strings.CutPrefix(f, "Seller.Contact."); ok {
		return "/seller/contact/" + strings.ToLower(c[:1]) + c[1:]
	}
	return f
}
