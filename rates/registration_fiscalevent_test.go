package rates_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

// TestBackdatedRegistrationRedecidesFiscalEvents: a fiscal event of the
// account's own sale needing a registration the seller's profile does not
// state for its day is MANUAL_REVIEW_REQUIRED (seller_not_registered), and
// it is decided under the profile recorded with it, as a settlement is. The
// seller may state the registration from a day already past (Art. 57d
// Implementing Regulation (EU) No 282/2011): settlements are then decided
// again (rates.RetryRegistrations), but the fiscal event stayed in review
// for ever, a person's resolution deciding under the same recorded profile.
// It is queued and decided again as the settlement is (cause
// registrations_changed), under the recorded profile with the account's
// registrations now stated; one recorded by an older version, not queued,
// is queued by the first walk.
func TestBackdatedRegistrationRedecidesFiscalEvents(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-04-01"},
	}
	jan := time.Date(2026, 1, 20, 12, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, jan, seller)
	cfg.FX = fiscaltest.SyntheticFX(t)
	e := fiscaltest.Engine(t, cfg)
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	var ids []string
	for i, c := range []string{"DE", "FR"} {
		res, err := events.Record(ctx, acct, fiscalEvent(i+1, "11.90", c, "2026-01-20T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Event.Determination; d.Status != vat.StatusManualReview || !slices.ContainsFunc(d.Reasons, func(r vat.Reason) bool { return r.Code == vat.ReasonSellerNotRegistered }) {
			t.Fatalf("recorded %s %v, want in review for seller_not_registered", d.Status, d.Reasons)
		}
		ids = append(ids, res.Event.ID)
	}
	if q, err := e.Queues(); err != nil || q.WaitingForRegistration != 2 {
		t.Fatalf("queues: %+v %v; want both events waiting for a registration", q, err)
	}
	// The second as an older version stored it: not queued.
	if err := e.Ledger().Update(func(tx ledger.Tx) error { return tx.Delete(fiscal.BucketRegistrationWait, []byte(ids[1])) }); err != nil {
		t.Fatal(err)
	}
	backdated := seller
	backdated.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-01-01"},
	}
	if err := e.SetAccounts(fiscaltest.Accounts(backdated)); err != nil {
		t.Fatal(err)
	}
	n, err := rates.RetryRegistrations(ctx, e)
	if err != nil || n != 2 {
		t.Fatalf("walk after the backdated registration: revised %d, %v; want both fiscal events decided again", n, err)
	}
	for _, id := range ids {
		ev, _, err := events.Get(ctx, acct, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := ev.Determination; d.Status != vat.StatusDetermined || d.Regime != vat.RegimeOSSB2C || ev.Invoice == nil {
			t.Errorf("%s: %s %s %v; want the Union OSS sale determined, with its invoice", id, d.Status, d.Regime, d.Reasons)
		}
		if h := ev.History[len(ev.History)-1]; h.Cause != fiscal.CauseRegistrationsChanged {
			t.Errorf("%s: revision cause %q, want %q", id, h.Cause, fiscal.CauseRegistrationsChanged)
		}
	}
	if q, err := e.Queues(); err != nil || q.WaitingForRegistration != 0 {
		t.Fatalf("queues once decided: %+v %v", q, err)
	}
}
