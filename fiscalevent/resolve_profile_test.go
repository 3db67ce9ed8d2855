package fiscalevent_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// januarySeller is the Irish demo seller registered for the Union OSS in
// Ireland from before 2026, as its profile stood in January.
func januarySeller() fiscal.Seller { return fiscaltest.IrishOSSSeller() }

// marchSeller is the profile the operator set in March: the seller renamed,
// moved, and its OSS registration stated from 1 March only. Under it a
// January consumer sale to Germany is seller_not_registered.
func marchSeller() fiscal.Seller {
	s := januarySeller()
	s.LegalName, s.LegalID = "Renamed Digital Holdings Ltd", "IE-CRO-999999"
	s.Address = fiscal.Address{Street: "2 New Road", City: "Cork", PostalCode: "T12 AB34"}
	s.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-03-01"},
	}
	return s
}

// TestResolutionDecidesUnderTheEventsProfile: a fiscal event of the
// account's own sale of 15 January, left for review (no buyer country), is
// resolved on 10 March, after the operator changed the seller's profile.
// The resolution decides the January sale under the profile the event was
// recorded with (its registrations, its name and address on the invoice),
// as a settlement's re-check decides on the profile as at the sale: a
// later change of the account must not change an old sale. A review found
// the March profile deciding it (seller_not_registered: the March
// profile's OSS registration starts on 1 March).
func TestResolutionDecidesUnderTheEventsProfile(t *testing.T) {
	jan := time.Date(2026, 1, 15, 18, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&jan)
	cfg := fiscaltest.Config(t, jan, januarySeller())
	cfg.Clock = func() time.Time { return *clock.Load() }
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := request(1, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "")
	req.Payment.Timestamp = "2026-01-15T10:00:00Z"
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Determination.Status != vat.StatusManualReview {
		t.Fatalf("recorded %s, want a manual review (no buyer country)", res.Event.Determination.Status)
	}

	march := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	clock.Store(&march)
	if err := e.SetAccounts(fiscaltest.Accounts(marchSeller())); err != nil {
		t.Fatal(err)
	}
	got, err := events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Event
	if ev.Determination.Status != vat.StatusDetermined || ev.Determination.Regime != vat.RegimeOSSB2C || ev.Determination.TaxingCountry != "DE" || ev.Invoice == nil {
		t.Fatalf("resolved in March: %s %s %s reasons %v invoice %v; want the January profile's OSS sale to Germany",
			ev.Determination.Status, ev.Determination.Regime, ev.Determination.TaxingCountry, ev.Determination.Reasons, ev.Invoice)
	}
	xml, _, err := events.Invoice(ctx, acct, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(xml), fiscaltest.IrishSeller.LegalName) || strings.Contains(string(xml), marchSeller().LegalName) {
		t.Errorf("the resolution's invoice does not name the seller the event was recorded with")
	}
}
