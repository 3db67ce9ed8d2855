package fiscal_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// ossSeller is the Irish demo seller registered for the Union OSS in
// Ireland from before 2026 (Art. 369a-369k Directive 2006/112/EC), as its
// profile stood at the sale.
func ossSeller() fiscal.Seller { return fiscaltest.IrishOSSSeller() }

// laterSeller is the profile the operator set after the sale: renamed and
// its OSS registration stated from 1 March only, so that under it a
// January consumer sale to Germany is seller_not_registered.
func laterSeller() fiscal.Seller {
	s := ossSeller()
	s.LegalName, s.LegalID = "Renamed Digital Holdings Ltd", "IE-CRO-999999"
	s.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-03-01"},
	}
	return s
}

// TestResolutionDecidesUnderTheSettlementsProfile: a settlement of 15
// January left for review (no buyer country) is resolved on 10 March,
// after the operator changed the seller's profile. VAT becomes chargeable
// when the service is supplied (Art. 63 Directive 2006/112/EC): the
// resolution decides the January sale under the profile the settlement was
// recorded with (its OSS registration, its name on the invoice), as a
// fiscal event's resolution does. A review found the March profile deciding
// it (seller_not_registered, no invoice).
func TestResolutionDecidesUnderTheSettlementsProfile(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		jan := time.Date(2026, 1, 15, 18, 0, 0, 0, time.UTC)
		var clock atomic.Pointer[time.Time]
		clock.Store(&jan)
		cfg := fiscaltest.Config(t, jan, ossSeller())
		cfg.Clock = func() time.Time { return *clock.Load() }
		e := fiscaltest.Engine(t, cfg)
		ctx := context.Background()
		res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "", "2026-01-15T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.ReviewStatus != fiscal.StatusPendingReview {
			t.Fatalf("recorded %s, want pending review (no buyer country)", res.Record.ReviewStatus)
		}

		march := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		clock.Store(&march)
		if err := e.SetAccounts(fiscaltest.Accounts(laterSeller())); err != nil {
			t.Fatal(err)
		}
		b := fiscaltest.Books(t, e, 0)
		got, err := b.Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops-1"}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := got.Record
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C || r.Classification.TaxingCountry != "DE" || r.Invoice == nil {
			t.Fatalf("resolved in March: %s %s %s reasons %v invoice %v; want the January profile's OSS sale to Germany",
				r.ReviewStatus, r.Classification.Regime, r.Classification.TaxingCountry, reasonCodes(r.ReviewReasons), r.Invoice)
		}
		if _, err := e.Ledger().Get("settlement-profile", []byte(r.ID)); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("the kept profile of a record now final: %v, want it removed", err)
		}
		if r.Seller.LegalName != ossSeller().LegalName {
			t.Errorf("the revision names seller %q, want the one of the sale %q", r.Seller.LegalName, ossSeller().LegalName)
		}
		xml, _, err := b.Invoice(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(xml), ossSeller().LegalName) || strings.Contains(string(xml), laterSeller().LegalName) {
			t.Errorf("the resolution's invoice does not name the seller the settlement was recorded with")
		}

		// A new sale of March is decided under the March profile.
		now, err := b.Settle(ctx, fiscaltest.Request(2, "11.90", "DE", "2026-02-20T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if now.Record.ReviewStatus != fiscal.StatusPendingReview || !strings.Contains(strings.Join(reasonCodes(now.Record.ReviewReasons), ","), "seller_not_registered") {
			t.Errorf("a February sale recorded in March: %s %v, want seller_not_registered under the March profile", now.Record.ReviewStatus, reasonCodes(now.Record.ReviewReasons))
		}
	})
}

// TestResolutionOfARecordWithoutKeptProfile: a settlement stored pending
// before profiles were kept with it (its kept profile removed here) is
// decided under the account's current profile, as before: the March
// profile's OSS registration from 1 March leaves the January sale
// seller_not_registered. The reason stays on the record for the person.
func TestResolutionOfARecordWithoutKeptProfile(t *testing.T) {
	jan := time.Date(2026, 1, 15, 18, 0, 0, 0, time.UTC)
	e := fiscaltest.Engine(t, fiscaltest.Config(t, jan, ossSeller()))
	ctx := context.Background()
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "", "2026-01-15T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Ledger().Update(func(tx ledger.Tx) error { return tx.Delete("settlement-profile", []byte(res.Record.ID)) }); err != nil {
		t.Fatal(err)
	}
	if err := e.SetAccounts(fiscaltest.Accounts(laterSeller())); err != nil {
		t.Fatal(err)
	}
	got, err := fiscaltest.Books(t, e, 0).Resolve(ctx, res.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops-1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Record; r.ReviewStatus != fiscal.StatusPendingReview || !strings.Contains(strings.Join(reasonCodes(r.ReviewReasons), ","), "seller_not_registered") {
		t.Errorf("resolved without a kept profile: %s %v, want the current profile's seller_not_registered", r.ReviewStatus, reasonCodes(r.ReviewReasons))
	}
}
