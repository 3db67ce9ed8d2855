package listing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/listing"
)

// ExampleList pages through an account's records, newest first, two
// at a time.
func ExampleList() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	engine, err := fiscal.New(fiscal.Config{
		Dir:      dir,
		Accounts: []fiscal.Account{{ID: "acct_demo", Seller: fiscaltest.IrishSeller}},
		Clock:    func() time.Time { return now },
		Rand:     &fiscaltest.Rand{},
		Logger:   fiscaltest.Logger(),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	books, err := engine.Books("acct_demo")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for i, cc := range []string{"DE", "FR", "IT"} {
		req := fiscal.SettlementRequest{
			AmountUSDC: "1.00", TxHash: fmt.Sprintf("0x%064x", i+1), Timestamp: "2026-04-10T14:30:00Z",
			PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
			Network: "eip155:8453", ConsumerCountry: cc,
		}
		if _, err := books.Settle(ctx, req, ""); err != nil {
			log.Fatal(err)
		}
	}
	q := listing.Query{Limit: 2}
	for {
		page, err := listing.List(ctx, books, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, raw := range page.Data {
			var r fiscal.Record
			if err := json.Unmarshal(raw, &r); err != nil {
				log.Fatal(err)
			}
			fmt.Println(r.ID, r.Classification.TaxingCountry)
		}
		if !page.HasMore {
			break
		}
		q.Cursor = page.NextCursor
	}
	// The three have the same createdAt (the clock is fixed), so the newest
	// first order falls back to descending ids.

	// Output:
	// x402-783e1b8da74db7a7435dc48fc6ad6e48 IT
	// x402-6be651eddb79781bb438896d556fbfe1 DE
	// x402-59f92f15fb370193db804730900871f4 FR
}
