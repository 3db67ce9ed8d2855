package webhooks_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// chanSender hands every delivery attempt to a channel and answers 200: an
// in-process receiver. The bundled service leaves Options.Sender nil and
// gets the HTTP sender of this package.
type chanSender chan *webhooks.Message

func (c chanSender) Send(ctx context.Context, m *webhooks.Message) (webhooks.Response, error) {
	c <- m
	return webhooks.Response{Status: 200}, nil
}

// exampleEngine opens an engine with one account, acct_demo, on a fixed
// clock.
func exampleEngine(dir string, now time.Time) *fiscal.Engine {
	engine, err := fiscal.New(fiscal.Config{
		Dir: dir, Clock: func() time.Time { return now }, Rand: &fiscaltest.Rand{},
		Accounts: []fiscal.Account{{ID: "acct_demo", Seller: fiscal.Seller{
			LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", Country: "IE", OverThreshold: true}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	return engine
}

// ExampleService_CreateEndpoint registers an endpoint, records a settlement
// and checks the signed delivery the dispatcher sends for it.
func ExampleService_CreateEndpoint() {
	dir, _ := os.MkdirTemp("", "fiscal402-example")
	defer os.RemoveAll(dir)
	now := time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC)
	engine := exampleEngine(dir, now)
	defer engine.Close()
	received := make(chanSender, 1)
	hooks, err := webhooks.New(engine, webhooks.Options{Sender: received})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	ep, err := hooks.CreateEndpoint(ctx, "acct_demo", webhooks.EndpointRequest{URL: "https://erp.example.com/fiscal402"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ep.Status, "from sequence", ep.FirstSequence, "secret shown once:", len(ep.Secret) > 0)

	books, _ := engine.Books("acct_demo")
	res, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		log.Fatal(err)
	}

	m := <-received // what a receiver would get
	err = webhooks.VerifyAt(now, []string{ep.Secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0)
	fmt.Println(m.EventType, m.EventID == "evt_"+res.Record.ID, "attempt", m.Attempt, "verified:", err == nil)
	// Output:
	// enabled from sequence 0 secret shown once: true
	// settlement.processed true attempt 1 verified: true
}

// ExampleService_Events pages through an account's events, the backfill
// for a receiver that missed deliveries.
func ExampleService_Events() {
	dir, _ := os.MkdirTemp("", "fiscal402-example")
	defer os.RemoveAll(dir)
	engine := exampleEngine(dir, time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC))
	defer engine.Close()
	hooks, err := webhooks.New(engine, webhooks.Options{NoDispatcher: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	books, _ := engine.Books("acct_demo")
	for i, country := range []string{"DE", "", "FR"} { // the second one without a country: pending review
		if _, err := books.Settle(ctx, fiscaltest.Request(i, "11.90", country, "2026-04-10T14:30:00Z"), ""); err != nil {
			log.Fatal(err)
		}
	}
	for cursor := ""; ; {
		page, err := hooks.Events(ctx, "acct_demo", cursor, 2)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range page.Data {
			fmt.Println(e.Sequence, e.Type)
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	// Output:
	// 0 settlement.processed
	// 1 settlement.pending_review
	// 2 settlement.processed
}
