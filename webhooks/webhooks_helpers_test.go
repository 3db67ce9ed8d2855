package webhooks_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// virtualClock is the engine clock of the webhook tests. After registers a
// waiter that fires when the test advances the clock past it, so a retry
// schedule of days runs in milliseconds without sleeping. The dispatcher is
// its only waiter, and each of its waits replaces the previous one (which
// its loop no longer listens to).
type virtualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
	ticks   *atomic.Int64 // shared with the fake sender: orders waits and sends
	waitAt  int64         // tick of the latest After
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newVirtualClock(start time.Time, ticks *atomic.Int64) *virtualClock {
	return &virtualClock{now: start, ticks: ticks}
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitAt = c.ticks.Add(1)
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = []clockWaiter{{c.now.Add(d), ch}}
	return ch
}

// Advance moves the clock forward and fires the waiters it passes.
func (c *virtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fire()
}

// AdvanceToNext moves the clock to the earliest waiter, if any is later
// than now, and fires it.
func (c *virtualClock) AdvanceToNext() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return
	}
	sort.Slice(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
	if c.waiters[0].at.After(c.now) {
		c.now = c.waiters[0].at
	}
	c.fire()
}

func (c *virtualClock) fire() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
		} else {
			w.ch <- c.now
		}
	}
	c.waiters = kept
}

// quietSince reports whether the dispatcher waits and has been waiting
// since after tick (its latest wait began after that), and the tick of that
// wait.
func (c *virtualClock) quietSince(tick int64) (bool, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waitAt > tick && len(c.waiters) > 0, c.waitAt
}

// eventually polls cond for at most 20 s of real time. Between polls it
// moves the virtual clock to the dispatcher's next wake-up, but only once
// the dispatcher has been quiet for a few polls (no attempt in flight,
// waiting since the last one ended, nothing changing), so that no attempt
// is made later than its schedule says.
func (env *webhookEnv) eventually(what string, cond func() bool) {
	env.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last [3]int64
	stable := 0
	for !cond() {
		if time.Now().After(deadline) {
			env.t.Fatalf("timed out waiting for %s", what)
		}
		active, done := env.sender.activity()
		quiet, waitAt := env.clock.quietSince(done)
		now := [3]int64{int64(active), done, waitAt}
		if quiet && active == 0 && now == last {
			stable++
		} else {
			stable = 0
		}
		last = now
		if stable >= 3 {
			env.clock.AdvanceToNext()
			stable = 0
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeSender records every attempt and answers with respond (nil: 200).
type fakeSender struct {
	mu      sync.Mutex
	msgs    []webhooks.Message
	respond func(ctx context.Context, m *webhooks.Message, n int) (webhooks.Response, error)
	ticks   *atomic.Int64
	active  int
	doneAt  int64 // tick when the latest attempt ended
}

func (s *fakeSender) Send(ctx context.Context, m *webhooks.Message) (webhooks.Response, error) {
	s.mu.Lock()
	s.msgs = append(s.msgs, *m)
	n := len(s.msgs)
	respond := s.respond
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.doneAt = s.ticks.Add(1)
		s.mu.Unlock()
	}()
	if respond == nil {
		return webhooks.Response{Status: 200}, nil
	}
	return respond(ctx, m, n)
}

func (s *fakeSender) activity() (active int, doneAt int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active, s.doneAt
}

func (s *fakeSender) messages() []webhooks.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]webhooks.Message(nil), s.msgs...)
}

func (s *fakeSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

func (s *fakeSender) setRespond(f func(ctx context.Context, m *webhooks.Message, n int) (webhooks.Response, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = f
}

// webhookEnv is an engine on a data directory with a virtual clock and a
// fake sender, which can be closed and reopened on the same directory.
type webhookEnv struct {
	t      testing.TB
	dir    string
	clock  *virtualClock
	sender *fakeSender
	opts   webhooks.Options
	engine *fiscal.Engine
	svc    *webhooks.Service
}

var webhookTestStart = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)

var irishSeller = fiscaltest.IrishSeller

// newWebhookEnv runs an engine with accounts acct_0 and acct_1 (the Irish
// demo seller) and the webhook service over it, on a virtual clock, with a
// fake sender unless opts has one.
func newWebhookEnv(t testing.TB, opts webhooks.Options) *webhookEnv {
	t.Helper()
	ticks := new(atomic.Int64)
	env := &webhookEnv{t: t, dir: t.TempDir(), clock: newVirtualClock(webhookTestStart, ticks), sender: &fakeSender{ticks: ticks}, opts: opts}
	env.open()
	t.Cleanup(env.close)
	return env
}

func (env *webhookEnv) open() {
	env.t.Helper()
	opts := env.opts
	if opts.Sender == nil {
		opts.Sender = env.sender
	}
	opts.After = env.clock.After
	env.engine, env.svc = openService(env.t, env.dir, env.clock.Now, &fiscaltest.Rand{}, opts)
}

// openService opens the engine of accounts acct_0 and acct_1 (the Irish
// demo seller) in dir, on clock and rand, and the webhook service over it.
func openService(t testing.TB, dir string, clock func() time.Time, rand io.Reader, opts webhooks.Options) (*fiscal.Engine, *webhooks.Service) {
	t.Helper()
	opts.Logger = testLogger()
	e, err := fiscal.New(fiscal.Config{
		Dir: dir, Accounts: fiscaltest.Accounts(irishSeller, irishSeller), Clock: clock, Rand: rand,
		Logger: testLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := webhooks.New(e, opts)
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return e, svc
}

func (env *webhookEnv) close() {
	if env.engine != nil {
		if err := env.engine.Close(); err != nil {
			env.t.Error(err)
		}
		env.engine = nil
	}
}

func (env *webhookEnv) reopen() {
	env.close()
	env.open()
}

// settle records settlement n for the account (PROCESSED when country is
// given, pending review otherwise).
func (env *webhookEnv) settle(account string, n int, country string) *fiscal.SettleResult {
	env.t.Helper()
	books, err := env.engine.Books(account)
	if err != nil {
		env.t.Fatal(err)
	}
	res, err := books.Settle(context.Background(), fiscaltest.Request(n, "11.90", country, "2026-04-10T14:30:00Z"), "")
	if err != nil {
		env.t.Fatal(err)
	}
	return res
}

func (env *webhookEnv) endpoint(account, url string) *webhooks.EndpointWithSecret {
	env.t.Helper()
	ep, err := env.svc.CreateEndpoint(context.Background(), account, webhooks.EndpointRequest{URL: url})
	if err != nil {
		env.t.Fatal(err)
	}
	return ep
}

func codeOf(err error) fiscal.Code { return fiscaltest.Code(err) }

func testLogger() *slog.Logger {
	if os.Getenv("WEBHOOK_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
