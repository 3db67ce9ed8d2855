package vat

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestMainlandPostalCodeContradictsATerritoryItem: a postal code that puts
// the customer on a member state's mainland and an item of evidence that
// names one of its special territories (outside the EU VAT area, or taxed
// otherwise) are not two items of non-contradictory evidence (Art. 24b(d),
// Implementing Regulation (EU) No 282/2011): the supply goes to review. A
// review found the mainland's VAT charged (ES 21 %, FI 25.5 %, FR
// 20 %). Territories and postal ranges: Art. 6 Directive 2006/112/EC
// (Canary Islands, Ceuta, Melilla, Åland, the French overseas departments).
func TestMainlandPostalCodeContradictsATerritoryItem(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ name, country, postal, billing, ip string }{
		{"Madrid postal code, billing in the Canary Islands", "ES", "28001", "IC", "ES"},
		{"Barcelona postal code, billing in Ceuta or Melilla", "ES", "08001", "EA", "ES"},
		{"Helsinki postal code, billing in Åland", "FI", "00100", "AX", "FI"},
		{"Paris postal code, billing in Réunion", "FR", "75001", "RE", "FR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Determine(Input{
				Seller: Seller{Country: "DE", OverThreshold: true},
				Buyer: Buyer{Country: c.country, PostalCode: c.postal, Evidence: []Evidence{
					{Kind: EvidenceBillingAddress, Country: c.billing, Source: EvidenceSourceCustomer},
					{Kind: EvidenceIPAddress, Country: c.ip, Source: EvidenceSourceMerchant},
				}},
				Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)},
			})
			var codes []string
			for _, r := range d.Reasons {
				codes = append(codes, r.Code)
			}
			if d.Status != StatusManualReview || !slices.Contains(codes, ReasonLocationEvidenceContradictory) {
				t.Fatalf("status %s, regime %s, reasons %v; want %s with %s", d.Status, d.Regime, codes, StatusManualReview, ReasonLocationEvidenceContradictory)
			}
		})
	}
	// A territory postal code with the territory's item stands.
	d := Determine(Input{
		Seller: Seller{Country: "DE", OverThreshold: true},
		Buyer: Buyer{Country: "ES", PostalCode: "35001", Evidence: []Evidence{
			{Kind: EvidenceBillingAddress, Country: "IC", Source: EvidenceSourceCustomer},
			{Kind: EvidenceIPAddress, Country: "ES", Source: EvidenceSourceMerchant},
		}},
		Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)},
	})
	if d.LocationEvidence == nil || d.LocationEvidence.Rule == EvidenceRuleContradictory {
		t.Fatalf("a Las Palmas postal code with a Canary Islands billing address: %+v", d.LocationEvidence)
	}
}

// TestTerritoryPostalCodeAgreesWithItsOwnCountryCode: a postal code of a
// parent's format that places the customer in a territory with an ISO
// 3166-1 code of its own (Jersey JE2, Guernsey GY, Gibraltar GX11, San
// Marino 4789x, the Vatican 00120, Greenland 39xx, the Faroe Islands, the
// French overseas collectivities) names the same place as items of
// evidence giving that code: two non-contradictory items (Art. 24b(d)
// Implementing Regulation (EU) No 282/2011), so the supply is decided as
// for a customer given by that code, not sent to review as contradictory.
func TestTerritoryPostalCodeAgreesWithItsOwnCountryCode(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	items := func(cc string) []Evidence {
		return []Evidence{
			{Kind: EvidenceBillingAddress, Country: cc, Source: EvidenceSourceCustomer},
			{Kind: EvidenceIPAddress, Country: cc, Source: EvidenceSourceThirdParty},
		}
	}
	for _, c := range []struct{ country, postal, code string }{
		{"GB", "JE2 3AB", "JE"}, {"GB", "GY1 1AA", "GG"}, {"GB", "GX11 1AA", "GI"},
		{"IT", "47890", "SM"}, {"IT", "00120", "VA"},
		{"DK", "3900", "GL"}, {"DK", "100", "FO"},
		{"FR", "97133", "BL"}, {"FR", "97500", "PM"}, {"FR", "98800", "NC"},
	} {
		for _, seller := range []string{"DE", "GB"} {
			in := Input{Seller: Seller{Country: seller, OverThreshold: true}, Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)}}
			in.Buyer = Buyer{Country: c.country, PostalCode: c.postal, Evidence: items(c.code)}
			got := Determine(in)
			in.Buyer = Buyer{Country: c.code, Evidence: items(c.code)}
			want := Determine(in)
			if got.Status != want.Status || got.Regime != want.Regime || got.PlaceOfSupply != want.PlaceOfSupply {
				t.Errorf("%s seller, %s %s with items in %s: %s %s pos %s %v; want as for %s: %s %s pos %s",
					seller, c.country, c.postal, c.code, got.Status, got.Regime, got.PlaceOfSupply, got.Reasons,
					c.code, want.Status, want.Regime, want.PlaceOfSupply)
			}
		}
	}
}

// TestMainlandPostalCodeContradictsAnOwnCodeTerritoryItem: the other side
// of the rule above: a postal code of the parent's mainland (London, Rome,
// Copenhagen, Paris) and items naming such a territory by its own code do
// contradict each other; without a postal code the items settle the
// territory the merchant's country claim is the parent of.
func TestMainlandPostalCodeContradictsAnOwnCodeTerritoryItem(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	items := func(cc string) []Evidence {
		return []Evidence{
			{Kind: EvidenceBillingAddress, Country: cc, Source: EvidenceSourceCustomer},
			{Kind: EvidenceIPAddress, Country: cc, Source: EvidenceSourceThirdParty},
		}
	}
	for _, c := range []struct{ country, postal, code string }{
		{"GB", "SW1A 1AA", "JE"}, {"IT", "00185", "SM"}, {"DK", "1050", "GL"}, {"FR", "75001", "NC"},
	} {
		in := Input{Seller: Seller{Country: "DE", OverThreshold: true}, Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)}}
		in.Buyer = Buyer{Country: c.country, PostalCode: c.postal, Evidence: items(c.code)}
		d := Determine(in)
		var codes []string
		for _, r := range d.Reasons {
			codes = append(codes, r.Code)
		}
		if d.Status != StatusManualReview || !slices.Contains(codes, ReasonLocationEvidenceContradictory) {
			t.Errorf("%s %s with items in %s: %s %s %v; want %s", c.country, c.postal, c.code, d.Status, d.Regime, codes, ReasonLocationEvidenceContradictory)
		}
		in.Buyer = Buyer{Country: c.country, Evidence: items(c.code)}
		got := Determine(in)
		in.Buyer = Buyer{Country: c.code, Evidence: items(c.code)}
		want := Determine(in)
		if got.Status != want.Status || got.Regime != want.Regime || got.PlaceOfSupply != want.PlaceOfSupply {
			t.Errorf("%s without a postal code, items in %s: %s %s pos %s; want as for %s: %s %s pos %s",
				c.country, c.code, got.Status, got.Regime, got.PlaceOfSupply, c.code, want.Status, want.Regime, want.PlaceOfSupply)
		}
	}
}
