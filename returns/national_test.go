package returns_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestNationallyRegisteredSupplyIsNotInOSS: the special schemes are an
// option (Art. 369b, 359 Directive 2006/112/EC); a seller that does not use
// the OSS and is identified in the member state of consumption declares its
// consumer sales there in that state's own return (Art. 214(1)(a)), and
// its invoice says so (invoicelaw: "not through the OSS"). The Irish
// seller here, over the Art. 59c threshold, states national registrations
// in Ireland and France and no OSS registration: its French consumer sale
// belongs in notInOss (the French return), not in the OSS lines.
func TestNationallyRegisteredSupplyIsNotInOSS(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	b := fiscaltest.Books(t, e, 0)
	recs := settle(t, b, 1, sale{amount: "12.00", country: "FR", at: "2026-02-10T10:00:00Z"})
	if c := recs[0].Classification; recs[0].ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C || c.TaxingCountry != "FR" {
		t.Fatalf("sale: %s %s %s %v", recs[0].ReviewStatus, c.Regime, c.TaxingCountry, recs[0].ReviewReasons)
	}
	if inv := recs[0].Invoice; inv == nil || inv.TaxCountry != "FR" {
		t.Fatalf("invoice %+v, want French invoicing law (declared in France)", inv)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Lines) != 0 {
		t.Errorf("OSS lines %+v: the seller uses no OSS scheme; its French sale is declared in the French return", ret.Lines)
	}
	found := false
	for _, s := range ret.NotInOSS {
		if s.Country == "FR" && s.Records == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("notInOss %+v, want the French sale", ret.NotInOSS)
	}
}

// TestNationallyRegisteredSupplyHasNoOSSRecord: Records lists OSS
// supplies (Art. 63c Implementing Regulation 282/2011); a sale declared in
// the French return is not one.
func TestNationallyRegisteredSupplyHasNoOSSRecord(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	b := fiscaltest.Books(t, e, 0)
	if recs := settle(t, b, 1, sale{amount: "12.00", country: "FR", at: "2026-02-10T10:00:00Z"}); recs[0].ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("sale %s %v", recs[0].ReviewStatus, recs[0].ReviewReasons)
	}
	n := 0
	if err := returns.Records(context.Background(), b, returns.RecordsQuery{Period: q1, MemberState: "FR"}, func(returns.RecordRow) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d OSS records of a sale declared in the French return", n)
	}
}
