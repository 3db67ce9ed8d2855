package fiscal_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vies"
)

// TestRecheckLoopResolvesOnItsOwn runs the background loop with real time
// and short delays: the registry is busy at the sale and answers later; the
// loop, not the test, completes the record.
func TestRecheckLoopResolvesOnItsOwn(t *testing.T) {
	fake := vies.NewFake()
	const number = "DE136695976"
	fake.Set(number, vies.Result{Status: vies.StatusUnavailable, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", Fault: "MS_MAX_CONCURRENT_REQ", RequestDate: time.Now()})
	e, err := fiscal.New(fiscal.Config{
		Dir: t.TempDir(), Accounts: fiscaltest.Accounts(irishSeller), VIES: fake, Rand: &fiscaltest.Rand{},
		Logger:  fiscaltest.Logger(),
		Recheck: fiscal.RecheckPolicy{Interval: 10 * time.Millisecond, BaseDelay: 20 * time.Millisecond, MaxDelay: 40 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req := request(1, "100.00", "DE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = number
	// VIES does not disclose German names and addresses: the invoice of
	// the reverse charge takes the merchant's (Art. 226(5)).
	req.ConsumerName = "Beispiel GmbH"
	req.ConsumerAddress = &fiscal.Address{Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115"}
	books := fiscaltest.Books(t, e, 0)
	res, err := books.Settle(context.Background(), req, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("status %s", res.Record.ReviewStatus)
	}
	// Let the loop retry at least once while the registry is still busy.
	deadline := time.Now().Add(5 * time.Second)
	for fake.Calls(number) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-loop", RequestDate: time.Now()})
	for time.Now().Before(deadline) {
		r, _, err := books.Record(context.Background(), res.Record.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Revision == 2 {
			if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.Category != "AE" || r.Buyer.Registry.RequestIdentifier != "WAPI-loop" {
				t.Fatalf("revision 2: %s %s %+v", r.ReviewStatus, r.Classification.Category, r.Buyer.Registry)
			}
			if q, _ := e.Queues(); q.Rechecks != 0 {
				t.Fatalf("queue not empty")
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the background loop did not resolve the record within 5s (%d registry calls)", fake.Calls(number))
}
