package ubl

import (
	"slices"
	"testing"
)

type fr struct{ field, rule string }

func frs(ps []*FieldError) []fr {
	var out []fr
	for _, p := range ps {
		out = append(out, fr{p.Field, p.Rule})
	}
	return out
}

// TestCheckSeller: the account data each kind of sale needs, per rule.
func TestCheckSeller(t *testing.T) {
	deNoContact := sellerDE
	deNoContact.Contact, deNoContact.PostalCode = Contact{}, ""
	nlNoScheme := sellerNL
	nlNoScheme.LegalIDScheme = ""
	ieNoVAT := sellerIE
	ieNoVAT.VATNumber = ""
	ieNoVAT.EndpointID, ieNoVAT.EndpointScheme = "5391234500004", "0088"
	usOSS := Party{Name: "Example API Inc.", TaxRegistrationID: "EU372022452", LegalID: "EIN 12-3456789",
		EndpointID: "5391234500004", EndpointScheme: "0088", Street: "1 Market Street", City: "San Francisco", Country: "US"}
	usEIN := usOSS
	usEIN.TaxRegistrationID = "EIN 12-3456789"
	dkNoEndpoint := sellerDK
	dkNoEndpoint.EndpointID, dkNoEndpoint.EndpointScheme = "", ""
	grBadTIN := sellerGR
	grBadTIN.VATNumber = "EL998877665"

	tests := []struct {
		name       string
		seller     Party
		taxCountry string
		b2c, std   []fr
		rc         []fr
		perInvoice bool
	}{
		{name: "German seller with contact", seller: sellerDE},
		{name: "German seller without contact and post code", seller: deNoContact,
			std: []fr{{"Seller.Contact", "DE-R-002"}, {"Seller.Contact.Name", "DE-R-005"}, {"Seller.Contact.Telephone", "DE-R-006"}, {"Seller.Contact.Email", "DE-R-007"}, {"Seller.PostalCode", "DE-R-004"}}},
		{name: "Dutch seller with KvK 0106", seller: sellerNL},
		{name: "Dutch seller, legal id without scheme", seller: nlNoScheme,
			std: []fr{{"Seller.LegalIDScheme", "NL-R-003"}}, rc: []fr{{"Seller.LegalIDScheme", "NL-R-003"}}},
		{name: "Irish seller without VAT number", seller: ieNoVAT,
			b2c: []fr{{"Seller.VATNumber", "BR-S-02"}}, std: []fr{{"Seller.VATNumber", "BR-S-02"}}, rc: []fr{{"Seller.VATNumber", "BR-AE-02"}}},
		{name: "non-Union OSS seller selling in Germany", seller: usOSS, taxCountry: "DE",
			std: []fr{{"Seller.TaxRegistrationID", RuleArt362}}, rc: []fr{{"Seller.TaxRegistrationID", RuleArt362}}},
		{name: "US seller with its EIN as tax registration id", seller: usEIN, taxCountry: "DE"},
		{name: "US seller with its GB VRN under UK law (9932 endpoint derived)", seller: sellerUSUK, taxCountry: "GB"},
		{name: "US seller with its EU number under UK law", seller: usOSS, taxCountry: "GB",
			b2c: []fr{{"Seller.TaxRegistrationID", RuleArt362}, {"Seller.VATNumber", RuleUKReg14}},
			std: []fr{{"Seller.TaxRegistrationID", RuleArt362}, {"Seller.VATNumber", RuleUKReg14}},
			rc:  []fr{{"Seller.TaxRegistrationID", RuleArt362}, {"Seller.VATNumber", RuleUKReg14}}},
		{name: "Greek seller", seller: sellerGR, perInvoice: true},
		{name: "Greek seller with a bad TIN", seller: grBadTIN, perInvoice: true,
			std: []fr{{"Seller.VATNumber", "GR-R-003"}, {"Seller.EndpointID", "GR-R-009"}},
			rc:  []fr{{"Seller.VATNumber", "GR-R-003"}, {"Seller.EndpointID", "GR-R-009"}}},
		{name: "Polish seller", seller: sellerPL},
		{name: "Swedish seller", seller: sellerSE},
		{name: "Danish seller without Peppol address", seller: dkNoEndpoint,
			std: []fr{{"Seller.EndpointID", "PEPPOL-EN16931-R020"}}, rc: []fr{{"Seller.EndpointID", "PEPPOL-EN16931-R020"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckSeller(tc.seller, tc.taxCountry)
			for _, l := range []struct {
				kind      string
				got, want []fr
			}{{"B2C", frs(got.B2C), tc.b2c}, {"B2BStandard", frs(got.B2BStandard), tc.std}, {"B2BReverseCharge", frs(got.B2BReverseCharge), tc.rc}} {
				if !slices.Equal(l.got, l.want) {
					t.Errorf("%s = %v, want %v", l.kind, l.got, l.want)
				}
			}
			if (len(got.PerInvoice) > 0) != tc.perInvoice {
				t.Errorf("PerInvoice = %v", frs(got.PerInvoice))
			}
			if got.OK() != (len(tc.b2c)+len(tc.std)+len(tc.rc) == 0) {
				t.Errorf("OK() = %v", got.OK())
			}
		})
	}
	if got := CheckSeller(Party{Name: "x", Country: "CH"}, ""); got.OK() || got.B2C[0].Field != "TaxCountry" {
		t.Errorf("Swiss tax country: %v", frs(got.B2C))
	}
}

func TestStablecoinPaymentMeans(t *testing.T) {
	if pm := StablecoinPaymentMeans("NL", "NL", "0x1"); pm != nil {
		t.Errorf("NL-NL: %+v", pm)
	}
	if pm := StablecoinPaymentMeans("DK", "DK", "0x1"); pm == nil || pm.Code != "1" {
		t.Errorf("DK-DK: %+v", pm)
	}
	for _, c := range [][2]string{{"DE", "DE"}, {"NL", "DE"}, {"DK", "SE"}, {"IE", "NL"}} {
		if pm := StablecoinPaymentMeans(c[0], c[1], "0x1"); pm == nil || pm.Code != "ZZZ" || pm.PaymentID != "0x1" {
			t.Errorf("%v: %+v", c, pm)
		}
	}
	// Each choice renders where the national rules bite.
	for _, inv := range []Invoice{
		b2b("x", sellerNL, buyerNLBusiness, line("x", "10.00", "S", "21")),
		b2b("x", sellerDK, Party{Name: "Kunde ApS", VATNumber: "DK87654321", EndpointID: "87654321", EndpointScheme: "0184", Country: "DK"}, line("x", "10.00", "S", "25")),
		b2b("x", sellerDE, buyerDEBusiness, line("x", "10.00", "S", "19")),
	} {
		inv.PaymentMeans = StablecoinPaymentMeans(inv.Seller.Country, inv.Buyer.Country, txA)
		if _, err := RenderInvoice(inv); err != nil {
			t.Errorf("%s→%s: %v", inv.Seller.Country, inv.Buyer.Country, err)
		}
	}
}
