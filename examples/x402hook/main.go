// Command x402hook shows how an x402 resource server or facilitator hands
// its settlements to fiscal402 from the x402 Go SDK's OnAfterSettle hook,
// without the SDK: it builds the documents the SDK gives the hook (the
// SettleResponse, the PaymentRequirements bytes and the PaymentPayload
// bytes), calls the hook body that README.md shows for the SDK, and lets the
// engine's ingest queue verify the payment on chain and record it.
//
// The hook does only what a hook in the buyer's request path may do:
// validate and durably enqueue (ingest.Service.EnqueueX402). The chain is
// asked later, by the ingest queue the service runs in the background, which
// retries while the transaction is pending, not deep enough, or the RPC is
// down.
//
// Usage, against any node that has the settled transaction:
//
//	go run ./examples/x402hook -rpc URL -tx 0x… -payer 0x… -payto 0x… -amount 1190000 [flags]
//
// Flags:
//
//	-rpc url            JSON-RPC endpoint of the network (required)
//	-network id         CAIP-2 network (default eip155:8453)
//	-tx hash            the settled transaction (the SettleResponse's "transaction")
//	-payer addr         the payer (the Transfer's from, not the transaction sender)
//	-payto addr         the merchant's address (PaymentRequirements.payTo)
//	-amount units       the price in USDC atomic units (PaymentRequirements.amount)
//	-country cc         the buyer's country, as the merchant knows it (default DE)
//	-pending            report "settlement_pending" instead of success
//	-confirmations n    confirmations to wait for (default 1)
//	-data dir           engine data directory (default: a temporary one, removed at exit)
//	-wait d             how long to wait for the record (default 60s)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/x402"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "x402hook:", err)
		os.Exit(1)
	}
}

// settleResultContext has the fields of the x402 Go SDK's
// x402.SettleResultContext (and x402.FacilitatorSettleResultContext) that
// the hook reads (SDK v2.9.0 go/server_hooks.go,
// https://github.com/x402-foundation/x402): the request context, the payload and requirements exactly as
// received, and the facilitator's result.
type settleResultContext struct {
	Ctx               context.Context
	PayloadBytes      []byte
	RequirementsBytes []byte
	Result            *x402.SettleResponse
}

// afterSettle is the hook body of README.md: skip what did not settle,
// marshal the result back to its wire JSON, and enqueue the three documents
// with the buyer facts the merchant holds for this request. The SDK ignores
// a hook's error, so the hook logs it; a NOT_SETTLED answer (success:false
// that is not "settlement_pending") is expected and not logged.
func afterSettle(payments *ingest.Service, accountID string, buyer func(context.Context) fiscal.BuyerFacts, log *slog.Logger) func(settleResultContext) error {
	return func(c settleResultContext) error {
		if c.Result == nil || c.Result.Transaction == "" {
			return nil // nothing reached the chain
		}
		settle, err := json.Marshal(c.Result)
		if err != nil {
			return err
		}
		res, err := payments.EnqueueX402(c.Ctx, ingest.X402{
			Account:    accountID,
			Settlement: x402.Settlement{SettleResponse: settle, PaymentRequirements: c.RequirementsBytes, PaymentPayload: c.PayloadBytes},
			Buyer:      buyer(c.Ctx),
		})
		var fe *fiscal.Error
		if errors.As(err, &fe) && fe.Code == ingest.CodeNotSettled {
			return nil
		}
		if err != nil {
			log.Error("fiscal402: x402 settlement not queued", "tx", c.Result.Transaction, "err", err)
			return err
		}
		if res.Outcome == fiscal.Queued {
			log.Info("fiscal402: x402 settlement queued", "id", res.Queued.ID, "reason", res.Queued.Reason)
		}
		return nil
	}
}

type options struct {
	rpc, network, tx, payer, payTo, amount, country, data string
	pending                                               bool
	confirmations                                         uint64
	wait                                                  time.Duration
}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("x402hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.rpc, "rpc", "", "JSON-RPC endpoint of the network (required)")
	fs.StringVar(&o.network, "network", evmverify.NetworkBase, "CAIP-2 network")
	fs.StringVar(&o.tx, "tx", "", "the settled transaction hash (required)")
	fs.StringVar(&o.payer, "payer", "", "the payer's address (required)")
	fs.StringVar(&o.payTo, "payto", "", "the merchant's address, PaymentRequirements.payTo (required)")
	fs.StringVar(&o.amount, "amount", "", "the price in USDC atomic units (required)")
	fs.StringVar(&o.country, "country", "DE", "the buyer's country")
	fs.BoolVar(&o.pending, "pending", false, `report "settlement_pending" instead of success`)
	fs.Uint64Var(&o.confirmations, "confirmations", 1, "confirmations to wait for")
	fs.StringVar(&o.data, "data", "", "engine data directory (default: temporary)")
	fs.DurationVar(&o.wait, "wait", time.Minute, "how long to wait for the record")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil // the flags are printed: a help request is not a failure
	} else if err != nil {
		return err
	}
	for _, f := range []struct{ name, value string }{{"rpc", o.rpc}, {"tx", o.tx}, {"payer", o.payer}, {"payto", o.payTo}, {"amount", o.amount}} {
		if f.value == "" {
			return fmt.Errorf("-%s is required", f.name)
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	engine, cleanup, err := demoEngine(o, log)
	if err != nil {
		return err
	}
	defer cleanup()
	payments, err := ingest.Open(engine, ingest.Options{}) // its queue runs until the engine closes
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), o.wait)
	defer cancel()

	// What the x402 SDK hands the hook after the facilitator settled.
	hookCtx, err := sdkContext(ctx, o)
	if err != nil {
		return err
	}
	buyerFromRequest := func(context.Context) fiscal.BuyerFacts {
		// A real merchant reads this from its own session (account data,
		// billing address, evidence of the customer's location) that its
		// middleware put in the request context.
		return fiscal.BuyerFacts{Country: o.country}
	}
	hook := afterSettle(payments, demoAccount, buyerFromRequest, log)
	if err := hook(hookCtx); err != nil {
		return err
	}
	id := fiscal.EventID(o.network, hookTx(hookCtx))
	fmt.Fprintf(stdout, "hook: queued %s for on-chain verification\n", id)

	st, err := waitRecorded(ctx, engine, payments, id, o.network, hookTx(hookCtx))
	if err != nil {
		return err
	}
	if st.State != ingest.StateRecorded {
		return fmt.Errorf("ingest %s: %s: %s %s", id, st.State, st.LastError.Code, st.LastError.Detail)
	}
	// The record has an id of its own (keyed, so that a public receipt
	// cannot be found from a transaction hash): the queue entry links it.
	return report(ctx, stdout, engine, path.Base(st.RecordURL))
}

const demoAccount = "acct_demo"

// demoEngine is an engine with one demo seller (as examples/server creates
// it) and chain verification required on the network.
func demoEngine(o options, log *slog.Logger) (*fiscal.Engine, func(), error) {
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		o.network: {Mode: evmverify.ModeRequired, RPCURLs: []string{o.rpc}, MinConfirmations: o.confirmations},
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	accounts := []fiscal.Account{{
		ID: demoAccount,
		Seller: fiscal.Seller{
			LegalName: "Demo Digital Services Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-654321", Country: "IE",
			Address:       fiscal.Address{Street: "1 Demo Street", City: "Dublin", PostalCode: "D02 X285"},
			OverThreshold: true, ItemName: "API access (pay per call)",
		},
	}}
	dir, remove := o.data, func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "x402hook"); err != nil {
			return nil, nil, err
		}
		remove = func() { os.RemoveAll(dir) }
	}
	engine, err := fiscal.New(fiscal.Config{Dir: dir, Accounts: accounts, Chain: v, Logger: log})
	if err != nil {
		remove()
		return nil, nil, err
	}
	return engine, func() { engine.Close(); remove() }, nil
}

// sdkContext builds the hook's input as the SDK would: the requirements and
// payload bytes as the client sent them (x402 v2, exact, EIP-3009), and the
// facilitator's SettleResponse.
func sdkContext(ctx context.Context, o options) (settleResultContext, error) {
	usdc, ok := evmverify.USDCContract(o.network)
	if !ok {
		return settleResultContext{}, fmt.Errorf("no USDC contract known on %s", o.network)
	}
	req := x402.PaymentRequirements{
		Scheme: "exact", Network: o.network, Amount: o.amount, Asset: usdc, PayTo: o.payTo,
		MaxTimeoutSeconds: 60, Extra: json.RawMessage(`{"name":"USD Coin","version":"2"}`),
	}
	reqBytes, err := json.Marshal(req)
	if err != nil {
		return settleResultContext{}, err
	}
	// The scheme payload is the client's signed EIP-3009 authorization,
	// whose six members (validity window and nonce included) this example
	// does not know; it sends none, so the payer is the settle response's.
	payloadBytes, err := json.Marshal(x402.PaymentPayload{
		X402Version: 2,
		Resource:    &x402.ResourceInfo{URL: "https://api.example.com/premium-data", MimeType: "application/json"},
		Accepted:    &req,
	})
	if err != nil {
		return settleResultContext{}, err
	}
	result := &x402.SettleResponse{Success: true, Payer: o.payer, Transaction: o.tx, Network: o.network}
	if o.pending {
		result.Success, result.ErrorReason = false, "settlement_pending"
	}
	return settleResultContext{Ctx: ctx, PayloadBytes: payloadBytes, RequirementsBytes: reqBytes, Result: result}, nil
}

func hookTx(c settleResultContext) string {
	tx, err := evmverify.ParseTxHash(c.Result.Transaction)
	if err != nil {
		return c.Result.Transaction
	}
	return tx
}

// waitRecorded polls the queue entry until it is recorded or failed.
func waitRecorded(ctx context.Context, engine *fiscal.Engine, payments *ingest.Service, id, network, txHash string) (*ingest.Status, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	books, err := engine.Books(demoAccount)
	if err != nil {
		return nil, err
	}
	for {
		st, err := payments.Status(ctx, demoAccount, id)
		var fe *fiscal.Error
		if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
			// Recorded before this run (a reused -data directory): the
			// hook found the record and queued nothing.
			if rec, _, rerr := books.Lookup(network, txHash, "", nil); rerr == nil && rec != "" {
				return &ingest.Status{ID: id, State: ingest.StateRecorded, RecordURL: "/settlements/" + rec}, nil
			}
		}
		if err != nil {
			return nil, err
		}
		if st.State != ingest.StateQueued {
			return st, nil
		}
		select {
		case <-ctx.Done():
			detail := "no attempt yet"
			if st.LastError != nil {
				detail = fmt.Sprintf("%s: %s", st.LastError.Code, st.LastError.Detail)
			}
			return nil, fmt.Errorf("ingest %s still queued after %d attempt(s) (%s)", id, st.Attempts, detail)
		case <-tick.C:
		}
	}
}

// report prints the record and checks its receipt offline, as an auditor
// would, with nothing but the receipt, the JWKS and the log key.
func report(ctx context.Context, w io.Writer, engine *fiscal.Engine, id string) error {
	books, err := engine.Books(demoAccount)
	if err != nil {
		return err
	}
	r, _, err := books.Record(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "recorded %s: %s, %s USDC on %s", r.ID, r.ReviewStatus, r.Settlement.AmountUSDC, r.Settlement.Network)
	if r.FX.GrossEUR != "" {
		fmt.Fprintf(w, " = %s EUR gross", r.FX.GrossEUR)
	}
	if c := r.Classification; c.RatePercent != nil {
		fmt.Fprintf(w, " (%s %s %s%%)", c.Regime, c.TaxingCountry, c.RatePercent)
	}
	fmt.Fprintln(w)
	for _, reason := range r.ReviewReasons {
		fmt.Fprintf(w, "  review: %s: %s\n", reason.Code, reason.Detail)
	}
	if f := r.Verification.Facts; f != nil {
		fmt.Fprintf(w, "on chain: block %d at %s, log %d, %d confirmation(s), finalized %v\n",
			f.BlockNumber, f.BlockTime.Format(time.RFC3339), f.LogIndex, f.Confirmations, f.Finalized)
	}
	rcpt, err := engine.Receipt(ctx, r.Receipt.ID)
	if err != nil {
		return err
	}
	jwks, err := engine.JWKS()
	if err != nil {
		return err
	}
	claims, err := receipt.Verify(rcpt, jwks, engine.LogVerifierKey())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "receipt %s verified offline (log index %d; signs block %d)\n", claims.ReceiptID, claims.Log.Index, claims.Settlement.Chain.BlockNumber)
	return nil
}
