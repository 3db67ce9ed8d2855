package fiscalevent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
)

// exampleEngine opens an engine on a temporary directory with the demo
// seller as account "acct_demo", a fixed clock and fixed keys.
func exampleEngine(now time.Time) (*fiscal.Engine, func()) {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
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
	return engine, func() { engine.Close(); os.RemoveAll(dir) }
}

var examplePayment = fiscalevent.Payment{
	AmountUSDC:     "11.90",
	TxHash:         "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
	Timestamp:      "2026-04-10T14:30:00Z",
	PayerWallet:    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
	ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
	Network:        "eip155:8453",
}

// ExampleService_Record records two fiscal events: the account's own sale
// to a consumer in Germany, which meets the EU VAT production invariants and
// gets a receipt, and a sale between two US parties, which the rulesets do
// not cover: it is recorded for MANUAL_REVIEW_REQUIRED, without a receipt.
func ExampleService_Record() {
	engine, done := exampleEngine(time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC))
	defer done()
	ctx := context.Background()
	events := fiscalevent.New(engine)

	own, err := events.Record(ctx, "acct_demo", fiscalevent.Request{
		Payment: examplePayment,
		Seller:  parties.Seller{LegalName: "Demo Digital Services Ltd", Country: "IE"},
		Buyer:   parties.Buyer{Country: "DE", BusinessStatus: "B2C"},
		Supply:  parties.Supply{Kind: "digital_service"},
	}, "event-1001")
	if err != nil {
		log.Fatal(err)
	}
	ev := own.Event
	fmt.Println(ev.Determination.Status, ev.Determination.Regime, ev.Determination.TaxingCountry, ev.Determination.RatePercent)
	fmt.Println("production receipt:", ev.Production.Receipt, ev.Receipt.ID)

	other := examplePayment
	other.TxHash = "0x" + strings.Repeat("ab", 32)
	us, err := events.Record(ctx, "acct_demo", fiscalevent.Request{
		Payment: other,
		Seller:  parties.Seller{LegalName: "Acme Inc", Country: "US"},
		Buyer:   parties.Buyer{Country: "US"},
		Supply:  parties.Supply{Kind: "digital_service"},
	}, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(us.Event.Determination.Status, us.Event.Determination.Reasons[0].Code)
	for _, inv := range us.Event.Production.Invariants {
		if !inv.Holds {
			fmt.Println("fails:", inv.Code)
		}
	}
	fmt.Println("production receipt:", us.Event.Production.Receipt, us.Event.Receipt == nil)
	// Output:
	// DETERMINED OSS_B2C DE 19
	// production receipt: true rcpt_x402-08980dac1f2fc3867dc7eccb9ad09eb3
	// MANUAL_REVIEW_REQUIRED corridor_not_covered
	// fails: seller_is_account
	// fails: buyer_in_eu
	// fails: determined_eu_vat
	// production receipt: false true
}
