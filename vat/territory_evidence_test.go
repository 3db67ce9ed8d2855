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
