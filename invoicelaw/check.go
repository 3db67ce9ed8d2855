package invoicelaw

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
)

// Kinds of sale of a Problem.
const (
	SaleB2C              = "b2c"                // a sale to a consumer
	SaleB2BDomestic      = "b2b_domestic"       // a sale to a business in the tax country
	SaleB2BReverseCharge = "b2b_reverse_charge" // a reverse-charge sale to a business
	SaleEveryB2B         = "every_b2b_invoice"  // data each business invoice needs that no account holds
)

// Problem is one reason an invoice of the seller could not be
// issued, found before any sale: for the sales of one kind under the
// invoicing rules of one country, the seller's field (a JSON pointer into
// the account's seller, or the renderer's field when the account has no
// such field) and the rule it would break.
type Problem struct {
	TaxCountry string `json:"taxCountry"`
	Sale       string `json:"sale"`
	Field      string `json:"field"`
	Rule       string `json:"rule,omitempty"`
	Detail     string `json:"detail"`
}

func (p Problem) String() string {
	rule := p.Rule
	if rule == "" {
		rule = "limit"
	}
	return fmt.Sprintf("%s %s: %s %s: %s", p.TaxCountry, p.Sale, p.Field, rule, p.Detail)
}

// Error lists the problems Check found.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "the seller cannot be invoiced for every sale; these sales would wait for review (invoice_rules_failed): " + strings.Join(parts, "; ")
}

// Rules returns the distinct rule ids of the problems, in order.
func (e *Error) Rules() []string {
	var out []string
	for _, p := range e.Problems {
		if p.Rule != "" && !slices.Contains(out, p.Rule) {
			out = append(out, p.Rule)
		}
	}
	return out
}

// Check tells, before any sale, which invoices of the seller could
// not be issued, so that an account is told when it is created rather than
// at its first sale (its sales would wait for review, invoice_rules_failed
// or national_rate_required). It runs ubl.CheckSeller under the invoicing
// rules of each country the seller's establishment and registrations imply
// (For's choices):
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
// *Error.
func Check(s Seller) error {
	home, homeEU := vat.MemberStateOf(s.Country) // as Determine reads it: Monaco is France, the Isle of Man the UK (Art. 7(1))
	homeUK := vat.InUKVATArea(s.Country)
	type target struct {
		country string
		law     Law
		sales   []string
	}
	var targets []target
	add := func(c string, law Law, sales ...string) {
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
	if homeEU {
		add(home, Law{TaxCountry: home, SellerVAT: nationalNumber(s, home)}, SaleB2C, SaleB2BDomestic, SaleB2BReverseCharge)
	}
	for _, c := range s.OtherEstablishments {
		if c = vatCountry(c); vat.IsMemberState(c) {
			add(c, Law{TaxCountry: c, SellerVAT: nationalNumber(s, c)}, SaleB2C, SaleB2BDomestic)
		}
	}
	for _, g := range s.Registrations {
		c := vatCountry(g.Country)
		switch g.Scheme {
		case vat.RegistrationNational:
			if vat.IsMemberState(c) {
				add(c, Law{TaxCountry: c, SellerVAT: nationalNumber(s, c)}, SaleB2C, SaleB2BDomestic)
			}
		case vat.RegistrationOSSUnion, vat.RegistrationOSSNonUnion:
			if vat.IsMemberState(c) {
				add(c, Law{TaxCountry: c, SellerVAT: cmp.Or(g.Number, s.VATNumber)}, SaleB2C)
			}
		}
	}
	if _, vrn := registration(s, vat.RegistrationUKVRN, ""); vrn || homeUK {
		sales := []string{SaleB2C, SaleB2BReverseCharge}
		if homeUK {
			sales = []string{SaleB2C, SaleB2BDomestic}
		}
		add("GB", Law{TaxCountry: "GB", SellerVAT: ukVRN(s)}, sales...)
	}
	var out []Problem
	for _, t := range targets {
		party := SellerParty(s, t.law)
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
				out = append(out, Problem{TaxCountry: t.country, Sale: sale, Field: sellerField(fe.Field, t.law), Rule: fe.Rule, Detail: problemDetail(fe)})
			}
		}
		if peppol && greekRules && slices.ContainsFunc(t.sales, func(x string) bool { return x != SaleB2C }) {
			for _, fe := range check.PerInvoice {
				out = append(out, Problem{TaxCountry: t.country, Sale: SaleEveryB2B, Field: fe.Field, Rule: fe.Rule,
					Detail: problemDetail(fe) + " (the engine does not transmit invoices to myDATA)"})
			}
			{
				// GR-R-001: a Greek seller's Peppol invoice is numbered
				// TIN|date|branch|type|series|number (ubl.GreekInvoiceNumber)
				// with a sequential number; the engine numbers invoices
				// with their record ids.
				out = append(out, Problem{TaxCountry: t.country, Sale: SaleEveryB2B, Field: "ID", Rule: "GR-R-001",
					Detail: "a Greek seller's Peppol invoice number has the form TIN|DD/MM/YYYY|branch|type|series|number with a sequential number; the engine numbers invoices with their record ids"})
			}
		}
		if t.country == "GB" && strings.TrimSpace(s.UKRateAgreement) == "" {
			out = append(out, Problem{TaxCountry: "GB", Sale: SaleB2C, Field: "/seller/ukRateAgreement", Rule: ubl.RuleArt230,
				Detail: "a UK VAT invoice states the VAT in sterling at a rate HMRC accepts (VAT tertiary legislation, valuation); the engine has only ECB rates, which need HMRC's written agreement: every UK invoice waits for review (national_rate_required)"})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &Error{Problems: out}
}

// problemDetail is a renderer problem without its field and rule, which
// Problem states apart.
func problemDetail(fe *ubl.FieldError) string {
	if fe.Detail == "" {
		return fe.Err.Error()
	}
	return fe.Err.Error() + ": " + fe.Detail
}

// sellerField maps a renderer field of the seller to the account's JSON
// pointer.
func sellerField(f string, law Law) string {
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
