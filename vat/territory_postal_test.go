package vat

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestMountAthosHasTwoPostalCodes: Mount Athos (Art. 6(1)(a) Directive
// 2006/112/EC) is outside the EU VAT territory, and Hellenic Post (ELTA)
// gives it two postal codes: 630 86 Karyes and 630 87 Dafni, its port. A
// review found a consumer at Dafni charged Greek VAT (24 %) through the
// OSS, as though on the Greek mainland.
func TestMountAthosHasTwoPostalCodes(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, pc := range []string{"63086", "630 86", "63087", "630 87"} {
		for _, cc := range []string{"GR", "EL"} {
			d := Determine(Input{
				Seller: Seller{Country: "DE", OverThreshold: true},
				Buyer:  Buyer{Country: cc, PostalCode: pc},
				Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)},
			})
			if d.Status != StatusDetermined || d.Regime != RegimeOutsideScope || d.Territory != "Mount Athos" || d.PlaceOfSupply != "GR-69" {
				t.Errorf("%s %q: %s %s territory %q pos %s %v; want %s %s on Mount Athos (GR-69)",
					cc, pc, d.Status, d.Regime, d.Territory, d.PlaceOfSupply, d.Reasons, StatusDetermined, RegimeOutsideScope)
			}
		}
	}
	// The neighbouring codes of Chalkidiki stay Greek.
	for _, pc := range []string{"63085", "63088"} {
		d := Determine(Input{
			Seller: Seller{Country: "DE", OverThreshold: true},
			Buyer:  Buyer{Country: "GR", PostalCode: pc},
			Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)},
		})
		if d.Regime != RegimeOSSB2C || d.TaxingCountry != "GR" || d.Territory != "" {
			t.Errorf("GR %q: %s %s taxing %s territory %q; want %s in GR", pc, d.Status, d.Regime, d.TaxingCountry, d.Territory, RegimeOSSB2C)
		}
	}
}

// TestLivignoSharedPostalCodeIsReviewed: Livigno is outside the EU VAT
// territory (Art. 6(2)(e) Directive 2006/112/EC) and outside the Italian
// one (article 7(1)(a) DPR 633/1972). Its own postal code is 23041, but its
// frazione Trepalle is also addressed under 23030, a postal code Poste
// Italiane shares among several communes of the province of Sondrio on the
// Italian mainland (Valdisotto, ...). From 23030 alone the customer may be
// in Livigno or in Italy: a review found it charged Italian VAT (22 %).
// The code cannot tell whether a special territory applies, so the supply
// is reviewed (postal_code_unrecognised), with a detail that says why; the
// codes that can tell still decide.
func TestLivignoSharedPostalCodeIsReviewed(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	det := func(s Seller, b Buyer) Determination {
		return Determine(Input{Seller: s, Buyer: b, Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)}})
	}
	for _, s := range []Seller{{Country: "DE", OverThreshold: true}, {Country: "IT"}} {
		for _, b := range []Buyer{
			{Country: "IT", PostalCode: "23030"},
			{Country: "IT", PostalCode: "I-23030"},
			{Country: "IT", PostalCode: "23030", Evidence: []Evidence{
				{Kind: EvidenceBillingAddress, Country: "IT", Source: EvidenceSourceCustomer},
				{Kind: EvidenceIPAddress, Country: "IT", Source: EvidenceSourceThirdParty},
			}},
		} {
			d := det(s, b)
			if d.Status != StatusManualReview || !hasReason(d, ReasonPostalCodeUnrecognised) || d.RatePercent != nil || d.Category != "" {
				t.Errorf("seller %s, buyer IT %q: %s %s rate %v reasons %v; want %s with %s", s.Country, b.PostalCode, d.Status, d.Regime, d.RatePercent, d.Reasons, StatusManualReview, ReasonPostalCodeUnrecognised)
				continue
			}
			for _, r := range d.Reasons {
				if r.Code == ReasonPostalCodeUnrecognised && !strings.Contains(r.Detail, "Livigno") {
					t.Errorf("seller %s, buyer IT %q: detail %q does not say the code may be Livigno's", s.Country, b.PostalCode, r.Detail)
				}
			}
		}
		if d := det(s, Buyer{Country: "IT", PostalCode: "23041"}); d.Status != StatusDetermined || d.Territory != "Livigno" {
			t.Errorf("seller %s, IT 23041: %s territory %q; want Livigno", s.Country, d.Status, d.Territory)
		}
		if d := det(s, Buyer{Country: "IT", PostalCode: "23032"}); d.Status != StatusDetermined || d.Territory != "" {
			t.Errorf("seller %s, IT 23032 (Bormio): %s territory %q; want Italy", s.Country, d.Status, d.Territory)
		}
	}
	if c := Coverage(Seller{Country: "US"}, Buyer{Country: "IT", PostalCode: "23030"}); c.Status != CoverageUndetermined {
		t.Errorf("coverage of IT 23030: %s; want %s (Italy or Livigno)", c.Status, CoverageUndetermined)
	}
}
