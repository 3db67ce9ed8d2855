package invoicelaw_test

import (
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMonacoRegistrationNumbersAreFrench: a registration a Monaco seller
// states in MC is a French one (Art. 7(1) Directive 2006/112/EC), as
// Determine reads it; the invoice states its number as it would the same
// registration stated in FR (Art. 226(3): the number under which the
// supplier supplied; Art. 219a(2)(b), 369a(2) for the Union OSS). For read
// MC as no member state: the domestic invoice lost the national number, the
// OSS one the scheme's.
func TestMonacoRegistrationNumbersAreFrench(t *testing.T) {
	date := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	supply := vat.Supply{Kind: vat.KindSaaS, Date: date}
	for _, c := range []struct {
		name   string
		regime string
		over   bool
		buyer  string
	}{
		{"domestic", vat.RegimeDomestic, false, "FR"},
		{"Union OSS", vat.RegimeOSSB2C, true, "DE"},
	} {
		var laws []invoicelaw.Law
		for _, state := range []string{"FR", "MC"} {
			regs := []vat.Registration{{Scheme: vat.RegistrationNational, Country: state, Number: "FR40303265045"},
				{Scheme: vat.RegistrationOSSUnion, Country: state, Number: "FR40303265045"}}
			seller := vat.Seller{Country: "MC", OverThreshold: c.over, Registrations: regs}
			det := vat.Determine(vat.Input{Seller: seller, Buyer: vat.Buyer{Country: c.buyer}, Supply: supply})
			if det.Regime != c.regime || det.Status != vat.StatusDetermined {
				t.Fatalf("%s, registrations in %s: %s %s %+v", c.name, state, det.Status, det.Regime, det.Reasons)
			}
			laws = append(laws, invoicelaw.For(det, invoicelaw.Seller{Country: "MC", Registrations: regs}))
		}
		if laws[0].SellerVAT == "" {
			t.Fatalf("%s: no number with the registrations stated in FR: %+v", c.name, laws[0])
		}
		if laws[1] != laws[0] {
			t.Errorf("%s: registrations stated in MC give %+v, in FR %+v (Art. 7(1))", c.name, laws[1], laws[0])
		}
	}
}
