package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestEnableSendsNoEventOfTheDisabledTime: EnableEndpoint documents that
// "events recorded while it was disabled are not sent" (Events and
// Redeliver fetch them). The dispatcher passes such events in memory
// without storing its cursor; a review found that when that memory is lost
// (a crash, or another replica of a shared log whose cursor is behind) and
// the endpoint is enabled before the dispatcher looks again, the events of
// the disabled time were fanned out and sent after all. After enabling,
// the endpoint receives the events recorded from then on, whatever a
// dispatcher remembers, and its firstSequence says so.
func TestEnableSendsNoEventOfTheDisabledTime(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.sender.setRespond(func(context.Context, *webhooks.Message, int) (webhooks.Response, error) {
		return webhooks.Response{Status: 410}, nil
	})
	ep := env.endpoint("acct_0", "https://hooks.example.com/gone")
	env.settle("acct_0", 1, "DE")
	env.eventually("disabled", func() bool {
		got, _ := env.svc.Endpoint(ctx, "acct_0", ep.ID)
		return got.Status == webhooks.EndpointDisabled
	})
	during := env.settle("acct_0", 2, "DE") // for nobody: the endpoint is disabled
	seq := during.Record.Ledger.Index
	waitFor(t, "the cursor past the disabled time's event", func() bool { return webhooks.FanOutCursor(env.svc) > seq })
	webhooks.CrashOnStop(env.svc)
	env.close()

	// Enabled before a dispatcher looks again (a maintenance open here;
	// the API of another replica likewise).
	env.opts = webhooks.Options{NoDispatcher: true}
	env.open()
	if c := storedCursor(t, env.svc); c > seq {
		t.Fatalf("stored cursor %d: the crash kept the in-memory part", c)
	}
	got, err := env.svc.EnableEndpoint(ctx, "acct_0", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.FirstSequence <= seq {
		t.Errorf("enabled endpoint's firstSequence %d, want past the disabled time's event %d", got.FirstSequence, seq)
	}
	env.close()
	env.opts = webhooks.Options{}
	env.sender.setRespond(nil)
	env.open()
	after := env.settle("acct_0", 3, "DE")
	env.eventually("the delivery after enabling", func() bool { return env.sender.count() >= 2 })
	time.Sleep(100 * time.Millisecond)
	msgs := env.sender.messages()
	for _, m := range msgs[1:] {
		if m.EventID != "evt_"+after.Record.ID {
			t.Errorf("after enabling the endpoint got %s (the disabled time's event is %s), want only %s", m.EventID, "evt_"+during.Record.ID, "evt_"+after.Record.ID)
		}
	}
}
