package fiscalevent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// addressless records a fiscal event of the account's own seller to a
// confirmed German business whose registry discloses neither name nor
// address: determined (reverse charge), but its invoice cannot be issued
// without the customer's name and address (Art. 226(5) Directive
// 2006/112/EC), so invoice_issuable fails.
func addressless(t *testing.T) (*fiscal.Engine, *fiscalevent.Service, *fiscalevent.Event) {
	t.Helper()
	fake := vies.NewFake()
	const number = "DE136695976"
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Name: "---", Address: "---", RequestDate: now})
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	res, err := events.Record(context.Background(), fiscaltest.AccountID(0), b2bEvent(4, number), "")
	if err != nil {
		t.Fatal(err)
	}
	ev := res.Event
	if ev.Determination.Status != vat.StatusDetermined || ev.Invoice != nil || ev.Production.Receipt {
		t.Fatalf("setup: %s invoice %v production %+v", ev.Determination.Status, ev.Invoice, ev.Production)
	}
	return e, events, ev
}

// TestFiscalEventResolveSuppliesAddress: a determined fiscal event whose
// invoice lacks only the business customer's name and address is resolved
// as a settlement is, with consumerName and consumerAddress
// (fiscal.ResolutionBuyer.Address, validated as a settlement's): the event
// is revised, records the address, and gets its invoice, which states it,
// and its production receipt. Revised again, it keeps the address.
func TestFiscalEventResolveSuppliesAddress(t *testing.T) {
	_, events, ev := addressless(t)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	got, err := events.Resolve(ctx, acct, ev.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Name: "Beispiel GmbH",
		Address: &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatalf("resolving the missing address: %v", err)
	}
	rev := got.Event
	if rev.Revision != 2 || !rev.Production.Receipt || rev.Invoice == nil || rev.Receipt == nil || rev.Determination.Regime != vat.RegimeReverseChargeB2B {
		t.Fatalf("after: revision %d %s production %+v", rev.Revision, rev.Determination.Regime, rev.Production)
	}
	if a := rev.Buyer.Address; a == nil || a.Street != "Musterstraße 1" || a.City != "Berlin" || a.Country != "DE" || rev.Buyer.PostalCode != "10115" {
		t.Fatalf("the event does not record the address: %+v postal code %q", a, rev.Buyer.PostalCode)
	}
	xml, _, err := events.Invoice(ctx, acct, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Musterstraße 1", "Berlin", "10115", "Beispiel GmbH"} {
		if !strings.Contains(string(xml), want) {
			t.Errorf("the invoice does not state %q", want)
		}
	}
	stored, _, err := events.Get(ctx, acct, ev.ID)
	if err != nil || stored.Buyer.Address == nil || stored.Buyer.Address.Street != "Musterstraße 1" {
		t.Fatalf("stored event: %v %+v", err, stored)
	}
}

// TestFiscalEventResolveAddressChecked: the address of a fiscal event's
// resolution is checked as a settlement's: its country is the buyer's, so
// an address in another country is refused naming the field, and nothing
// is written.
func TestFiscalEventResolveAddressChecked(t *testing.T) {
	e, events, ev := addressless(t)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	size := e.Ledger().Size()
	_, err := events.Resolve(ctx, acct, ev.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Name: "Beispiel GmbH",
		Address: &fiscal.Address{Street: "1 Rue de la Paix", City: "Paris", PostalCode: "75002", Country: "FR"}}, ResolvedBy: "ops-1"}, "")
	if fe := (*fiscal.Error)(nil); fiscaltest.Code(err) != fiscal.CodeBadRequest || !errors.As(err, &fe) || fe.Field != "/buyer/consumerAddress/country" {
		t.Fatalf("an address outside the buyer's country: %v, want BAD_REQUEST at /buyer/consumerAddress/country", err)
	}
	if e.Ledger().Size() != size {
		t.Fatalf("a refused resolution wrote %d entries", e.Ledger().Size()-size)
	}
}
