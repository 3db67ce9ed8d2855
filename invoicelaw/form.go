package invoicelaw

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fiscal402/fiscal402/internal/wire"
)

// icdRE is the form of an ISO 6523 ICD or a Peppol EAS code: four digits.
// Whether the code is in the list the profile accepts (BR-CL-11, BR-CL-25)
// is ubl's check (Check reports it with the rule).
var icdRE = regexp.MustCompile(`^[0-9]{4}$`)

// CheckForm checks the form of the seller's fields only invoices read:
// text an invoice can carry, scheme codes of four digits, a scheme only
// with its identifier, an e-mail address with one "@". Whether they
// satisfy a country's rules is Check's question, answered with rule ids.
// Errors name the field as the account profile does (seller.legalId).
func CheckForm(s Seller) error {
	texts := []struct{ field, v string }{
		{"seller.legalId", s.LegalID}, {"seller.taxRegistrationId", s.TaxRegistrationID},
		{"seller.contact.name", s.Contact.Name}, {"seller.contact.telephone", s.Contact.Telephone}, {"seller.contact.email", s.Contact.Email},
		{"seller.address.street", s.Address.Street}, {"seller.address.additionalStreet", s.Address.AdditionalStreet},
		{"seller.address.city", s.Address.City}, {"seller.address.postalCode", s.Address.PostalCode},
		{"seller.address.subdivision", s.Address.Subdivision}, {"seller.ukRateAgreement", s.UKRateAgreement},
	}
	for _, t := range texts {
		if _, err := wire.Text("/"+strings.ReplaceAll(t.field, ".", "/"), t.v); err != nil {
			return fmt.Errorf("%s: %w", t.field, err)
		}
	}
	if s.LegalIDScheme != "" {
		if !icdRE.MatchString(s.LegalIDScheme) {
			return fmt.Errorf("seller.legalIdScheme %q: want an ISO 6523 ICD of four digits, e.g. \"0184\"", s.LegalIDScheme)
		}
		if strings.TrimSpace(s.LegalID) == "" {
			return fmt.Errorf("seller.legalIdScheme needs seller.legalId")
		}
	}
	if e := strings.TrimSpace(s.Contact.Email); e != "" {
		// One "@" with text on both sides and no spaces: what Peppol
		// DE-R-007 asks, and what any address has.
		local, domain, ok := strings.Cut(e, "@")
		if !ok || local == "" || domain == "" || strings.ContainsAny(e, " \t") || strings.Count(e, "@") != 1 {
			return fmt.Errorf("seller.contact.email %q is not an e-mail address", s.Contact.Email)
		}
	}
	if a := s.ElectronicAddress; a != nil {
		if _, err := wire.Text("/seller/electronicAddress/id", a.ID); err != nil {
			return fmt.Errorf("seller.electronicAddress.id: %w", err)
		}
		if strings.TrimSpace(a.ID) == "" || !icdRE.MatchString(a.Scheme) {
			return fmt.Errorf("seller.electronicAddress: want an id and its Peppol EAS scheme of four digits, e.g. {\"id\": \"5790000435968\", \"scheme\": \"0088\"}")
		}
	}
	if c := strings.ToUpper(strings.TrimSpace(s.Address.Country)); c != "" {
		if _, err := wire.Country("/seller/address/country", c); err != nil {
			return fmt.Errorf("seller.address.country: %w", err)
		}
	}
	return nil
}
