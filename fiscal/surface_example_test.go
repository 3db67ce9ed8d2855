package fiscal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/receipt"
)

// exampleEngine opens an engine on a temporary directory with the demo
// seller of Example, a fixed clock and fixed keys.
func exampleEngine(now time.Time) (*fiscal.Engine, func()) {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	accounts, err := fiscal.NewAccounts([]fiscal.Account{{
		ID:        "acct_demo",
		KeyHashes: []string{fiscal.HashKey("sk_example")},
		Seller: fiscal.Seller{
			LegalName:     "Demo Digital Services Ltd",
			VATNumber:     "IE1234567T",
			LegalID:       "IE-CRO-654321",
			Country:       "IE",
			Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
			OverThreshold: true,
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	engine, err := fiscal.New(fiscal.Config{
		DataDir: dir, Accounts: accounts,
		Clock: func() time.Time { return now },
		Rand:  &seededRand{},
	})
	if err != nil {
		log.Fatal(err)
	}
	return engine, func() { engine.Close(); os.RemoveAll(dir) }
}

var examplePayment = fiscal.EventPayment{
	AmountUSDC:     "11.90",
	TxHash:         "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
	Timestamp:      "2026-04-10T14:30:00Z",
	PayerWallet:    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
	ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
	Network:        "eip155:8453",
}

// ExampleEngine_RecordFiscalEvent records two fiscal events: the account's
// own sale to a consumer in Germany, which meets the EU VAT production
// invariants and gets a receipt, and a sale between two US parties, which
// the rulesets do not cover: it is recorded for MANUAL_REVIEW_REQUIRED,
// without a receipt.
func ExampleEngine_RecordFiscalEvent() {
	engine, done := exampleEngine(time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC))
	defer done()
	ctx := context.Background()

	own, err := engine.RecordFiscalEvent(ctx, "acct_demo", fiscal.FiscalEventRequest{
		Payment: examplePayment,
		Seller:  fiscal.EventSeller{LegalName: "Demo Digital Services Ltd", Country: "IE"},
		Buyer:   fiscal.EventBuyer{Country: "DE", BusinessStatus: "B2C"},
		Supply:  fiscal.EventSupply{Kind: "digital_service"},
	}, "event-1001")
	if err != nil {
		log.Fatal(err)
	}
	ev := own.Event
	fmt.Println(ev.Determination.Status, ev.Determination.Regime, ev.Determination.TaxingCountry, ev.Determination.RatePercent)
	fmt.Println("production receipt:", ev.Production.Receipt, ev.Receipt.ID)

	other := examplePayment
	other.TxHash = "0x" + strings.Repeat("ab", 32)
	us, err := engine.RecordFiscalEvent(ctx, "acct_demo", fiscal.FiscalEventRequest{
		Payment: other,
		Seller:  fiscal.EventSeller{LegalName: "Acme Inc", Country: "US"},
		Buyer:   fiscal.EventBuyer{Country: "US"},
		Supply:  fiscal.EventSupply{Kind: "digital_service"},
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
	// production receipt: true rcpt_x402-58da266c40105d3ff1aba32e04c2d1b8
	// MANUAL_REVIEW_REQUIRED corridor_not_covered
	// fails: seller_is_account
	// fails: buyer_in_eu
	// fails: determined_eu_vat
	// production receipt: false true
}

// ExampleEngine_Evaluate previews the VAT of a sale by a US seller to a
// consumer in France: the non-Union OSS, at the French rate, converted at
// the ECB rate of the day. Nothing is recorded.
func ExampleEngine_Evaluate() {
	engine, done := exampleEngine(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	defer done()

	ev, err := engine.Evaluate(context.Background(), "", fiscal.Agent(""), fiscal.EvaluateRequest{
		Seller:     &fiscal.EventSeller{Country: "US"},
		Buyer:      fiscal.EventBuyer{Country: "FR", BusinessStatus: "B2C"},
		Supply:     fiscal.EventSupply{Kind: "saas"},
		AmountUSDC: "12.00",
		Date:       "2026-04-10",
	})
	if err != nil {
		log.Fatal(err)
	}
	d := ev.Determination
	fmt.Println(d.Status, d.Regime, d.Scheme, d.TaxingCountry, d.RatePercent)
	fmt.Printf("%s USDC = %s EUR = %s net + %s VAT; recorded: %v\n", ev.FX.AmountUSDC, ev.FX.GrossEUR, ev.FX.NetEUR, ev.FX.VATEUR, ev.Recorded)
	// Output:
	// DETERMINED OSS_B2C non-union FR 20
	// 12.00 USDC = 10.25 EUR = 8.54 net + 1.71 VAT; recorded: false
}

// ExampleEngine_Simulate runs a settlement through the sandbox: the
// receipt is watermarked and verifies only with the sandbox keys.
func ExampleEngine_Simulate() {
	engine, done := exampleEngine(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	defer done()

	sim, err := engine.Simulate(context.Background(), "acct_demo", fiscal.AccountAgent("acct_demo"), fiscal.SimulateRequest{
		SettlementRequest: fiscal.SettlementRequest{
			AmountUSDC: examplePayment.AmountUSDC, TxHash: examplePayment.TxHash, Timestamp: examplePayment.Timestamp,
			PayerWallet: examplePayment.PayerWallet, ReceiverWallet: examplePayment.ReceiverWallet,
			Network: examplePayment.Network, ConsumerCountry: "DE",
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("quota left today:", sim.Quota.Remaining)
	fmt.Println(strings.Contains(sim.UBL, "<cbc:Note>SANDBOX TEST DOCUMENT - NOT A VALID INVOICE."))

	prodJWKS, _ := engine.JWKS()
	_, err = receipt.Verify(sim.Receipt, prodJWKS, engine.LogVerifierKey())
	fmt.Println("with the production keys:", err != nil)
	sandboxJWKS, _ := engine.SandboxJWKS()
	claims, err := receipt.Verify(sim.Receipt, sandboxJWKS, engine.SandboxLogVerifierKey())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(claims.Environment, claims.Watermark)
	fmt.Println("production ledger entries:", engine.Ledger().Size())
	// Output:
	// quota left today: 9
	// true
	// with the production keys: true
	// sandbox SANDBOX: not a fiscal record, not valid for tax purposes
	// production ledger entries: 0
}

// ExampleEngine_ListSettlements pages through an account's records, newest
// first, two at a time.
func ExampleEngine_ListSettlements() {
	engine, done := exampleEngine(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	defer done()
	ctx := context.Background()
	for i, cc := range []string{"DE", "FR", "IT"} {
		req := fiscal.SettlementRequest{
			AmountUSDC: "1.00", TxHash: fmt.Sprintf("0x%064x", i+1), Timestamp: "2026-04-10T14:30:00Z",
			PayerWallet: examplePayment.PayerWallet, ReceiverWallet: examplePayment.ReceiverWallet,
			Network: examplePayment.Network, ConsumerCountry: cc,
		}
		if _, err := engine.Settle(ctx, "acct_demo", req, ""); err != nil {
			log.Fatal(err)
		}
	}
	q := fiscal.ListQuery{Limit: 2}
	for {
		page, err := engine.ListSettlements(ctx, "acct_demo", q)
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
	// x402-f6af4704992a9590671a595e5bd6b3da FR
	// x402-d2926c6c7f7bda1f88801d77cd09bd0c IT
	// x402-82805440912f5a3ba8c399f6b880466c DE
}
