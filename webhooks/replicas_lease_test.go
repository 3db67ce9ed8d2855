package webhooks_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// manualClock is an engine clock the test moves by hand (the dispatchers
// wait in real time: at most a second on a shared log).
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// replicaServices opens n engines on one PostgreSQL schema, each with its
// own data directory holding the first one's keys (the engine's and the
// webhook sealing key), and a dispatching webhook service on each, with
// the sender senders[i]. Without a PostgreSQL server the test skips (fails
// under FISCAL402_STRICT=1).
func replicaServices(t *testing.T, clock func() time.Time, timeout time.Duration, senders ...webhooks.Sender) ([]*fiscal.Engine, []*webhooks.Service) {
	t.Helper()
	store := pgtest.Schema(t)
	dirs := make([]string, len(senders))
	engines := make([]*fiscal.Engine, len(senders))
	svcs := make([]*webhooks.Service, len(senders))
	for i, s := range senders {
		dirs[i] = t.TempDir()
		if i > 0 {
			fiscaltest.CopyKeys(t, filepath.Join(dirs[0], "keys"), filepath.Join(dirs[i], "keys"))
		}
		e, err := fiscal.New(fiscal.Config{
			Dir: dirs[i], Store: store, Accounts: fiscaltest.Accounts(irishSeller, irishSeller), Clock: clock,
			Logger: testLogger(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		svc, err := webhooks.New(e, webhooks.Options{Sender: s, Timeout: timeout, Logger: testLogger()})
		if err != nil {
			t.Fatal(err)
		}
		engines[i], svcs[i] = e, svc
	}
	return engines, svcs
}

// sharedReceiver is one receiver that both replicas' senders reach: it
// notes every attempt, which replica made it, and any attempt that begins
// while another of the same event is still in flight. The first attempt
// hangs until released.
type sharedReceiver struct {
	mu       sync.Mutex
	inflight map[string]int
	attempts []string // "replica event"
	overlaps []string
	first    chan struct{} // closed when the first attempt has begun
	release  chan struct{}
}

type replicaSender struct {
	r  *sharedReceiver
	id string
}

func (s replicaSender) Send(ctx context.Context, m *webhooks.Message) (webhooks.Response, error) {
	r := s.r
	r.mu.Lock()
	if r.inflight[m.EventID] > 0 {
		r.overlaps = append(r.overlaps, s.id+" "+m.EventID)
	}
	r.inflight[m.EventID]++
	r.attempts = append(r.attempts, s.id+" "+m.EventID)
	n := len(r.attempts)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight[m.EventID]--
		r.mu.Unlock()
	}()
	if n == 1 {
		close(r.first)
		select {
		case <-r.release:
		case <-ctx.Done():
			return webhooks.Response{}, ctx.Err()
		}
	}
	return webhooks.Response{Status: 204}, nil
}

// TestReplicasNoOverlappingAttempts: two servers on one PostgreSQL schema
// deliver one outbox. An attempt one replica has claimed must not be
// claimed by the other while it may still be in flight: the claim's lease
// has to outlast the attempt (its timeout) with room for what lies around
// it: the attempt starts after the claim's clock reading (reading the
// event and checkpoint, signing), its outcome is written after it (in a
// batch, a round trip to the database later), and the other replica reads
// its own clock, which may run a few seconds ahead. A review found the
// lease ending exactly when the attempt's timeout did: a receiver that
// answers near the timeout, or a replica whose clock is a little ahead,
// got the same event from the second replica while the first attempt was
// still open (the examples/server replicas test asserts "never one event
// twice at the same time"; README "Webhooks": at least once, deduplicate
// on the id, which is no licence for concurrent copies).
func TestReplicasNoOverlappingAttempts(t *testing.T) {
	clock := &manualClock{now: webhookTestStart}
	rcv := &sharedReceiver{inflight: map[string]int{}, first: make(chan struct{}), release: make(chan struct{})}
	const timeout = 30 * time.Second // real time: the hanging attempt is not cut short during the test
	engines, svcs := replicaServices(t, clock.Now, timeout, replicaSender{rcv, "A"}, replicaSender{rcv, "B"})
	if _, err := svcs[0].CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://hooks.example.com/r"}); err != nil {
		t.Fatal(err)
	}
	books, err := engines[1].Books("acct_0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rcv.first:
	case <-time.After(20 * time.Second):
		t.Fatal("no attempt")
	}
	// The attempt is in flight. The clocks reach its timeout and a few
	// seconds more (a late start, a clock ahead): no replica may begin
	// another attempt of the event yet. The dispatchers look at a shared
	// log at least once a second.
	clock.Advance(timeout + 5*time.Second)
	time.Sleep(3 * time.Second)
	rcv.mu.Lock()
	attempts, overlaps := append([]string(nil), rcv.attempts...), append([]string(nil), rcv.overlaps...)
	rcv.mu.Unlock()
	close(rcv.release)
	if len(overlaps) > 0 || len(attempts) != 1 {
		t.Errorf("attempts %q while the first was in flight, overlapping: %q; want the one attempt", attempts, overlaps)
	}
}

// TestReplicasRedeliverDuringAnAttempt: a redelivery asked of one replica
// while another replica's attempt of the event is open waits for that
// attempt to end, as it does on one server (whose in-flight set holds it
// back), and is then made at once. A review found the other replica
// sending it at once, beside the open attempt (README, several replicas:
// "never by two replicas at the same time").
func TestReplicasRedeliverDuringAnAttempt(t *testing.T) {
	clock := &manualClock{now: webhookTestStart}
	rcv := &sharedReceiver{inflight: map[string]int{}, first: make(chan struct{}), release: make(chan struct{})}
	engines, svcs := replicaServices(t, clock.Now, 30*time.Second, replicaSender{rcv, "A"}, replicaSender{rcv, "B"})
	if _, err := svcs[0].CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://hooks.example.com/r"}); err != nil {
		t.Fatal(err)
	}
	books, err := engines[0].Books("acct_0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-rcv.first:
	case <-time.After(20 * time.Second):
		t.Fatal("no attempt")
	}
	rcv.mu.Lock()
	first := rcv.attempts[0]
	rcv.mu.Unlock()
	// Asked of both replicas, so that the one not sending is asked too.
	for _, svc := range svcs {
		if _, err := svc.Redeliver(ctx, "acct_0", "evt_"+res.Record.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(3 * time.Second) // the dispatchers look at a shared log at least once a second
	rcv.mu.Lock()
	overlaps := append([]string(nil), rcv.overlaps...)
	rcv.mu.Unlock()
	close(rcv.release)
	if len(overlaps) > 0 {
		t.Errorf("the redelivery was sent while %s was open: %q", first, overlaps)
	}
	// Once the open attempt has ended, the redelivery goes at once.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rcv.mu.Lock()
		n := len(rcv.attempts)
		rcv.mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the redelivery was never made after the open attempt ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
