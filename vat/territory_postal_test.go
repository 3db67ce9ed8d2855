package vat

import (
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
