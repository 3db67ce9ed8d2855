package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/vat"
)

// TestResolveEmptyEvidenceClears: in a settlement's resolution, as in a
// fiscal event's, locationEvidence [] clears the evidence a previous
// resolution stated, while leaving it out keeps it; and the two are
// different requests for an Idempotency-Key.
func TestResolveEmptyEvidenceClears(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	req := fiscaltest.Request(6, "100.00", "AT", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = "ATU13585627" // unconfirmed: pending
	res, err := b.Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	decode := func(body string) fiscal.Resolution {
		var r fiscal.Resolution
		if err := strictjson.Decode([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	id := res.Record.ID
	first, err := b.Resolve(ctx, id, decode(`{"buyer":{"locationEvidence":[{"kind":"ip_address","country":"AT","source":"merchant","value":"192.0.2.1"},{"kind":"billing_address","country":"FR","source":"customer","value":"1 Rue de la Paix, Paris"}]},"resolvedBy":"ops-1"}`), "")
	if err != nil || len(first.Record.Buyer.Evidence) != 2 || first.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("setup: %v %+v", err, first)
	}
	kept, err := b.Resolve(ctx, id, decode(`{"buyer":{"consumerName":"Max Muster"},"resolvedBy":"ops-1"}`), "k")
	if err != nil || len(kept.Record.Buyer.Evidence) != 2 {
		t.Fatalf("absent locationEvidence: %v %+v", err, kept)
	}
	if _, err := b.Resolve(ctx, id, decode(`{"buyer":{"consumerName":"Max Muster","locationEvidence":[]},"resolvedBy":"ops-1"}`), "k"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Fatalf("the key reused with locationEvidence []: %v, want IDEMPOTENCY_CONFLICT", err)
	}
	got, err := b.Resolve(ctx, id, decode(`{"buyer":{"businessStatus":"B2C","locationEvidence":[]},"resolvedBy":"ops-1"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	r := got.Record
	if len(r.Buyer.Evidence) != 0 || r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Regime != vat.RegimeOSSB2C {
		t.Fatalf("locationEvidence []: evidence %v, %s %s %v", r.Buyer.Evidence, r.ReviewStatus, r.Classification.Regime, r.ReviewReasons)
	}
}
