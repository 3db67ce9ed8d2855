package returns_test

import (
	"context"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestEstablishmentSectionStatesTheSuppliesNumber: a seller established
// in France, identified there for the Union OSS, made its first quarter's
// supplies under its French VAT number. Before the return is made the
// profile is rewritten for a move to Ireland (establishment, VAT number
// and OSS registration in Ireland, undated), so Ireland's return of the
// quarter declares the French supplies in a section for the establishment
// they were made from. The section states that establishment's number
// (Art. 369g(2) Directive 2006/112/EC: "the individual VAT identification
// number ... of each such establishment"), as the supplies' records kept
// it: a review found it empty, the profile's current number being
// Irish.
func TestEstablishmentSectionStatesTheSuppliesNumber(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.LegalName, seller.Country, seller.VATNumber, seller.LegalID = "Demo Digital Services SARL", "FR", "FR40303265045", ""
	seller.Address = fiscal.Address{Street: "1 rue de la Demo", City: "Paris", PostalCode: "75001"}
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationOSSUnion, Country: "FR", Number: "FR40303265045"},
		{Scheme: vat.RegistrationNational, Country: "FR", Number: "FR40303265045"},
	}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, testNow, seller))
	recs := settle(t, fiscaltest.Books(t, e, 0), 1, sale{amount: "12.00", country: "DE", at: "2026-02-15T10:00:00Z"})
	if r := recs[0]; r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C || r.Seller.VATNumber != seller.VATNumber {
		t.Fatalf("sale: %s %s seller %q %v", r.ReviewStatus, r.Classification.Regime, r.Seller.VATNumber, r.ReviewReasons)
	}
	later := ossSeller() // the Irish seller, OSS in Ireland
	if err := e.SetAccounts(fiscaltest.Accounts(later)); err != nil {
		t.Fatal(err)
	}
	ret, _, err := returns.OSS(context.Background(), fiscaltest.Books(t, e, 0), q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ret.ID.MemberState != "IE" || len(ret.FixedEstablishments) != 1 || ret.FixedEstablishments[0].Establishment != "FR" {
		t.Fatalf("identification %+v, sections %+v: want Ireland's return with France's section", ret.ID, ret.FixedEstablishments)
	}
	if got := ret.FixedEstablishments[0].VATNumber; got != recs[0].Seller.VATNumber {
		t.Errorf("France's section states VAT number %q, want %q, the number its supplies were made under", got, recs[0].Seller.VATNumber)
	}
}
