package fiscal_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
)

// exampleChainEngine is an engine whose Base payments are verified on chain
// through the given RPC endpoint (mode required: x402 ingest needs it).
func exampleChainEngine(dir, rpcURL string) *fiscal.Engine {
	chain, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{rpcURL}, MinConfirmations: 3},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	accounts, err := fiscal.NewAccounts([]fiscal.Account{{
		ID:        "acct_demo",
		KeyHashes: []string{fiscal.HashKey("sk_example")},
		Seller: fiscal.Seller{
			LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE",
			Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
			OverThreshold: true,
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	engine, err := fiscal.New(fiscal.Config{
		DataDir: dir, Accounts: accounts, Chain: chain,
		Clock: func() time.Time { return time.Date(2026, 4, 10, 15, 0, 0, 0, time.UTC) },
		Rand:  &seededRand{},
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

// ExampleEngine_IngestX402 records an x402 payment from the documents an
// x402 hook holds. The engine verifies it on chain and dates it by its
// block, so the example needs a node with the transaction; it is compiled,
// not run (fiscal/x402_test.go runs the same calls against anvil).
func ExampleEngine_IngestX402() {
	engine := exampleChainEngine("fiscal402-data", "https://mainnet.base.org")
	defer engine.Close()

	res, err := engine.IngestX402(context.Background(), "acct_demo",
		exampleSettled, exampleRequirements, examplePayload,
		fiscal.BuyerFacts{Country: "DE"}, "order-1001")
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

// ExampleEngine_EnqueueX402 is what an x402 OnAfterSettle hook calls: it
// validates the documents and durably queues the payment, without waiting
// for the chain; RunIngestQueue verifies and records it later.
func ExampleEngine_EnqueueX402() {
	dir, err := os.MkdirTemp("", "fiscal402-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	engine := exampleChainEngine(dir, "http://127.0.0.1:8545")
	defer engine.Close()
	ctx := context.Background()

	res, err := engine.EnqueueX402(ctx, "acct_demo", exampleSettled, exampleRequirements, examplePayload, fiscal.BuyerFacts{Country: "DE"}, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Queued.ID, res.Queued.State, res.Queued.Reason)

	// A failed settlement is not a payment: nothing is queued or recorded.
	failed := []byte(`{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"eip155:8453"}`)
	_, err = engine.EnqueueX402(ctx, "acct_demo", failed, exampleRequirements, examplePayload, fiscal.BuyerFacts{}, "")
	fmt.Println(fiscal.CodeOf(err))

	// A transfer of another token is refused before anything is written.
	other := []byte(`{"scheme":"exact","network":"base","maxAmountRequired":"1190000",
		"asset":"0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"}`)
	_, err = engine.EnqueueX402(ctx, "acct_demo", exampleSettled, other, nil, fiscal.BuyerFacts{}, "")
	var fe *fiscal.Error
	errors.As(err, &fe)
	fmt.Println(fe.Code, fe.Field)

	// In a server: go engine.RunIngestQueue(ctx), cancelled before Close.

	// Output:
	// x402-50811ca1df7918111342c7f4bd2a7d64 queued async
	// NOT_SETTLED
	// UNSUPPORTED_ASSET /paymentRequirements/asset
}

// ExampleEngine_IngestTransfer records a plain USDC transfer (evm-transfer):
// the chain supplies amount, payer, receiver and time. It needs a node with
// the transaction, so it is compiled, not run (fiscal/x402_test.go runs it
// against anvil).
func ExampleEngine_IngestTransfer() {
	engine := exampleChainEngine("fiscal402-data", "https://mainnet.base.org")
	defer engine.Close()
	res, err := engine.IngestTransfer(context.Background(), "acct_demo", "eip155:8453",
		"0x9e4d8c1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5", 0, // block-level log index of the Transfer
		fiscal.BuyerFacts{Country: "FR", Description: "Monthly plan"}, "")
	if err != nil {
		log.Fatal(err)
	}
	r := res.Record
	fmt.Println(r.ID, r.Settlement.Protocol, r.Settlement.AmountUSDC, r.Settlement.PayerWallet, r.Settlement.Timestamp)
}
