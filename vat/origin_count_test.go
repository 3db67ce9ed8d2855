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
		if v, ok, err := d.RecordedCount("FR", "10"); err != nil || !ok || !v.Equal(decimal.NewFromInt(10)) {
			t.Errorf("%s: FR seller, consumer in DE taxed in FR: counted %s, %v (%v); want 10 (Art. 59c(1)(b), (c))", name, v, ok, err)
		}
	}

	// A consumer in the seller's own member state is no cross-border
	// supply: it does not count (Art. 59c(1)(b)).
	home := Determine(Input{Seller: Seller{Country: "FR"}, Buyer: Buyer{Country: "FR", PostalCode: "75001"}, Supply: supply})
	if home.Regime != RegimeDomestic || home.Threshold != nil {
		t.Fatalf("FR consumer: %s %s threshold %v", home.Status, home.Regime, home.Threshold)
	}
	if v, ok, err := home.RecordedCount("FR", "10"); ok || err != nil {
		t.Errorf("FR seller, consumer in FR: counted %s (%v); a domestic supply does not count", v, err)
	}
}

// TestRecordedCountRefusesAnUnreadableNet: a supply that counts by its net
// EUR value whose net is not a decimal cannot be counted, and must not pass
// for one that does not count (a total rebuilt without it is too low); a
// supply that does not count needs no net.
func TestRecordedCountRefusesAnUnreadableNet(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	supply := Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(12)}
	cross := Determine(Input{Seller: Seller{Country: "FR", OverThreshold: true}, Buyer: Buyer{Country: "DE", PostalCode: "10115"}, Supply: supply})
	origin := Determine(Input{Seller: Seller{Country: "FR"}, Buyer: Buyer{Country: "DE", PostalCode: "10115"}, Supply: supply})
	home := Determine(Input{Seller: Seller{Country: "FR"}, Buyer: Buyer{Country: "FR", PostalCode: "75001"}, Supply: supply})
	for name, d := range map[string]Determination{"destination": cross, "origin": origin} {
		if d.Threshold != nil {
			t.Fatalf("%s: a threshold section; the case needs a determination without one", name)
		}
		for _, net := range []string{"", "1.234,56", "ten"} {
			if v, ok, err := d.RecordedCount("FR", net); err == nil || !ok {
				t.Errorf("%s, net %q: counted %s, %v (%v); want counted with an error", name, net, v, ok, err)
			}
		}
	}
	if v, ok, err := home.RecordedCount("FR", "ten"); ok || err != nil {
		t.Errorf("a domestic supply with an unreadable net: counted %s, %v (%v); want not counted, no error", v, ok, err)
	}
}
