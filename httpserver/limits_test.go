package httpserver_test

import (
	"strconv"
	"testing"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/httpserver"
)

// TestRateLimit: the keyed endpoints share a per-account token bucket;
// past it, 429 RATE_LIMITED with Retry-After, and nothing is written.
func TestRateLimit(t *testing.T) {
	// One token every 1000 s: the refill cannot make the test flaky.
	f := newCustomFixture(t, customSettings{server: httpserver.Options{RateLimit: rate.Limit(0.001), RateBurst: 3}})
	steps := []struct {
		name   string
		method string
		path   string
		key    string
		body   []byte
		status int
		code   string
	}{
		{"A: first request", "GET", "/settlements", keyA, nil, 200, ""},
		{"A: second request, another endpoint", "POST", "/settlements", keyA, mustJSON(t, settlement(nil)), 201, ""},
		{"A: third request", "GET", "/v1/fiscal-events", keyA, nil, 200, ""},
		{"A: over the limit", "POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(nil)), 429, "RATE_LIMITED"},
		{"A: still over the limit", "GET", "/settlements", keyA, nil, 429, "RATE_LIMITED"},
		{"B: its own bucket", "GET", "/settlements", keyB, nil, 200, ""},
		{"a wrong key is refused before the limit", "GET", "/settlements", "sk_wrong", nil, 401, "AUTHENTICATION_FAILED"},
		{"public endpoints are not limited per key", "GET", "/.well-known/jwks.json", "", nil, 200, ""},
		{"the sandbox has its quota instead", "POST", "/v1/compliance/evaluate", keyA, mustJSON(t, evaluateBody(nil)), 200, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			resp := f.do(st.method, st.path, st.key, st.body)
			if st.code != "" {
				assertProblem(t, resp, st.status, st.code, "")
				if st.code == "RATE_LIMITED" {
					if s, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || s < 1 || s > 1000 {
						t.Errorf("Retry-After %q, want 1..1000 s", resp.header.Get("Retry-After"))
					}
				}
				return
			}
			if resp.status != st.status {
				t.Fatalf("status %d, want %d: %s", resp.status, st.status, resp.body)
			}
		})
	}
	if n := f.engine.Ledger().Size(); n != 1 {
		t.Errorf("ledger size %d, want 1: a rate-limited request was written", n)
	}
}

// TestDBUnavailable closes the ledger underneath running handlers: a
// request in flight, and every later request that must read or write the
// store, answers 503 DB_UNAVAILABLE with Retry-After, never a 4xx.
func TestDBUnavailable(t *testing.T) {
	paths := []struct {
		name string
		path string
		body []byte
	}{
		{"settlement", "/settlements", mustJSON(t, settlement(map[string]any{"consumerVatNumber": "DE136695976"}))},
		{"fiscal event", "/v1/fiscal-events", mustJSON(t, fiscalEventBody(map[string]any{"buyer": map[string]any{"country": "DE", "businessStatus": "B2B", "vatNumber": "DE136695976"}}))},
	}
	for _, p := range paths {
		t.Run(p.name+" in flight", func(t *testing.T) {
			v := &blockingVIES{entered: make(chan struct{}), release: make(chan struct{})}
			f := newCustomFixture(t, customSettings{vies: v})
			done := make(chan response)
			go func() { done <- f.do("POST", p.path, keyA, p.body) }()
			<-v.entered // the handler is between its ledger read and its append
			if err := f.engine.Ledger().Close(); err != nil {
				t.Fatal(err)
			}
			close(v.release)
			resp := <-done
			assertProblem(t, resp, 503, "DB_UNAVAILABLE", "")
			if resp.header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
		})
	}
	t.Run("after the ledgers closed", func(t *testing.T) {
		f := newFixture(t)
		if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil))); r.status != 201 {
			t.Fatal(r.status)
		}
		id := f.do("GET", "/settlements", keyA, nil).json(t)["data"].([]any)[0].(map[string]any)["id"].(string)
		if err := f.engine.Ledger().Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.sandboxLedger().Close(); err != nil {
			t.Fatal(err)
		}
		requests := []struct {
			method, path, key string
			body              []byte
		}{
			{"POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(9)}))},
			{"POST", "/v1/fiscal-events", keyA, mustJSON(t, fiscalEventBody(nil))},
			{"GET", "/settlements", keyA, nil},
			{"GET", "/v1/fiscal-events", keyA, nil},
			{"GET", "/settlements/" + id, keyA, nil},
			{"GET", "/v1/receipts/rcpt_" + id, "", nil},
			{"POST", "/v1/compliance/evaluate", "", mustJSON(t, evaluateBody(nil))},
			{"POST", "/sandbox/v1/simulate", "", mustJSON(t, settlement(nil))},
			{"GET", "/sandbox/v1/settlements/x402-sandbox-00", "", nil},
		}
		for _, r := range requests {
			resp := f.do(r.method, r.path, r.key, r.body)
			assertProblem(t, resp, 503, "DB_UNAVAILABLE", "")
			if resp.header.Get("Retry-After") == "" {
				t.Errorf("%s %s: no Retry-After", r.method, r.path)
			}
		}
	})
}
