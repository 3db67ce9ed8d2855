package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/sandbox"
)

// exampleEngine opens a production engine on a temporary directory with the
// demo seller as account "acct_demo", a fixed clock and fixed keys.
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

// ExampleSandbox_Evaluate previews the VAT of a sale by a US seller to a
// consumer in France: the non-Union OSS, at the French rate, converted at
// the ECB rate of the day. Nothing is recorded.
func ExampleSandbox_Evaluate() {
	engine, done := exampleEngine(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	defer done()
	sb := sandbox.New(engine, sandbox.Options{})

	ev, err := sb.Evaluate(context.Background(), "", "", sandbox.EvaluateRequest{
		Seller:     &parties.Seller{Country: "US"},
		Buyer:      parties.Buyer{Country: "FR", BusinessStatus: "B2C"},
		Supply:     parties.Supply{Kind: "saas"},
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

// ExampleSandbox_Simulate runs a settlement through the sandbox: the
// receipt is watermarked and verifies only with the sandbox keys, and the
// production ledger stays empty.
func ExampleSandbox_Simulate() {
	engine, done := exampleEngine(time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC))
	defer done()
	sb := sandbox.New(engine, sandbox.Options{})

	sim, err := sb.Simulate(context.Background(), "acct_demo", sandbox.AccountAgent("acct_demo"), sandbox.SimulateRequest{
		SettlementRequest: fiscal.SettlementRequest{
			AmountUSDC:      "11.90",
			TxHash:          "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
			Timestamp:       "2026-04-10T14:30:00Z",
			PayerWallet:     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
			ReceiverWallet:  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
			Network:         "eip155:8453",
			ConsumerCountry: "DE",
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
	sandboxJWKS, _ := sb.JWKS()
	sandboxLogKey, _ := sb.LogVerifierKey()
	claims, err := receipt.Verify(sim.Receipt, sandboxJWKS, sandboxLogKey)
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
