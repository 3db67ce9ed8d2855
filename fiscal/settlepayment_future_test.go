package fiscal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestSettlePaymentRefusesAFutureTimestamp: every way a settlement enters
// refuses a timestamp more than wire.MaxClockSkew (5 minutes) after the
// engine's clock, as POST /settlements does (settlement.Request.Payment):
// the Art. 59c order dates (fiscal/totals.go) bound the dates of supplies
// counted before dates were kept by their recording time plus that skew.
// Books.SettlePayment, the building block of other ways in, took any
// payment: one dated an hour ahead was recorded. A payment the chain
// itself dates (verified facts whose block time it carries) stays the
// chain's, as package ingest records it.
func TestSettlePaymentRefusesAFutureTimestamp(t *testing.T) {
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	e := fiscaltest.Engine(t, fiscaltest.Config(t, now, fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ahead := now.Add(time.Hour)
	p, err := fiscaltest.Request(1, "11.90", "DE", ahead.Format(time.RFC3339)).Payment(ahead)
	if err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	res, err := b.SettlePayment(context.Background(), p, fiscal.Verification{}, func(d *fiscal.Draft) { d.ClaimPayment("", p.Fingerprint()) })
	var fe *fiscal.Error
	if err == nil || !asError(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != "/timestamp" || !strings.Contains(fe.Detail, "future") {
		t.Fatalf("a payment dated %s, an hour after the engine's clock: recorded %v, %v; want BAD_REQUEST on /timestamp", ahead, res != nil, err)
	}
	if got := e.Ledger().Size(); got != size {
		t.Errorf("the refused payment wrote %d entries", got-size)
	}
	// Within the skew it is recorded.
	within := now.Add(4 * time.Minute)
	p, err = fiscaltest.Request(2, "11.90", "DE", within.Format(time.RFC3339)).Payment(now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.SettlePayment(context.Background(), p, fiscal.Verification{}, func(d *fiscal.Draft) { d.ClaimPayment("", p.Fingerprint()) }); err != nil {
		t.Errorf("a payment 4 minutes ahead: %v", err)
	}
}
