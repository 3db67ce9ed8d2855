package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestErrorsOutsideHandlers (issue 19 item 9): the answers the mux and the
// body limit give before a handler runs are problem documents too.
func TestErrorsOutsideHandlers(t *testing.T) {
	f := newFixture(t)
	noRedirect := *f.srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		status             int
		code, location     string
	}{
		{"double slash is cleaned", "GET", "/v1//capabilities?x=1", nil, 307, "PATH_NOT_CANONICAL", "/v1/capabilities?x=1"},
		{"dot segment is cleaned", "GET", "/v1/../v1/capabilities", nil, 307, "PATH_NOT_CANONICAL", "/v1/capabilities"},
		{"unknown method on a known path", "PUT", "/settlements", nil, 405, "METHOD_NOT_ALLOWED", ""},
		{"made-up method", "BREW", "/v1/capabilities", nil, 405, "METHOD_NOT_ALLOWED", ""},
		{"made-up method on an unknown path", "BREW", "/nowhere", nil, 404, "NOT_FOUND", ""},
		{"body over the limit on a JSON endpoint", "POST", "/v1/capabilities/check", bytes.Repeat([]byte(" "), 2<<20), 413, "PAYLOAD_TOO_LARGE", ""},
		{"body over the limit on a GET", "GET", "/v1/capabilities", bytes.Repeat([]byte(" "), 2<<20), 413, "PAYLOAD_TOO_LARGE", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.srv.URL, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = tc.path // keep the path as written: no client-side cleaning
			if i := strings.IndexByte(tc.path, '?'); i >= 0 {
				req.URL.Opaque, req.URL.RawQuery = tc.path[:i], tc.path[i+1:]
			}
			if tc.body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			assertProblem(t, response{status: resp.StatusCode, header: resp.Header, body: buf.Bytes()}, tc.status, tc.code, "")
			if tc.location != "" && resp.Header.Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", resp.Header.Get("Location"), tc.location)
			}
			if tc.status == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
}

// TestRepeatedQueryParameter (issue 19 item 16): one rule on every
// endpoint, the log proofs included: a repeated parameter is a 400 naming
// it, never "the first one wins".
func TestRepeatedQueryParameter(t *testing.T) {
	f := newFixture(t)
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil))); r.status != 201 {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	for _, tc := range []struct{ path, key, field string }{
		{"/v1/log/proof/inclusion?index=0&size=1&size=2", "", "size"},
		{"/v1/log/proof/consistency?from=1&from=1", "", "from"},
		{"/v1/log/checkpoint?a=1&a=1", "", "a"},
		{"/settlements?limit=1&limit=2", keyA, "limit"},
		{"/v1/events?limit=1&limit=1", keyA, "limit"},
		{"/v1/capabilities?x=&x=", "", "x"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			assertProblem(t, f.do("GET", tc.path, tc.key, nil), 400, "BAD_REQUEST", tc.field)
		})
	}
	if r := f.do("GET", "/v1/log/proof/inclusion?index=0&size=1", "", nil); r.status != 200 {
		t.Errorf("single parameters: %d %s", r.status, r.body)
	}
}

// TestClientClosed (issue 19 item 11): a client that goes away while its
// settlement waits on the VAT registry is logged as CLIENT_CLOSED (499), not
// as a server error, and nothing of the request is written.
func TestClientClosed(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	v := &blockingVIES{entered: make(chan struct{}), release: make(chan struct{})}
	e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: testAccounts(t), Clock: func() time.Time { return testNow }, Rand: &detRand{seed: "fixture"}, Logger: logger, VIES: v})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := httptest.NewServer(newHandlerWith(t, httpserver.Services{Engine: e}, httpserver.Options{Logger: logger, RateLimit: rate.Inf}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	body := mustJSON(t, settlement(map[string]any{"consumerVatNumber": "DE136695976"}))
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/settlements", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Key", keyA)
	done := make(chan error)
	go func() {
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-v.entered // the handler waits on the registry
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	// The server learns that the client went away from its connection, a
	// moment after the client gave up: release the registry only once the
	// request's context says so, as it would be in a slow registry call.
	select {
	case <-v.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server never cancelled the request of a client that went away")
	}
	close(v.release)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"request"`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out := logs.String()
	if !strings.Contains(out, `"status":499`) || !strings.Contains(out, `"code":"CLIENT_CLOSED"`) {
		t.Errorf("request line does not say CLIENT_CLOSED 499:\n%s", out)
	}
	if strings.Contains(out, `"level":"ERROR"`) || strings.Contains(out, "INTERNAL") || strings.Contains(out, "DB_UNAVAILABLE") {
		t.Errorf("a client that went away is logged as a server error:\n%s", out)
	}
	if n := e.Ledger().Size(); n != 0 {
		t.Errorf("ledger size %d: the abandoned request wrote", n)
	}
}

// TestAuthFailureLimit (issue 19 item 7): wrong keys are limited per client
// address; a blocked address is refused whatever key it sends, while the
// same account from another address keeps its whole bucket.
func TestAuthFailureLimit(t *testing.T) {
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	f := newCustomFixture(t, customSettings{server: httpserver.Options{
		RateLimit: rate.Limit(0.001), RateBurst: 5,
		AuthFailureRate: rate.Limit(0.001), AuthFailureBurst: 3,
		TrustedProxies: []netip.Prefix{loopback},
	}})
	const attacker, merchant = "198.51.100.7", "203.0.113.9"
	for i := 0; i < 3; i++ {
		assertProblem(t, f.do("GET", "/settlements", "sk_wrong_"+strconv.Itoa(i), nil, "X-Forwarded-For", attacker), 401, "AUTHENTICATION_FAILED", "")
	}
	over := f.do("GET", "/settlements", "sk_wrong_3", nil, "X-Forwarded-For", attacker)
	assertProblem(t, over, 429, "RATE_LIMITED", "")
	if over.header.Get("Retry-After") != "1" {
		t.Errorf("first block: Retry-After %q, want 1", over.header.Get("Retry-After"))
	}
	// Blocked: a valid key from the address is refused too (answering it
	// would tell a guesser which key is valid), and so are the optional-key
	// and operator endpoints.
	assertProblem(t, f.do("GET", "/settlements", keyA, nil, "X-Forwarded-For", attacker), 429, "RATE_LIMITED", "")
	assertProblem(t, f.do("POST", "/v1/compliance/evaluate", "sk_wrong", mustJSON(t, evaluateBody(nil)), "X-Forwarded-For", attacker), 429, "RATE_LIMITED", "")
	// An IPv6 neighbour in the same /64 is the same subscriber.
	for i := 0; i < 4; i++ {
		f.do("GET", "/settlements", "sk_wrong", nil, "X-Forwarded-For", "2001:db8:1:2::"+strconv.Itoa(i+1))
	}
	assertProblem(t, f.do("GET", "/settlements", "sk_wrong", nil, "X-Forwarded-For", "2001:db8:1:2::ffff"), 429, "RATE_LIMITED", "")
	// The merchant, elsewhere, has all five requests of its account's
	// bucket: the wrong keys took nothing from it.
	for i := 0; i < 5; i++ {
		if r := f.do("GET", "/settlements", keyA, nil, "X-Forwarded-For", merchant); r.status != 200 {
			t.Fatalf("legitimate request %d from another address: %d %s", i, r.status, r.body)
		}
	}
	// A wrong key from a third address is a plain 401: nothing is global.
	assertProblem(t, f.do("GET", "/settlements", "sk_wrong", nil, "X-Forwarded-For", "192.0.2.1"), 401, "AUTHENTICATION_FAILED", "")
}

// TestDocumentCacheHosts (issue 19 item 14): without a public URL, made-up
// Host headers are served but never cached, and the operator's host is
// cached even after a flood of them.
func TestDocumentCacheHosts(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.engine, httpserver.Options{DocumentHosts: []string{"fiscal.example.com"}})
	get := func(host string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/openapi.json", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "http://"+host) {
			t.Fatalf("host %s: %d", host, rec.Code)
		}
		return rec
	}
	for i := range 100 {
		get("made-up-" + strconv.Itoa(i) + ".example")
	}
	if n := httpserver.DocumentCacheLen(h); n != 0 {
		t.Errorf("made-up hosts filled %d cache entries", n)
	}
	get("fiscal.example.com")
	if !httpserver.DocumentCached(h, "/openapi.json", "http://fiscal.example.com") {
		t.Error("the operator's host is not cached after a flood of made-up hosts")
	}
	// The default allows the loopback names only.
	d := newHandler(t, f.engine, httpserver.Options{})
	for _, host := range []string{"localhost:8402", "127.0.0.1:8402", "[::1]:8402", "evil.example"} {
		req := httptest.NewRequest("GET", "/openapi.json", nil)
		req.Host = host
		d.ServeHTTP(httptest.NewRecorder(), req)
	}
	if n := httpserver.DocumentCacheLen(d); n != 3 {
		t.Errorf("default: %d cached, want the 3 loopback hosts", n)
	}
}

// TestStrictJSONOnTheWire (issue 19 item 6): through the server, a lone
// UTF-16 surrogate, a member name in another case and an unknown member are
// each a 400 naming the field, and nothing is written.
func TestStrictJSONOnTheWire(t *testing.T) {
	f := newFixture(t)
	raw := string(mustJSON(t, settlement(nil)))
	for _, tc := range []struct{ name, path, body, field string }{
		{"lone surrogate", "/settlements", strings.Replace(raw, `"consumerCountry":"DE"`, `"consumerCountry":"DE","consumerVatNumber":"\ud800"`, 1), "/consumerVatNumber"},
		{"lone low surrogate", "/settlements", strings.Replace(raw, `"consumerCountry":"DE"`, `"consumerCountry":"D\udc00"`, 1), "/consumerCountry"},
		{"member name in another case", "/settlements", strings.Replace(raw, `"amountUsdc"`, `"AmountUsdc"`, 1), "/AmountUsdc"},
		{"unknown member", "/settlements", strings.Replace(raw, `{`, `{"amountUSDC":"1",`, 1), "/amountUSDC"},
		{"fiscal event, another case", "/v1/fiscal-events", strings.Replace(string(mustJSON(t, fiscalEventBody(nil))), `"buyer"`, `"Buyer"`, 1), "/Buyer"},
		{"capability check, lone surrogate", "/v1/capabilities/check", `{"network":"\ud800"}`, "/network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertProblem(t, f.do("POST", tc.path, keyA, []byte(tc.body)), 400, "BAD_REQUEST", tc.field)
		})
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Errorf("ledger size %d after refused requests", n)
	}
}

// TestNoAllocationBomb (issue 19 item 12): no body under the limit makes a
// request allocate more than a small multiple of its size, on every JSON
// endpoint, keyed or not (deeply nested brackets allocated about 1 GB for
// 64 KiB before).
func TestNoAllocationBomb(t *testing.T) {
	f := newFixture(t)
	h := newHandler(t, f.engine, httpserver.Options{RateLimit: rate.Inf})
	half := int(fiscal.MaxRequestBytes)/2 - 16
	bombs := map[string][]byte{
		"array":  []byte(strings.Repeat("[", half) + strings.Repeat("]", half)),
		"object": []byte(`{"a":` + strings.Repeat(`{"a":`, half/5-1) + "1" + strings.Repeat("}", half/5)),
		"member": []byte(`{"extra":` + strings.Repeat("[", half-8) + strings.Repeat("]", half-8) + `}`),
	}
	paths := []string{"/settlements", "/v1/x402/settlements", "/v1/capabilities/check", "/v1/fiscal-events",
		"/v1/compliance/evaluate", "/sandbox/v1/simulate", "/v1/webhook-endpoints", "/settlements/x/resolve"}
	worst := 0.0
	defer func() { t.Logf("worst allocation: %.1f× the body", worst) }()
	for _, path := range paths {
		for name, body := range bombs {
			if int64(len(body)) > fiscal.MaxRequestBytes {
				t.Fatalf("bomb %s is %d bytes, over the limit", name, len(body))
			}
			req := httptest.NewRequest("POST", path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Service-Key", keyA)
			rec := httptest.NewRecorder()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			h.ServeHTTP(rec, req)
			runtime.ReadMemStats(&after)
			if rec.Code != 400 {
				t.Errorf("%s %s: %d %s", path, name, rec.Code, rec.Body)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			worst = max(worst, float64(alloc)/float64(len(body)))
			if alloc > uint64(16*len(body)) {
				t.Errorf("%s %s: %d bytes allocated for a %d-byte body", path, name, alloc, len(body))
			}
		}
	}
}

// TestServedKeySetsArePublic (issue 19 item 15): the key sets the server
// publishes carry no private member, and the verifier accepts them.
func TestServedKeySetsArePublic(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/.well-known/jwks.json", "/sandbox/v1/jwks.json"} {
		r := f.do("GET", path, "", nil)
		if r.status != 200 {
			t.Fatalf("%s: %d", path, r.status)
		}
		var set struct{ Keys []map[string]any }
		if err := json.Unmarshal(r.body, &set); err != nil || len(set.Keys) == 0 {
			t.Fatalf("%s: %v %s", path, err, r.body)
		}
		for _, k := range set.Keys {
			for _, m := range []string{"d", "p", "q", "dp", "dq", "qi", "k", "oth", "priv"} {
				if _, ok := k[m]; ok {
					t.Errorf("%s: key %v carries the private member %q", path, k["kid"], m)
				}
			}
		}
		if _, err := receipt.ParseKeySet(r.body); err != nil {
			t.Errorf("%s: the verifier refuses the served set: %v", path, err)
		}
	}
	// And the verifier refuses the same set with a private part added.
	r := f.do("GET", "/.well-known/jwks.json", "", nil)
	leaked := strings.Replace(string(r.body), `"kty"`, `"d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","kty"`, 1)
	if _, err := receipt.ParseKeySet([]byte(leaked)); err == nil {
		t.Error("receipt.ParseKeySet accepted a key set with a private key")
	}
}

// TestPanicIsAProblem (issue 19 item 2): a panic under a handler reaches
// the client as a 500 problem document, not a cut connection or a stack
// trace, and the server goes on serving.
func TestPanicIsAProblem(t *testing.T) {
	f := newFixture(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := newHandler(t, f.engine, httpserver.Options{Logger: quiet, ReadyChecks: []httpserver.ReadyCheck{{Name: "boom", Check: func(context.Context) error { panic("boom") }}}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(rec.Body.String(), `"code":"INTERNAL"`) || strings.Contains(rec.Body.String(), "goroutine") {
		t.Fatalf("a panicking handler answered %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 {
		t.Errorf("after the panic: %d", rec.Code)
	}
}

// TestProofRangeNamesTheParameter: a proof request out of the log's range
// names the parameter that is out of it, not always the first one.
func TestProofRangeNamesTheParameter(t *testing.T) {
	f := newFixture(t)
	for i := 1; i <= 2; i++ {
		if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(i)}))); r.status != 201 {
			t.Fatalf("settle: %d %s", r.status, r.body)
		}
	}
	for _, tc := range []struct{ path, field string }{
		{"/v1/log/proof/inclusion?index=0&size=99", "size"}, // a tree the log has not reached
		{"/v1/log/proof/inclusion?index=5", "index"},        // beyond the current size
		{"/v1/log/proof/inclusion?index=1&size=1", "index"}, // not in that tree
		{"/v1/log/proof/consistency?from=1&to=99", "to"},
		{"/v1/log/proof/consistency?from=0", "from"},
		{"/v1/log/proof/consistency?from=2&to=1", "from"},
		{"/v1/log/proof/consistency?from=99", "from"},
		{"/v1/log/proof/inclusion?index=0&sise=2", "sise"},   // misspelt: not a proof against the current size
		{"/v1/log/proof/consistency?from=1&too=2", "too"},    // likewise
		{"/v1/log/proof/inclusion?index=0&index=1", "index"}, // repeated
	} {
		p := problemCode(t, f.do("GET", tc.path, "", nil), 400, "BAD_REQUEST")
		if p["field"] != tc.field {
			t.Errorf("%s: field %v, want %s (%v)", tc.path, p["field"], tc.field, p["detail"])
		}
	}
}

// TestCapabilityCheckKeyUnderAuthFailureLimit: the capability check reads
// an optional key like the other endpoints: its wrong keys count against
// the client address, and a blocked address gets 429 there whatever key
// it sends, so the check is no unlimited oracle for guessing keys.
func TestCapabilityCheckKeyUnderAuthFailureLimit(t *testing.T) {
	f := newCustomFixture(t, customSettings{server: httpserver.Options{
		RateLimit: rate.Inf, AuthFailureRate: rate.Limit(0.001), AuthFailureBurst: 3,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}})
	body := mustJSON(t, map[string]any{"seller_country": "IE", "buyer_country": "DE", "supply_type": "digital_service", "buyer_type": "B2C", "supply_date": "2026-04-10",
		"payment": map[string]any{"protocol": "x402", "network": "eip155:8453", "asset": "USDC"}})
	const guesser = "198.51.100.7"
	for i := 0; i < 3; i++ {
		assertProblem(t, f.do("POST", "/v1/capabilities/check", "sk_guess_"+strconv.Itoa(i), body, "X-Forwarded-For", guesser), 401, "AUTHENTICATION_FAILED", "")
	}
	assertProblem(t, f.do("POST", "/v1/capabilities/check", "sk_guess_3", body, "X-Forwarded-For", guesser), 429, "RATE_LIMITED", "")
	// Blocked: the valid key is not confirmed, here or elsewhere.
	assertProblem(t, f.do("POST", "/v1/capabilities/check", keyA, body, "X-Forwarded-For", guesser), 429, "RATE_LIMITED", "")
	assertProblem(t, f.do("GET", "/settlements", keyA, nil, "X-Forwarded-For", guesser), 429, "RATE_LIMITED", "")
	// Other addresses are untouched.
	if r := f.do("POST", "/v1/capabilities/check", keyA, body, "X-Forwarded-For", "203.0.113.9"); r.status != 200 {
		t.Errorf("another address: %d %s", r.status, r.body)
	}
}

// TestTypeErrorFieldIsAPointer: a member of the wrong type inside an array
// is named by a JSON pointer that resolves in the request (README "Errors":
// field is the JSON pointer of the offending member), with its element's
// index; nothing is written.
func TestTypeErrorFieldIsAPointer(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ member, field string }{
		{`"locationEvidence":[{"kind":"ip_address","country":"DE","source":"geoip"},{"kind":7}]`, "/locationEvidence/1/kind"},
		{`"rateConditions":["it_isbn_issn",1]`, "/rateConditions/1"},
	} {
		body := bytes.Replace(mustJSON(t, settlement(nil)), []byte("{"), []byte("{"+tc.member+","), 1)
		r := f.do("POST", "/settlements", keyA, body)
		assertProblem(t, r, 400, "BAD_REQUEST", tc.field)
	}
	if n := f.engine.Ledger().Size(); n != 0 {
		t.Errorf("ledger size %d after refused requests", n)
	}
}

// TestProofRefusesExplicitZeroSize: an absent size (or to) means the
// current tree; an explicit 0 names no tree a proof can be about (the empty
// tree holds no leaf and extends nothing), so it is a 400 naming the
// parameter, not silently a proof against another size than the one sent.
func TestProofRefusesExplicitZeroSize(t *testing.T) {
	f := newFixture(t)
	for i := 1; i <= 2; i++ {
		if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(i)}))); r.status != 201 {
			t.Fatalf("settle: %d %s", r.status, r.body)
		}
	}
	for _, tc := range []struct{ path, field string }{
		{"/v1/log/proof/inclusion?index=0&size=0", "size"},
		{"/v1/log/proof/inclusion?index=0&size=", "size"},
		{"/v1/log/proof/consistency?from=1&to=0", "to"},
		{"/v1/log/proof/consistency?from=1&to=", "to"},
	} {
		p := problemCode(t, f.do("GET", tc.path, "", nil), 400, "BAD_REQUEST")
		if p["field"] != tc.field {
			t.Errorf("%s: field %v, want %s (%v)", tc.path, p["field"], tc.field, p["detail"])
		}
	}
	// Absent still means the current size.
	for _, path := range []string{"/v1/log/proof/inclusion?index=0", "/v1/log/proof/consistency?from=1"} {
		if r := f.do("GET", path, "", nil); r.status != 200 {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
}
