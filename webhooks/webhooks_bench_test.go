package webhooks_test

import (
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// BenchmarkWebhookDispatch measures the dispatcher alone: b.N events are
// recorded first with no dispatcher running, then one is started and timed
// until every event is delivered to the endpoint (fan-out, claim, payload,
// signature, send to an in-memory receiver, record: per event, about one
// bbolt commit for the claims of up to 8 and one per outcome).
func BenchmarkWebhookDispatch(b *testing.B) {
	env := newWebhookEnv(b, webhooks.Options{NoDispatcher: true})
	env.endpoint("acct_0", "https://hooks.example.com/bench")
	for i := range b.N {
		env.settle("acct_0", i+1, "DE")
	}
	env.close()
	env.opts.NoDispatcher = false
	b.ReportAllocs()
	b.ResetTimer()
	env.open()
	deadline := time.Now().Add(5 * time.Minute)
	for env.sender.count() < b.N {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered", env.sender.count(), b.N)
		}
		time.Sleep(50 * time.Microsecond)
	}
	b.StopTimer()
}

// BenchmarkEventsPage reads one page of 50 events with their records, the
// backfill path of GET /v1/events.
func BenchmarkEventsPage(b *testing.B) {
	env := newWebhookEnv(b, webhooks.Options{NoDispatcher: true})
	for i := range 200 {
		env.settle("acct_0", i+1, "DE")
	}
	b.ReportAllocs()
	for b.Loop() {
		page, err := env.svc.Events(ctx, "acct_0", "49", 50)
		if err != nil || len(page.Data) != 50 {
			b.Fatal(len(page.Data), err)
		}
	}
}
