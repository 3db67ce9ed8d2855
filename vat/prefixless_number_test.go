package vat

import (
	"slices"
	"strings"
	"testing"
)

// TestPrefixlessNumberReadUnderBuyerCountry: customers often give their
// VAT number without its country prefix ("136695976" for a German
// business). A review found Determine reading such a number as malformed
// ("no country prefix") and the customer, a business whose registry would
// confirm the number, as a consumer taxed under the OSS. The number is read
// under the customer's attested country (Art. 215 Directive 2006/112/EC:
// the prefix names the member state of issue, EL for Greece) and the
// determination notes that the prefix was supplied.
func TestPrefixlessNumberReadUnderBuyerCountry(t *testing.T) {
	seller := Seller{Country: "IE"}
	for _, c := range []struct{ country, given, number string }{
		{"DE", "136695976", "DE136695976"},
		{"DE", " 136.695-976 ", "DE136695976"},
		{"ES", "B64717838", "ESB64717838"},
		{"ES", "b-647 178 38", "ESB64717838"},
		{"AT", "U13585627", "ATU13585627"},
		{"GR", "094259216", "EL094259216"},
		{"EL", "094259216", "EL094259216"},
		{"FR", "K7399859412", "FRK7399859412"},
	} {
		in := Input{seller, Buyer{Country: c.country, VATNumber: c.given, Registry: confirmed(RegistryVIES, c.number)}, digital}
		d := Determine(in)
		if d.Status != StatusDetermined || d.Regime != RegimeReverseChargeB2B || d.BuyerTreatment != TreatmentB2B {
			t.Errorf("%s: %s; want DETERMINED REVERSE_CHARGE_B2B B2B", describe(in), summary(d))
		}
		note := reasonDetail(d, ReasonVATNumberPrefixSupplied)
		if !strings.Contains(note, c.number) || !strings.Contains(note, c.number[:2]) {
			t.Errorf("%s: note %s %q; want it to name %s", describe(in), ReasonVATNumberPrefixSupplied, note, c.number)
		}
		if reasonDetail(d, ReasonVATNumberInvalid) != "" {
			t.Errorf("%s: %v; the number is valid under %s", describe(in), d.Reasons, c.country)
		}
	}
	// Northern Ireland (XI) and the United Kingdom (GB, UK): the UK
	// ruleset's reverse charge, on the number read under their prefix.
	for _, c := range []struct{ country, given, number, registry string }{
		{"XI", "432525179", "XI432525179", RegistryVIES},
		{"GB", "980780684", "GB980780684", RegistryHMRC},
		{"UK", "980 7806 84", "GB980780684", RegistryHMRC},
		{"GB", "GD100", "GBGD100", RegistryHMRC},
	} {
		in := Input{seller, Buyer{Country: c.country, VATNumber: c.given, Registry: confirmed(c.registry, c.number)}, digital}
		d := Determine(in)
		if d.BuyerTreatment != TreatmentB2B || !strings.Contains(reasonDetail(d, ReasonVATNumberPrefixSupplied), c.number) {
			t.Errorf("%s: %s %v; want B2B read as %s", describe(in), summary(d), d.Reasons, c.number)
		}
	}
}

// TestPrefixlessNumberNotGuessed: a number without a prefix is read under
// the attested country only. Without a country, or with a code that names
// no state issuing numbers under it (a territory, a third country), nothing
// is supplied and the rules for those cases hold as before. A number that
// carries a prefix keeps it, and one whose digits cannot be valid under
// the country is invalid as any malformed number is (a consumer, noted).
func TestPrefixlessNumberNotGuessed(t *testing.T) {
	seller := Seller{Country: "IE"}
	for _, b := range []Buyer{
		{VATNumber: "136695976"},
		{Country: "IC", VATNumber: "B64717838"},
		{Country: "US", VATNumber: "136695976"},
		{Country: "DE", VATNumber: "ATU13585627"},
		{Country: "DE", VATNumber: "de 136695976"},
		{Country: "DE", VATNumber: "CHE-116.281.710"}, // a Swiss number: CH is no prefix of the EU, XI or GB
	} {
		d := Determine(Input{seller, b, digital})
		if note := reasonDetail(d, ReasonVATNumberPrefixSupplied); note != "" {
			t.Errorf("%+v: %s %q; want no prefix supplied", b, ReasonVATNumberPrefixSupplied, note)
		}
	}
	if d := Determine(Input{seller, Buyer{VATNumber: "136695976"}, digital}); !slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == ReasonBuyerCountryMissing }) {
		t.Errorf("no country: %s %v; want %s", summary(d), d.Reasons, ReasonBuyerCountryMissing)
	}
	in := Input{seller, Buyer{Country: "DE", VATNumber: "12345"}, digital}
	d := Determine(in)
	if d.BuyerTreatment != TreatmentB2C || !strings.Contains(reasonDetail(d, ReasonVATNumberInvalid), "DE12345") || reasonDetail(d, ReasonVATNumberPrefixSupplied) == "" {
		t.Errorf("%s: %s %v; want B2C, the number DE12345 invalid, the prefix noted", describe(in), summary(d), d.Reasons)
	}
}

// TestQualifyNumberKeepsValidVectors: every valid number of the vectors,
// given without its prefix under the country that issued it, reads as the
// same number; given with it, it is left as it is.
func TestQualifyNumberKeepsValidVectors(t *testing.T) {
	for _, v := range numberVectors {
		if v.reason != "" || strings.HasPrefix(v.want, "EU") {
			continue
		}
		if got := QualifyNumber(v.in, "DE"); got != v.in {
			t.Errorf("QualifyNumber(%q, DE) = %q; a prefixed number is kept", v.in, got)
		}
		given := strings.TrimSpace(v.in)[2:]
		country := v.want[:2]
		if country == "EL" {
			country = "GR"
		}
		n, err := ValidateNumber(QualifyNumber(given, country))
		if err != nil || n.String() != v.want {
			t.Errorf("QualifyNumber(%q, %s) reads as %v %v; want %s", given, country, n, err, v.want)
		}
	}
}

func reasonDetail(d Determination, code string) string {
	for _, r := range d.Reasons {
		if r.Code == code {
			return r.Detail
		}
	}
	return ""
}
