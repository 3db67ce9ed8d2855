package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestRecordedCountCountsOriginTaxedCrossBorderSupplies: Art. 59c(1)(c)
// Directive 2006/112/EC (CELEX 32006L0112) counts "the total value,
// exclusive of VAT, of the supplies referred to in point (b)", the TBE
// supplies to non-taxable persons in another member state, whichever state
// taxed them: the supplies taxed where the seller is (Art. 59c(1)) are the
// very ones the threshold measures, and once they exceed EUR 10,000 Art. 58
// applies (Art. 59c(2)). A determination made without running totals
// (Seller.CrossBorder nil: a record of a version before the engine kept
// them, or a person's determination on the account's flags) has no
// threshold section, and names the seller's state as place of supply; a
// review found RecordedCount leaving such a supply out of the rebuilt
// total, so that a seller could go on charging its own VAT after it crossed.
func TestRecordedCountCountsOriginTaxedCrossBorderSupplies(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	supply := Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(12)}
	consumerDE := Buyer{Country: "DE", PostalCode: "10115"}

	auto := Determine(Input{Seller: Seller{Country: "FR"}, Buyer: consumerDE, Supply: supply})
	manual, err := DetermineManually(Input{Seller: Seller{Country: "FR"}, Buyer: consumerDE, Supply: supply},
		Manual{Regime: RegimeDomestic, TaxingCountry: "FR", RatePercent: "20", Reason: "Within EUR 10,000 on the seller's books.", DecidedBy: "reviewer-1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]Determination{"determined": auto, "manual": manual} {
		if d.Status != StatusDetermined || d.Regime != RegimeDomestic || d.PlaceOfSupply != "FR" || d.Threshold != nil {
			t.Fatalf("%s: %s %s pos=%s threshold %v; want DETERMINED DOMESTIC in FR without a section", name, d.Status, d.Regime, d.PlaceOfSupply, d.Threshold)
		}
		if v, ok := d.RecordedCount("FR", "10"); !ok || !v.Equal(decimal.NewFromInt(10)) {
			t.Errorf("%s: FR seller, consumer in DE taxed in FR: counted %s, %v; want 10 (Art. 59c(1)(b), (c))", name, v, ok)
		}
	}

	// A consumer in the seller's own member state is no cross-border
	// supply: it does not count (Art. 59c(1)(b)).
	home := Determine(Input{Seller: Seller{Country: "FR"}, Buyer: Buyer{Country: "FR", PostalCode: "75001"}, Supply: supply})
	if home.Regime != RegimeDomestic || home.Threshold != nil {
		t.Fatalf("FR consumer: %s %s threshold %v", home.Status, home.Regime, home.Threshold)
	}
	if v, ok := home.RecordedCount("FR", "10"); ok {
		t.Errorf("FR seller, consumer in FR: counted %s; a domestic supply does not count", v)
	}
}
