package vat_test

import (
	"fmt"
	"time"

	"github.com/fiscal402/fiscal402/vat"
	"github.com/shopspring/decimal"
)

// The rate is chosen on the calendar day of the supply in the taxing
// territory's time zone: Estonia's 24 % applies from midnight in Tallinn
// (21:00 UTC in summer).
func ExampleDetermine_localDay() {
	for _, at := range []string{"2025-06-30T20:30:00Z", "2025-06-30T21:30:00Z"} {
		t, _ := time.Parse(time.RFC3339, at)
		d := vat.Determine(vat.Input{
			Seller: vat.Seller{Country: "US"},
			Buyer:  vat.Buyer{Country: "EE"},
			Supply: vat.Supply{Kind: vat.KindDigitalService, Date: t},
		})
		fmt.Println(at, d.RatePercent, d.SupplyDate, d.TimeZone)
	}
	// Output:
	// 2025-06-30T20:30:00Z 22 2025-06-30 Europe/Tallinn
	// 2025-06-30T21:30:00Z 24 2025-07-01 Europe/Tallinn
}

// The Art. 59c threshold from the seller's own totals: an Irish seller's
// sales to German consumers, each decided on the total its ledger holds
// after the previous one. The third sale takes the year over EUR 10,000
// and is taxed in Germany.
func ExampleDetermine_threshold() {
	seller := vat.Seller{Country: "IE"}
	year := seller.ThresholdYear(time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC))
	total := decimal.Zero // the ledger's total of year
	for _, gross := range []string{"5129.08", "5134.79", "5123.39"} {
		seller.CrossBorder = &vat.CrossBorderTotals{CurrentYear: total}
		d := vat.Determine(vat.Input{
			Seller: seller,
			Buyer:  vat.Buyer{Country: "DE"},
			Supply: vat.Supply{Kind: vat.KindSaaS, Date: time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC), GrossEUR: decimal.RequireFromString(gross)},
		})
		th := d.Threshold
		fmt.Println(d.TaxingCountry, d.RatePercent, th.Rule, th.Year == year, th.TotalBefore.StringFixed(2), "→", th.TotalAfter.StringFixed(2), th.Crossed)
		total = total.Add(*th.Counted)
	}
	// Output:
	// IE 23 within_threshold true 0.00 → 4169.98 false
	// IE 23 within_threshold true 4169.98 → 8344.61 false
	// DE 19 exceeded_by_this_supply true 8344.61 → 12509.97 true
}
