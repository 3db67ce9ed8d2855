package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/webhooks"
)

const (
	keyA = "sk_test_account_a_0123456789"
	keyB = "sk_test_account_b_0123456789"
)

// testNow is the fixed clock of the fixtures: after the last ECB publication
// of the embedded series (2026-04-13), so that both converted and
// fx_rate_unavailable settlements can be posted.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// detRand is a deterministic byte stream (SHA-256 in counter mode) so that
// keys, and with them receipts, are the same on every run.
type detRand struct {
	seed string
	n    uint64
	buf  []byte
}

func (r *detRand) Read(p []byte) (int, error) {
	for i := range p {
		if len(r.buf) == 0 {
			var ctr [8]byte
			binary.BigEndian.PutUint64(ctr[:], r.n)
			r.n++
			sum := sha256.Sum256(append([]byte(r.seed), ctr[:]...))
			r.buf = sum[:]
		}
		p[i] = r.buf[0]
		r.buf = r.buf[1:]
	}
	return len(p), nil
}

// testAccountsFile has accounts acct_a (an Irish seller, key keyA) and
// acct_b (a German seller, key keyB).
func testAccountsFile() httpserver.AccountsFile {
	return httpserver.AccountsFile{Accounts: []httpserver.AccountEntry{
		{
			ID:        "acct_a",
			KeyHashes: []string{httpserver.HashKey(keyA)},
			Seller: fiscal.Seller{
				LegalName: "Seller A Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-100001", Country: "IE",
				Address:       fiscal.Address{Street: "1 Main Street", City: "Dublin", PostalCode: "D02 X285"},
				OverThreshold: true,
			},
		},
		{
			ID:        "acct_b",
			KeyHashes: []string{httpserver.HashKey(keyB)},
			Seller: fiscal.Seller{
				LegalName: "Seller B GmbH", VATNumber: "DE136695976", LegalID: "HRB 12345", Country: "DE",
				Address:       fiscal.Address{Street: "Hauptstraße 1", City: "Berlin", PostalCode: "10115"},
				OverThreshold: true,
			},
		},
	}}
}

func testAccounts(t testing.TB) []fiscal.Account {
	f := testAccountsFile()
	return f.EngineAccounts()
}

// newHandler serves e with the test accounts' keys and default accessories
// (webhooks with opts, when given).
func newHandler(t testing.TB, e *fiscal.Engine, opts httpserver.Options, hooks ...webhooks.Options) *httpserver.Server {
	t.Helper()
	svc := httpserver.Services{Engine: e}
	if len(hooks) > 0 {
		var err error
		if svc.Webhooks, err = webhooks.New(e, hooks[0]); err != nil {
			t.Fatal(err)
		}
	}
	return newHandlerWith(t, svc, opts)
}

// newHandlerWith serves the services (Keys: the test accounts').
func newHandlerWith(t testing.TB, svc httpserver.Services, opts httpserver.Options) *httpserver.Server {
	t.Helper()
	f := testAccountsFile()
	keys, err := f.Keys()
	if err != nil {
		t.Fatal(err)
	}
	svc.Keys = keys
	shareLoops(t, &svc)
	h, err := httpserver.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// shareLoops gives a second server on an engine whose webhook dispatcher
// and ingest queue already run (under the fixture's first server) services
// that run neither, as an embedder does: one of each loop per engine, and
// httpserver.New refuses to start another.
func shareLoops(t testing.TB, svc *httpserver.Services) {
	t.Helper()
	if svc.Webhooks == nil {
		if release, err := svc.Engine.Ledger().Reserve("webhooks.dispatcher"); err == nil {
			release() // free: the server makes its own
		} else if errors.Is(err, ledger.ErrReserved) {
			w, err := webhooks.New(svc.Engine, webhooks.Options{NoDispatcher: true})
			if err != nil {
				t.Fatal(err)
			}
			svc.Webhooks = w
		}
	}
	if svc.Ingest == nil {
		if release, err := svc.Engine.Ledger().Reserve("ingest.queue"); err == nil {
			release()
		} else if errors.Is(err, ledger.ErrReserved) {
			in, err := ingest.Open(svc.Engine, ingest.Options{NoQueue: true})
			if err != nil {
				t.Fatal(err)
			}
			svc.Ingest = in
		}
	}
}

type fixture struct {
	t         testing.TB
	dir       string
	engine    *fiscal.Engine
	sandbox   *sandbox.Sandbox
	ingest    *ingest.Service
	srv       *httptest.Server
	now       atomic.Pointer[time.Time]
	configure func(*fiscal.Config) // optional: adjusts the engine's configuration
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, nil)
}

// newSummaryFixture is newFixture whose accounts invoice their consumers
// by monthly summary (fiscal.InvoicingSummaryMonthly), and those accounts,
// for a test that changes them again.
func newSummaryFixture(t testing.TB) (*fixture, []fiscal.Account) {
	t.Helper()
	f := newFixture(t)
	accounts := testAccounts(t)
	for i := range accounts {
		accounts[i].Seller.Invoicing = fiscal.InvoicingSummaryMonthly
	}
	if err := f.engine.SetAccounts(accounts); err != nil {
		t.Fatal(err)
	}
	return f, accounts
}

// newFixtureWith is newFixture with a hook that adjusts the engine's
// configuration (registries, chain, policies); it applies on every reopen.
func newFixtureWith(t testing.TB, configure func(*fiscal.Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), configure: configure}
	now := testNow
	f.now.Store(&now)
	f.open()
	return f
}

// advance moves the fixture's clock forward.
func (f *fixture) advance(d time.Duration) {
	now := f.now.Load().Add(d)
	f.now.Store(&now)
}

// open starts an engine and a server on the fixture's data directory.
func (f *fixture) open() {
	f.t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := fiscal.Config{
		Dir:      f.dir,
		Accounts: testAccounts(f.t),
		Clock:    func() time.Time { return *f.now.Load() },
		Rand:     &detRand{seed: "fixture"},
		Logger:   quiet,
	}
	if f.configure != nil {
		f.configure(&cfg)
	}
	e, err := fiscal.New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.engine = e
	f.sandbox = sandbox.New(e, sandbox.Options{})
	// No rate limit: tests and benchmarks post in bursts; limits_test.go
	// tests the limit.
	f.srv = httptest.NewServer(newHandlerWith(f.t, httpserver.Services{Engine: e, Sandbox: f.sandbox}, httpserver.Options{Logger: quiet, RateLimit: rate.Inf}))
	f.t.Cleanup(f.close)
}

func (f *fixture) close() {
	if f.srv != nil {
		f.srv.Close()
		f.srv = nil
	}
	if f.engine != nil {
		if err := f.engine.Close(); err != nil {
			f.t.Error(err)
		}
		f.engine = nil
	}
}

// reopen closes and reopens engine and server on the same data directory.
func (f *fixture) reopen() {
	f.close()
	f.open()
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

func (f *fixture) do(method, path, key string, body []byte, headers ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Service-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// settlement returns a valid settlement body for a consumer in Germany on
// 2026-04-10, with fields overridden (a nil value removes the field).
func settlement(overrides map[string]any) map[string]any {
	m := map[string]any{
		"amountUsdc":      "11.90",
		"txHash":          "0x5f0e3c1a9b7d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7b9f2a4c6e8d0b1f",
		"timestamp":       "2026-04-10T14:30:00Z",
		"payerWallet":     "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		"receiverWallet":  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		"network":         "eip155:8453",
		"consumerCountry": "DE",
	}
	for k, v := range overrides {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// txHash returns a distinct, valid transaction hash for n.
func txHash(n int) string {
	sum := sha256.Sum256([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	return "0x" + hex.EncodeToString(sum[:])
}

// sandboxLedger is the fixture's sandbox ledger.
func (f *fixture) sandboxLedger() *ledger.Ledger {
	f.t.Helper()
	l, err := f.sandbox.Ledger()
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

// sandboxLogKey is the fixture's sandbox log verifier key.
func (f *fixture) sandboxLogKey() string {
	f.t.Helper()
	k, err := f.sandbox.LogVerifierKey()
	if err != nil {
		f.t.Fatal(err)
	}
	return k
}
