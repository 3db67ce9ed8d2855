package httpserver_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/anviltest"
)

// chainNow is after the anvil chain's pinned genesis (2026-04-10, a day the
// embedded ECB series covers), so records made from block times convert.
var chainNow = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

// newChainFixture is newFixture with Base verified on chain against rpcURL.
func newChainFixture(t testing.TB, rpcURL string) *fixture {
	t.Helper()
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{rpcURL}, Timeout: 2 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := fiscal.New(fiscal.Config{
		Dir: t.TempDir(), Accounts: testAccounts(t), Chain: v,
		Clock: func() time.Time { return chainNow }, Rand: &detRand{seed: "x402"}, Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, engine: e}
	if f.ingest, err = ingest.Open(e, ingest.Options{NoQueue: true}); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(newHandlerWith(t, httpserver.Services{Engine: e, Ingest: f.ingest}, httpserver.Options{Logger: quiet}))
	t.Cleanup(f.close)
	return f
}

// x402Body is the body of POST /v1/x402/settlements for an x402 v2 exact
// payment, with the documents as the x402 Go SDK marshals them.
func x402Body(tx, payer, payTo string, amount int64, buyer map[string]any) map[string]any {
	a := strconv.FormatInt(amount, 10)
	req := map[string]any{
		"scheme": "exact", "network": "eip155:8453", "amount": a,
		"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": payTo,
		"maxTimeoutSeconds": 60, "extra": map[string]any{"name": "USD Coin", "version": "2"},
	}
	return map[string]any{
		"settleResponse":      map[string]any{"success": true, "payer": payer, "transaction": tx, "network": "eip155:8453"},
		"paymentRequirements": req,
		"paymentPayload": map[string]any{
			"x402Version": 2, "accepted": req,
			"resource": map[string]any{"url": "https://api.example.com/weather", "mimeType": "application/json"},
			"payload": map[string]any{"signature": "0x00", "authorization": map[string]any{
				"from": payer, "to": payTo, "value": a, "validAfter": "0", "validBefore": "9999999999",
				"nonce": "0x" + strings.Repeat("42", 32),
			}},
		},
		"buyer": buyer,
	}
}

func wantProblem(t testing.TB, r response, status int, code, field string) map[string]any {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d (%s), want %d problem: %s", r.status, r.header.Get("Content-Type"), status, r.body)
	}
	m := r.json(t)
	if m["code"] != code || (field != "" && m["field"] != field) || m["request_id"] == "" {
		t.Fatalf("problem %v, want code %s field %s", m, code, field)
	}
	return m
}

func TestX402HTTP(t *testing.T) {
	chain := anviltest.StartWith(t, anviltest.Options{GenesisTime: time.Date(2026, 4, 10, 9, 0, 0, 0, time.UTC)})
	f := newChainFixture(t, chain.RPCURL())
	de := map[string]any{"consumerCountry": "DE"}
	// pay settles an authorization on the chain; x402Body reports a paid
	// transaction with the nonce its authorization used (the chain's
	// AuthorizationUsed event, EIP-3009).
	nonces := map[string]string{}
	pay := func(units int64) string {
		tx, nonce := chain.TransferWithAuthorization(t, chain.Payer(), chain.PayTo(), big.NewInt(units))
		nonces[tx] = nonce
		return tx
	}
	x402Body := func(tx, payer, payTo string, amount int64, buyer map[string]any) map[string]any {
		b := x402Body(tx, payer, payTo, amount, buyer) // the package's
		b["paymentPayload"].(map[string]any)["payload"].(map[string]any)["authorization"].(map[string]any)["nonce"] = nonces[tx]
		return b
	}

	t.Run("record, replay, duplicate", func(t *testing.T) {
		tx := pay(1_190_000)
		body := mustJSON(t, x402Body(tx, chain.Payer(), chain.PayTo(), 1_190_000, de))
		r := f.do("POST", "/v1/x402/settlements", keyA, body, "Idempotency-Key", "x402-order-1")
		if r.status != http.StatusCreated {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		rec := r.json(t)
		id := rec["id"].(string)
		if r.header.Get("Location") != "/settlements/"+id || rec["reviewStatus"] != "PROCESSED" {
			t.Fatalf("location %q record %v", r.header.Get("Location"), rec["reviewStatus"])
		}
		settlement := rec["settlement"].(map[string]any)
		verification := rec["verification"].(map[string]any)
		if settlement["protocol"] != "x402" || settlement["amountUsdc"] != "1.19" || settlement["logIndex"] != 1.0 || verification["chain"] != "verified" {
			t.Fatalf("settlement %v verification %v", settlement, verification)
		}
		if x := rec["x402"].(map[string]any); x["x402Version"] != 2.0 || x["resourceUrl"] != "https://api.example.com/weather" {
			t.Fatalf("x402 %v", x)
		}
		if g := f.do("GET", "/settlements/"+id, keyA, nil); g.status != 200 || string(g.body) != string(r.body) {
			t.Fatalf("GET record: %d", g.status)
		}
		if g := f.do("GET", "/v1/receipts/rcpt_"+id, "", nil); g.status != 200 {
			t.Fatalf("GET receipt: %d %s", g.status, g.body)
		}
		again := f.do("POST", "/v1/x402/settlements", keyA, body, "Idempotency-Key", "x402-order-1")
		if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(r.body) {
			t.Fatalf("replay %d %v", again.status, again.header)
		}
		if dup := f.do("POST", "/v1/x402/settlements", keyA, body); dup.status != http.StatusOK || dup.json(t)["id"] != id {
			t.Fatalf("duplicate %d", dup.status)
		}
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyB, body), 409, "SETTLEMENT_CONFLICT", "")
	})

	t.Run("header values", func(t *testing.T) {
		tx := pay(2_000_000)
		b := x402Body(tx, chain.Payer(), chain.PayTo(), 2_000_000, de)
		b["settleResponse"] = base64.StdEncoding.EncodeToString(mustJSON(t, b["settleResponse"]))
		b["paymentPayload"] = base64.StdEncoding.EncodeToString(mustJSON(t, b["paymentPayload"]))
		delete(b, "paymentRequirements")
		r := f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, b))
		if r.status != http.StatusCreated || r.json(t)["settlement"].(map[string]any)["amountUsdc"] != "2" {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	})

	t.Run("settlement pending held", func(t *testing.T) {
		tx := pay(3_000_000)
		b := x402Body(tx, chain.Payer(), chain.PayTo(), 3_000_000, de)
		sr := b["settleResponse"].(map[string]any)
		sr["success"], sr["errorReason"] = false, "settlement_pending"
		r := f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, b))
		if r.status != http.StatusAccepted {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		st := r.json(t)
		id := st["id"].(string)
		loc := r.header.Get("Location")
		if loc != "/v1/x402/settlements/"+id || st["state"] != "queued" || st["reason"] != "settlement_pending" || st["object"] != "x402_ingest" {
			t.Fatalf("location %q status %v", loc, st)
		}
		if g := f.do("GET", loc, keyA, nil); g.status != 200 || g.json(t)["state"] != "queued" {
			t.Fatalf("GET queued: %d %s", g.status, g.body)
		}
		wantProblem(t, f.do("GET", loc, keyB, nil), 404, "NOT_FOUND", "")
		wantProblem(t, f.do("GET", "/settlements/"+id, keyA, nil), 404, "NOT_FOUND", "")
		if n, err := f.ingest.Process(context.Background()); err != nil || n != 1 {
			t.Fatalf("process: %d %v", n, err)
		}
		g := f.do("GET", loc, keyA, nil)
		if g.status != 200 || g.json(t)["state"] != "recorded" || !strings.HasPrefix(g.json(t)["recordUrl"].(string), "/settlements/x402-") {
			t.Fatalf("GET recorded: %d %s", g.status, g.body)
		}
		if g := f.do("GET", g.json(t)["recordUrl"].(string), keyA, nil); g.status != 200 {
			t.Fatalf("GET record: %d", g.status)
		}
	})

	t.Run("prefer respond-async", func(t *testing.T) {
		tx := pay(400_000)
		body := mustJSON(t, x402Body(tx, chain.Payer(), chain.PayTo(), 400_000, de))
		r := f.do("POST", "/v1/x402/settlements", keyA, body, "Prefer", "return=minimal, Respond-Async; wait=10")
		if r.status != http.StatusAccepted || r.header.Get("Preference-Applied") != "respond-async" || r.json(t)["reason"] != "async" {
			t.Fatalf("status %d %v: %s", r.status, r.header, r.body)
		}
		f.ingest.Process(context.Background())
		// Once recorded, the same request answers with the record.
		again := f.do("POST", "/v1/x402/settlements", keyA, body, "Prefer", "respond-async")
		if again.status != http.StatusOK || again.header.Get("Preference-Applied") != "" || again.json(t)["object"] != "settlement" {
			t.Fatalf("after recording: %d %v %s", again.status, again.header, again.body)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		tx := pay(1_000_000)
		good := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, de)
		wrongAmount := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_001, de)
		m := wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, wrongAmount)), 422, "CHAIN_VERIFY_FAILED", "/settleResponse/transaction")
		if !strings.HasPrefix(m["detail"].(string), "amount_mismatch") {
			t.Errorf("detail %v", m["detail"])
		}
		failed := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, de)
		failed["settleResponse"] = map[string]any{"success": false, "errorReason": "insufficient_funds", "transaction": "", "network": "eip155:8453"}
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, failed)), 422, "NOT_SETTLED", "/settleResponse/success")
		wantProblem(t, f.do("POST", "/v1/x402/settlements", "", mustJSON(t, good)), 401, "AUTHENTICATION_FAILED", "")

		unknown := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, de)
		unknown["paymentResponse"] = "x"
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, unknown)), 400, "BAD_REQUEST", "/paymentResponse")
		number := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, map[string]any{"consumerCountry": 49})
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, number)), 400, "BAD_REQUEST", "/buyer/consumerCountry")
		misspelt := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, map[string]any{"country": "DE"})
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, misspelt)), 400, "BAD_REQUEST", "/buyer/country")
		dup := `{"settleResponse":{"success":true,"transaction":"` + tx + `","transaction":"` + tx + `","network":"eip155:8453"},"buyer":{}}`
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, []byte(dup)), 400, "BAD_REQUEST", "/settleResponse/transaction")
		upto := x402Body(tx, chain.Payer(), chain.PayTo(), 1_000_000, de)
		upto["paymentRequirements"].(map[string]any)["scheme"] = "upto"
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, upto)), 422, "UNSUPPORTED_SCHEME", "/paymentRequirements/scheme")
		wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, good), "Content-Type", "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE", "")
		wantProblem(t, f.do("DELETE", "/v1/x402/settlements", keyA, nil), 405, "METHOD_NOT_ALLOWED", "")
		wantProblem(t, f.do("GET", "/v1/x402/settlements/x402-00", keyA, nil), 404, "NOT_FOUND", "")
	})

	t.Run("rpc down", func(t *testing.T) {
		tx := pay(1_500_000)
		body := mustJSON(t, x402Body(tx, chain.Payer(), chain.PayTo(), 1_500_000, de))
		chain.Stop()
		r := f.do("POST", "/v1/x402/settlements", keyA, body)
		wantProblem(t, r, 503, "CHAIN_UNAVAILABLE", "")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s <= 0 {
			t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
		}
		id := fiscal.EventID("eip155:8453", strings.ToLower(tx))
		wantProblem(t, f.do("GET", "/settlements/"+id, keyA, nil), 404, "NOT_FOUND", "")
	})
}

// TestX402HTTPChainOff: the offline demo (no chain) refuses x402 ingest with
// a clear code rather than inventing a settlement time.
func TestX402HTTPChainOff(t *testing.T) {
	f := newFixture(t)
	tx := txHash(1)
	body := x402Body(tx, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", 1_000_000, nil)
	m := wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, body)), 422, "CHAIN_VERIFICATION_REQUIRED", "/settleResponse/network")
	if !strings.Contains(m["detail"].(string), "eip155:8453") {
		t.Errorf("detail %v", m["detail"])
	}
	// The buyer facts are checked before the chain is asked for: their
	// field error answers 400 under /buyer.
	alpha3 := x402Body(tx, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", 1_000_000, map[string]any{"consumerCountry": "DEU"})
	wantProblem(t, f.do("POST", "/v1/x402/settlements", keyA, mustJSON(t, alpha3)), 400, "BAD_REQUEST", "/buyer/consumerCountry")
}
