package refunds_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestRecordViewTypedRefunds: RecordView returns the record and its bytes
// as GET /settlements/{id} serves them; the *fiscal.Record a Go caller reads
// must say what the bytes say, its Refunds included (fiscal.Record.Refunds:
// "added to the record ... (refunds.RecordView)"), as invoicing.RecordView
// sets InvoicedBy.
func TestRecordViewTypedRefunds(t *testing.T) {
	ctx := context.Background()
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	b := fiscaltest.Books(t, e, 0)
	rec := settleOK(t, b, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"))

	r, _, err := refunds.RecordView(ctx, b, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Refunds != nil {
		t.Fatalf("before any refund: Refunds = %+v, want nil", r.Refunds)
	}
	if _, err := refunds.Create(ctx, b, rec.ID, refunds.Request{AmountUSDC: "5.00"}, ""); err != nil {
		t.Fatal(err)
	}
	r, raw, err := refunds.RecordView(ctx, b, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var served struct {
		Refunds *fiscal.RecordRefunds `json:"refunds"`
	}
	if err := json.Unmarshal(raw, &served); err != nil || served.Refunds == nil {
		t.Fatalf("the served bytes have no refunds member (%v): %s", err, raw)
	}
	if r.Refunds == nil {
		t.Fatalf("the returned *Record has no Refunds; the bytes have %d refund(s), %s refunded", len(served.Refunds.Items), served.Refunds.RefundedUSDC)
	}
	if r.Refunds.RefundedUSDC != served.Refunds.RefundedUSDC || r.Refunds.RemainingUSDC != served.Refunds.RemainingUSDC ||
		len(r.Refunds.Items) != len(served.Refunds.Items) || !bytes.Equal(r.Refunds.Items[0], served.Refunds.Items[0]) {
		t.Errorf("Record.Refunds (%s refunded, %s remaining, %d items) differs from the served bytes (%s, %s, %d)",
			r.Refunds.RefundedUSDC, r.Refunds.RemainingUSDC, len(r.Refunds.Items),
			served.Refunds.RefundedUSDC, served.Refunds.RemainingUSDC, len(served.Refunds.Items))
	}
}
