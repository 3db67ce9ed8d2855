package vat_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// The customer's billing address is in France, a third party places the IP
// address in Belgium: Art. 24b(d) Implementing Regulation 282/2011 needs
// two items that agree, so Determine leaves the supply to manual review. A
// reviewer who holds the customer's confirmation decides French VAT through
// the OSS; a rate France does not apply that day is refused, naming the
// rates it does.
func ExampleDetermineManually() {
	in := vat.Input{
		Seller: vat.Seller{Country: "DE", OverThreshold: true},
		Buyer: vat.Buyer{Country: "FR", Evidence: []vat.Evidence{
			{Kind: vat.EvidenceBillingAddress, Country: "FR", Source: vat.EvidenceSourceCustomer},
			{Kind: vat.EvidenceIPAddress, Country: "BE", Source: vat.EvidenceSourceThirdParty, Provider: "GeoIP"},
		}},
		Supply: vat.Supply{Kind: vat.KindSaaS, Date: time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)},
	}
	fmt.Println(vat.Determine(in).Status)

	m := vat.Manual{
		Regime: vat.RegimeOSSB2C, TaxingCountry: "FR", RatePercent: "20",
		Reason:    "The customer confirmed a residence in Lyon; the IP address is a VPN exit in Brussels.",
		DecidedBy: "reviewer-7",
	}
	d, err := vat.DetermineManually(in, m)
	fmt.Println(d.Status, d.Regime, d.Scheme, d.Category, d.RatePercent, d.SupplyDate, d.TimeZone, err)
	fmt.Println(d.Reasons[0].Code, "-", d.Reasons[0].Detail)
	fmt.Println(d.LegalBasis)

	m.RatePercent = "19"
	_, err = vat.DetermineManually(in, m)
	var me *vat.ManualError
	fmt.Println(errors.As(err, &me), errors.Is(err, vat.ErrManualRefused), me.Code, me.Field)
	fmt.Println(me.Detail)
	// Output:
	// MANUAL_REVIEW_REQUIRED
	// DETERMINED OSS_B2C union S 20 2026-09-01 Europe/Paris <nil>
	// manual_determination - Determined manually by "reviewer-7", who gives as the reason: "The customer confirmed a residence in Lyon; the IP address is a VPN exit in Brussels.".
	// Art. 58(1) Directive 2006/112/EC; Union scheme Art. 369a–369k; determined manually (reason manual_determination)
	// true true rate_not_in_force /determination/ratePercent
	// 19 % is not a rate in force in FR on 2026-09-01 (Europe/Paris, the day of supply in FR): rate table vat-rates-2026.12.3 has 20 % (standard); 2.1 %, 5.5 %, 10 % (reduced).
}
