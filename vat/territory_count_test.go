package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestRecordedCountLeavesOutTerritoriesOutsideTheEU: Art. 59c(1)(b)
// Directive 2006/112/EC counts supplies to persons in another member state,
// and the territories Art. 6 excludes are no "Member State" (Art. 5(2)).
// Heligoland, Büsingen (Art. 6(2)(a), (b)), Livigno (Art. 6(2)(e)) and
// Campione d'Italia (Art. 6(1)(f)) have no ISO code of their own, so their
// determinations name the parent as the place of supply (DE, IT); a record
// without a threshold section must not be counted toward the seller's
// EUR 10,000 as a supply to Germany or Italy. A review found an outside-
// scope supply to Heligoland counted when the totals were rebuilt.
func TestRecordedCountLeavesOutTerritoriesOutsideTheEU(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, b := range []Buyer{{Country: "DE", PostalCode: "27498"}, {Country: "DE", PostalCode: "78266"}, {Country: "IT", PostalCode: "23041"}, {Country: "IT", PostalCode: "22061"}} {
		d := Determine(Input{Seller: Seller{Country: "FR", OverThreshold: true}, Buyer: b, Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)}})
		if d.Regime != RegimeOutsideScope || d.Threshold != nil {
			t.Fatalf("%s %s: %s %s threshold %v; want %s without a section", b.Country, b.PostalCode, d.Status, d.Regime, d.Threshold, RegimeOutsideScope)
		}
		if v, ok, err := d.RecordedCount("FR", "10"); ok || err != nil {
			t.Errorf("%s %s (%s): counted %s toward the Art. 59c total; a territory outside the EU VAT area does not count (%v)", b.Country, b.PostalCode, d.Territory, v, err)
		}
	}
	// A supply to a consumer in Germany still counts.
	d := Determine(Input{Seller: Seller{Country: "FR", OverThreshold: true}, Buyer: Buyer{Country: "DE", PostalCode: "10115"}, Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)}})
	if v, ok, err := d.RecordedCount("FR", "8.40"); err != nil || !ok || !v.Equal(decimal.RequireFromString("8.40")) {
		t.Errorf("DE 10115: counted %s, %v (%v); want 8.40", v, ok, err)
	}
}
