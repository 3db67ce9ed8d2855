package vat

import (
	"slices"
	"testing"
)

// TestUnverifiedForeignNumberInDomesticSaleIsHeld: a customer located in the
// seller's own state who gives another state's VAT number. Confirmed, the
// number puts the customer's establishment elsewhere and the place of
// supply with it (Art. 44 Directive 2006/112/EC), so the sale is reviewed
// (vat_number_country_mismatch); refuted, the customer is a consumer at
// home (Art. 18(2) Implementing Regulation 282/2011). While no registry
// has answered (unavailable, or not asked) either may follow, so the sale
// must not be decided as a domestic one: a review found it DETERMINED at
// the seller's domestic rate whenever VIES was down, but held when VIES
// answered valid.
func TestUnverifiedForeignNumberInDomesticSaleIsHeld(t *testing.T) {
	down := func(n string) *RegistryCheck {
		return &RegistryCheck{Status: RegistryUnavailable, Registry: RegistryVIES, Number: n, Fault: "MS_UNAVAILABLE"}
	}
	codes := func(d Determination) []string {
		var c []string
		for _, r := range d.Reasons {
			c = append(c, r.Code)
		}
		return c
	}
	for _, in := range []Input{
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "ATU13585627", Registry: down("ATU13585627")}, digital},
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "ATU13585627"}, digital},
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "ATU13585627", Registry: confirmed(RegistryVIES, "ATU13585627")}, digital},
		{Seller{Country: "GB"}, Buyer{Country: "GB", VATNumber: "DE136695976", Registry: down("DE136695976")}, digital},
	} {
		d := Determine(in)
		if d.Status != StatusManualReview || !slices.Contains(codes(d), ReasonVATNumberCountryMismatch) {
			t.Errorf("%s: %s; want %s with %s", describe(in), summary(d), StatusManualReview, ReasonVATNumberCountryMismatch)
		}
	}
	// Where the registry's answer cannot change the tax, the sale is decided.
	for _, in := range []Input{
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "DE136695976", Registry: down("DE136695976")}, digital},
		// A non-Union OSS number is for the OSS returns of a supplier
		// outside the EU (Art. 362 Directive 2006/112/EC), not a customer's
		// VAT identification: no registry serves it.
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "EU372022452", Registry: &RegistryCheck{Status: RegistryUnavailable, Fault: "UNSUPPORTED_NUMBER", Number: "EU372022452"}}, digital},
		{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "ATU13585627", Registry: &RegistryCheck{Status: RegistryInvalid, Registry: RegistryVIES, Number: "ATU13585627"}}, digital},
	} {
		d := Determine(in)
		if d.Status != StatusDetermined || d.Regime != RegimeDomestic || d.BuyerTreatment != TreatmentB2C {
			t.Errorf("%s: %s; want DETERMINED DOMESTIC B2C", describe(in), summary(d))
		}
	}
}

// TestUnverifiedForeignNumberManualDomestic: the hold is for Determine; a
// person who reviews the sale may decide it as domestic (a consumer at
// home), and that decision stands.
func TestUnverifiedForeignNumberManualDomestic(t *testing.T) {
	in := Input{Seller{Country: "DE"}, Buyer{Country: "DE", VATNumber: "ATU13585627",
		Registry: &RegistryCheck{Status: RegistryUnavailable, Registry: RegistryVIES, Number: "ATU13585627", Fault: "MS_UNAVAILABLE"}}, digital}
	d, err := DetermineManually(in, Manual{Regime: RegimeDomestic, TaxingCountry: "DE", RatePercent: "19",
		Reason: "The customer confirmed by phone that it buys as a private person at home.", DecidedBy: "ops-1"})
	if err != nil || d.Status != StatusDetermined || d.Regime != RegimeDomestic {
		t.Fatalf("manual domestic: %v %s", err, summary(d))
	}
}
