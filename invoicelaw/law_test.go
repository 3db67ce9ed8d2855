package invoicelaw_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ubl"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestFor: the state whose invoicing rules apply to a supply (Art. 219a
// Directive 2006/112/EC; UK VAT Regulations 1995 reg. 14) and the VAT
// number the seller invoices under there (Art. 226(3)), per regime.
func TestFor(t *testing.T) {
	det := func(regime, taxing, scheme string) vat.Determination {
		return vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: regime, TaxingCountry: taxing, Scheme: scheme}
	}
	uk := func(regime string) vat.Determination {
		return vat.Determination{Jurisdiction: vat.JurisdictionUK, Regime: regime, TaxingCountry: "GB"}
	}
	reg := func(scheme, country, number string) vat.Registration {
		return vat.Registration{Scheme: scheme, Country: country, Number: number}
	}
	for _, c := range []struct {
		name                     string
		det                      vat.Determination
		seller                   invoicelaw.Seller
		country, sellerVAT, cite string // cite: a part of Basis
	}{
		{"UK B2C, VRN without prefix", uk(vat.RegimeUKB2C),
			invoicelaw.Seller{Country: "US", Registrations: []vat.Registration{reg(vat.RegistrationUKVRN, "GB", "100 1908 74")}},
			"GB", "GB100190874", "reg. 13 and 14"},
		{"UK reverse charge, EU number only: no VRN", uk(vat.RegimeUKReverseCharge),
			invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601"}, "GB", "", "UK VAT law"},
		{"UK domestic, Northern Ireland number", uk(vat.RegimeUKDomestic),
			invoicelaw.Seller{Country: "GB", VATNumber: "XI980780684"}, "GB", "XI980780684", "UK VAT law"},
		{"domestic in Greece, national number with EL", det(vat.RegimeDomestic, "EL", ""),
			invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601", Registrations: []vat.Registration{reg(vat.RegistrationNational, "GR", "094259216")}},
			"GR", "EL094259216", "Art. 219a(1)"},
		{"domestic where the seller has no number: none", det(vat.RegimeDomestic, "DE", ""),
			invoicelaw.Seller{Country: "IE", VATNumber: "IE1234567T"}, "DE", "", "Art. 219a(1)"},
		{"reverse charge by an EU seller: its state", det(vat.RegimeReverseChargeB2B, "DE", ""),
			invoicelaw.Seller{Country: "ie", VATNumber: "IE1234567T"}, "IE", "IE1234567T", "Art. 219a(2)(a)(i)"},
		{"reverse charge by a non-EU seller: the customer's state", det(vat.RegimeReverseChargeB2B, "DE", ""),
			invoicelaw.Seller{Country: "US", VATNumber: "EU372022452"}, "DE", "EU372022452", "no member state of establishment"},
		{"Union OSS, stated state of identification", det(vat.RegimeOSSB2C, "FR", vat.SchemeUnion),
			invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601", Registrations: []vat.Registration{reg(vat.RegistrationOSSUnion, "DE", "")}},
			"DE", "DE812847601", "Art. 219a(2)(b)"},
		{"Union OSS, not stated: the state of establishment", det(vat.RegimeOSSB2C, "FR", vat.SchemeUnion),
			invoicelaw.Seller{Country: "IE", VATNumber: "IE1234567T"}, "IE", "IE1234567T", "Art. 369a(2): the member state of establishment"},
		{"Union OSS, one EU fixed establishment", det(vat.RegimeOSSB2C, "FR", vat.SchemeUnion),
			invoicelaw.Seller{Country: "CH", OtherEstablishments: []string{"at", "CH"}, VATNumber: "ATU46080404"}, "AT", "ATU46080404", "only member state with a fixed establishment"},
		{"non-Union OSS, the scheme's number", det(vat.RegimeOSSB2C, "FR", vat.SchemeNonUnion),
			invoicelaw.Seller{Country: "US", VATNumber: "GB980780684", Registrations: []vat.Registration{reg(vat.RegistrationOSSNonUnion, "IE", "EU372022452")}},
			"IE", "EU372022452", "non-Union scheme"},
		{"national registration where consumed, no OSS", det(vat.RegimeOSSB2C, "FR", vat.SchemeUnion),
			invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601", Registrations: []vat.Registration{reg(vat.RegistrationNational, "FR", "4Z123456782")}},
			"FR", "FR4Z123456782", "Art. 214(1)(a)"},
		{"non-Union OSS, state of identification not stated", det(vat.RegimeOSSB2C, "FR", vat.SchemeNonUnion),
			invoicelaw.Seller{Country: "US"}, "FR", "", "is not stated"},
		{"outside the Community, EU seller", det(vat.RegimeOutsideScope, "", ""),
			invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601"}, "DE", "DE812847601", "Art. 219a(2)(a)(ii)"},
		{"outside the EU and the UK, non-EU seller", det(vat.RegimeOutsideScope, "", ""),
			invoicelaw.Seller{Country: "US", VATNumber: "EU372022452"}, "", "EU372022452", "no EU or UK invoicing rules"},
	} {
		law := invoicelaw.For(c.det, c.seller)
		if law.TaxCountry != c.country || law.SellerVAT != c.sellerVAT || !strings.Contains(law.Basis, c.cite) {
			t.Errorf("%s: %+v, want %s, %q, basis citing %q", c.name, law, c.country, c.sellerVAT, c.cite)
		}
	}
}

// TestSellerParty: the seller as the invoice shows it, with the VAT
// identifier of its law: a non-Union OSS number is a tax registration
// identifier (BT-32), never a VAT identifier (BR-CO-09).
func TestSellerParty(t *testing.T) {
	s := invoicelaw.Seller{LegalName: "X", Country: "el", VATNumber: "EL094259216", LegalID: "GEMI 1", TaxRegistrationID: "T",
		Address:           invoicelaw.Address{Street: "Odos 1", City: "Athina", PostalCode: "10431"},
		Contact:           invoicelaw.Contact{Name: "A", Email: "a@example.com"},
		ElectronicAddress: &invoicelaw.ElectronicAddress{ID: "094259216", Scheme: "9933"}}
	p := invoicelaw.SellerParty(s, invoicelaw.Law{TaxCountry: "GR", SellerVAT: "EL094259216"})
	if p.Name != "X" || p.VATNumber != "EL094259216" || p.TaxRegistrationID != "T" || p.Country != "GR" || p.City != "Athina" ||
		p.Contact.Email != "a@example.com" || p.EndpointID != "094259216" || p.EndpointScheme != "9933" {
		t.Errorf("domestic: %+v", p)
	}
	p = invoicelaw.SellerParty(s, invoicelaw.Law{TaxCountry: "IE", SellerVAT: "EU372022452"})
	if p.VATNumber != "" || p.TaxRegistrationID != "EU372022452" {
		t.Errorf("non-Union OSS: VAT %q, tax registration %q", p.VATNumber, p.TaxRegistrationID)
	}
	s.Address.Country = "XI"
	if p := invoicelaw.SellerParty(s, invoicelaw.Law{}); p.Country != "GB" {
		t.Errorf("address in Northern Ireland: country %q, want GB (ISO 3166-1, BR-CL-14)", p.Country)
	}
}

// TestBuyerParty: the customer's name and address on the invoice (Art.
// 226(5)), and what a business sale's invoice lacks of them.
func TestBuyerParty(t *testing.T) {
	b2b := vat.Determination{BuyerTreatment: vat.TreatmentB2B}
	b2c := vat.Determination{BuyerTreatment: vat.TreatmentB2C}
	viesAnswer := func(name, addr string) *vies.Result {
		return &vies.Result{Registry: "VIES", CountryCode: "AT", Number: "U46080404", Name: name, Address: addr}
	}
	for _, c := range []struct {
		name         string
		det          vat.Determination
		buyer        invoicelaw.Buyer
		party        ubl.Party // the fields compared: Name, VATNumber, Street, City, PostalCode, Country
		missing      []string
		reasonSaying string // a part of AddressReason's detail when missing
	}{
		{"consumer without a name", b2c, invoicelaw.Buyer{Country: "EL", PostalCode: "10431"},
			ubl.Party{Name: "Private customer", PostalCode: "10431", Country: "GR"}, nil, ""},
		{"business, the registry's name and address", b2b,
			invoicelaw.Buyer{Country: "AT", Name: "Request Name", Registry: viesAnswer(" Beispiel   GmbH ", "WIEDNER HAUPTSTRASSE 15\n1040 WIEN")},
			ubl.Party{Name: "Beispiel GmbH", VATNumber: "ATU46080404", Street: "WIEDNER HAUPTSTRASSE 15", City: "1040 WIEN", Country: "AT"}, nil, ""},
		{"business, the request's address before the registry's", b2b,
			invoicelaw.Buyer{Country: "AT", PostalCode: "1040", Registry: viesAnswer("---", "WIEDNER HAUPTSTRASSE 15\n1040 WIEN"), Name: "Beispiel GmbH",
				Address: &invoicelaw.Address{Street: "Ring 1", City: "Wien", PostalCode: "1010"}},
			ubl.Party{Name: "Beispiel GmbH", VATNumber: "ATU46080404", Street: "Ring 1", City: "Wien", PostalCode: "1010", Country: "AT"}, nil, ""},
		{"business, nothing disclosed", b2b, invoicelaw.Buyer{Country: "AT", Registry: viesAnswer("---", "---")},
			ubl.Party{VATNumber: "ATU46080404", Country: "AT"}, []string{"name", "street", "town"}, "disclosed no address"},
		{"business, a registry address without a town", b2b, invoicelaw.Buyer{Country: "AT", Name: "B", Registry: viesAnswer("---", "HAUPTSTRASSE 1")},
			ubl.Party{Name: "B", VATNumber: "ATU46080404", Street: "HAUPTSTRASSE 1", Country: "AT"}, []string{"town"}, "could not be read as street and town"},
		{"business, the request's address without a street", b2b, invoicelaw.Buyer{Country: "AT", Name: "B", Address: &invoicelaw.Address{City: "Wien"}},
			ubl.Party{Name: "B", City: "Wien", Country: "AT"}, []string{"street"}, "consumerAddress lacks them"},
	} {
		p, missing := invoicelaw.BuyerParty(c.det, c.buyer)
		got := ubl.Party{Name: p.Name, VATNumber: p.VATNumber, Street: p.Street, City: p.City, PostalCode: p.PostalCode, Country: p.Country}
		if got != c.party || !slices.Equal(missing, c.missing) {
			t.Errorf("%s: %+v missing %v, want %+v missing %v", c.name, got, missing, c.party, c.missing)
		}
		if c.missing == nil {
			continue
		}
		r := invoicelaw.AddressReason(c.buyer, missing)
		if r.Code != invoicelaw.ReasonBuyerAddressMissing || !strings.Contains(r.Detail, c.reasonSaying) || !strings.Contains(r.Detail, "Art. 226(5)") ||
			!strings.Contains(r.Detail, strings.Join(missing, ", ")) {
			t.Errorf("%s: reason %+v", c.name, r)
		}
	}
}

// TestReverseChargeDeadline: the 15th of the month after the supply (Art.
// 222), across a year's end; nothing for a date that cannot be read.
func TestReverseChargeDeadline(t *testing.T) {
	for in, want := range map[string]string{"2026-01-31": "2026-02-15", "2026-12-03": "2027-01-15", "2026-02-15": "2026-03-15", "31.01.2026": ""} {
		if got := invoicelaw.ReverseChargeDeadline(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestRulesReason: the rule ids an invoice would break, each once, a
// renderer limit by its field, and none of the rules another reason
// already explains.
func TestRulesReason(t *testing.T) {
	errMissing := errors.New("missing")
	ve := &ubl.ValidationError{Problems: []*ubl.FieldError{
		{Field: "Seller.VATNumber", Rule: "BR-S-02", Err: errMissing},
		{Field: "Buyer.Name", Rule: "BR-07", Err: errMissing},
		{Field: "Lines[0].Name", Err: errMissing},
		{Field: "Seller.VATNumber", Rule: "BR-S-02", Err: errMissing, Detail: "again"},
	}}
	law := invoicelaw.Law{TaxCountry: "DE", Basis: "Art. 219a(1)"}
	r := invoicelaw.RulesReason(ve, law, "BR-07")
	if r == nil || r.Code != invoicelaw.ReasonInvoiceRulesFailed || !strings.Contains(r.Detail, "the invoicing rules of DE (Art. 219a(1))") ||
		!strings.Contains(r.Detail, "it would break BR-S-02, field:Lines[0].Name.") || strings.Contains(r.Detail, "BR-07") {
		t.Errorf("%+v", r)
	}
	if r := invoicelaw.RulesReason(ve, invoicelaw.Law{Basis: "none"}); r == nil || !strings.Contains(r.Detail, "under no EU or UK invoicing law") {
		t.Errorf("no law: %+v", r)
	}
	if r := invoicelaw.RulesReason(&ubl.ValidationError{Problems: ve.Problems[1:2]}, law, "BR-07"); r != nil {
		t.Errorf("all explained: %+v", r)
	}
}

// TestForRegistrationOnTheDay: the invoicing law reads only the
// registrations that apply on the day of supply. A seller that moved its
// non-Union OSS identification from NL to IE on 1 July invoices a June
// supply under NL's rules and number and a July one under IE's; a national
// registration in France from 1 September makes a French consumer's supply
// of 2 September FR's, and one of 31 August, before it, the OSS's.
func TestForRegistrationOnTheDay(t *testing.T) {
	oss := func(day string) vat.Determination {
		return vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: vat.RegimeOSSB2C, TaxingCountry: "FR", Scheme: vat.SchemeNonUnion, SupplyDate: day}
	}
	moved := invoicelaw.Seller{Country: "US", Registrations: []vat.Registration{
		{Scheme: vat.RegistrationOSSNonUnion, Country: "NL", Number: "EU528003646", ValidTo: "2026-06-30"},
		{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372022452", ValidFrom: "2026-07-01"},
	}}
	for day, want := range map[string][2]string{"2026-06-30": {"NL", "EU528003646"}, "2026-07-01": {"IE", "EU372022452"}} {
		if law := invoicelaw.For(oss(day), moved); law.TaxCountry != want[0] || law.SellerVAT != want[1] {
			t.Errorf("non-Union OSS supply of %s: %s %s, want %s %s", day, law.TaxCountry, law.SellerVAT, want[0], want[1])
		}
	}
	union := func(day string) vat.Determination {
		return vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: vat.RegimeOSSB2C, TaxingCountry: "FR", Scheme: vat.SchemeUnion, SupplyDate: day}
	}
	de := invoicelaw.Seller{Country: "DE", VATNumber: "DE812847601", Registrations: []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "DE"},
		{Scheme: vat.RegistrationOSSUnion, Country: "DE", ValidTo: "2026-08-31"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "4Z123456782", ValidFrom: "2026-09-01"},
	}}
	if law := invoicelaw.For(union("2026-08-31"), de); law.TaxCountry != "DE" || law.SellerVAT != "DE812847601" {
		t.Errorf("Union OSS supply of 31 August: %+v, want DE's rules", law)
	}
	if law := invoicelaw.For(union("2026-09-02"), de); law.TaxCountry != "FR" || law.SellerVAT != "FR4Z123456782" || !strings.Contains(law.Basis, "Art. 214(1)(a)") {
		t.Errorf("supply of 2 September, registered in France and out of the OSS: %+v, want FR's rules and number", law)
	}
}
