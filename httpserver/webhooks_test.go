package httpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/webhooks"
)

// stepClock is the virtual clock of the webhook tests: the dispatcher's
// waits are released by the test (AdvanceToNext), so a retry schedule of
// hours runs at once. Each wait replaces the previous one, which the
// dispatcher's loop no longer listens to.
type stepClock struct {
	mu     sync.Mutex
	now    time.Time
	at     time.Time
	waiter chan time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.at, c.waiter = c.now.Add(d), ch
	return ch
}

func (c *stepClock) AdvanceToNext() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiter == nil {
		return
	}
	if c.at.After(c.now) {
		c.now = c.at
	}
	c.waiter <- c.now
	c.waiter = nil
}

// webhookFixture is the server fixture with webhooks on: a virtual clock,
// loopback endpoints allowed (the receivers are httptest servers), and the
// engine's default HTTP sender.
type webhookFixture struct {
	*fixture
	clock *stepClock
	opts  webhooks.Options
}

func newWebhookFixture(t *testing.T, opts webhooks.Options) *webhookFixture {
	t.Helper()
	f := &webhookFixture{fixture: &fixture{t: t, dir: t.TempDir()}, clock: &stepClock{now: testNow}, opts: opts}
	f.openWebhooks()
	return f
}

func (f *webhookFixture) openWebhooks() {
	f.t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("WEBHOOK_TEST_LOG") != "" {
		quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := f.opts
	opts.After = f.clock.After
	e, err := fiscal.New(fiscal.Config{
		Dir: f.dir, Accounts: testAccounts(f.t), Clock: f.clock.Now,
		Rand: &detRand{seed: "webhooks"}, Logger: quiet,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.engine = e
	f.srv = httptest.NewServer(newHandler(f.t, e, httpserver.Options{Logger: quiet}, opts))
	f.t.Cleanup(f.close)
}

func (f *webhookFixture) reopenWebhooks() {
	f.close()
	f.openWebhooks()
}

// eventually polls cond, releasing the dispatcher's waits in between, for
// at most 20 s of real time.
func (f *webhookFixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		f.clock.AdvanceToNext()
		time.Sleep(2 * time.Millisecond)
	}
}

// settle posts settlement n for the key's account.
func (f *webhookFixture) settle(key string, n int) map[string]any {
	f.t.Helper()
	r := f.do("POST", "/settlements", key, mustJSON(f.t, settlement(map[string]any{"txHash": txHash(n)})))
	if r.status != 201 {
		f.t.Fatalf("settle: %d %s", r.status, r.body)
	}
	return r.json(f.t)
}

// createEndpoint registers url for the key's account and returns the
// answer (with the secret).
func (f *webhookFixture) createEndpoint(key, url string) map[string]any {
	f.t.Helper()
	r := f.do("POST", "/v1/webhook-endpoints", key, []byte(`{"url":"`+url+`","description":"test receiver"}`))
	if r.status != 201 {
		f.t.Fatalf("create endpoint: %d %s", r.status, r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(r.header.Get("Location"), "/v1/webhook-endpoints/we_") {
		f.t.Errorf("create endpoint headers: %v", r.header)
	}
	return r.json(f.t)
}

// received is one request a receiver got.
type received struct {
	eventID, eventType, deliveryID string
	attempt                        int
	status                         int
	body                           []byte
	signature, timestamp           string
	verifyErr                      error
}

// receiver is a real HTTP endpoint that verifies every request with the
// receiver helper and answers with respond(n) for the n-th request (1-based).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	secrets []string
	got     []received
	respond func(n int, w http.ResponseWriter) int
	clock   *stepClock
}

func newReceiver(t *testing.T, clock *stepClock, respond func(n int, w http.ResponseWriter) int) *receiver {
	rc := &receiver{respond: respond, clock: clock}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) setSecrets(s ...string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets = s
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.got) + 1
	// The replay window itself is tested in package webhooks; here the
	// virtual clock may have been stepped between signing and receiving,
	// so the window is wide and the signature is what is checked.
	err := webhooks.VerifyAt(rc.clock.Now(), rc.secrets, r.Header.Get(webhooks.HeaderSignature), r.Header.Get(webhooks.HeaderTimestamp), body, 96*time.Hour)
	attempt, _ := strconv.Atoi(r.Header.Get(webhooks.HeaderAttempt))
	rec := received{
		eventID: r.Header.Get(webhooks.HeaderEventID), eventType: r.Header.Get(webhooks.HeaderEventType),
		deliveryID: r.Header.Get(webhooks.HeaderDeliveryID), attempt: attempt, body: body,
		signature: r.Header.Get(webhooks.HeaderSignature), timestamp: r.Header.Get(webhooks.HeaderTimestamp), verifyErr: err,
	}
	if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" {
		rec.verifyErr = errInvalidRequest
	}
	rc.got = append(rc.got, rec)
	respond := rc.respond
	rc.mu.Unlock()
	status := 200
	if respond != nil {
		status = respond(n, w)
	}
	rc.mu.Lock()
	rc.got[n-1].status = status
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func (g received) String() string {
	return fmt.Sprintf("%s#%d %s status %d ts %s", g.eventID, g.attempt, g.deliveryID, g.status, g.timestamp)
}

var errInvalidRequest = errString("not a POST of application/json")

type errString string

func (e errString) Error() string { return string(e) }

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// delivered returns the event ids the receiver acknowledged with a 2xx.
func (rc *receiver) delivered() map[string]int {
	out := map[string]int{}
	for _, g := range rc.requests() {
		if g.status/100 == 2 {
			out[g.eventID]++
		}
	}
	return out
}

func checkVerified(t *testing.T, got []received) {
	t.Helper()
	for _, g := range got {
		if g.verifyErr != nil {
			t.Errorf("delivery %s (%s #%d) did not verify: %v", g.deliveryID, g.eventID, g.attempt, g.verifyErr)
		}
		var body struct {
			ID, Type string
		}
		if err := json.Unmarshal(g.body, &body); err != nil || body.ID != g.eventID || body.Type != g.eventType {
			t.Errorf("body id/type %q/%q, headers %q/%q (%v)", body.ID, body.Type, g.eventID, g.eventType, err)
		}
	}
}

// TestWebhooksFailFirstThenSucceed: a real receiver fails the first three
// requests; every event still arrives, each request verifies with the
// helper, attempts count up per event, delivery ids never repeat.
func TestWebhooksFailFirstThenSucceed(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	rc := newReceiver(t, f.clock, func(n int, w http.ResponseWriter) int {
		if n <= 3 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	ep := f.createEndpoint(keyA, rc.URL+"/hooks")
	rc.setSecrets(ep["secret"].(string))
	list := f.do("GET", "/v1/webhook-endpoints", keyA, nil)
	if list.status != 200 || strings.Contains(string(list.body), ep["secret"].(string)) || !strings.Contains(string(list.body), ep["id"].(string)) {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, "evt_"+f.settle(keyA, i)["id"].(string))
	}
	f.settle(keyB, 99) // another account: not delivered here
	f.eventually("three events delivered", func() bool { return len(rc.delivered()) == 3 })
	got := rc.requests()
	checkVerified(t, got)
	attempts := map[string]int{}
	deliveryIDs := map[string]bool{}
	for _, g := range got {
		if !slices.Contains(ids, g.eventID) {
			t.Errorf("unexpected event %s", g.eventID)
		}
		attempts[g.eventID]++
		if g.attempt != attempts[g.eventID] {
			t.Errorf("%s: attempt header %d, want %d", g.eventID, g.attempt, attempts[g.eventID])
		}
		if deliveryIDs[g.deliveryID] {
			t.Errorf("delivery id %s repeated", g.deliveryID)
		}
		deliveryIDs[g.deliveryID] = true
	}
	if len(got) != 6 {
		t.Errorf("%d requests, want 3 failed + 3 delivered", len(got))
	}
	// The receiver has answered; the engine records it right after.
	f.eventually("the delivery recorded", func() bool {
		d := f.do("GET", "/v1/events/"+ids[0], keyA, nil).json(t)["deliveries"].([]any)
		return len(d) == 1 && d[0].(map[string]any)["status"] == "delivered"
	})
	if r := f.do("GET", "/v1/events/"+ids[0], keyB, nil); r.status != 404 {
		t.Errorf("another account's event: %d", r.status)
	}
}

// TestWebhooksRestartWhilePending: deliveries pending while the server is
// closed and reopened on the same data directory resume; none is lost, and
// duplicates carry the same event id.
func TestWebhooksRestartWhilePending(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	var up atomic.Bool
	rc := newReceiver(t, f.clock, func(n int, w http.ResponseWriter) int {
		if !up.Load() {
			w.Header().Set("Retry-After", "120")
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	ep := f.createEndpoint(keyA, rc.URL)
	rc.setSecrets(ep["secret"].(string))
	var ids []string
	for i := 1; i <= 4; i++ {
		ids = append(ids, "evt_"+f.settle(keyA, i)["id"].(string))
	}
	f.eventually("each event tried once", func() bool {
		tried := map[string]bool{}
		for _, g := range rc.requests() {
			tried[g.eventID] = true
		}
		return len(tried) == 4
	})
	before := len(rc.requests())
	f.reopenWebhooks()
	up.Store(true)
	f.eventually("all events delivered after the restart", func() bool { return len(rc.delivered()) == 4 })
	got := rc.requests()
	checkVerified(t, got)
	for _, id := range ids {
		if rc.delivered()[id] < 1 {
			t.Errorf("%s lost", id)
		}
	}
	for _, g := range got {
		if !slices.Contains(ids, g.eventID) {
			t.Errorf("a request for unknown event %s", g.eventID)
		}
	}
	for _, g := range got[before:] {
		if g.attempt < 2 {
			t.Errorf("%s after the restart is attempt %d: the attempt count did not survive", g.eventID, g.attempt)
		}
	}
}

// TestWebhooksRotation: during a rotation each delivery carries two v1
// signatures; a receiver holding only the old or only the new secret
// verifies; after the old secret is deleted, only the new one signs.
func TestWebhooksRotation(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	rc := newReceiver(t, f.clock, nil)
	ep := f.createEndpoint(keyA, rc.URL)
	id, oldSecret := ep["id"].(string), ep["secret"].(string)
	oldID := ep["secretId"].(string)
	r := f.do("POST", "/v1/webhook-endpoints/"+id+"/secrets", keyA, nil)
	if r.status != 201 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("add secret: %d %s", r.status, r.body)
	}
	newSecret := r.json(t)["secret"].(string)
	rc.setSecrets(oldSecret) // a receiver that has not switched yet
	f.settle(keyA, 1)
	f.eventually("the first delivery", func() bool { return len(rc.requests()) == 1 })
	g := rc.requests()[0]
	checkVerified(t, rc.requests())
	if strings.Count(g.signature, "v1=") != 2 {
		t.Fatalf("signature %q during rotation", g.signature)
	}
	if err := webhooks.VerifyAt(f.clock.Now(), []string{newSecret}, g.signature, g.timestamp, g.body, 96*time.Hour); err != nil {
		t.Errorf("new secret: %v", err)
	}
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+id+"/secrets/"+oldID, keyA, nil); r.status != 200 {
		t.Fatalf("delete old secret: %d %s", r.status, r.body)
	}
	rc.setSecrets(newSecret)
	f.settle(keyA, 2)
	f.eventually("the second delivery", func() bool { return len(rc.requests()) == 2 })
	g = rc.requests()[1]
	checkVerified(t, rc.requests()[1:])
	if strings.Count(g.signature, "v1=") != 1 {
		t.Fatalf("signature %q after rotation", g.signature)
	}
	if err := webhooks.VerifyAt(f.clock.Now(), []string{oldSecret}, g.signature, g.timestamp, g.body, 96*time.Hour); err == nil {
		t.Error("the deleted secret still verifies")
	}
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+id+"/secrets/"+r.json(t)["secretId"].(string), keyA, nil); r.status != 409 || r.json(t)["code"] != "WEBHOOK_ENDPOINT_CONFLICT" {
		t.Errorf("delete the last secret: %d %s", r.status, r.body)
	}
}

// TestWebhooksGoneDisables: a 410 disables the endpoint; nothing more is
// sent to it until it is enabled.
func TestWebhooksGoneDisables(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	var gone atomic.Bool
	gone.Store(true)
	rc := newReceiver(t, f.clock, func(int, http.ResponseWriter) int {
		if gone.Load() {
			return http.StatusGone
		}
		return http.StatusOK
	})
	ep := f.createEndpoint(keyA, rc.URL)
	id := ep["id"].(string)
	rc.setSecrets(ep["secret"].(string))
	f.settle(keyA, 1)
	f.eventually("the endpoint disabled", func() bool {
		return f.do("GET", "/v1/webhook-endpoints/"+id, keyA, nil).json(t)["status"] == "disabled"
	})
	f.settle(keyA, 2)
	for range 20 {
		f.clock.AdvanceToNext()
		time.Sleep(2 * time.Millisecond)
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("%d requests, want only the one answered 410", n)
	}
	gone.Store(false)
	if r := f.do("POST", "/v1/webhook-endpoints/"+id+"/enable", keyA, nil); r.status != 200 || r.json(t)["status"] != "enabled" {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}
	third := "evt_" + f.settle(keyA, 3)["id"].(string)
	f.eventually("a delivery after enabling", func() bool { return rc.delivered()[third] == 1 })
}

// TestWebhooksTimeout: a receiver that does not answer within the timeout
// (shortened here) counts as a failed attempt; the next attempt delivers.
func TestWebhooksTimeout(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true, Timeout: 200 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	rc := newReceiver(t, f.clock, func(n int, w http.ResponseWriter) int {
		if n == 1 {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		}
		return http.StatusOK
	})
	ep := f.createEndpoint(keyA, rc.URL)
	rc.setSecrets(ep["secret"].(string))
	id := "evt_" + f.settle(keyA, 1)["id"].(string)
	start := time.Now()
	f.eventually("delivered after a timeout", func() bool {
		d := f.do("GET", "/v1/events/"+id, keyA, nil).json(t)["deliveries"].([]any)
		return len(d) == 1 && d[0].(map[string]any)["status"] == "delivered"
	})
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("delivery took %s: the 200 ms timeout did not cut the first attempt short", d)
	}
	got := rc.requests()
	if len(got) != 2 || got[0].status != 0 || got[0].attempt != 1 || got[1].attempt != 2 || got[0].eventID != got[1].eventID {
		t.Fatalf("requests %v", got)
	}
	checkVerified(t, got)
}

// TestWebhooksRedirectNotFollowed: a 3xx is a failed attempt and its target
// is never called.
func TestWebhooksRedirectNotFollowed(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	rc := newReceiver(t, f.clock, func(n int, w http.ResponseWriter) int {
		w.Header().Set("Location", target.URL+"/moved")
		return http.StatusPermanentRedirect
	})
	ep := f.createEndpoint(keyA, rc.URL)
	rc.setSecrets(ep["secret"].(string))
	id := "evt_" + f.settle(keyA, 1)["id"].(string)
	f.eventually("two attempts", func() bool { return len(rc.requests()) >= 2 })
	if hits.Load() != 0 {
		t.Fatalf("the redirect target was called")
	}
	d := f.do("GET", "/v1/events/"+id, keyA, nil).json(t)["deliveries"].([]any)[0].(map[string]any)
	last := d["lastAttempt"].(map[string]any)
	if d["status"] != "pending" || last["status"] != float64(308) || !strings.Contains(last["error"].(string), "redirect") {
		t.Errorf("delivery %v", d)
	}
}

// TestWebhooksLoopbackRefused: without AllowLoopback (production), loopback
// and private endpoints are refused when registered.
func TestWebhooksLoopbackRefused(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{})
	for _, url := range []string{"http://127.0.0.1:8080/hook", "https://127.0.0.1/hook", "https://localhost/hook", "https://[::1]/hook", "https://192.168.1.10/hook", "https://169.254.169.254/", "https://127.1/", "http://hooks.example.com/"} {
		r := f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"`+url+`"}`))
		if m := r.json(t); r.status != 400 || m["code"] != "BAD_REQUEST" || m["field"] != "/url" {
			t.Errorf("%s: %d %s", url, r.status, r.body)
		}
	}
	r := f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"https://hooks.example.com/x","secret":"mine"}`))
	if r.status != 400 || r.json(t)["field"] != "/secret" {
		t.Errorf("unknown field: %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/v1/webhook-endpoints", "", []byte(`{"url":"https://hooks.example.com/x"}`)); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}
}

// TestEventsBackfillAndRedeliver pages through GET /v1/events and asks for
// a redelivery, which reaches the receiver with the same event id.
func TestEventsBackfillAndRedeliver(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	var ids []string
	for i := 1; i <= 5; i++ {
		ids = append(ids, "evt_"+f.settle(keyA, i)["id"].(string))
		f.settle(keyB, 100+i)
	}
	var seen []string
	path := "/v1/events?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		r := f.do("GET", path, keyA, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var page webhooks.EventList
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Data {
			var rec struct{ ID, Account string }
			if err := json.Unmarshal(e.Data, &rec); err != nil || "evt_"+rec.ID != e.ID || rec.Account != "acct_a" {
				t.Errorf("event %s carries record %+v", e.ID, rec)
			}
			seen = append(seen, e.ID)
		}
		path = ""
		if link := r.header.Get("Link"); link != "" {
			path = strings.TrimSuffix(strings.TrimPrefix(strings.Split(link, ";")[0], "<"), ">")
		}
		if (path != "") != page.HasMore {
			t.Fatalf("Link %q with hasMore %v", link(r), page.HasMore)
		}
	}
	if !slices.Equal(seen, ids) {
		t.Fatalf("backfill %v, want %v", seen, ids)
	}
	for _, q := range []string{"after=-1", "after=x", "limit=0", "limit=201", "limit=-3"} {
		if r := f.do("GET", "/v1/events?"+q, keyA, nil); r.status != 400 {
			t.Errorf("%s: %d", q, r.status)
		}
	}
	if r := f.do("GET", "/v1/events", "", nil); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}

	// Redelivery to an endpoint created after the events.
	if r := f.do("POST", "/v1/events/"+ids[1]+"/redeliver", keyA, nil); r.status != 409 {
		t.Errorf("redeliver without an endpoint: %d %s", r.status, r.body)
	}
	rc := newReceiver(t, f.clock, nil)
	ep := f.createEndpoint(keyA, rc.URL)
	rc.setSecrets(ep["secret"].(string))
	r := f.do("POST", "/v1/events/"+ids[1]+"/redeliver", keyA, nil)
	if r.status != 202 {
		t.Fatalf("redeliver: %d %s", r.status, r.body)
	}
	f.eventually("the redelivery", func() bool { return rc.delivered()[ids[1]] == 1 })
	if r := f.do("POST", "/v1/events/"+ids[1]+"/redeliver?endpoint="+ep["id"].(string), keyA, nil); r.status != 202 {
		t.Fatalf("redeliver to one endpoint: %d %s", r.status, r.body)
	}
	f.eventually("the second redelivery", func() bool { return rc.delivered()[ids[1]] == 2 })
	checkVerified(t, rc.requests())
	if got := rc.requests(); len(got) != 2 || got[0].eventID != got[1].eventID || got[1].attempt != 2 {
		t.Errorf("redeliveries %v", got)
	}
	if r := f.do("POST", "/v1/events/"+ids[1]+"/redeliver", keyB, nil); r.status != 404 {
		t.Errorf("another account's redeliver: %d", r.status)
	}
	if r := f.do("POST", "/v1/events/"+ids[1]+"/redeliver?endpoint=we_nope", keyA, nil); r.status != 404 {
		t.Errorf("unknown endpoint: %d", r.status)
	}
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+ep["id"].(string), keyB, nil); r.status != 404 {
		t.Errorf("another account's delete: %d", r.status)
	}
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+ep["id"].(string), keyA, nil); r.status != 204 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/v1/webhook-endpoints/"+ep["id"].(string), keyA, nil); r.status != 404 {
		t.Errorf("deleted endpoint: %d", r.status)
	}
}

func link(r response) string { return r.header.Get("Link") }

// TestRedeliverQuery: the query of a redelivery is read as strictly as any
// other: a misspelt or empty endpoint filter is a 400 naming it, never a
// redelivery to every endpoint of the account.
func TestRedeliverQuery(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	evt := "evt_" + f.settle(keyA, 1)["id"].(string)
	one := f.createEndpoint(keyA, newReceiver(t, f.clock, nil).URL)["id"].(string)
	f.createEndpoint(keyA, newReceiver(t, f.clock, nil).URL)
	for _, tc := range []struct{ query, field string }{
		{"?endpont=" + one, "endpont"}, // misspelt
		{"?endpointId=" + one, "endpointId"},
		{"?endpoint=", "endpoint"}, // a template whose id was empty
	} {
		r := f.do("POST", "/v1/events/"+evt+"/redeliver"+tc.query, keyA, nil)
		if p := problemCode(t, r, 400, "BAD_REQUEST"); p["field"] != tc.field {
			t.Errorf("%s: field %v, want %s", tc.query, p["field"], tc.field)
		}
	}
	r := f.do("POST", "/v1/events/"+evt+"/redeliver?endpoint="+one, keyA, nil)
	var got struct{ Deliveries []webhooks.Delivery }
	if err := json.Unmarshal(r.body, &got); r.status != 202 || err != nil || len(got.Deliveries) != 1 || got.Deliveries[0].EndpointID != one {
		t.Fatalf("redeliver to one endpoint: %d %s", r.status, r.body)
	}
}
