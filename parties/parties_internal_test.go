package parties

import (
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// TestEU27 checks InEU27 (package vat's member states, Art. 52 TEU) against
// the countries of vat's rate table, which covers the EU-27 and the United
// Kingdom: the two are kept by hand from different sources (the Treaty; the
// Commission's rate database), so a disagreement is a mistake in one.
func TestEU27(t *testing.T) {
	var fromVAT []string
	for _, c := range vat.Rates().Countries() {
		if c != "GB" {
			fromVAT = append(fromVAT, c)
		}
	}
	var ours []string
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			if c := string([]rune{a, b}); c != "EL" && InEU27(c) {
				ours = append(ours, c)
			}
		}
	}
	if len(ours) != memberStates || !slices.Equal(ours, fromVAT) {
		t.Fatalf("InEU27 holds for %v\nvat rate table %v", ours, fromVAT)
	}
	for c, want := range map[string]bool{"EL": true, "GR": true, "DE": true, "GB": false, "XI": false, "CH": false, "": false, "de": false} {
		if InEU27(c) != want {
			t.Errorf("InEU27(%q) = %v", c, !want)
		}
	}
}

// TestDetermineWithUnknowns: unknown Art. 59c facts become a manual review
// exactly when they change the answer.
func TestDetermineWithUnknowns(t *testing.T) {
	on := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	yes, no := true, false
	cases := []struct {
		name    string
		seller  SellerFacts
		buyer   string
		status  string
		regime  string
		country string
	}{
		{"EU seller, cross-border B2C, threshold unknown", SellerFacts{Country: "FR"}, "DE", vat.StatusManualReview, "", ""},
		{"EU seller, cross-border B2C, above", SellerFacts{Country: "FR", OverThreshold: &yes}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, cross-border B2C, below, not opted", SellerFacts{Country: "FR", OverThreshold: &no, OptedForDestination: &no}, "DE", vat.StatusDetermined, vat.RegimeDomestic, "FR"},
		{"EU seller, below, option unknown", SellerFacts{Country: "FR", OverThreshold: &no}, "DE", vat.StatusManualReview, "", ""},
		{"EU seller, opted, threshold unknown", SellerFacts{Country: "FR", OptedForDestination: &yes}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, domestic sale: threshold irrelevant", SellerFacts{Country: "FR"}, "FR", vat.StatusDetermined, vat.RegimeDomestic, "FR"},
		{"EU seller with a second establishment: no threshold", SellerFacts{Country: "FR", OtherEstablishments: []string{"IT"}}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"non-EU seller: no threshold", SellerFacts{Country: "US"}, "DE", vat.StatusDetermined, vat.RegimeOSSB2C, "DE"},
		{"EU seller, buyer outside the EU", SellerFacts{Country: "FR"}, "US", vat.StatusDetermined, vat.RegimeOutsideScope, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := DetermineWithUnknowns(vat.Rates(), tc.seller, vat.Buyer{Country: tc.buyer}, vat.Supply{Kind: vat.KindDigitalService, Date: on})
			if d.Status != tc.status || d.Regime != tc.regime && tc.status == vat.StatusDetermined || d.TaxingCountry != tc.country && tc.status == vat.StatusDetermined {
				t.Fatalf("%s %s %s %v", d.Status, d.Regime, d.TaxingCountry, d.Reasons)
			}
			if tc.status == vat.StatusManualReview {
				if len(d.Reasons) == 0 || d.Reasons[0].Code != ReasonSellerThresholdUnknown {
					t.Errorf("reasons %v", d.Reasons)
				}
				if d.Category != "" || d.RatePercent != nil || d.RateSource != nil || d.InvoiceNote != "" || d.Regime != "" || d.TaxingCountry != "" {
					t.Errorf("a manual review keeps invoice fields or a regime both answers do not share: %+v", d)
				}
				for _, r := range d.Reasons {
					if r.Code == vat.ReasonOriginTaxation {
						t.Errorf("the manual review asserts origin taxation")
					}
				}
			}
		})
	}
}
