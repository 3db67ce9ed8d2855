package httpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vies"
)

// Helpers of the tests of issue 8 part A (listing, fiscal events, evaluate,
// sandbox, quota, limits).

// testClock is a settable clock, for records created at different times.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// customFixture opens a fixture whose engine and server take extra
// settings; reopenCustom restarts it on the same data directory.
type customSettings struct {
	clock  *testClock
	vies   vies.Checker
	server httpserver.Options
}

func newCustomFixture(t testing.TB, cs customSettings) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	openCustom(f, cs)
	return f
}

func openCustom(f *fixture, cs customSettings) {
	f.t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	clock := func() time.Time { return testNow }
	if cs.clock != nil {
		clock = cs.clock.Now
	}
	e, err := fiscal.New(fiscal.Config{
		Dir:      f.dir,
		Accounts: testAccounts(f.t),
		Clock:    clock,
		Rand:     &detRand{seed: "fixture"},
		Logger:   quiet,
		VIES:     cs.vies,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.engine = e
	f.sandbox = sandbox.New(e, sandbox.Options{})
	opts := cs.server
	opts.Logger = quiet
	f.srv = httptest.NewServer(newHandlerWith(f.t, httpserver.Services{Engine: e, Sandbox: f.sandbox}, opts))
	f.t.Cleanup(f.close)
}

func reopenCustom(f *fixture, cs customSettings) {
	f.close()
	openCustom(f, cs)
}

// fiscalEventBody returns a valid fiscal event for account A's own seller
// (Seller A Ltd, IE) and a consumer in Germany on 2026-04-10, with members
// overridden by path ("payment.txHash"; a nil value removes the member).
func fiscalEventBody(overrides map[string]any) map[string]any {
	m := map[string]any{
		"payment": map[string]any{
			"amountUsdc":     "11.90",
			"txHash":         txHash(1000),
			"timestamp":      "2026-04-10T14:30:00Z",
			"payerWallet":    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
			"receiverWallet": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
			"network":        "eip155:8453",
		},
		"seller": map[string]any{"legalName": "Seller A Ltd", "country": "IE"},
		"buyer":  map[string]any{"country": "DE", "businessStatus": "B2C"},
		"supply": map[string]any{"kind": "digital_service"},
	}
	return override(m, overrides)
}

// evaluateBody returns a valid evaluation request: a French seller above
// the threshold selling a digital service to a consumer in Germany.
func evaluateBody(overrides map[string]any) map[string]any {
	m := map[string]any{
		"seller":     map[string]any{"country": "FR", "overThreshold": true},
		"buyer":      map[string]any{"country": "DE", "businessStatus": "B2C"},
		"supply":     map[string]any{"kind": "digital_service"},
		"amountUsdc": "11.90",
		"date":       "2026-04-10",
	}
	return override(m, overrides)
}

// override sets or (for nil) deletes members by dotted path; a path whose
// parent is absent creates it.
func override(m map[string]any, overrides map[string]any) map[string]any {
	for path, v := range overrides {
		parent, key := m, path
		for {
			head, rest, ok := cut(key)
			if !ok {
				break
			}
			child, _ := parent[head].(map[string]any)
			if child == nil {
				child = map[string]any{}
				parent[head] = child
			}
			parent, key = child, rest
		}
		if v == nil {
			delete(parent, key)
		} else {
			parent[key] = v
		}
	}
	return m
}

func cut(s string) (string, string, bool) { return strings.Cut(s, ".") }

// blockingVIES holds every lookup until release is closed, so a test can act
// while a handler is in the middle of its work; entered is signalled when a
// lookup starts.
type blockingVIES struct {
	entered chan struct{}
	release chan struct{}
	ctx     context.Context // the request's context, set before entered is signalled
}

func (b *blockingVIES) Check(ctx context.Context, number string) vies.Result {
	b.ctx = ctx
	b.entered <- struct{}{}
	<-b.release
	return vies.Result{Status: vies.StatusUnavailable, Registry: "VIES", CountryCode: number[:2], Number: number[2:], RequestDate: testNow, Fault: "MS_UNAVAILABLE"}
}

type pageView struct {
	Object     string
	Data       []json.RawMessage
	HasMore    bool   `json:"has_more"`
	NextCursor string `json:"next_cursor"`
}

func decodePage(t testing.TB, resp response) pageView {
	t.Helper()
	if resp.status != 200 {
		t.Fatalf("list: %d %s", resp.status, resp.body)
	}
	var p pageView
	if err := json.Unmarshal(resp.body, &p); err != nil || p.Object != "list" || p.Data == nil {
		t.Fatalf("not a list page (%v): %s", err, resp.body)
	}
	if p.HasMore != (p.NextCursor != "") {
		t.Errorf("has_more %v with next_cursor %q", p.HasMore, p.NextCursor)
	}
	return p
}
