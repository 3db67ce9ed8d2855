package rates_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// TestRegistrationWaitIsCounted: Engine.Queues reports the depth of every
// queue of records the engine decides again by itself (the metrics gauge
// fiscal402_review_queue reads it). A sale pending because the seller was
// not registered where it is taxed is queued (fiscal.BucketRegistrationWait)
// and decided again once the account's registrations change (Art. 57d
// Implementing Regulation (EU) No 282/2011), as those waiting for a rate or
// a rate table are; a review found it counted in none of them, so an
// operator saw no queue while such sales waited.
func TestRegistrationWaitIsCounted(t *testing.T) {
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
	for i, c := range []string{"DE", "FR"} {
		res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(i+1, "11.90", c, "2026-01-20T10:00:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Record; r.ReviewStatus != fiscal.StatusPendingReview || r.ReviewReasons[0].Code != vat.ReasonSellerNotRegistered {
			t.Fatalf("recorded %s %v, want pending for seller_not_registered", r.ReviewStatus, r.ReviewReasons)
		}
	}
	q, err := e.Queues()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(q)
	var got map[string]int
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got["waitingForRegistration"] != 2 {
		t.Errorf("Engine.Queues() = %s; want the two sales waiting for a registration counted (waitingForRegistration: 2)", raw)
	}
}
