package webhooks_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestReplicasAbandonWhatNoReplicaCanSign: on a shared log an operator
// took the accounts-file endpoint X out of every replica's file without
// raising the "generation". No replica removes X (a file of the applied
// generation removes nothing) and none has its secret, so none sends its
// deliveries. A review found them pending for ever, with never an attempt
// nor an end, and every later event adding one more: a backlog that no
// operator action short of a new generation would ever drain, and that no
// status told apart from a slow receiver. A delivery that no replica could
// send within the retry horizon (72 h, the window a failing receiver gets)
// is given up like one whose attempts failed that long: failed, never
// attempted, with the reason, so that it is counted in the failed
// deliveries and can be redelivered once a replica lists the endpoint.
func TestReplicasAbandonWhatNoReplicaCanSign(t *testing.T) {
	store := pgtest.Schema(t)
	clock := &manualClock{now: webhookTestStart}
	sellers := fiscaltest.Accounts(irishSeller)
	dirA, dirB := t.TempDir(), t.TempDir()
	withX := map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: hookW, Secrets: []string{secretW}}, {URL: hookX, Secrets: []string{secretX}}},
	}
	a := startConfigReplica(t, store, dirA, "", sellers, clock.Now, webhooks.Options{Sender: &fakeSender{ticks: new(atomic.Int64)}, Configured: withX, ConfigGeneration: 1})
	a.engine.Close()
	// Every replica now runs the file without X, of the same generation.
	send := &fakeSender{ticks: new(atomic.Int64)}
	b := startConfigReplica(t, store, dirB, dirA, sellers, clock.Now, webhooks.Options{Sender: send, Configured: oldFile, ConfigGeneration: 1})
	if got, want := endpointURLs(t, b.svc, "acct_0"), []string{hookW, hookX}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("acct_0's endpoints: %q, want %q (the same generation removes nothing)", got, want)
	}
	books, err := b.engine.Books("acct_0")
	if err != nil {
		t.Fatal(err)
	}
	res, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	eventID := "evt_" + res.Record.ID
	eps, err := b.svc.Endpoints(ctx, "acct_0")
	if err != nil {
		t.Fatal(err)
	}
	url := map[string]string{}
	for _, ep := range eps {
		url[ep.ID] = ep.URL
	}
	delivery := func(u string) webhooks.Delivery {
		t.Helper()
		d, err := b.svc.Event(ctx, "acct_0", eventID)
		if err != nil {
			t.Fatal(err)
		}
		for _, dl := range d.Deliveries {
			if url[dl.EndpointID] == u {
				return dl
			}
		}
		return webhooks.Delivery{} // not fanned out yet
	}
	waitFor(t, "the delivery to W", func() bool { return delivery(hookW).Status == webhooks.DeliveryDelivered })

	// Within the horizon the delivery to X waits for a replica that lists X.
	clock.Advance(webhooks.DefaultHorizon - time.Minute)
	time.Sleep(2500 * time.Millisecond) // the replica looks at the shared log every second
	if dl := delivery(hookX); dl.Status != webhooks.DeliveryPending || dl.Attempts != 0 {
		t.Fatalf("the delivery to X within the horizon: %+v, want pending, never attempted", dl)
	}
	// Past it, it is given up, visibly.
	clock.Advance(2 * time.Minute)
	waitFor(t, "the delivery to X given up", func() bool { return delivery(hookX).Status != webhooks.DeliveryPending })
	dl := delivery(hookX)
	if dl.Status != webhooks.DeliveryFailed || dl.Attempts != 0 || !strings.Contains(dl.Reason, "accounts file") {
		t.Errorf("the delivery to X past the horizon: %+v, want failed, never attempted, with the reason", dl)
	}
	for _, m := range send.messages() {
		if m.URL == hookX {
			t.Errorf("sent to X, whose secret no replica has: %+v", m)
		}
	}
	st, err := b.svc.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 0 || st.Failed != 1 {
		t.Errorf("stats: %+v, want nothing pending and the one delivery failed", st)
	}
	// Retention counts from when it was given up, not from when it was
	// first due: a retention shorter than the horizon keeps it visible for
	// its window as well.
	if _, err := b.svc.Prune(ctx, clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if dl := delivery(hookX); dl.Status != webhooks.DeliveryFailed {
		t.Errorf("the delivery to X after pruning what finished over an hour ago: %+v, want it kept (given up just now)", dl)
	}
}
