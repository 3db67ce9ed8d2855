package rates_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

// TestBackdatedRegistrationRedecidesPendingSales: an Irish seller over the
// Art. 59c threshold states its Union OSS registration from 1 April. Its
// sale of 20 January to a German consumer is PENDING_MANUAL_REVIEW
// (seller_not_registered). On 5 February the seller tells Ireland that it
// uses the Union scheme from that first supply, which Art. 57d
// Implementing Regulation (EU) No 282/2011 allows when the member state is
// informed by the 10th of the following month, and the operator states the
// registration from 20 January. Nothing decided the January sale again: a
// person's resolution and a manual determination decide under the profile
// kept with the sale (still "from 1 April") and are refused the same way,
// so the sale stayed pending for ever and out of every OSS return's lines.
// It is queued, as records waiting for a rate or a rate table are, and
// decided again by the rules once the account's registrations change
// (rates.RetryRegistrations, cause registrations_changed), under the
// profile kept with it with the account's registrations now stated; a
// change that still leaves the day uncovered leaves it pending.
func TestBackdatedRegistrationRedecidesPendingSales(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-04-01"},
	}
	jan := time.Date(2026, 1, 20, 12, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&jan)
	cfg := fiscaltest.Config(t, jan, seller)
	cfg.Clock = func() time.Time { return *clock.Load() }
	cfg.FX = fiscaltest.SyntheticFX(t)
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-01-20T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != vat.ReasonSellerNotRegistered {
		t.Fatalf("recorded %s %v, want pending for seller_not_registered", r.ReviewStatus, r.ReviewReasons)
	}
	record := func() *fiscal.Record {
		t.Helper()
		r, _, err := fiscaltest.Books(t, e, 0).Record(ctx, res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Nothing changed: nothing to decide again.
	if n, err := rates.RetryRegistrations(ctx, e); err != nil || n != 0 || record().Revision != 1 {
		t.Fatalf("walk before any change: %d %v, revision %d", n, err, record().Revision)
	}

	feb := time.Date(2026, 2, 5, 12, 0, 0, 0, time.UTC)
	clock.Store(&feb)
	// A change that does not cover 20 January leaves the sale pending.
	other := seller
	other.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-02-01"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(other)); err != nil {
		t.Fatal(err)
	}
	if n, err := rates.RetryRegistrations(ctx, e); err != nil || n != 0 || record().ReviewStatus != fiscal.StatusPendingReview || record().Revision != 1 {
		t.Fatalf("walk after a change that does not cover the day: %d %v, %s revision %d", n, err, record().ReviewStatus, record().Revision)
	}

	// The registration stated from the first supply (Art. 57d).
	backdated := seller
	backdated.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-01-20"},
	}
	backdated.LegalName = "Renamed Digital Holdings Ltd" // a later change of the name is not the sale's
	if err := e.SetAccounts(fiscaltest.Accounts(backdated)); err != nil {
		t.Fatal(err)
	}
	n, err := rates.RetryRegistrations(ctx, e)
	if err != nil || n != 1 {
		t.Fatalf("walk after the backdated registration: revised %d, %v; want the January sale decided again", n, err)
	}
	r := record()
	c := r.Classification
	if r.ReviewStatus != fiscal.StatusProcessed || c.Regime != vat.RegimeOSSB2C || c.TaxingCountry != "DE" || c.RatePercent.String() != "19" || r.Invoice == nil {
		t.Fatalf("after the walk: %s %s %s %s invoice %v reasons %v; want the Union OSS sale to Germany at 19 %%", r.ReviewStatus, c.Regime, c.TaxingCountry, c.RatePercent, r.Invoice, r.ReviewReasons)
	}
	if h := r.History[len(r.History)-1]; h.Cause != fiscal.CauseRegistrationsChanged || h.EventType != fiscal.EventSettlementProcessed {
		t.Errorf("revision cause %q, event %q; want %q, %q (nothing needed a person)", h.Cause, h.EventType, fiscal.CauseRegistrationsChanged, fiscal.EventSettlementProcessed)
	}
	if r.Seller.LegalName != seller.LegalName {
		t.Errorf("the revision names the seller %q, want the one the sale was made by, %q", r.Seller.LegalName, seller.LegalName)
	}
	// Decided: a later walk leaves it alone.
	if n, err := rates.RetryRegistrations(ctx, e); err != nil || n != 0 {
		t.Fatalf("second walk: %d %v", n, err)
	}
}
