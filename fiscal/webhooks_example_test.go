package fiscal_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscal/webhook"
)

// chanSender hands every delivery attempt to a channel and answers 200: an
// in-process receiver. The bundled service leaves WebhookOptions.Sender nil
// and gets the HTTP sender of package webhook.
type chanSender chan *webhook.Message

func (c chanSender) Send(ctx context.Context, m *webhook.Message) (webhook.Response, error) {
	c <- m
	return webhook.Response{Status: 200}, nil
}

// ExampleEngine_CreateWebhookEndpoint registers an endpoint, records a
// settlement and checks the signed delivery the dispatcher sends for it.
func ExampleEngine_CreateWebhookEndpoint() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	accounts, err := fiscal.NewAccounts([]fiscal.Account{{
		ID: "acct_demo", KeyHashes: []string{fiscal.HashKey("sk_example")},
		Seller: fiscal.Seller{LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE", OverThreshold: true},
	}})
	if err != nil {
		log.Fatal(err)
	}
	received := make(chanSender, 1)
	now := time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC)
	engine, err := fiscal.New(fiscal.Config{
		DataDir: dir, Accounts: accounts, Clock: func() time.Time { return now }, Rand: &seededRand{},
		Webhooks: fiscal.WebhookOptions{Sender: received},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	ctx := context.Background()

	ep, err := engine.CreateWebhookEndpoint(ctx, "acct_demo", fiscal.WebhookEndpointRequest{URL: "https://erp.example.com/fiscal402"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ep.Status, "from sequence", ep.FirstSequence, "secret shown once:", len(ep.Secret) > 0)

	res, err := engine.Settle(ctx, "acct_demo", fiscal.SettlementRequest{
		AmountUSDC: "11.90", TxHash: "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
		Timestamp: "2026-04-10T14:30:00Z", PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", Network: "eip155:8453", ConsumerCountry: "DE",
	}, "")
	if err != nil {
		log.Fatal(err)
	}

	m := <-received // what a receiver would get
	err = webhook.VerifyAt(now, []string{ep.Secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0)
	fmt.Println(m.EventType, m.EventID == "evt_"+res.Record.ID, "attempt", m.Attempt, "verified:", err == nil)
	// Output:
	// enabled from sequence 0 secret shown once: true
	// settlement.processed true attempt 1 verified: true
}

// ExampleEngine_Events pages through an account's events, the backfill for
// a receiver that missed deliveries.
func ExampleEngine_Events() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	accounts, err := fiscal.NewAccounts([]fiscal.Account{{
		ID: "acct_demo", KeyHashes: []string{fiscal.HashKey("sk_example")},
		Seller: fiscal.Seller{LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE", OverThreshold: true},
	}})
	if err != nil {
		log.Fatal(err)
	}
	engine, err := fiscal.New(fiscal.Config{
		DataDir: dir, Accounts: accounts, Rand: &seededRand{},
		Clock: func() time.Time { return time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	ctx := context.Background()
	for i, country := range []string{"DE", "", "FR"} { // the second one without a country: pending review
		_, err := engine.Settle(ctx, "acct_demo", request(i, "11.90", country, "2026-04-10T14:30:00Z"), "")
		if err != nil {
			log.Fatal(err)
		}
	}
	for after := int64(-1); ; {
		page, err := engine.Events(ctx, "acct_demo", after, 2)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range page.Data {
			fmt.Println(e.Sequence, e.Type)
		}
		if !page.HasMore {
			break
		}
		after = page.NextAfter
	}
	// Output:
	// 0 settlement.processed
	// 1 settlement.pending_review
	// 2 settlement.processed
}
