package rates_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRegistrationWaitBackfill: a sale stored PENDING_MANUAL_REVIEW for
// seller_not_registered by a version that did not queue such sales
// (before fiscal.BucketRegistrationWait) is decided again too once the
// account's registrations cover its day (Art. 57d Implementing
// Regulation (EU) No 282/2011): RetryRegistrations queues, once per
// account, the pending settlements that wait for a registration and are
// not queued. A review found them left pending for ever, the queue being
// written only when a record is stored.
func TestRegistrationWaitBackfill(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T", ValidFrom: "2026-04-01"},
	}
	jan := time.Date(2026, 1, 20, 12, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, jan, seller)
	cfg.FX = fiscaltest.SyntheticFX(t)
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	var ids []string
	for i, c := range []string{"DE", "FR"} {
		res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(i+1, "11.90", c, "2026-01-20T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != vat.ReasonSellerNotRegistered {
			t.Fatalf("recorded %s %v, want pending for seller_not_registered", r.ReviewStatus, r.ReviewReasons)
		}
		ids = append(ids, res.Record.ID)
	}
	// As an older version stored them: not queued.
	if err := e.Ledger().Update(func(tx ledger.Tx) error {
		for _, id := range ids {
			if err := tx.Delete(fiscal.BucketRegistrationWait, []byte(id)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Nothing changed yet: nothing is decided, but both wait in the queue.
	if n, err := rates.RetryRegistrations(ctx, e); err != nil || n != 0 {
		t.Fatalf("walk before any change: %d %v", n, err)
	}
	if q, err := e.Queues(); err != nil || q.WaitingForRegistration != 2 {
		t.Fatalf("queues after the first walk: %+v %v; want the two sales stored before the queue queued", q, err)
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
		t.Fatalf("walk after the backdated registration: revised %d, %v; want both sales stored before the queue decided again", n, err)
	}
	for _, id := range ids {
		r, _, err := fiscaltest.Books(t, e, 0).Record(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C {
			t.Errorf("%s: %s %s %v; want the Union OSS sale processed", id, r.ReviewStatus, r.Classification.Regime, r.ReviewReasons)
		}
	}
	if q, err := e.Queues(); err != nil || q.WaitingForRegistration != 0 {
		t.Fatalf("queues once decided: %+v %v", q, err)
	}
}
