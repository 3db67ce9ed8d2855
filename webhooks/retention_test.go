package webhooks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestStatsAndPrune: Stats reports the backlog, the failed deliveries and
// the endpoints' health; Prune removes the finished delivery states older
// than the cutoff and nothing else: pending deliveries, endpoints, events
// and every ledger entry stay, and a pruned event can still be redelivered.
func TestStatsAndPrune(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.sender.setRespond(func(_ context.Context, m *webhooks.Message, _ int) (webhooks.Response, error) {
		switch {
		case strings.Contains(m.URL, "/down"):
			return webhooks.Response{}, errors.New("connection refused")
		case strings.Contains(m.URL, "/gone"):
			return webhooks.Response{Status: 410}, nil
		}
		return webhooks.Response{Status: 200}, nil
	})
	start := env.clock.Now()
	ok := env.endpoint("acct_0", "https://hooks.example.com/ok")
	down := env.endpoint("acct_0", "https://hooks.example.com/down")
	gone := env.endpoint("acct_1", "https://hooks.example.com/gone")
	var ids []string
	for n := 1; n <= 3; n++ {
		ids = append(ids, "evt_"+env.settle("acct_0", n, "DE").Record.ID)
	}
	env.settle("acct_1", 4, "DE")
	// Every delivery to ok is delivered, the one to gone failed, and each
	// delivery to down has had its first attempt and waits for the next.
	env.eventually("first attempts", func() bool {
		st, err := env.svc.Stats()
		return err == nil && st.Failed == 1 && st.EndpointsDisabled == 1 && st.EndpointsFailing == 1 && st.EndpointsOK == 1 &&
			st.Pending == 3 && env.sender.count() >= 7 // 7 first attempts; down may have had a retry too
	})
	st, err := env.svc.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// The backlog is down's retries, due after the first attempts (the
	// test clock may already have been advanced to the first of them).
	if !st.OldestDue.After(start) {
		t.Errorf("oldest due %s, want after the first attempts at %s (the retry of down)", st.OldestDue, start)
	}
	sizeBefore := env.engine.Ledger().Size()

	// A cutoff before everything removes nothing.
	if n, err := env.svc.Prune(ctx, webhookTestStart.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("prune with an old cutoff: %d, %v", n, err)
	}
	// A cutoff after every finished delivery removes the three delivered
	// and the failed one, not the three pending.
	env.clock.Advance(time.Minute) // down is retried meanwhile and stays pending
	n, err := env.svc.Prune(ctx, env.clock.Now())
	if err != nil || n != 4 {
		t.Fatalf("prune: removed %d, %v; want 4 (3 delivered, 1 failed)", n, err)
	}
	st, err = env.svc.Stats()
	if err != nil || st.Failed != 0 || st.Pending != 3 {
		t.Fatalf("after prune: %+v %v", st, err)
	}
	for _, id := range ids {
		d, err := env.svc.Event(ctx, "acct_0", id)
		if err != nil {
			t.Fatalf("event %s after prune: %v", id, err)
		}
		if len(d.Deliveries) != 1 || d.Deliveries[0].EndpointID != down.ID || d.Deliveries[0].Status != webhooks.DeliveryPending {
			t.Errorf("event %s deliveries after prune: %+v, want only the pending one to %s", id, d.Deliveries, down.ID)
		}
	}
	if got := env.engine.Ledger().Size(); got != sizeBefore {
		t.Errorf("ledger size %d after prune, was %d", got, sizeBefore)
	}
	list, err := env.svc.Events(ctx, "acct_0", "", 0)
	if err != nil || len(list.Data) != 3 {
		t.Fatalf("events after prune: %v, %v", list, err)
	}
	if eps, err := env.svc.Endpoints(ctx, "acct_0"); err != nil || len(eps) != 2 {
		t.Fatalf("endpoints after prune: %d, %v", len(eps), err)
	}
	if _, err := env.svc.Endpoint(ctx, "acct_1", gone.ID); err != nil {
		t.Fatal(err)
	}
	// A pruned event can be delivered again: a new delivery state.
	before := env.sender.count()
	if _, err := env.svc.Redeliver(ctx, "acct_0", ids[0], ok.ID); err != nil {
		t.Fatal(err)
	}
	env.eventually("redelivery", func() bool {
		d, _ := env.svc.Event(ctx, "acct_0", ids[0])
		for _, dl := range d.Deliveries {
			if dl.EndpointID == ok.ID && dl.Status == webhooks.DeliveryDelivered {
				return true
			}
		}
		return false
	})
	if env.sender.count() <= before {
		t.Error("no attempt for the redelivery")
	}
	// The ledger file is intact.
	v, err := note.NewVerifier(env.engine.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	env.close()
	if err := ledger.Check(env.dir+"/ledger.db", v); err != nil {
		t.Fatalf("ledger.Check after prune: %v", err)
	}
}
