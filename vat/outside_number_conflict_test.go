package vat

import (
	"slices"
	"testing"
)

// TestOutsideLocationWithMemberStateNumber: a business customer attested
// outside the EU and the UK that gives a VAT number issued by a member
// state (or the UK) which a registry confirmed, or which no registry has
// refuted yet, contradicts itself: the number is a fact the supplier must
// take into account to find where the customer is established (Art. 22(1)
// second subparagraph Implementing Regulation 282/2011), and the place of
// that establishment is the place of supply (Art. 44 Directive
// 2006/112/EC), where the customer may owe the VAT (Art. 196) or the
// seller its own. The engine reviews the same contradiction for a customer
// attested in the EU or in the UK (vat_number_country_mismatch); a review
// found it deciding OUTSIDE_SCOPE O, "not subject to VAT", for a customer
// attested in the US with a German number VIES confirmed. A number a
// registry refuted, one of no member state (CHE, NO), a non-Union OSS
// number, and a number of the state whose special territory the customer
// is in (ES for the Canary Islands) contradict nothing.
func TestOutsideLocationWithMemberStateNumber(t *testing.T) {
	unavailable := &RegistryCheck{Status: RegistryUnavailable, Registry: RegistryVIES, Number: "DE136695976", Fault: "MS_UNAVAILABLE"}
	invalid := &RegistryCheck{Status: RegistryInvalid, Registry: RegistryVIES, Number: "DE136695976"}
	for _, c := range []struct {
		seller   string
		buyer    Buyer
		conflict bool
	}{
		{"FR", Buyer{Country: "US", VATNumber: "DE136695976", Registry: confirmed("VIES", "DE136695976")}, true},
		{"DE", Buyer{Country: "US", VATNumber: "DE 136 695 976", Registry: confirmed("VIES", "DE136695976")}, true},
		{"GB", Buyer{Country: "US", VATNumber: "DE136695976", Registry: confirmed("VIES", "DE136695976")}, true},
		{"FR", Buyer{Country: "CH", VATNumber: "DE136695976"}, true},
		{"FR", Buyer{Country: "US", VATNumber: "DE136695976", Registry: unavailable}, true},
		{"DE", Buyer{Country: "US", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684")}, true},
		{"DE", Buyer{Country: "US", VATNumber: "XI432525179", Registry: confirmed("VIES", "XI432525179")}, true},
		{"FR", Buyer{Country: "US", VATNumber: "DE136695976", Registry: invalid}, false},
		{"FR", Buyer{Country: "CH", VATNumber: "CHE-123.456.789", Business: true}, false},
		{"FR", Buyer{Country: "NO", VATNumber: "NO123456789MVA"}, false},
		{"FR", Buyer{Country: "US", VATNumber: "EU372022452"}, false},
		{"DE", Buyer{Country: "IC", VATNumber: "ESB64717838", Registry: confirmed("VIES", "ESB64717838")}, false},
		{"FR", Buyer{Country: "DE", PostalCode: "27498", VATNumber: "DE136695976", Registry: confirmed("VIES", "DE136695976")}, false},
		{"DE", Buyer{Country: "AX", VATNumber: "FI20774740", Registry: confirmed("VIES", "FI20774740")}, false},
		{"DE", Buyer{Country: "JE", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684")}, false},
	} {
		d := Determine(Input{Seller: Seller{Country: c.seller}, Buyer: c.buyer, Supply: Supply{Kind: KindSaaS, Date: day(2026, 9, 1)}})
		var codes []string
		for _, r := range d.Reasons {
			codes = append(codes, r.Code)
		}
		mismatch := slices.Contains(codes, ReasonVATNumberCountryMismatch)
		switch {
		case c.conflict && (d.Status != StatusManualReview || !mismatch || d.Category != "" || d.BuyerTreatment != ""):
			t.Errorf("seller %s, buyer %s with %s: %s; want %s with %s, no category, no buyer treatment", c.seller, c.buyer.Country, c.buyer.VATNumber, summary(d), StatusManualReview, ReasonVATNumberCountryMismatch)
		case !c.conflict && (d.Status != StatusDetermined || d.Category != CategoryOutsideScope || mismatch):
			t.Errorf("seller %s, buyer %s with %s: %s; want DETERMINED OUTSIDE_SCOPE O", c.seller, c.buyer.Country, c.buyer.VATNumber, summary(d))
		}
	}
}
