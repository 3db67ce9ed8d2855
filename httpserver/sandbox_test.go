package httpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
)

type simulationView struct {
	Object, Environment, Watermark, UBL, JWKSURL, LogKey string
	Record                                               json.RawMessage
	Receipt                                              json.RawMessage
	Openings                                             json.RawMessage
}

type sandboxRecordView struct {
	ID, Environment, Account, ReviewStatus string
	Seller                                 struct{ LegalName string }
	Invoice                                *struct{ UblSha256, URL string }
	Receipt                                struct{ ID, URL string }
	Ledger                                 struct{ Origin string }
}

// TestSimulate checks the sandbox: watermarked record, UBL and receipt; a
// sandbox receipt verifies only with the sandbox keys; nothing enters the
// production ledger.
func TestSimulate(t *testing.T) {
	f := newFixture(t)
	prodJWKS := f.do("GET", "/.well-known/jwks.json", "", nil).body
	sbJWKS := f.do("GET", "/sandbox/v1/jwks.json", "", nil)
	sbLogKey := strings.TrimSpace(string(f.do("GET", "/sandbox/v1/log-key", "", nil).body))
	if sbJWKS.status != 200 || sbJWKS.header.Get("Content-Type") != "application/jwk-set+json" || sbLogKey != f.sandboxLogKey() {
		t.Fatalf("sandbox keys: %d %q %q", sbJWKS.status, sbJWKS.header.Get("Content-Type"), sbLogKey)
	}
	prodSet, _ := receipt.ParseKeySet(prodJWKS)
	sbSet, err := receipt.ParseKeySet(sbJWKS.body)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range sbSet.Keys {
		if _, err := prodSet.Lookup(k.Kid); err == nil {
			t.Fatalf("sandbox key %s is in the production JWKS", k.Kid)
		}
	}
	cases := []struct {
		name    string
		key     string
		body    map[string]any
		pending bool
		seller  string
		account string
	}{
		{"anonymous, demo seller", "", settlement(nil), false, "Sandbox Demo Seller Ltd", "anonymous"},
		{"the same payment again: a new sandbox record", "", settlement(nil), false, "Sandbox Demo Seller Ltd", "anonymous"},
		{"with a key: the account's seller", keyA, settlement(nil), false, "Seller A Ltd", "acct_a"},
		{"a seller in the body", "", override(settlement(nil), map[string]any{"seller": map[string]any{
			"legalName": "Vendeur SARL", "vatNumber": "FR40303265045", "legalId": "RCS Paris 303 265 045", "country": "FR", "overThreshold": true,
			"address": map[string]any{"street": "1 rue de la Paix", "city": "Paris", "postalCode": "75002"}}}), false, "Vendeur SARL", "anonymous"},
		{"pending review: no buyer country", "", settlement(map[string]any{"consumerCountry": nil}), true, "Sandbox Demo Seller Ltd", "anonymous"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := f.do("POST", "/sandbox/v1/simulate", tc.key, mustJSON(t, tc.body))
			if resp.status != 201 {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			var sim simulationView
			if err := json.Unmarshal(resp.body, &sim); err != nil {
				t.Fatal(err)
			}
			var rec sandboxRecordView
			if err := json.Unmarshal(sim.Record, &rec); err != nil {
				t.Fatal(err)
			}
			if sim.Object != "sandbox_simulation" || sim.Environment != "sandbox" || sim.Watermark != receipt.SandboxWatermark || sim.JWKSURL != "/sandbox/v1/jwks.json" || sim.LogKey != sbLogKey {
				t.Errorf("simulation header %+v", sim)
			}
			if !strings.HasPrefix(rec.ID, "x402-sandbox-") || seen[rec.ID] || rec.Environment != "sandbox" || rec.Account != tc.account || rec.Seller.LegalName != tc.seller {
				t.Fatalf("record %+v", rec)
			}
			seen[rec.ID] = true
			if resp.header.Get("Location") != "/sandbox/v1/settlements/"+rec.ID || rec.Receipt.URL != "/sandbox/v1/receipts/rcpt_"+rec.ID || rec.Ledger.Origin != "fiscal402.localhost/log/sandbox" {
				t.Errorf("location %q, receipt url %q, origin %q", resp.header.Get("Location"), rec.Receipt.URL, rec.Ledger.Origin)
			}
			// The receipt: watermarked, refused by the production keys, accepted by the sandbox keys.
			// A 4.0.0 receipt is signed through the sandbox log's checkpoint:
			// the production log key refuses it first (naming the sandbox),
			// and with the sandbox log key the production key set has no key
			// that cosigned it.
			_, err := receipt.Verify(sim.Receipt, prodJWKS, f.engine.LogVerifierKey())
			var ve *receipt.VerifyError
			if !errors.As(err, &ve) || ve.Step != receipt.StepCheckpointSignature || !strings.Contains(err.Error(), "sandbox receipt") {
				t.Fatalf("sandbox receipt against the production keys: %v, want a failure at step %s naming the sandbox", err, receipt.StepCheckpointSignature)
			}
			_, err = receipt.Verify(sim.Receipt, prodJWKS, sbLogKey)
			if !errors.As(err, &ve) || ve.Step != receipt.StepKid || !strings.Contains(err.Error(), "sandbox receipt") {
				t.Fatalf("sandbox receipt against the production JWKS: %v, want a failure at step %s naming the sandbox", err, receipt.StepKid)
			}
			// A simulation hands over the openings of its receipt.
			openings, err := receipt.ParseOpenings(sim.Openings)
			if err != nil {
				t.Fatalf("openings: %v", err)
			}
			sv, err := receipt.NewVerifier(sbJWKS.body, sbLogKey)
			if err != nil {
				t.Fatal(err)
			}
			claims, err := sv.Verify(sim.Receipt, openings...)
			if err != nil {
				t.Fatalf("sandbox receipt against the sandbox keys: %v", err)
			}
			if claims.Environment != "sandbox" || claims.Watermark != receipt.SandboxWatermark || claims.EventID != rec.ID || claims.Seller.LegalName != tc.seller {
				t.Errorf("claims %+v", claims)
			}
			if _, err := receipt.Verify(sim.Receipt, sbJWKS.body, f.engine.LogVerifierKey()); err == nil {
				t.Errorf("a sandbox receipt verified against the production log key")
			}
			if got := f.do("GET", rec.Receipt.URL, "", nil); got.status != 200 || !jsonEqual(got.body, sim.Receipt) {
				t.Errorf("GET receipt: %d, equal %v", got.status, jsonEqual(got.body, sim.Receipt))
			}
			if got := f.do("GET", "/sandbox/v1/settlements/"+rec.ID, "", nil); got.status != 200 || !bytes.Equal(bytes.TrimSpace(got.body), sim.Record) {
				t.Errorf("GET sandbox record: %d", got.status)
			}
			// Nothing of the sandbox is reachable through production routes.
			assertProblem(t, f.do("GET", "/v1/receipts/rcpt_"+rec.ID, "", nil), 404, "NOT_FOUND", "")
			assertProblem(t, f.do("GET", "/settlements/"+rec.ID, keyA, nil), 404, "NOT_FOUND", "")
			ublResp := f.do("GET", "/sandbox/v1/settlements/"+rec.ID+"/ubl", "", nil)
			if tc.pending {
				if rec.ReviewStatus != "PENDING_MANUAL_REVIEW" || rec.Invoice != nil || sim.UBL != "" || claims.ReviewStatus != "PENDING_MANUAL_REVIEW" {
					t.Errorf("pending simulation: %s, invoice %v, ubl %d bytes", rec.ReviewStatus, rec.Invoice != nil, len(sim.UBL))
				}
				assertProblem(t, ublResp, 404, "NOT_FOUND", "")
				return
			}
			// The UBL: its note opens with the watermark, it is bound to record and receipt.
			// Its number is of the sandbox's own series; the record id is the buyer reference.
			if !strings.Contains(sim.UBL, "<cbc:Note>"+ubl.SandboxWatermark) || !strings.Contains(sim.UBL, "<cbc:ID>SANDBOX-") ||
				!strings.Contains(sim.UBL, "<cbc:BuyerReference>"+rec.ID+"</cbc:BuyerReference>") {
				t.Errorf("UBL lacks the watermark note or the sandbox id:\n%s", sim.UBL)
			}
			sum := sha256.Sum256([]byte(sim.UBL))
			if hex.EncodeToString(sum[:]) != rec.Invoice.UblSha256 || claims.Invoice.UBLSHA256 != rec.Invoice.UblSha256 {
				t.Errorf("UBL hash %x, record %s, receipt %s", sum, rec.Invoice.UblSha256, claims.Invoice.UBLSHA256)
			}
			if ublResp.status != 200 || string(ublResp.body) != sim.UBL || rec.Invoice.URL != "/sandbox/v1/settlements/"+rec.ID+"/ubl" {
				t.Errorf("GET sandbox UBL: %d, url %s", ublResp.status, rec.Invoice.URL)
			}
		})
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Fatalf("the sandbox wrote %d production entries", n)
	}
	if n := f.sandboxLedger().Size(); n != int64(len(cases)) {
		t.Errorf("sandbox ledger size %d, want %d", n, len(cases))
	}
	if err := f.sandboxLedger().Check(); err != nil {
		t.Fatal(err)
	}
	// The simulated payment is still free in production.
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil))); r.status != 201 {
		t.Errorf("production settlement after simulations: %d %s", r.status, r.body)
	}
	// Sandbox records and receipts survive a restart.
	for id := range seen {
		before := f.do("GET", "/sandbox/v1/receipts/rcpt_"+id, "", nil).body
		f.reopen()
		if after := f.do("GET", "/sandbox/v1/receipts/rcpt_"+id, "", nil).body; !bytes.Equal(before, after) {
			t.Errorf("sandbox receipt changed across a restart")
		}
		break
	}
}

// TestSimulateBadInput: malformed simulations are refused and not counted.
func TestSimulateBadInput(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name        string
		key         string
		body        []byte
		status      int
		code, field string
	}{
		{"amount as a JSON number", "", mustJSON(t, settlement(map[string]any{"amountUsdc": 11.9})), 400, "BAD_REQUEST", "/amountUsdc"},
		{"network unsupported", "", mustJSON(t, settlement(map[string]any{"network": "solana:mainnet"})), 422, "UNSUPPORTED_NETWORK", "/network"},
		{"seller without legal name", "", mustJSON(t, settlement(map[string]any{"seller": map[string]any{"country": "FR", "vatNumber": "FR40303265045"}})), 400, "BAD_REQUEST", "/seller"},
		{"seller with an unknown member", "", mustJSON(t, settlement(map[string]any{"seller": map[string]any{"name": "X"}})), 400, "BAD_REQUEST", "/seller/name"},
		{"unknown member in the seller's address", "", mustJSON(t, settlement(map[string]any{"seller": map[string]any{"address": map[string]any{"town": "X"}}})), 400, "BAD_REQUEST", "/seller/address/town"},
		{"unknown member", "", mustJSON(t, settlement(map[string]any{"consumerCountyr": "DE"})), 400, "BAD_REQUEST", "/consumerCountyr"},
		{"empty body", "", []byte(" "), 400, "BAD_REQUEST", ""},
		{"wrong key", "sk_wrong", mustJSON(t, settlement(nil)), 401, "AUTHENTICATION_FAILED", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assertProblem(t, f.do("POST", "/sandbox/v1/simulate", tc.key, tc.body), tc.status, tc.code, tc.field)
		})
	}
	for _, path := range []string{"/sandbox/v1/settlements/x402-sandbox-00", "/sandbox/v1/settlements/x402-00", "/sandbox/v1/settlements/x402-sandbox-00/ubl", "/sandbox/v1/receipts/rcpt_x402-sandbox-00", "/sandbox/v1/receipts/x402-sandbox-00"} {
		assertProblem(t, f.do("GET", path, "", nil), 404, "NOT_FOUND", "")
	}
	if r := f.do("POST", "/sandbox/v1/simulate", "", mustJSON(t, settlement(nil))); r.header.Get("X-Quota-Remaining") != "9" {
		t.Errorf("after refused calls, X-Quota-Remaining %q, want 9", r.header.Get("X-Quota-Remaining"))
	}
	if n := f.sandboxLedger().Size(); n != 1 {
		t.Errorf("sandbox ledger size %d, want 1", n)
	}
}

// TestSandboxQuota: evaluate and simulate together, 10 per agent per UTC
// day; the 11th call is 429 QUOTA_EXCEEDED with Retry-After and the reset
// time; a restart keeps the count; the next day starts again.
func TestSandboxQuota(t *testing.T) {
	clock := &testClock{now: testNow}
	cs := customSettings{clock: clock}
	f := newCustomFixture(t, cs)
	call := func(i int, key string) response {
		if i%2 == 0 {
			return f.do("POST", "/v1/compliance/evaluate", key, mustJSON(t, evaluateBody(nil)))
		}
		return f.do("POST", "/sandbox/v1/simulate", key, mustJSON(t, settlement(nil)))
	}
	for i := 0; i < 10; i++ {
		r := call(i, "")
		if r.status != 200 && r.status != 201 {
			t.Fatalf("call %d: %d %s", i+1, r.status, r.body)
		}
		if got := r.header.Get("X-Quota-Remaining"); got != strconv.Itoa(9-i) || r.header.Get("X-Quota-Limit") != "10" || r.header.Get("X-Quota-Reset") != "2026-11-22T00:00:00Z" {
			t.Fatalf("call %d: quota headers %v", i+1, r.header)
		}
	}
	assertExceeded := func(t *testing.T, r response, retryAfter string) {
		t.Helper()
		assertProblem(t, r, 429, "QUOTA_EXCEEDED", "")
		if r.header.Get("Retry-After") != retryAfter || r.header.Get("X-Quota-Reset") != "2026-11-22T00:00:00Z" || r.header.Get("X-Quota-Remaining") != "0" {
			t.Errorf("Retry-After %q (want %s), X-Quota-Reset %q, X-Quota-Remaining %q", r.header.Get("Retry-After"), retryAfter, r.header.Get("X-Quota-Reset"), r.header.Get("X-Quota-Remaining"))
		}
		if p := r.json(t); p["reset_at"] != "2026-11-22T00:00:00Z" {
			t.Errorf("reset_at %v", p["reset_at"])
		}
	}
	assertExceeded(t, call(10, ""), "43200") // 12:00 UTC: twelve hours to midnight
	assertExceeded(t, call(11, ""), "43200")
	sandboxSize := f.sandboxLedger().Size()
	// An authenticated agent has a quota of its own.
	if r := call(0, keyA); r.status != 200 || r.header.Get("X-Quota-Remaining") != "9" {
		t.Errorf("account A: %d, remaining %q", r.status, r.header.Get("X-Quota-Remaining"))
	}
	// A restart keeps the count.
	clock.Set(testNow.Add(11 * time.Hour))
	reopenCustom(f, cs)
	assertExceeded(t, call(10, ""), "3600")
	if f.sandboxLedger().Size() != sandboxSize {
		t.Errorf("a refused simulation was recorded")
	}
	// The next UTC day starts again.
	clock.Set(time.Date(2026, 11, 22, 0, 0, 1, 0, time.UTC))
	r := call(0, "")
	if r.status != 200 || r.header.Get("X-Quota-Remaining") != "9" || r.header.Get("X-Quota-Reset") != "2026-11-23T00:00:00Z" {
		t.Errorf("next day: %d, remaining %q, reset %q", r.status, r.header.Get("X-Quota-Remaining"), r.header.Get("X-Quota-Reset"))
	}
}

// TestSandboxQuotaConcurrent: of 25 concurrent calls of one agent exactly
// ten succeed; counting and checking are one transaction.
func TestSandboxQuotaConcurrent(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := 0; i < 25; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.do("POST", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(nil)))
			mu.Lock()
			statuses[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 10 || statuses[429] != 15 {
		t.Fatalf("statuses %v, want 10×200 and 15×429", statuses)
	}
}

// TestSandboxQuotaAgents: behind a trusted proxy the client is the nearest
// untrusted X-Forwarded-For address; without one, X-Forwarded-For is
// ignored, so it cannot be used to dodge the quota.
func TestSandboxQuotaAgents(t *testing.T) {
	evaluate := func(f *fixture, xff string) response {
		return f.do("POST", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(nil)), "X-Forwarded-For", xff)
	}
	t.Run("no trusted proxy", func(t *testing.T) {
		f := newFixture(t)
		for i := 0; i < 10; i++ {
			if r := evaluate(f, "203.0.113."+strconv.Itoa(i)); r.status != 200 {
				t.Fatal(r.status)
			}
		}
		assertProblem(t, evaluate(f, "198.51.100.1"), 429, "QUOTA_EXCEEDED", "")
	})
	t.Run("behind a trusted proxy", func(t *testing.T) {
		f := newCustomFixture(t, customSettings{server: httpserver.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}}})
		for i := 0; i < 10; i++ {
			// The client wrote the first address itself; the proxies appended the others.
			if r := evaluate(f, "192.0.2.99, 203.0.113.7, 10.1.2.3"); r.status != 200 {
				t.Fatal(r.status)
			}
		}
		assertProblem(t, evaluate(f, "203.0.113.7"), 429, "QUOTA_EXCEEDED", "")
		assertProblem(t, evaluate(f, "192.0.2.1, 203.0.113.7"), 429, "QUOTA_EXCEEDED", "")
		for _, other := range []string{"203.0.113.8", "", "2001:db8::1"} {
			if r := evaluate(f, other); r.status != 200 {
				t.Errorf("X-Forwarded-For %q: %d", other, r.status)
			}
		}
		// IPv6 clients count per /64.
		for i := 0; i < 9; i++ {
			if r := evaluate(f, "2001:db8::"+strconv.Itoa(100+i)); r.status != 200 {
				t.Fatalf("IPv6 call %d: %d", i, r.status)
			}
		}
		assertProblem(t, evaluate(f, "2001:db8::ffff"), 429, "QUOTA_EXCEEDED", "")
		if r := evaluate(f, "2001:db8:0:1::1"); r.status != 200 {
			t.Errorf("another /64: %d", r.status)
		}
	})
}

// jsonEqual reports whether a and b are the same JSON text up to white space.
func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
