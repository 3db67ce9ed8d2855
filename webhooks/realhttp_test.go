package webhooks_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// realReceiver is a real HTTP receiver that verifies each request and
// records the events it accepted (2xx).
type realReceiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	secrets []string
	acct    string
	clock   func() time.Time
	got     map[int64]int  // sequence -> accepted count
	attempt map[string]int // event id -> requests
	bad     []string
	behave  func(r *http.Request, n int, w http.ResponseWriter) bool // true: handled
}

func newRealReceiver(t *testing.T, acct string, clock func() time.Time) *realReceiver {
	rc := &realReceiver{t: t, acct: acct, clock: clock, got: map[int64]int{}, attempt: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *realReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	secrets := append([]string(nil), rc.secrets...)
	id := r.Header.Get(webhooks.HeaderEventID)
	rc.attempt[id]++
	n := rc.attempt[id]
	behave := rc.behave
	rc.mu.Unlock()
	if err := webhooks.VerifyAt(rc.clock(), secrets, r.Header.Get(webhooks.HeaderSignature), r.Header.Get(webhooks.HeaderTimestamp), body, 0); err != nil {
		rc.mu.Lock()
		rc.bad = append(rc.bad, fmt.Sprintf("%s attempt %s: %v", id, r.Header.Get(webhooks.HeaderAttempt), err))
		rc.mu.Unlock()
		w.WriteHeader(400)
		return
	}
	var p webhooks.EventPayload
	if err := json.Unmarshal(body, &p); err != nil {
		rc.mu.Lock()
		rc.bad = append(rc.bad, "body: "+err.Error())
		rc.mu.Unlock()
		w.WriteHeader(400)
		return
	}
	if !bytes.Contains(p.Data, []byte(`"`+rc.acct+`"`)) {
		rc.mu.Lock()
		rc.bad = append(rc.bad, "another account's event "+p.ID+": "+string(p.Data[:min(200, len(p.Data))]))
		rc.mu.Unlock()
	}
	if behave != nil && behave(r, n, w) {
		return
	}
	rc.mu.Lock()
	rc.got[p.Sequence]++
	rc.mu.Unlock()
	w.WriteHeader(200)
}

func (rc *realReceiver) has(seq int64) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[seq] > 0
}

// realEnv: an engine on a real (shifted) clock with the real HTTP sender.
type realEnv struct {
	t      *testing.T
	dir    string
	opts   webhooks.Options
	clock  func() time.Time
	engine *fiscal.Engine
	svc    *webhooks.Service
}

func newRealEnv(t *testing.T, opts webhooks.Options) *realEnv {
	off := webhookTestStart.Sub(time.Now())
	env := &realEnv{t: t, dir: t.TempDir(), opts: opts, clock: func() time.Time { return time.Now().Add(off) }}
	env.open()
	t.Cleanup(env.close)
	return env
}

func (env *realEnv) open() {
	opts := env.opts
	opts.AllowLoopback = true
	env.engine, env.svc = openService(env.t, env.dir, env.clock, rand.Reader, opts)
}

func (env *realEnv) close() {
	if env.engine != nil {
		if err := env.engine.Close(); err != nil {
			env.t.Error(err)
		}
		env.engine = nil
	}
}

func (env *realEnv) settle(account string, n int) *fiscal.SettleResult {
	books, err := env.engine.Books(account)
	if err != nil {
		env.t.Error(err)
		return nil
	}
	res, err := books.Settle(ctx, fiscaltest.Request(n, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		env.t.Error(err)
		return nil
	}
	return res
}

func waitForWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDeliveriesOverRealHTTPWithRestarts (a review wrote it): concurrent settlements to two accounts, flaky
// real receivers (500, 429/503 with Retry-After, redirect, closed
// connection, timeout), restarts mid-delivery: every event reaches every
// endpoint of its account, none another's, every signature verifies.
func TestDeliveriesOverRealHTTPWithRestarts(t *testing.T) {
	env := newRealEnv(t, webhooks.Options{Timeout: 500 * time.Millisecond, Schedule: webhooks.Schedule{First: 50 * time.Millisecond, Max: 300 * time.Millisecond}})
	flaky := newRealReceiver(t, "acct_0", env.clock)
	flaky.behave = func(r *http.Request, n int, w http.ResponseWriter) bool {
		switch n % 7 {
		case 1:
			w.WriteHeader(500)
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		case 3:
			w.Header().Set("Location", "https://elsewhere.example/")
			w.WriteHeader(302)
		case 4:
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		case 5:
			time.Sleep(700 * time.Millisecond)
			w.WriteHeader(503)
		default:
			return false
		}
		return true
	}
	good := newRealReceiver(t, "acct_0", env.clock)
	other := newRealReceiver(t, "acct_1", env.clock)
	for _, rc := range []*realReceiver{flaky, good, other} {
		ep, err := env.svc.CreateEndpoint(ctx, rc.acct, webhooks.EndpointRequest{URL: rc.srv.URL + "/hook"})
		if err != nil {
			t.Fatal(err)
		}
		rc.secrets = []string{ep.Secret}
	}
	var mu sync.Mutex
	seqs := map[string][]int64{}
	n := 0
	for round := range 3 {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 8 {
					k := round*100 + w*10 + i + 1
					acct := fmt.Sprintf("acct_%d", k%2)
					if res := env.settle(acct, k); res != nil {
						mu.Lock()
						seqs[acct] = append(seqs[acct], res.Record.Ledger.Index)
						n++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		time.Sleep(150 * time.Millisecond)
		env.close() // mid-delivery
		env.open()
	}
	check := func() (missing []string) {
		for _, s := range seqs["acct_0"] {
			if !flaky.has(s) {
				missing = append(missing, "flaky "+strconv.FormatInt(s, 10))
			}
			if !good.has(s) {
				missing = append(missing, "good "+strconv.FormatInt(s, 10))
			}
		}
		for _, s := range seqs["acct_1"] {
			if !other.has(s) {
				missing = append(missing, "other "+strconv.FormatInt(s, 10))
			}
		}
		return missing
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(check()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if m := check(); len(m) > 0 {
		t.Errorf("%d settlements; not delivered: %v", n, m)
	}
	for _, rc := range []*realReceiver{flaky, good, other} {
		rc.mu.Lock()
		if len(rc.bad) > 0 {
			t.Errorf("receiver %s: %v", rc.acct, rc.bad)
		}
		for s := range rc.got {
			found := false
			for _, x := range seqs[rc.acct] {
				found = found || x == s
			}
			if !found {
				t.Errorf("receiver of %s got sequence %d", rc.acct, s)
			}
		}
		rc.mu.Unlock()
	}
}
