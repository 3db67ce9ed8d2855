package fiscalevent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestFiscalEventRecheckKeepsEventSeller: the account's seller changes
// (SetAccounts: a new legal name, company id and address) between a fiscal
// event of its own sale and the registry's late answer about the buyer's
// VAT number. The re-check decides the event again under the seller the
// event was recorded with, as a settlement's re-check uses the profile as
// it was at the sale: the revision's invoice names that seller, not the
// account's later one.
func TestFiscalEventRecheckKeepsEventSeller(t *testing.T) {
	fake, e, events, res := recheckedEvent(t)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	changed := fiscaltest.IrishSeller
	changed.LegalName, changed.LegalID = "Renamed Digital Holdings Ltd", "IE-CRO-999999"
	changed.Address = fiscal.Address{Street: "2 New Road", City: "Cork", PostalCode: "T12 AB34"}
	if err := e.SetAccounts(fiscaltest.Accounts(changed)); err != nil {
		t.Fatal(err)
	}
	fake.Set(recheckNumber, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-seller", RequestDate: recheckNow,
		Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	if n, err := e.RecheckNow(ctx); err != nil || n != 1 {
		t.Fatalf("RecheckNow: %d %v", n, err)
	}
	ev, _, err := events.Get(ctx, acct, res.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Revision != 2 || ev.Determination.Regime != vat.RegimeReverseChargeB2B || ev.Invoice == nil {
		t.Fatalf("after: revision %d %s invoice %v production %+v", ev.Revision, ev.Determination.Regime, ev.Invoice, ev.Production)
	}
	if ev.Seller.LegalName != fiscaltest.IrishSeller.LegalName {
		t.Fatalf("the event's seller changed: %+v", ev.Seller)
	}
	xml, _, err := events.Invoice(ctx, acct, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fiscaltest.IrishSeller.LegalName, fiscaltest.IrishSeller.Address.Street, fiscaltest.IrishSeller.LegalID} {
		if !strings.Contains(string(xml), want) {
			t.Errorf("the re-check's invoice does not name the event's seller: %q missing", want)
		}
	}
	for _, unwanted := range []string{changed.LegalName, changed.Address.Street, changed.LegalID} {
		if strings.Contains(string(xml), unwanted) {
			t.Errorf("the re-check's invoice names the account's later seller: %q", unwanted)
		}
	}
}
