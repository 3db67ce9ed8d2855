package vat

import (
	"testing"
	"time"
)

// Finnish books, printed and electronic, moved from 10 % to the 14 % rate
// on 2025-01-01 (HE 141/2024, newspapers and periodicals staying at 10 %:
// https://eduskunta.fi/FI/vaski/HallituksenEsitys/Sivut/HE_141+2024.aspx),
// and that rate was lowered to 13.5 % on 2026-01-01 for everything it
// covered, books included (HE 93/2025:
// https://www.eduskunta.fi/valtiopaivaasiakirjat/HE+93/2025; arvonlisäverolaki
// 85 §, https://www.finlex.fi/fi/laki/ajantasa/1993/19931501). So from 2025 a
// Finnish consumer's e-book takes Finland's higher reduced rate, whatever it
// is that day, and is determined, not left to review.
func TestFinnishEbooksFollowTheHigherReducedRate(t *testing.T) {
	for _, at := range []string{
		"2025-06-01T09:00:00Z",
		"2025-12-31T21:59:00Z", // 23:59 in Helsinki
		"2025-12-31T22:00:00Z", // midnight in Helsinki: 2026-01-01
		"2026-09-01T09:00:00Z",
		"2026-12-31T21:59:00Z",
	} {
		when, _ := time.Parse(time.RFC3339, at)
		d := Determine(Input{
			Seller: Seller{Country: "DE", OverThreshold: true},
			Buyer:  Buyer{Country: "FI"},
			Supply: Supply{Kind: KindEbook, Date: when},
		})
		day, err := time.Parse(time.DateOnly, d.SupplyDate) // the Helsinki day of supply
		if err != nil {
			t.Fatalf("%s: supply date %q: %v", at, d.SupplyDate, err)
		}
		reduced, _, err := Rates().Reduced("FI", day)
		if err != nil || len(reduced) == 0 {
			t.Fatalf("Reduced(FI, %s): %v %v", d.SupplyDate, reduced, err)
		}
		want := reduced[len(reduced)-1]
		if !d.Determined() || d.RatePercent == nil || !d.RatePercent.Decimal().Equal(want) {
			rate := "-"
			if d.RatePercent != nil {
				rate = d.RatePercent.String()
			}
			t.Errorf("FI e-book at %s (%s in Helsinki): %s rate %s %v; want DETERMINED at %s %%", at, d.SupplyDate, d.Status, rate, d.Reasons, want)
		}
	}
}
