package invoicelaw_test

import (
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMonacoSellerInvoicesUnderFrenchRules: transactions originating in
// Monaco are treated as originating in France (Art. 7(1) Directive
// 2006/112/EC), and Determine decides a Monaco seller's supplies as a
// French seller's. Its invoices follow the rules of its member state of
// establishment, France, as a French seller's do: for the reverse charge
// (Art. 219a(2)(a)(i)), for a supply outside the Community (Art.
// 219a(2)(a)(ii)) and for the Union OSS without a stated registration
// (Art. 219a(2)(b), 369a(2)). For reads the raw code MC as a third
// country: the reverse-charge invoice followed the customer's state's
// rules, the outside-scope one no EU rules at all, the OSS one the
// rules of the state of consumption.
func TestMonacoSellerInvoicesUnderFrenchRules(t *testing.T) {
	date := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	supply := vat.Supply{Kind: vat.KindSaaS, Date: date}
	business := vat.Buyer{Country: "DE", Business: true, VATNumber: "DE812847601",
		Registry: &vat.RegistryCheck{Status: vat.RegistryValid, Registry: vat.RegistryVIES, Number: "DE812847601", CheckedAt: date, RequestIdentifier: "WAPI1"}}
	for _, c := range []struct {
		name, regime string
		buyer        vat.Buyer
	}{
		{"reverse charge", vat.RegimeReverseChargeB2B, business},
		{"outside the Community", vat.RegimeOutsideScope, vat.Buyer{Country: "US"}},
		{"Union OSS", vat.RegimeOSSB2C, vat.Buyer{Country: "DE"}},
	} {
		var laws []invoicelaw.Law
		for _, country := range []string{"FR", "MC"} {
			seller := vat.Seller{Country: country, OverThreshold: true}
			det := vat.Determine(vat.Input{Seller: seller, Buyer: c.buyer, Supply: supply})
			if det.Regime != c.regime {
				t.Fatalf("%s, seller in %s: regime %s %s %+v", c.name, country, det.Status, det.Regime, det.Reasons)
			}
			laws = append(laws, invoicelaw.For(det, invoicelaw.Seller{Country: country, VATNumber: "FR40303265045"}))
		}
		if laws[1] != laws[0] {
			t.Errorf("%s: a seller in Monaco invoices under %+v, a seller in France under %+v (Art. 7(1))", c.name, laws[1], laws[0])
		}
	}
}
