package invoicelaw

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// Seller is what the invoicing rules read of a seller: where it is
// established and identified for VAT, and what its invoices show of it
// (package fiscal's Seller, the account's profile, gives them with
// Seller.ForInvoiceLaw, field by field as documented there).
type Seller struct {
	LegalName string // BT-27
	VATNumber string // with its country prefix; "" = not VAT-registered in the EU
	// LegalID is the company registration number (BT-30), LegalIDScheme
	// its ISO 6523 ICD (BT-30-1).
	LegalID, LegalIDScheme string
	// TaxRegistrationID is a tax registration identifier other than the
	// VAT number (BT-32).
	TaxRegistrationID string
	Country           string // ISO 3166-1 alpha-2 of the establishment
	Address           Address
	// OtherEstablishments are further EU member states with a fixed
	// establishment.
	OtherEstablishments []string
	// Registrations lists where the seller is identified for VAT (Union or
	// non-Union OSS with its member state of identification, national
	// registrations, a UK VRN); nil: not stated, and the seller is taken
	// to be registered wherever its sales are taxed.
	Registrations     []vat.Registration
	Contact           Contact            // BG-6
	ElectronicAddress *ElectronicAddress // BT-34; nil: derived from the VAT number where Peppol can
	// UKRateAgreement is the reference of HMRC's written agreement that
	// the seller may convert to sterling at the ECB euro reference rate
	// (VAT tertiary legislation on valuation, option (c),
	// https://www.gov.uk/guidance/vat-tertiary-legislation/valuation); "":
	// none, and an invoice under UK law waits for review
	// (national_rate_required).
	UKRateAgreement string
}

// Contact is a contact point (BG-6 of EN 16931).
type Contact struct {
	Name      string `json:"name,omitempty"`      // BT-41
	Telephone string `json:"telephone,omitempty"` // BT-42
	Email     string `json:"email,omitempty"`     // BT-43
}

// ElectronicAddress is a Peppol participant identifier: the identifier
// under its electronic address scheme (EAS code, BR-62, BR-CL-25), e.g.
// {"id": "5790000435968", "scheme": "0088"}.
type ElectronicAddress struct {
	ID     string `json:"id"`
	Scheme string `json:"scheme"`
}

// Address is a postal address (BG-5 / BG-8 of EN 16931).
type Address struct {
	Street           string `json:"street,omitempty"`           // BT-35 / BT-50
	AdditionalStreet string `json:"additionalStreet,omitempty"` // BT-36 / BT-51
	City             string `json:"city,omitempty"`             // BT-37 / BT-52
	PostalCode       string `json:"postalCode,omitempty"`       // BT-38 / BT-53
	Subdivision      string `json:"subdivision,omitempty"`      // BT-39 / BT-54: region, county, state
	Country          string `json:"country,omitempty"`          // defaults to Seller.Country (the buyer's: consumerCountry)
}

// Buyer is what the invoicing rules read of the customer: what the
// merchant attested (country, postal code, name, consumerAddress) and the
// registry's answer about its VAT number, when one was looked up.
type Buyer struct {
	Country    string
	PostalCode string
	Name       string
	Address    *Address
	Registry   *vies.Result
}

// Supplying is s as it was when it made a supply under the VAT number
// vatNumber (Art. 226(3) Directive 2006/112/EC: an invoice states the VAT
// identification number under which the supplier made the supply): a
// record keeps the number its seller had then (package fiscal's
// RecordSeller.VATNumber), the account's profile only its current one.
// The registrations stay s's: they are dated (vat.Registration ValidFrom,
// ValidTo), and For keeps those that apply on the day of supply.
func (s Seller) Supplying(vatNumber string) Seller {
	s.VATNumber = vatNumber
	return s
}

// SellerParty is the seller as the invoice under law shows it: the
// account's profile, with the VAT identifier of that law (a non-Union OSS
// number as its tax registration identifier, BT-32: BR-CO-09 keeps it out
// of BT-31).
func SellerParty(s Seller, law Law) ubl.Party {
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
		Country:           ISOCountry(cmp.Or(strings.ToUpper(s.Address.Country), strings.ToUpper(s.Country))),
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

// BuyerParty is the customer as the invoice shows it, and what a business
// sale's invoice lacks of the customer's full name and address (Art.
// 226(5)): the name from the registry when it discloses one, else the
// request's; the address from the request's consumerAddress, else from the
// registry's answer (ubl.AddressFromRegistry; VIES's "---" is no address).
// A consumer without a name is a "Private customer" (BR-07 needs a name; a
// simplified invoice may omit the consumer's, Art. 226b); a business has
// no such fallback.
func BuyerParty(det vat.Determination, b Buyer) (ubl.Party, []string) {
	b2b := det.BuyerTreatment == vat.TreatmentB2B
	reg := b.Registry
	p := ubl.Party{Country: ISOCountry(b.Country), PostalCode: b.PostalCode}
	if p.Country == "" && det.LocationEvidence != nil {
		// Located by items of evidence alone (Art. 24b(d) Implementing
		// Regulation (EU) No 282/2011), the customer lives where they
		// settle: BT-55 (BR-11) states that place's state.
		p.Country = placeCountry(det.LocationEvidence.Country)
	}
	if b2b && reg != nil {
		p.VATNumber = reg.CountryCode + reg.Number
	}
	switch {
	case b2b && reg != nil && disclosed(reg.Name):
		p.Name = strings.Join(strings.Fields(reg.Name), " ")
	case b.Name != "":
		p.Name = b.Name
	case !b2b:
		p.Name = "Private customer"
	}
	if a := b.Address; a != nil {
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

// CustomerVATNumber is the business customer's VAT identification number
// as its invoice states it (Art. 226(4) Directive 2006/112/EC; BT-48,
// BuyerParty): the registry's answer reg, its country code and number,
// when the number was looked up; else number as given, upper case, without
// the spaces, dots, dashes or slashes a merchant may have written (VIES
// reads it so, ignoring them). One customer has one such number however
// its payments spelled it: the name of its summary invoice.
func CustomerVATNumber(number string, reg *vies.Result) string {
	if reg != nil && reg.Number != "" {
		return strings.ToUpper(reg.CountryCode + reg.Number)
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '*' {
			return r
		}
		return -1
	}, number)
}

// disclosed reports whether a registry field says something: VIES sends
// "---" for what a member state does not disclose.
func disclosed(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && s != "---"
}

// AddressReason is the review reason of a business sale whose invoice
// lacks the customer's name or address.
func AddressReason(b Buyer, missing []string) vat.Reason {
	tried := "the request gave no consumerAddress"
	if b.Address != nil {
		tried = "the request's consumerAddress lacks them"
	}
	if reg := b.Registry; reg != nil {
		switch {
		case b.Address != nil:
		case reg.Registry == "":
			tried += " and no registry was asked about the number"
		case !disclosed(reg.Address):
			tried += " and the registry (" + reg.Registry + ") disclosed no address"
		default:
			tried += " and the registry's address could not be read as street and town"
		}
	}
	return vat.Reason{Code: ReasonBuyerAddressMissing, Detail: fmt.Sprintf(
		"The invoice of a business sale must state the customer's full name and address (Art. 226(5) %s; Art. 220a(2) rules out a simplified invoice for a reverse charge); it lacks the customer's %s: %s. Resolve with consumerName and consumerAddress.",
		Directive, strings.Join(missing, ", "), tried)}
}

// ISOCountry maps the codes that are not ISO 3166-1 codes to the country
// of the address: EL → GR (Greece), XI and UK → GB (Northern Ireland, the
// UK), IC and EA → ES (Canary Islands, Ceuta and Melilla).
// EN 16931 BR-CL-14 requires ISO 3166-1 codes in addresses.
func ISOCountry(c string) string {
	switch c {
	case "EL":
		return "GR"
	case "XI", "UK":
		return "GB"
	case "IC", "EA":
		// The Canary Islands, Ceuta and Melilla are Spain in ISO 3166-1
		// (IC and EA are only reserved codes, outside the EN 16931
		// country code list, BR-CL-14/15).
		return "ES"
	}
	return c
}

// placeCountry is the ISO 3166-1 alpha-2 code of the state of a vat
// place-of-supply code: an ISO 3166-2 subdivision's country (ES-CN, GR-69,
// GB-NIR), else ISOCountry's.
func placeCountry(code string) string {
	if cc, _, ok := strings.Cut(code, "-"); ok {
		return cc
	}
	return ISOCountry(code)
}

// BuyerFactsDiffer names what two customer parties (BuyerParty) state
// differently, by the business term of each (the name BT-44, VAT
// identifier BT-48, address BT-50..BT-55), in that order; none when they
// name the customer alike. One invoice names one customer, with its full
// name and address (Art. 226(4), (5) Directive 2006/112/EC,
// https://eur-lex.europa.eu/eli/dir/2006/112/oj): a summary invoice of
// several supplies (Art. 223) can name their buyer only when every
// supply's record states it alike.
func BuyerFactsDiffer(a, b ubl.Party) []string {
	var out []string
	for _, f := range []struct {
		name string
		x, y string
	}{
		{"name (BT-44)", a.Name, b.Name},
		{"VAT identifier (BT-48)", a.VATNumber, b.VATNumber},
		{"street (BT-50)", a.Street, b.Street},
		{"additional street (BT-51)", a.AdditionalStreet, b.AdditionalStreet},
		{"address line 3 (BT-163)", a.AddressLine3, b.AddressLine3},
		{"town (BT-52)", a.City, b.City},
		{"postal code (BT-53)", a.PostalCode, b.PostalCode},
		{"subdivision (BT-54)", a.Subdivision, b.Subdivision},
		{"country (BT-55)", a.Country, b.Country},
	} {
		if f.x != f.y {
			out = append(out, f.name)
		}
	}
	return out
}
