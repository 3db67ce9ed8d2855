package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestRecordedCountReadsTerritoryPlaces: a determination without a
// threshold section (made on the account's flags) names the place of
// supply by the customer's territory where it has its own rates or is
// treated as a member state: PT-20 (the Azores), PT-30 (Madeira), MC
// (Monaco, France under Art. 7(1) Directive 2006/112/EC). Those are places
// in a member state, so a B2C TBE supply there by a seller established in
// another member state counts toward the seller's Art. 59c total (Art.
// 59c(1)(b), (c)), and one by a seller established in that same state
// does not (a Monaco seller's sale to a consumer in France is domestic).
func TestRecordedCountReadsTerritoryPlaces(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	supply := Supply{Kind: KindSaaS, Date: at, GrossEUR: decimal.NewFromInt(12)}
	for _, c := range []struct {
		seller string
		buyer  Buyer
		counts bool
	}{
		{"DE", Buyer{Country: "PT", PostalCode: "9500-123"}, true},
		{"DE", Buyer{Country: "PT", PostalCode: "9000-018"}, true},
		{"DE", Buyer{Country: "MC"}, true},
		{"DE", Buyer{Country: "FR", PostalCode: "98000"}, true},
		{"MC", Buyer{Country: "DE"}, true},
		{"MC", Buyer{Country: "FR"}, false},
		{"FR", Buyer{Country: "MC"}, false},
		{"PT", Buyer{Country: "PT", PostalCode: "9500-123"}, false},
		{"DE", Buyer{Country: "PT", PostalCode: "1000-001"}, true},
	} {
		for _, over := range []bool{false, true} {
			d := Determine(Input{Seller: Seller{Country: c.seller, OverThreshold: over}, Buyer: c.buyer, Supply: supply})
			if d.Status != StatusDetermined || d.Threshold != nil || d.BuyerTreatment != TreatmentB2C {
				t.Fatalf("seller %s, buyer %+v: %s; want a determined B2C supply without a threshold section", c.seller, c.buyer, summary(d))
			}
			v, ok, err := d.RecordedCount(c.seller, "10")
			if err != nil || ok != c.counts || ok && !v.Equal(decimal.NewFromInt(10)) {
				t.Errorf("seller %s, buyer %+v, over %v (%s): counted %s, %v (%v); want counts=%v", c.seller, c.buyer, over, summary(d), v, ok, err, c.counts)
			}
		}
	}
}
