package ingest_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/anviltest"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/x402"
)

// These tests run the x402 and evm-transfer ingest paths against a real EVM
// node: anvil with Circle's USDC at the real Base address (internal/anviltest).
// They skip when anvil is missing, and fail under FISCAL402_STRICT=1.

// genesis pins the chain's clock on a day the embedded ECB series covers, so
// that records made from block times are PROCESSED.
var genesis = time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)

// movingClock is an engine clock that tests move forward.
type movingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *movingClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *movingClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var germanSeller = fiscal.Seller{
	LegalName: "Beispiel Daten GmbH", VATNumber: "DE136695976", LegalID: "HRB 12345", Country: "DE",
	Address:       fiscal.Address{Street: "Hauptstraße 1", City: "Berlin", PostalCode: "10115"},
	OverThreshold: true,
}

// env is an engine with the ingest service over it. Its methods keep the
// tests close to the calls a facilitator makes.
type env struct {
	*fiscal.Engine
	svc *ingest.Service
}

func (x *env) IngestX402(ctx context.Context, account string, settle, requirements, payload []byte, buyer fiscal.BuyerFacts, key string) (*ingest.Result, error) {
	return x.svc.RecordX402(ctx, ingest.X402{Account: account, Settlement: x402.Settlement{SettleResponse: settle, PaymentRequirements: requirements, PaymentPayload: payload}, Buyer: buyer, IdempotencyKey: key})
}

func (x *env) EnqueueX402(ctx context.Context, account string, settle, requirements, payload []byte, buyer fiscal.BuyerFacts, key string) (*ingest.Result, error) {
	return x.svc.EnqueueX402(ctx, ingest.X402{Account: account, Settlement: x402.Settlement{SettleResponse: settle, PaymentRequirements: requirements, PaymentPayload: payload}, Buyer: buyer, IdempotencyKey: key})
}

func (x *env) IngestTransfer(ctx context.Context, account, network, tx string, logIndex uint64, buyer fiscal.BuyerFacts, key string) (*ingest.Result, error) {
	return x.svc.RecordTransfer(ctx, ingest.Transfer{Account: account, Network: network, TxHash: tx, LogIndex: logIndex, Buyer: buyer, IdempotencyKey: key})
}

func (x *env) IngestStatus(ctx context.Context, account, id string) (*ingest.Status, error) {
	return x.svc.Status(ctx, account, id)
}

func (x *env) ProcessIngestQueue(ctx context.Context) (int, error) { return x.svc.Process(ctx) }

func (x *env) Record(ctx context.Context, account, id string) (*fiscal.Record, []byte, error) {
	b, err := x.Books(account)
	if err != nil {
		return nil, nil, err
	}
	return b.Record(ctx, id)
}

// chainEngine returns an engine whose Base policy is mode required against
// rpcURL, with accounts acct_0 (Irish seller) and acct_1 (German seller),
// and its ingest service (the queue not running: tests call Process).
func chainEngine(t testing.TB, rpcURL string, p evmverify.Policy, clock *movingClock) *env {
	t.Helper()
	e := engineAt(t, t.TempDir(), baseVerifier(t, rpcURL, p), clock)
	t.Cleanup(func() { e.Close() })
	return e
}

func baseVerifier(t testing.TB, rpcURL string, p evmverify.Policy) *evmverify.Verifier {
	t.Helper()
	p.Mode = evmverify.ModeRequired
	p.RPCURLs = []string{rpcURL}
	if p.Timeout == 0 {
		p.Timeout = 5 * time.Second
	}
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{evmverify.NetworkBase: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// engineAt opens an engine on dir with the given chain verifier (nil: off).
func engineAt(t testing.TB, dir string, v *evmverify.Verifier, clock *movingClock) *env {
	t.Helper()
	e, err := fiscal.New(fiscal.Config{
		Dir: dir, Accounts: fiscaltest.Accounts(irishSeller, germanSeller), Chain: v,
		Clock:  clock.Now,
		Rand:   &fiscaltest.Rand{},
		Logger: fiscaltest.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{Engine: e, svc: newService(t, e, ingest.Options{NoQueue: true})}
}

// newService is ingest.New, which the test needs to succeed.
func newService(t testing.TB, e *fiscal.Engine, opts ingest.Options) *ingest.Service {
	t.Helper()
	s, err := ingest.Open(e, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var irishSeller = fiscaltest.IrishSeller

// x402Docs are the three documents an x402 hook has after settling.
type x402Docs struct{ settle, requirements, payload []byte }

// payment describes an x402 exact payment for sdkDocs.
type payment struct {
	tx, payer, payTo, nonce string
	amount                  int64 // atomic units
}

// sdkDocs builds the JSON the x402 Go SDK hands to OnAfterSettle for an
// exact EIP-3009 payment on Base (x402 spec v2 §5,
// https://github.com/x402-foundation/x402/blob/main/specs/x402-specification-v2.md),
// or the x402 v1 shapes when version is 1.
func sdkDocs(t testing.TB, version int, p payment) x402Docs {
	t.Helper()
	amount := strconv.FormatInt(p.amount, 10)
	if p.nonce == "" { // a signed authorization always has one (x402 §5.2.2): a made-up one for a payment not made by it
		sum := sha256.Sum256([]byte("nonce " + p.tx))
		p.nonce = "0x" + hex.EncodeToString(sum[:])
	}
	auth := map[string]any{
		"from": p.payer, "to": p.payTo, "value": amount,
		"validAfter": "1775810400", "validBefore": "1775811000", "nonce": p.nonce,
	}
	inner := map[string]any{"signature": "0x" + strings.Repeat("ab", 65), "authorization": auth}
	var req, payload, settle map[string]any
	switch version {
	case 2:
		req = map[string]any{
			"scheme": "exact", "network": "eip155:8453", "amount": amount,
			"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": p.payTo,
			"maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"},
		}
		payload = map[string]any{
			"x402Version": 2,
			"resource":    map[string]any{"url": "https://api.example.com/premium-data", "description": "Premium data", "mimeType": "application/json"},
			"accepted":    req, "payload": inner,
		}
		settle = map[string]any{"success": true, "payer": p.payer, "transaction": p.tx, "network": "eip155:8453"}
	case 1:
		req = map[string]any{
			"scheme": "exact", "network": "base", "maxAmountRequired": amount,
			"resource": "https://api.example.com/v1/premium-data", "description": "Premium data", "mimeType": "application/json",
			"payTo": p.payTo, "maxTimeoutSeconds": 60, "asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
			"extra": map[string]any{"name": "USD Coin", "version": "2"},
		}
		payload = map[string]any{"x402Version": 1, "scheme": "exact", "network": "base", "payload": inner}
		settle = map[string]any{"success": true, "payer": p.payer, "transaction": p.tx, "network": "base"}
	default:
		t.Fatalf("x402 version %d", version)
	}
	return x402Docs{settle: mustMarshal(t, settle), requirements: mustMarshal(t, req), payload: mustMarshal(t, payload)}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withSettle replaces members of the settle response.
func (d x402Docs) withSettle(t testing.TB, set map[string]any) x402Docs {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.settle, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	d.settle = mustMarshal(t, m)
	return d
}

func wantCode(t *testing.T, err error, code fiscal.Code) *fiscal.Error {
	t.Helper()
	var fe *fiscal.Error
	if !errors.As(err, &fe) || fe.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	return fe
}

// latestBlock reads the number and time of the chain's latest block.
func latestBlock(t testing.TB, chain *anviltest.Chain) (uint64, time.Time) {
	t.Helper()
	var b struct{ Number, Timestamp string }
	chain.Call(t, "eth_getBlockByNumber", []any{"latest", false}, &b)
	n, err1 := strconv.ParseUint(strings.TrimPrefix(b.Number, "0x"), 16, 64)
	ts, err2 := strconv.ParseInt(strings.TrimPrefix(b.Timestamp, "0x"), 16, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("block %+v", b)
	}
	return n, time.Unix(ts, 0).UTC()
}

var buyerDE = fiscal.BuyerFacts{Country: "DE"}

func TestX402Anvil(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: genesis})
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(t, chain.RPCURL(), evmverify.Policy{}, clock)
	ctx := context.Background()

	t.Run("v2 end to end", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_190_000))
		head, blockTime := latestBlock(t, chain)
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 1_190_000})
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "order-1")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if res.Outcome != fiscal.Created || r.ReviewStatus != fiscal.StatusProcessed {
			t.Fatalf("outcome %v status %s %v", res.Outcome, r.ReviewStatus, r.ReviewReasons)
		}
		// The record's id cannot be computed from the transaction: its
		// receipt is public.
		if !strings.HasPrefix(r.ID, "x402-") || r.ID == fiscal.EventID("eip155:8453", strings.ToLower(tx)) {
			t.Errorf("id %s", r.ID)
		}
		st := r.Settlement
		if st.Protocol != "x402" || st.Scheme != "exact" || st.AmountUSDC != "1.19" || st.PayerWallet != chain.Payer() ||
			st.ReceiverWallet != chain.PayTo() || st.Timestamp != blockTime.Format(time.RFC3339) || st.LogIndex == nil || *st.LogIndex != 1 {
			t.Errorf("settlement %+v (block time %s)", st, blockTime)
		}
		f := r.Verification.Facts
		if r.Verification.Chain != "verified" || f == nil || f.BlockNumber != head || !f.BlockTime.Equal(blockTime) || f.Confirmations != 1 || f.LogIndex != 1 {
			t.Errorf("verification %+v %+v", r.Verification, f)
		}
		if r.X402 == nil || *r.X402 != (fiscal.RecordX402{Version: 2, ResourceURL: "https://api.example.com/premium-data", TransferMethod: "eip3009", Nonce: nonce}) {
			t.Errorf("x402 %+v", r.X402)
		}
		// Art. 91(2): the latest ECB publication out at the block's time.
		table, err := fx.Embedded()
		if err != nil {
			t.Fatal(err)
		}
		want, err := table.Lookup("USD", blockTime, fx.LatestPublishedAt)
		if err != nil {
			t.Fatal(err)
		}
		if r.Classification.TaxingCountry != "DE" || r.FX.USDPerEUR.RateDate != want.RateDate || r.FX.USDPerEUR.Policy != fx.LatestPublishedAt || r.Invoice == nil {
			t.Errorf("classification %+v fx %+v", r.Classification, r.FX)
		}

		// The receipt verifies offline and signs the block facts.
		rcpt, err := e.Receipt(ctx, r.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		jwks, _ := e.JWKS()
		books, err := e.Books("acct_0")
		if err != nil {
			t.Fatal(err)
		}
		rawOpenings, err := books.Openings(ctx, r.Receipt.ID)
		if err != nil {
			t.Fatal(err)
		}
		openings, err := receipt.ParseOpenings(rawOpenings)
		if err != nil {
			t.Fatal(err)
		}
		v, err := receipt.NewVerifier(jwks, e.LogVerifierKey())
		if err != nil {
			t.Fatal(err)
		}
		claims, err := v.Verify(rcpt, openings...) // the account holds the openings of the concealed facts
		if err != nil {
			t.Fatal(err)
		}
		c := claims.Settlement
		if c.Protocol != "x402" || c.LogIndex == nil || *c.LogIndex != 1 || c.Timestamp != blockTime.Format(time.RFC3339) ||
			c.Chain.Verification != receipt.ChainVerified || c.Chain.BlockNumber != head || c.Chain.BlockHash != f.BlockHash ||
			c.Chain.BlockTime != blockTime.Format(time.RFC3339) || c.Chain.Confirmations != 1 || c.Chain.Finalized == nil || *c.Chain.Finalized {
			t.Errorf("receipt settlement %+v chain %+v", c, c.Chain)
		}

		size := e.Ledger().Size()
		// The same report again: the same record, never a second one.
		again, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "order-1")
		if err != nil || again.Outcome != fiscal.Replayed || again.Record.ID != r.ID {
			t.Fatalf("replay: %v %+v", err, again)
		}
		again, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil || again.Outcome != fiscal.Existing || again.Record.ID != r.ID {
			t.Fatalf("duplicate: %v %+v", err, again)
		}
		// A second claim of the same log through evm-transfer.
		again, err = e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 1, buyerDE, "")
		if err != nil || again.Outcome != fiscal.Existing || again.Record.ID != r.ID || again.Record.Settlement.Protocol != "x402" {
			t.Fatalf("same log via evm-transfer: %v %+v", err, again)
		}
		_, err = e.IngestTransfer(ctx, "acct_1", "eip155:8453", tx, 1, buyerDE, "")
		wantCode(t, err, fiscal.CodeSettlementConflict)
		// Another log of the recorded transaction is not that payment.
		_, err = e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 0, buyerDE, "")
		if fe := wantCode(t, err, fiscal.CodeSettlementConflict); fe.Field != "/logIndex" {
			t.Errorf("other log: %+v", fe)
		}
		_, err = e.IngestX402(ctx, "acct_1", d.settle, d.requirements, d.payload, buyerDE, "")
		wantCode(t, err, fiscal.CodeSettlementConflict)
		// The key belongs to this payment: reusing it for other facts is a conflict.
		_, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, fiscal.BuyerFacts{Country: "FR"}, "order-1")
		wantCode(t, err, fiscal.CodeIdempotencyConflict)
		if got := e.Ledger().Size(); got != size {
			t.Fatalf("ledger grew from %d to %d on duplicates", size, got)
		}
		if err := e.Ledger().Check(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("v1 field names", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(2_500_000))
		d := sdkDocs(t, 1, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 2_500_000})
		res, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, fiscal.BuyerFacts{Country: "fr"}, "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		if r.Settlement.Network != "eip155:8453" || r.Settlement.AmountUSDC != "2.5" || r.X402.Version != 1 ||
			r.X402.ResourceURL != "https://api.example.com/v1/premium-data" || r.Buyer.Country != "FR" {
			t.Errorf("record %+v x402 %+v", r.Settlement, r.X402)
		}
	})

	t.Run("header values, requirements from accepted", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(10_000))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 10_000})
		d = d.withSettle(t, map[string]any{"payer": nil})
		settleHeader := base64.StdEncoding.EncodeToString(d.settle)
		payloadHeader := base64.RawStdEncoding.EncodeToString(d.payload)
		res, err := e.IngestX402(ctx, "acct_0", []byte(settleHeader), nil, []byte(payloadHeader), buyerDE, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Record.Settlement.AmountUSDC != "0.01" || res.Record.Settlement.PayerWallet != chain.Payer() {
			t.Errorf("settlement %+v", res.Record.Settlement)
		}
	})

	t.Run("plain transfer via IngestTransfer", func(t *testing.T) {
		tx := chain.Transfer(t, chain.Payer(), chain.PayTo(), big.NewInt(11_900_000))
		_, blockTime := latestBlock(t, chain)
		buyer := fiscal.BuyerFacts{Country: "AT", Name: "Max Mustermann", Description: "Monthly plan"}
		res, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", strings.ToUpper(tx[:4])+tx[4:], 0, buyer, "transfer-1")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		st := r.Settlement
		if res.Outcome != fiscal.Created || st.Protocol != "evm-transfer" || st.Scheme != "erc20-transfer" || st.AmountUSDC != "11.9" ||
			st.PayerWallet != chain.Payer() || st.ReceiverWallet != chain.PayTo() || st.Timestamp != blockTime.Format(time.RFC3339) ||
			*st.LogIndex != 0 || st.TxHash != strings.ToLower(tx) || r.X402 != nil || r.Supply.Description != "Monthly plan" {
			t.Errorf("outcome %v record %+v", res.Outcome, r)
		}
		if r.ReviewStatus != fiscal.StatusProcessed || r.Classification.TaxingCountry != "AT" {
			t.Errorf("status %s %+v", r.ReviewStatus, r.Classification)
		}
		again, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 0, buyer, "transfer-1")
		if err != nil || again.Outcome != fiscal.Replayed {
			t.Fatalf("replay: %v %+v", err, again)
		}
		// The x402 report of the same transfer finds the record.
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: "", amount: 11_900_000})
		again, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, nil, buyerDE, "")
		if err != nil || again.Outcome != fiscal.Existing || again.Record.ID != r.ID {
			t.Fatalf("x402 report of a recorded transfer: %v %+v", err, again)
		}
		// The claims as every ledger holds them: one per (network, tx hash)
		// and one per transfer log, taken by the record, fingerprinted by
		// the account; and the Idempotency-Key in the account's space.
		lower := strings.ToLower(tx)
		for _, c := range []struct{ space, key, fp string }{
			{"payment", "eip155:8453:" + lower, "acct_0"},
			{"payment-log", "eip155:8453:" + lower + ":0", "acct_0"},
		} {
			if holder, fp, err := e.Ledger().ClaimHolder(c.space, c.key); err != nil || holder != r.ID || string(fp) != c.fp {
				t.Errorf("claim %s %s: holder %q fingerprint %q %v", c.space, c.key, holder, fp, err)
			}
		}
		if holder, _, err := e.Ledger().ClaimHolder("idem", "acct_0\x00transfer-1"); err != nil || holder != r.ID {
			t.Errorf("Idempotency-Key claim: holder %q %v", holder, err)
		}
	})

	t.Run("chain says no", func(t *testing.T) {
		size := e.Ledger().Size()
		twa, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
		_, otherNonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
		plain := chain.Transfer(t, chain.Payer(), chain.PayTo(), big.NewInt(3_000_000))
		reverted := chain.Revert(t)
		sum := sha256.Sum256([]byte("no such transaction"))
		unknown := "0x" + hex.EncodeToString(sum[:])
		cases := []struct {
			name   string
			p      payment
			reason string
		}{
			{"wrong amount", payment{tx: twa, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 1_000_001}, evmverify.ReasonAmountMismatch},
			{"wrong receiver", payment{tx: twa, payer: chain.Payer(), payTo: chain.Stranger(), nonce: nonce, amount: 1_000_000}, evmverify.ReasonReceiverMismatch},
			{"facilitator as payer", payment{tx: twa, payer: chain.Facilitator(), payTo: chain.PayTo(), amount: 1_000_000}, evmverify.ReasonPayerMismatch},
			// Same payer, payee and amount, but the nonce of the payer's other
			// authorization: not the authorization this transaction used.
			{"another authorization's nonce", payment{tx: twa, payer: chain.Payer(), payTo: chain.PayTo(), nonce: otherNonce, amount: 1_000_000}, evmverify.ReasonAuthorizationMismatch},
			{"reverted", payment{tx: reverted, payer: chain.Payer(), payTo: chain.PayTo(), amount: 1_000_000}, evmverify.ReasonTxReverted},
			{"unknown tx", payment{tx: unknown, payer: chain.Payer(), payTo: chain.PayTo(), amount: 1_000_000}, evmverify.ReasonTxNotFound},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				d := sdkDocs(t, 2, c.p)
				_, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
				fe := wantCode(t, err, fiscal.CodeChainVerifyFailed)
				if !strings.HasPrefix(fe.Detail, c.reason+":") || fe.Field != "/settleResponse/transaction" || fe.Code.HTTPStatus() != 422 {
					t.Errorf("error %+v, want reason %s", fe, c.reason)
				}
			})
		}
		_, err := e.IngestTransfer(ctx, "acct_0", "eip155:8453", plain, 1, buyerDE, "")
		if fe := wantCode(t, err, fiscal.CodeChainVerifyFailed); !strings.HasPrefix(fe.Detail, evmverify.ReasonNoMatchingLog) || fe.Field != "/txHash" {
			t.Errorf("missing log: %+v", fe)
		}
		_, err = e.IngestTransfer(ctx, "acct_0", "eip155:8453", reverted, 0, buyerDE, "")
		wantCode(t, err, fiscal.CodeChainVerifyFailed)
		if got := e.Ledger().Size(); got != size {
			t.Fatalf("ledger grew from %d to %d on rejections", size, got)
		}
	})

	t.Run("success false ignored", func(t *testing.T) {
		size := e.Ledger().Size()
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 1_000_000})
		failed := d.withSettle(t, map[string]any{"success": false, "errorReason": "insufficient_funds", "transaction": ""})
		_, err := e.IngestX402(ctx, "acct_0", failed.settle, failed.requirements, failed.payload, buyerDE, "")
		if fe := wantCode(t, err, ingest.CodeNotSettled); !strings.Contains(fe.Detail, "insufficient_funds") || fe.Code.HTTPStatus() != 422 {
			t.Errorf("%+v", fe)
		}
		_, err = e.EnqueueX402(ctx, "acct_0", failed.settle, failed.requirements, failed.payload, buyerDE, "")
		wantCode(t, err, ingest.CodeNotSettled)
		// Even when it names a transaction that did move the money: the
		// facilitator's report is the claim, and it says no.
		failedWithTx := d.withSettle(t, map[string]any{"success": false, "errorReason": "unexpected_settle_error"})
		_, err = e.IngestX402(ctx, "acct_0", failedWithTx.settle, failedWithTx.requirements, failedWithTx.payload, buyerDE, "")
		wantCode(t, err, ingest.CodeNotSettled)
		if got := e.Ledger().Size(); got != size {
			t.Fatalf("ledger grew from %d to %d", size, got)
		}
		if _, err := e.IngestStatus(ctx, "acct_0", fiscal.EventID("eip155:8453", tx)); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("a failed settlement was queued: %v", err)
		}
	})

	t.Run("settlement pending held", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(4_200_000))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 4_200_000})
		pending := d.withSettle(t, map[string]any{"success": false, "errorReason": "settlement_pending"})
		size := e.Ledger().Size()
		res, err := e.IngestX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, buyerDE, "pending-1")
		if err != nil {
			t.Fatal(err)
		}
		id := fiscal.EventID("eip155:8453", tx)
		if res.Outcome != fiscal.Queued || res.Record != nil || res.Queued.ID != id || res.Queued.State != ingest.StateQueued ||
			res.Queued.Reason != "settlement_pending" || e.Ledger().Size() != size {
			t.Fatalf("held: %+v %+v", res, res.Queued)
		}
		// Holding it again holds the same entry.
		again, err := e.IngestX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, buyerDE, "pending-1")
		if err != nil || again.Outcome != fiscal.Queued || again.Queued.CreatedAt != res.Queued.CreatedAt {
			t.Fatalf("held again: %v %+v", err, again)
		}
		// Its key cannot name another payment meanwhile.
		other, _ := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1))
		od := sdkDocs(t, 2, payment{tx: other, payer: chain.Payer(), payTo: chain.PayTo(), amount: 1})
		_, err = e.IngestX402(ctx, "acct_0", od.settle, od.requirements, od.payload, buyerDE, "pending-1")
		wantCode(t, err, fiscal.CodeIdempotencyConflict)

		n, err := e.ProcessIngestQueue(ctx)
		if err != nil || n != 1 {
			t.Fatalf("process: %d %v", n, err)
		}
		st, err := e.IngestStatus(ctx, "acct_0", id)
		if err != nil || st.State != ingest.StateRecorded || !strings.HasPrefix(st.RecordURL, "/settlements/x402-") || st.Attempts != 1 || st.NextAttemptAt != "" {
			t.Fatalf("status %+v %v", st, err)
		}
		r, _, err := e.Record(ctx, "acct_0", path.Base(st.RecordURL))
		if err != nil || r.ReviewStatus != fiscal.StatusProcessed || r.Settlement.AmountUSDC != "4.2" {
			t.Fatalf("record %v %+v", err, r)
		}
		if e.Ledger().Size() != size+1 {
			t.Fatalf("ledger size %d, want %d", e.Ledger().Size(), size+1)
		}
		// Never recorded twice: nothing is due, and later reports find the record.
		if n, err := e.ProcessIngestQueue(ctx); err != nil || n != 0 {
			t.Fatalf("second pass: %d %v", n, err)
		}
		again, err = e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "pending-1")
		if err != nil || again.Outcome != fiscal.Replayed || again.Record.ID != r.ID {
			t.Fatalf("success report after the hold: %v %+v", err, again)
		}
		again, err = e.EnqueueX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, buyerDE, "")
		if err != nil || again.Outcome != fiscal.Existing {
			t.Fatalf("pending report after the record: %v %+v", err, again)
		}
		if _, err := e.IngestStatus(ctx, "acct_1", id); fiscaltest.Code(err) != fiscal.CodeNotFound {
			t.Fatalf("another account sees the entry: %v", err)
		}
		if e.Ledger().Size() != size+1 {
			t.Fatalf("ledger size %d, want %d", e.Ledger().Size(), size+1)
		}
	})

	t.Run("pending until mined", func(t *testing.T) {
		// The facilitator submitted the transaction; the chain has not
		// mined it yet (automine off), so the entry waits.
		chain.Call(t, "evm_setAutomine", []any{false}, nil)
		defer chain.Call(t, "evm_setAutomine", []any{true}, nil)
		tx := sendTransfer(t, chain, chain.Payer(), chain.PayTo(), 7_000_000)
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), amount: 7_000_000})
		pending := d.withSettle(t, map[string]any{"success": false, "errorReason": "settlement_pending"})
		res, err := e.EnqueueX402(ctx, "acct_0", pending.settle, pending.requirements, nil, buyerDE, "")
		if err != nil || res.Outcome != fiscal.Queued {
			t.Fatalf("enqueue: %v %+v", err, res)
		}
		if _, err := e.ProcessIngestQueue(ctx); err != nil {
			t.Fatal(err)
		}
		st, _ := e.IngestStatus(ctx, "acct_0", res.Queued.ID)
		if st.State != ingest.StateQueued || st.Attempts != 1 || st.LastError == nil || st.LastError.Code != fiscal.CodeChainUnavailable {
			t.Fatalf("status while pending %+v %+v", st, st.LastError)
		}
		next, _ := time.Parse(time.RFC3339Nano, st.NextAttemptAt)
		if !next.After(clock.Now()) {
			t.Fatalf("next attempt %s is not after now %s", next, clock.Now())
		}
		// Not due yet: the pass does nothing.
		if n, _ := e.ProcessIngestQueue(ctx); n != 0 {
			t.Fatalf("attempted %d entries before they were due", n)
		}
		chain.Call(t, "evm_mine", nil, nil)
		clock.Add(next.Sub(clock.Now()))
		if n, err := e.ProcessIngestQueue(ctx); err != nil || n != 1 {
			t.Fatalf("process after mining: %d %v", n, err)
		}
		st, _ = e.IngestStatus(ctx, "acct_0", res.Queued.ID)
		if st.State != ingest.StateRecorded || st.Attempts != 2 {
			t.Fatalf("status after mining %+v", st)
		}
	})

	t.Run("pending tx never appears", func(t *testing.T) {
		sum := sha256.Sum256([]byte("dropped by the facilitator"))
		tx := "0x" + hex.EncodeToString(sum[:])
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), amount: 5_000})
		pending := d.withSettle(t, map[string]any{"success": false, "errorReason": "settlement_pending"})
		res, err := e.IngestX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, buyerDE, "")
		if err != nil || res.Outcome != fiscal.Queued {
			t.Fatalf("hold: %v %+v", err, res)
		}
		id := res.Queued.ID
		e.ProcessIngestQueue(ctx)
		st, _ := e.IngestStatus(ctx, "acct_0", id)
		if st.State != ingest.StateQueued || st.LastError == nil || st.LastError.Code != fiscal.CodeChainVerifyFailed {
			t.Fatalf("within the grace period %+v", st)
		}
		clock.Add(ingest.NotFoundGrace)
		if n, _ := e.ProcessIngestQueue(ctx); n != 1 {
			t.Fatalf("attempted %d", n)
		}
		st, _ = e.IngestStatus(ctx, "acct_0", id)
		if st.State != ingest.StateFailed || st.LastError.Code != fiscal.CodeChainVerifyFailed || !strings.HasPrefix(st.LastError.Detail, "tx_not_found") {
			t.Fatalf("after the grace period %+v %+v", st, st.LastError)
		}
		// Reporting it again queues it again.
		res, err = e.EnqueueX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, buyerDE, "")
		if err != nil || res.Queued.State != ingest.StateQueued || res.Queued.Attempts != 0 {
			t.Fatalf("requeue: %v %+v", err, res.Queued)
		}
		// Another account cannot take it over, nor can other facts.
		_, err = e.EnqueueX402(ctx, "acct_1", pending.settle, pending.requirements, pending.payload, buyerDE, "")
		wantCode(t, err, fiscal.CodeSettlementConflict)
		_, err = e.EnqueueX402(ctx, "acct_0", pending.settle, pending.requirements, pending.payload, fiscal.BuyerFacts{Country: "IT"}, "")
		wantCode(t, err, fiscal.CodeSettlementConflict)
	})

	t.Run("queue runner", func(t *testing.T) {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(600_000))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 600_000})
		running := &env{Engine: e.Engine, svc: newService(t, e.Engine, ingest.Options{})} // its queue runs until the engine closes
		res, err := running.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil || res.Outcome != fiscal.Queued || res.Queued.Reason != "async" {
			t.Fatalf("enqueue: %v %+v", err, res)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := e.IngestStatus(ctx, "acct_0", res.Queued.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.State == ingest.StateRecorded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not recorded in time: %+v", st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("confirmations reached after mining", func(t *testing.T) {
		deep := chainEngine(t, chain.RPCURL(), evmverify.Policy{MinConfirmations: 3}, clock)
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(900_000))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 900_000})
		_, err := deep.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if fe := wantCode(t, err, fiscal.CodeChainUnavailable); fe.RetryAfter <= 0 || fe.Code.HTTPStatus() != 503 {
			t.Fatalf("not final: %+v", fe)
		}
		if deep.Ledger().Size() != 0 {
			t.Fatal("a record was written before the policy's depth")
		}
		chain.Mine(t, 2)
		res, err := deep.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Record.Verification.Facts; f.Confirmations != 3 {
			t.Errorf("confirmations %d", f.Confirmations)
		}
	})

	t.Run("chain mode off", func(t *testing.T) {
		off := engineAt(t, t.TempDir(), nil, clock)
		defer off.Close()
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(100))
		d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 100})
		_, err := off.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		wantCode(t, err, fiscal.CodeChainVerifyRequired)
		_, err = off.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "")
		wantCode(t, err, fiscal.CodeChainVerifyRequired)
		_, err = off.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 1, buyerDE, "")
		wantCode(t, err, fiscal.CodeChainVerifyRequired)
	})

	if err := e.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}

// sendTransfer submits a USDC transfer without waiting for it to be mined
// (for a chain with automine off) and returns its hash.
func sendTransfer(t testing.TB, chain *anviltest.Chain, from, to string, amount int64) string {
	t.Helper()
	// transfer(address,uint256): selector 0xa9059cbb (Keccak-256 of the
	// signature, EIP-20), then the two 32-byte words.
	data := fmt.Sprintf("0xa9059cbb%064s%064x", strings.TrimPrefix(strings.ToLower(to), "0x"), amount)
	var hash string
	chain.Call(t, "eth_sendTransaction", []any{map[string]string{"from": from, "to": chain.USDC(), "data": data, "gas": "0x30d40"}}, &hash)
	return hash
}

// TestX402RPCDown: a payment made while the chain answered, reported when
// its RPC is down, is CHAIN_UNAVAILABLE (503, Retry-After) and nothing is
// written; queued, it waits for the chain.
func TestX402RPCDown(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: genesis})
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	e := chainEngine(t, chain.RPCURL(), evmverify.Policy{Timeout: time.Second}, clock)
	ctx := context.Background()
	tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(1_000_000))
	d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 1_000_000})
	chain.Stop()

	_, err := e.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "k")
	if fe := wantCode(t, err, fiscal.CodeChainUnavailable); fe.RetryAfter <= 0 || !errors.Is(err, evmverify.ErrUnavailable) {
		t.Fatalf("%+v", fe)
	}
	_, err = e.IngestTransfer(ctx, "acct_0", "eip155:8453", tx, 1, buyerDE, "")
	wantCode(t, err, fiscal.CodeChainUnavailable)
	if e.Ledger().Size() != 0 {
		t.Fatal("written while the chain was down")
	}
	res, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "k")
	if err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("enqueue while down: %v %+v", err, res)
	}
	e.ProcessIngestQueue(ctx)
	st, _ := e.IngestStatus(ctx, "acct_0", res.Queued.ID)
	if st.State != ingest.StateQueued || st.LastError.Code != fiscal.CodeChainUnavailable || e.Ledger().Size() != 0 {
		t.Fatalf("status %+v", st)
	}
}

// TestIngestQueueSurvivesRestart: a queued payment outlives the process, and
// an engine restarted with chain verification off keeps it queued instead of
// failing it; back on, it is recorded once.
func TestIngestQueueSurvivesRestart(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: genesis})
	clock := &movingClock{now: time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	ctx := context.Background()
	tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(2_000_000))
	d := sdkDocs(t, 2, payment{tx: tx, payer: chain.Payer(), payTo: chain.PayTo(), nonce: nonce, amount: 2_000_000})

	e := engineAt(t, dir, baseVerifier(t, chain.RPCURL(), evmverify.Policy{}), clock)
	res, err := e.EnqueueX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "restart-1")
	if err != nil || res.Outcome != fiscal.Queued {
		t.Fatalf("enqueue: %v %+v", err, res)
	}
	id := res.Queued.ID
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	off := engineAt(t, dir, nil, clock)
	if n, err := off.ProcessIngestQueue(ctx); err != nil || n != 1 {
		t.Fatalf("process with chain off: %d %v", n, err)
	}
	st, err := off.IngestStatus(ctx, "acct_0", id)
	if err != nil || st.State != ingest.StateQueued || st.LastError == nil || st.LastError.Code != fiscal.CodeChainVerifyRequired {
		t.Fatalf("status with chain off: %v %+v", err, st)
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Add(time.Hour)
	on := engineAt(t, dir, baseVerifier(t, chain.RPCURL(), evmverify.Policy{}), clock)
	defer on.Close()
	if n, err := on.ProcessIngestQueue(ctx); err != nil || n != 1 {
		t.Fatalf("process with chain on: %d %v", n, err)
	}
	st, _ = on.IngestStatus(ctx, "acct_0", id)
	if st.State != ingest.StateRecorded || st.Attempts != 2 {
		t.Fatalf("status %+v", st)
	}
	again, err := on.IngestX402(ctx, "acct_0", d.settle, d.requirements, d.payload, buyerDE, "restart-1")
	if err != nil || again.Outcome != fiscal.Replayed || on.Ledger().Size() != 1 {
		t.Fatalf("replay: %v %+v size %d", err, again, on.Ledger().Size())
	}
	if err := on.Ledger().Check(); err != nil {
		t.Fatal(err)
	}
}
