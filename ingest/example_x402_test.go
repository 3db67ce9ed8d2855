package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/x402"
)

// exampleEngine is an engine whose Base payments are verified on chain
// through the given RPC endpoint (mode required: x402 ingest needs it),
// keeping the books of one merchant, merchant-1.
func exampleEngine(dir, rpcURL string) *fiscal.Engine {
	chain, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{rpcURL}, MinConfirmations: 3},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	engine, err := fiscal.New(fiscal.Config{
		Dir: dir, Chain: chain,
		Accounts: []fiscal.Account{{ID: "merchant-1", Seller: fiscal.Seller{
			LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", Country: "IE", OverThreshold: true}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	return engine
}

// The documents an x402 hook holds after the facilitator settled (x402 v2,
// exact, EIP-3009), as the x402 Go SDK marshals them.
var (
	exampleRequirements = []byte(`{"scheme":"exact","network":"eip155:8453","amount":"1190000",
		"asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		"maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}`)
	examplePayload = []byte(`{"x402Version":2,"resource":{"url":"https://api.example.com/weather"},
		"accepted":` + string(exampleRequirements) + `,
		"payload":{"signature":"0x…","authorization":{"from":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		"to":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","value":"1190000","validAfter":"1775811000","validBefore":"1775811660",
		"nonce":"0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480"}}}`)
	exampleSettled = []byte(`{"success":true,"payer":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		"transaction":"0x9e4d8c1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5","network":"eip155:8453"}`)
)

// Example is an x402 facilitator's post-settlement hook: it hands the three
// documents it holds to the ingest service, which queues the payment
// durably and records it once the chain confirms it. (The README quotes
// it.)
func Example() {
	dir, _ := os.MkdirTemp("", "hook")
	defer os.RemoveAll(dir)
	engine := exampleEngine(dir, "http://127.0.0.1:8545")
	defer engine.Close()
	payments, err := ingest.Open(engine, ingest.Options{}) // records queued payments in the background
	if err != nil {
		log.Fatal(err)
	}

	afterSettle := func(ctx context.Context, settled, requirements, payload []byte, buyerCountry string) error {
		_, err := payments.EnqueueX402(ctx, ingest.X402{
			Account:    "merchant-1",
			Settlement: x402.Settlement{SettleResponse: settled, PaymentRequirements: requirements, PaymentPayload: payload},
			Buyer:      fiscal.BuyerFacts{Country: buyerCountry},
		})
		return err
	}

	err = afterSettle(context.Background(), exampleSettled, exampleRequirements, examplePayload, "DE")
	fmt.Println("queued:", err == nil)
	// Output:
	// queued: true
}

// ExampleService_RecordX402 records an x402 payment from the documents an
// x402 hook holds, waiting for the chain. The engine verifies it on chain
// and dates it by its block, so the example needs a node with the
// transaction; it is compiled, not run (x402_test.go runs the same calls
// against anvil).
func ExampleService_RecordX402() {
	engine := exampleEngine("fiscal402-data", "https://mainnet.base.org")
	defer engine.Close()
	payments, err := ingest.Open(engine, ingest.Options{})
	if err != nil {
		log.Fatal(err)
	}

	res, err := payments.RecordX402(context.Background(), ingest.X402{
		Account:        "merchant-1",
		Settlement:     x402.Settlement{SettleResponse: exampleSettled, PaymentRequirements: exampleRequirements, PaymentPayload: examplePayload},
		Buyer:          fiscal.BuyerFacts{Country: "DE"},
		IdempotencyKey: "order-1001",
	})
	var fe *fiscal.Error
	switch {
	case errors.As(err, &fe) && fe.RetryAfter > 0:
		log.Printf("%s: retry in %s (or use EnqueueX402)", fe.Code, fe.RetryAfter) // the chain is not final or not reachable
	case err != nil:
		log.Fatal(err) // CHAIN_VERIFY_FAILED, NOT_SETTLED, UNSUPPORTED_ASSET, ...
	case res.Outcome == fiscal.Queued:
		fmt.Println("held until the chain has it:", res.Queued.ID) // settlement_pending
	default:
		r := res.Record
		fmt.Println(r.ID, r.ReviewStatus, r.Settlement.AmountUSDC, r.Settlement.Timestamp, r.Verification.Facts.BlockNumber)
	}
}

// ExampleService_EnqueueX402 shows what the queue answers: the entry, and
// the refusals that write nothing.
func ExampleService_EnqueueX402() {
	dir, _ := os.MkdirTemp("", "fiscal402-example")
	defer os.RemoveAll(dir)
	engine := exampleEngine(dir, "http://127.0.0.1:8545")
	defer engine.Close()
	payments, err := ingest.Open(engine, ingest.Options{NoQueue: true})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	report := func(settled, requirements, payload []byte) (*ingest.Result, error) {
		return payments.EnqueueX402(ctx, ingest.X402{Account: "merchant-1",
			Settlement: x402.Settlement{SettleResponse: settled, PaymentRequirements: requirements, PaymentPayload: payload},
			Buyer:      fiscal.BuyerFacts{Country: "DE"}})
	}

	res, err := report(exampleSettled, exampleRequirements, examplePayload)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Queued.ID, res.Queued.State, res.Queued.Reason)

	// A failed settlement is not a payment: nothing is queued or recorded.
	failed := []byte(`{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"eip155:8453"}`)
	_, err = report(failed, exampleRequirements, examplePayload)
	var fe *fiscal.Error
	errors.As(err, &fe)
	fmt.Println(fe.Code)

	// A transfer of another token is refused before anything is written.
	other := []byte(`{"scheme":"exact","network":"base","maxAmountRequired":"1190000",
		"asset":"0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}`)
	_, err = report(exampleSettled, other, nil)
	errors.As(err, &fe)
	fmt.Println(fe.Code, fe.Field)

	// Output:
	// x402-50811ca1df7918111342c7f4bd2a7d64 queued async
	// NOT_SETTLED
	// UNSUPPORTED_ASSET /paymentRequirements/asset
}

// ExampleService_RecordTransfer records a plain USDC transfer
// (evm-transfer): the chain supplies amount, payer, receiver and time. It
// needs a node with the transaction, so it is compiled, not run
// (x402_test.go runs it against anvil).
func ExampleService_RecordTransfer() {
	engine := exampleEngine("fiscal402-data", "https://mainnet.base.org")
	defer engine.Close()
	payments, err := ingest.Open(engine, ingest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := payments.RecordTransfer(context.Background(), ingest.Transfer{
		Account: "merchant-1", Network: "eip155:8453",
		TxHash:   "0x9e4d8c1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5",
		LogIndex: 0, // block-level log index of the Transfer
		Buyer:    fiscal.BuyerFacts{Country: "FR", Description: "Monthly plan"},
	})
	if err != nil {
		log.Fatal(err)
	}
	r := res.Record
	fmt.Println(r.ID, r.Settlement.Protocol, r.Settlement.AmountUSDC, r.Settlement.PayerWallet, r.Settlement.Timestamp)
}
