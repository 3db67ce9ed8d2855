package vat

import (
	"testing"
	"time"
)

// Gibraltar's one postcode, GX11 1AA, is written in the UK format, but
// Gibraltar is not part of the United Kingdom ("Great Britain, Northern
// Ireland and the waters within 12 nautical miles of the coastline", HMRC
// VAT Place of Supply (Goods) manual VATPOSG2300,
// https://www.gov.uk/hmrc-internal-manuals/vat-place-of-supply-goods/vatposg2300;
// Interpretation Act 1978 Sch. 1,
// https://www.legislation.gov.uk/ukpga/1978/30/schedule/1) nor of the EU
// VAT territory, and has no VAT. A customer given as GB with that postcode
// is therefore in Gibraltar, exactly as one given as GI: no UK VAT, no EU
// VAT.
func TestGibraltarPostcodeIsNotTheUK(t *testing.T) {
	at := time.Date(2026, time.June, 1, 10, 0, 0, 0, time.UTC)
	for _, seller := range []string{"GB", "DE", "IE", "US"} {
		for _, postcode := range []string{"GX11 1AA", "gx111aa"} {
			in := Input{Seller: Seller{Country: seller}, Supply: Supply{Kind: KindDigitalService, Date: at}}
			in.Buyer = Buyer{Country: "GB", PostalCode: postcode}
			got := Determine(in)
			in.Buyer = Buyer{Country: "GI"}
			want := Determine(in)
			if got.Status != want.Status || got.Regime != want.Regime || got.Category != want.Category ||
				got.RatePercent != nil || got.PlaceOfSupply != want.PlaceOfSupply || got.Ruleset != want.Ruleset {
				rate := "-"
				if got.RatePercent != nil {
					rate = got.RatePercent.String()
				}
				t.Errorf("%s seller, GB %q: %s %s %s rate %s pos %s; want as for GI: %s %s %s pos %s",
					seller, postcode, got.Status, got.Regime, got.Category, rate, got.PlaceOfSupply,
					want.Status, want.Regime, want.Category, want.PlaceOfSupply)
			}
		}
	}
}
