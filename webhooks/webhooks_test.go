package webhooks_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/webhooks"
)

var ctx = context.Background()

// TestWebhookDelivery follows two settlements of an account with an
// endpoint through the outbox to the sender and checks every header and
// body field against the ledger, independently of the dispatcher's code.
func TestWebhookDelivery(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	ep := env.endpoint("acct_0", "https://hooks.example.com/fiscal402")
	if !strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Secret) != 6+43 || ep.FirstSequence != 0 || ep.Status != "enabled" {
		t.Fatalf("created endpoint %+v", ep)
	}
	processed := env.settle("acct_0", 1, "DE")
	pending := env.settle("acct_0", 2, "")
	env.settle("acct_1", 3, "FR") // another account's event: not for this endpoint

	env.eventually("two deliveries", func() bool { return env.sender.count() >= 2 })
	time.Sleep(20 * time.Millisecond)
	msgs := env.sender.messages()
	if len(msgs) != 2 {
		t.Fatalf("%d deliveries, want 2", len(msgs))
	}
	verifier, err := note.NewVerifier(env.engine.LogVerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		// Verified as received: the test's clock runs ahead in jumps.
		if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{ep.Secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); err != nil {
			t.Errorf("signature: %v", err)
		}
		var p webhooks.EventPayload
		dec := json.NewDecoder(bytes.NewReader(m.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		res, wantType := pending, fiscal.EventSettlementPendingReview
		if bytes.Contains(p.Data, []byte(processed.Record.ID)) {
			res, wantType = processed, fiscal.EventSettlementProcessed
		}
		if p.ID != "evt_"+res.Record.ID || m.EventID != p.ID || p.Type != wantType || m.EventType != wantType {
			t.Errorf("event %s %s (header %s %s), want evt_%s %s", p.ID, p.Type, m.EventID, m.EventType, res.Record.ID, wantType)
		}
		if p.Sequence != res.Record.Ledger.Index || p.Created != res.Record.CreatedAt {
			t.Errorf("sequence %d created %s, record at %d %s", p.Sequence, p.Created, res.Record.Ledger.Index, res.Record.CreatedAt)
		}
		if !bytes.Equal(p.Data, res.JSON) {
			t.Errorf("data is not the record as stored:\n%s\n%s", p.Data, res.JSON)
		}
		cp, err := ledger.ParseCheckpoint([]byte(p.Checkpoint), verifier)
		if err != nil || cp.Size <= p.Sequence {
			t.Errorf("checkpoint %v (size %d) does not cover sequence %d", err, cp.Size, p.Sequence)
		}
		if m.Attempt != 1 || !strings.HasPrefix(m.DeliveryID, "dlv_") || m.URL != "https://hooks.example.com/fiscal402" {
			t.Errorf("attempt %d delivery %q url %q", m.Attempt, m.DeliveryID, m.URL)
		}
		if seen[m.DeliveryID] {
			t.Errorf("delivery id %s used twice", m.DeliveryID)
		}
		seen[m.DeliveryID] = true
	}

	d, err := env.svc.Event(ctx, "acct_0", "evt_"+processed.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	env.eventually("delivered state", func() bool {
		d, _ = env.svc.Event(ctx, "acct_0", "evt_"+processed.Record.ID)
		return len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryDelivered
	})
	if got := d.Deliveries[0]; got.EndpointID != ep.ID || got.Attempts != 1 || got.LastAttempt.Status != 200 || got.LastAttempt.Outcome != "delivered" {
		t.Errorf("delivery %+v %+v", got, got.LastAttempt)
	}
	if _, err := env.svc.Event(ctx, "acct_1", "evt_"+processed.Record.ID); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("another account's event: %v", err)
	}
}

// TestWebhookOnlyLaterEvents: an endpoint created after events exist
// receives only the events created after it; a redelivery reaches it with
// an older one.
func TestWebhookOnlyLaterEvents(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	old := env.settle("acct_0", 1, "DE")
	ep := env.endpoint("acct_0", "https://hooks.example.com/late")
	if ep.FirstSequence != 1 {
		t.Fatalf("firstSequence %d, want 1", ep.FirstSequence)
	}
	later := env.settle("acct_0", 2, "DE")
	env.eventually("the later event", func() bool { return env.sender.count() >= 1 })
	time.Sleep(20 * time.Millisecond)
	if msgs := env.sender.messages(); len(msgs) != 1 || msgs[0].EventID != "evt_"+later.Record.ID {
		t.Fatalf("deliveries %v, want only the later event", eventIDs(msgs))
	}
	got, err := env.svc.Redeliver(ctx, "acct_0", "evt_"+old.Record.ID, "")
	if err != nil || len(got) != 1 || got[0].EndpointID != ep.ID || got[0].Status != webhooks.DeliveryPending {
		t.Fatalf("redeliver: %+v %v", got, err)
	}
	env.eventually("the redelivered event", func() bool { return env.sender.count() >= 2 })
	if msgs := env.sender.messages(); msgs[1].EventID != "evt_"+old.Record.ID {
		t.Fatalf("redelivered %s", msgs[1].EventID)
	}
}

func eventIDs(msgs []webhooks.Message) []string {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, fmt.Sprintf("%s#%d", m.EventID, m.Attempt))
	}
	return ids
}

// TestWebhookRetriesUntilDelivered: a receiver that fails three times (503
// with Retry-After: 600) and then accepts gets four attempts of the same
// event, numbered 1 to 4, each re-signed with a fresh timestamp, at least
// Retry-After apart.
func TestWebhookRetriesUntilDelivered(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.sender.setRespond(func(_ context.Context, m *webhooks.Message, n int) (webhooks.Response, error) {
		if n <= 3 {
			return webhooks.Response{Status: 503, RetryAfter: 600 * time.Second}, nil
		}
		return webhooks.Response{Status: 204}, nil
	})
	ep := env.endpoint("acct_0", "https://hooks.example.com/flaky")
	res := env.settle("acct_0", 1, "DE")
	id := "evt_" + res.Record.ID
	env.eventually("delivered", func() bool {
		d, err := env.svc.Event(ctx, "acct_0", id)
		return err == nil && len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryDelivered
	})
	msgs := env.sender.messages()
	if len(msgs) != 4 {
		t.Fatalf("%d attempts, want 4: %v", len(msgs), eventIDs(msgs))
	}
	for i, m := range msgs {
		if m.EventID != id || m.Attempt != i+1 {
			t.Errorf("attempt %d: %s #%d", i+1, m.EventID, m.Attempt)
		}
		if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{ep.Secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
		if i > 0 {
			if gap := time.Duration(m.Timestamp-msgs[i-1].Timestamp) * time.Second; gap < 600*time.Second {
				t.Errorf("attempt %d came %s after the previous, before Retry-After 600s", i+1, gap)
			}
			if m.DeliveryID == msgs[i-1].DeliveryID {
				t.Errorf("attempt %d reuses delivery id %s", i+1, m.DeliveryID)
			}
		}
	}
	d, _ := env.svc.Event(ctx, "acct_0", id)
	if got := d.Deliveries[0]; got.Attempts != 4 || got.DeliveredAt == "" || got.LastAttempt.Status != 204 {
		t.Errorf("delivery %+v", got)
	}
	got, _ := env.svc.Endpoint(ctx, "acct_0", ep.ID)
	if got.LastAttempt == nil || got.LastAttempt.Outcome != "delivered" || got.LastAttempt.Attempt != 4 {
		t.Errorf("endpoint lastAttempt %+v", got.LastAttempt)
	}
}

// TestWebhookRetriesExhausted: a receiver that always fails is tried on the
// backoff schedule for 72 hours, then the delivery is failed; every gap is
// at least 80 % of its nominal delay.
func TestWebhookRetriesExhausted(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.sender.setRespond(func(context.Context, *webhooks.Message, int) (webhooks.Response, error) {
		return webhooks.Response{}, errors.New("connection refused")
	})
	env.endpoint("acct_0", "https://hooks.example.com/down")
	res := env.settle("acct_0", 1, "DE")
	id := "evt_" + res.Record.ID
	var d *webhooks.EventDetail
	env.eventually("failed", func() bool {
		d, _ = env.svc.Event(ctx, "acct_0", id)
		return d != nil && len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryFailed
	})
	msgs := env.sender.messages()
	first := time.Unix(msgs[0].Timestamp, 0)
	var s webhooks.Schedule
	for i := 1; i < len(msgs)-1; i++ { // the last one is moved to the 72 h horizon
		gap := time.Duration(msgs[i].Timestamp-msgs[i-1].Timestamp) * time.Second
		if min := time.Duration(float64(s.Nominal(i))*0.8) - time.Second; gap < min {
			t.Errorf("attempt %d after %s, want at least %s", i+1, gap, min)
		}
	}
	if span := time.Unix(msgs[len(msgs)-1].Timestamp, 0).Sub(first); span > 72*time.Hour || span < 70*time.Hour {
		t.Errorf("attempts span %s, want up to 72h", span)
	}
	if n := len(msgs); n < 15 || n > 25 || d.Deliveries[0].Attempts != n {
		t.Errorf("%d attempts (state says %d)", n, d.Deliveries[0].Attempts)
	}
	if le := d.Deliveries[0].LastAttempt; le.Error == "" || le.Outcome != "failed" {
		t.Errorf("last attempt %+v", le)
	}
	// Nothing more is sent once failed.
	n := env.sender.count()
	env.clock.Advance(30 * 24 * time.Hour)
	time.Sleep(50 * time.Millisecond)
	if env.sender.count() != n {
		t.Error("attempts after the delivery failed")
	}
}

// TestWebhookGoneDisables: a 410 disables the endpoint; later events are
// not sent to it until it is enabled again.
func TestWebhookGoneDisables(t *testing.T) {
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
	got, _ := env.svc.Endpoint(ctx, "acct_0", ep.ID)
	if !strings.Contains(got.DisabledReason, "410") || got.DisabledAt == "" || got.LastAttempt.Outcome != "gone" {
		t.Errorf("disabled endpoint %+v", got)
	}
	res2 := env.settle("acct_0", 2, "DE")
	env.clock.Advance(time.Hour)
	time.Sleep(50 * time.Millisecond)
	env.clock.Advance(time.Hour)
	time.Sleep(50 * time.Millisecond)
	if n := env.sender.count(); n != 1 {
		t.Fatalf("%d attempts after the 410, want the one", n)
	}
	if _, err := env.svc.Redeliver(ctx, "acct_0", "evt_"+res2.Record.ID, ""); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("redeliver with no enabled endpoint: %v", err)
	}
	env.sender.setRespond(nil)
	if got, err := env.svc.EnableEndpoint(ctx, "acct_0", ep.ID); err != nil || got.Status != webhooks.EndpointEnabled {
		t.Fatalf("enable: %+v %v", got, err)
	}
	res3 := env.settle("acct_0", 3, "DE")
	env.eventually("delivery after enabling", func() bool { return env.sender.count() == 2 })
	if m := env.sender.messages()[1]; m.EventID != "evt_"+res3.Record.ID {
		t.Errorf("after enabling got %s, want the new event (events of the disabled time are not sent)", m.EventID)
	}
}

// TestWebhookResumesAfterClose: an attempt in flight when the engine closes
// is abandoned and made again, with the same event id, by the next engine
// on the same directory.
func TestWebhookResumesAfterClose(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	started := make(chan struct{}, 1)
	env.sender.setRespond(func(ctx context.Context, m *webhooks.Message, n int) (webhooks.Response, error) {
		started <- struct{}{}
		<-ctx.Done() // never answers; the engine's Close abandons the attempt
		return webhooks.Response{}, ctx.Err()
	})
	_ = env.endpoint("acct_0", "https://hooks.example.com/slow")
	res := env.settle("acct_0", 1, "DE")
	<-started
	env.close()

	env.sender.setRespond(nil)
	env.open()
	id := "evt_" + res.Record.ID
	env.eventually("delivered after reopening", func() bool {
		d, err := env.svc.Event(ctx, "acct_0", id)
		return err == nil && d.Deliveries[0].Status == webhooks.DeliveryDelivered
	})
	msgs := env.sender.messages()
	if len(msgs) != 2 || msgs[0].EventID != id || msgs[1].EventID != id || msgs[1].Attempt != 2 {
		t.Fatalf("attempts %v, want the same event twice", eventIDs(msgs))
	}
}

// TestWebhookSecretRotation: a new secret signs beside the old one until
// the old one is deleted; both signatures verify on their own; the secret
// survives a restart; it is kept sealed, never in plain text in the ledger.
func TestWebhookSecretRotation(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	ep := env.endpoint("acct_0", "https://hooks.example.com/rotate")
	oldSecret, oldID := ep.Secret, ep.SecretID
	rot, err := env.svc.AddSecret(ctx, "acct_0", ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rot.Secret == oldSecret || len(rot.Secrets) != 2 || rot.Secrets[0].ID != rot.SecretID || rot.Secrets[1].ID != oldID {
		t.Fatalf("after rotation: %+v", rot)
	}
	if !strings.HasSuffix(rot.Secrets[0].Hint, rot.Secret[len(rot.Secret)-4:]) || strings.Contains(fmt.Sprint(rot.Endpoint), rot.Secret) {
		t.Fatalf("hint %q", rot.Secrets[0].Hint)
	}
	env.settle("acct_0", 1, "DE")
	env.eventually("a delivery", func() bool { return env.sender.count() == 1 })
	m := env.sender.messages()[0]
	if n := strings.Count(m.Signature, "v1="); n != 2 {
		t.Fatalf("signature header %q: want two v1 entries", m.Signature)
	}
	ts := strconv.FormatInt(m.Timestamp, 10)
	for _, s := range []string{oldSecret, rot.Secret} {
		if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{s}, m.Signature, ts, m.Body, 0); err != nil {
			t.Errorf("rotation: %v", err)
		}
	}
	for _, part := range strings.Split(m.Signature, ",") { // each entry alone verifies with its own secret
		ok := 0
		for _, s := range []string{oldSecret, rot.Secret} {
			if webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{s}, part, ts, m.Body, 0) == nil {
				ok++
			}
		}
		if ok != 1 {
			t.Errorf("entry %s verifies with %d secrets", part, ok)
		}
	}

	raw, err := os.ReadFile(filepath.Join(env.dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{oldSecret, rot.Secret} {
		if bytes.Contains(raw, []byte(s)) || bytes.Contains(raw, []byte(s[6:])) {
			t.Fatalf("the ledger file holds a webhook secret in plain text")
		}
	}

	got, err := env.svc.DeleteSecret(ctx, "acct_0", ep.ID, oldID)
	if err != nil || len(got.Secrets) != 1 {
		t.Fatalf("delete old secret: %+v %v", got, err)
	}
	if _, err := env.svc.DeleteSecret(ctx, "acct_0", ep.ID, rot.SecretID); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("deleting the last secret: %v", err)
	}
	if _, err := env.svc.DeleteSecret(ctx, "acct_0", ep.ID, "whs_nope"); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("deleting an unknown secret: %v", err)
	}
	env.reopen()
	env.settle("acct_0", 2, "DE")
	env.eventually("a delivery after reopening", func() bool { return env.sender.count() == 2 })
	m = env.sender.messages()[1]
	if strings.Count(m.Signature, "v1=") != 1 {
		t.Fatalf("after the rotation ended: %q", m.Signature)
	}
	if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{rot.Secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); err != nil {
		t.Errorf("new secret after reopening: %v", err)
	}
	if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{oldSecret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); !errors.Is(err, webhooks.ErrSignatureMismatch) {
		t.Errorf("old secret after it was deleted: %v", err)
	}
	for range webhooks.MaxSecrets - 1 {
		if _, err := env.svc.AddSecret(ctx, "acct_0", ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.svc.AddSecret(ctx, "acct_0", ep.ID); codeOf(err) != webhooks.CodeLimitReached {
		t.Errorf("secret over the limit: %v", err)
	}
}

// TestWebhookSecretKeyReplaced: with another sealing key, sealed secrets do
// not open; the delivery fails with a message saying why (never a wrong
// signature).
func TestWebhookSecretKeyReplaced(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.endpoint("acct_0", "https://hooks.example.com/k")
	env.close()
	keyFile := filepath.Join(env.dir, "keys", "webhook-secrets.key")
	if err := os.WriteFile(keyFile, []byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.open()
	res := env.settle("acct_0", 1, "DE")
	env.eventually("a failed attempt", func() bool {
		d, _ := env.svc.Event(ctx, "acct_0", "evt_"+res.Record.ID)
		return len(d.Deliveries) == 1 && d.Deliveries[0].LastAttempt != nil
	})
	d, _ := env.svc.Event(ctx, "acct_0", "evt_"+res.Record.ID)
	if env.sender.count() != 0 || !strings.Contains(d.Deliveries[0].LastAttempt.Error, "webhook-secrets.key") {
		t.Fatalf("sent %d; last attempt %+v", env.sender.count(), d.Deliveries[0].LastAttempt)
	}
}

// TestWebhookEndpointsAPI covers validation, limits and account isolation.
func TestWebhookEndpointsAPI(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	bad := []struct{ url, field string }{
		{"", "/url"},
		{"http://hooks.example.com/x", "/url"},
		{"https://127.0.0.1/x", "/url"}, // loopback not allowed by this engine
		{"https://localhost/x", "/url"},
		{"https://10.1.2.3/x", "/url"},
		{"https://169.254.169.254/latest", "/url"},
		{"https://user:pass@hooks.example.com/", "/url"},
		{"ftp://hooks.example.com/", "/url"},
	}
	for _, b := range bad {
		_, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: b.url})
		var fe *fiscal.Error
		if !errors.As(err, &fe) || fe.Code != fiscal.CodeBadRequest || fe.Field != b.field {
			t.Errorf("%q: %v", b.url, err)
		}
	}
	if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://hooks.example.com/d", Description: "bell\a"}); codeOf(err) != fiscal.CodeBadRequest {
		t.Errorf("control character in description: %v", err)
	}
	a := env.endpoint("acct_0", "https://hooks.example.com/a")
	if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://hooks.example.com/a"}); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("same URL twice: %v", err)
	}
	// Another account sees nothing of acct_0's endpoints.
	if _, err := env.svc.Endpoint(ctx, "acct_1", a.ID); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("other account get: %v", err)
	}
	if err := env.svc.DeleteEndpoint(ctx, "acct_1", a.ID); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("other account delete: %v", err)
	}
	if _, err := env.svc.AddSecret(ctx, "acct_1", a.ID); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("other account rotate: %v", err)
	}
	if list, _ := env.svc.Endpoints(ctx, "acct_1"); len(list) != 0 {
		t.Errorf("other account lists %v", list)
	}
	for i := 1; i < webhooks.MaxEndpoints; i++ {
		env.endpoint("acct_0", fmt.Sprintf("https://hooks.example.com/%d", i))
		env.clock.Advance(time.Second)
	}
	if _, err := env.svc.CreateEndpoint(ctx, "acct_0", webhooks.EndpointRequest{URL: "https://hooks.example.com/over"}); codeOf(err) != webhooks.CodeLimitReached {
		t.Errorf("over the limit: %v", err)
	}
	list, err := env.svc.Endpoints(ctx, "acct_0")
	if err != nil || len(list) != webhooks.MaxEndpoints || list[0].ID != a.ID {
		t.Fatalf("list: %d %v", len(list), err)
	}
	for _, ep := range list {
		raw, _ := json.Marshal(ep)
		if bytes.Contains(raw, []byte(`"secret"`)) || bytes.Contains(raw, []byte(a.Secret)) {
			t.Fatalf("a listed endpoint shows a secret: %s", raw)
		}
	}
	if err := env.svc.DeleteEndpoint(ctx, "acct_0", a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := env.svc.Endpoint(ctx, "acct_0", a.ID); codeOf(err) != fiscal.CodeNotFound {
		t.Errorf("deleted endpoint: %v", err)
	}
}

// TestWebhookDeletedEndpointCancels: pending deliveries of a deleted
// endpoint are cancelled, not sent.
func TestWebhookDeletedEndpointCancels(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{})
	env.sender.setRespond(func(context.Context, *webhooks.Message, int) (webhooks.Response, error) {
		return webhooks.Response{Status: 500}, nil
	})
	ep := env.endpoint("acct_0", "https://hooks.example.com/bye")
	env.settle("acct_0", 1, "DE")
	env.eventually("the first attempt", func() bool { return env.sender.count() == 1 })
	if err := env.svc.DeleteEndpoint(ctx, "acct_0", ep.ID); err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(24 * time.Hour)
	time.Sleep(50 * time.Millisecond)
	env.clock.Advance(24 * time.Hour)
	time.Sleep(50 * time.Millisecond)
	if n := env.sender.count(); n != 1 {
		t.Fatalf("%d attempts, want none after the endpoint was deleted", n)
	}
}

// TestWebhookConfigEndpoints: endpoints of the accounts file deliver with
// the file's secrets, show as source "config", cannot be changed through
// the API, and keep their id across restarts.
func TestWebhookConfigEndpoints(t *testing.T) {
	secret := "whsec_operator_chosen_secret_0001"
	env := newWebhookEnv(t, webhooks.Options{Configured: map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: "https://erp.example.com/fiscal402", Secrets: []string{secret}, Description: "ERP"}},
	}})
	list, err := env.svc.Endpoints(ctx, "acct_0")
	if err != nil || len(list) != 1 {
		t.Fatal(list, err)
	}
	ep := list[0]
	if ep.Source != webhooks.EndpointSourceConfig || ep.URL != "https://erp.example.com/fiscal402" || ep.Description != "ERP" || len(ep.Secrets) != 1 || ep.Secrets[0].Hint != "whsec_…0001" {
		t.Fatalf("config endpoint %+v", ep)
	}
	res := env.settle("acct_0", 1, "DE")
	env.eventually("a delivery", func() bool { return env.sender.count() == 1 })
	m := env.sender.messages()[0]
	if err := webhooks.VerifyAt(time.Unix(m.Timestamp, 0), []string{secret}, m.Signature, strconv.FormatInt(m.Timestamp, 10), m.Body, 0); err != nil || m.EventID != "evt_"+res.Record.ID {
		t.Fatalf("%s: %v", m.EventID, err)
	}
	if err := env.svc.DeleteEndpoint(ctx, "acct_0", ep.ID); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("delete config endpoint: %v", err)
	}
	if _, err := env.svc.AddSecret(ctx, "acct_0", ep.ID); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("rotate config endpoint: %v", err)
	}
	env.reopen()
	again, _ := env.svc.Endpoints(ctx, "acct_0")
	if len(again) != 1 || again[0].ID != ep.ID || again[0].FirstSequence != ep.FirstSequence || again[0].LastAttempt == nil {
		t.Fatalf("after reopening: %+v", again)
	}

	// The accounts file is checked when it is loaded.
	for _, c := range []webhooks.EndpointConfig{
		{URL: "https://erp.example.com/x", Secrets: []string{"short"}},
		{URL: "https://erp.example.com/x"},
		{URL: "https://erp.example.com/x", Secrets: []string{secret, secret + "2", secret + "3", secret + "4"}},
		{URL: "http://erp.example.com/x", Secrets: []string{secret}},
		{URL: "https://erp.example.com/x", Secrets: []string{"whsec with spaces and long enough"}},
		{URL: "", Secrets: []string{secret}},
	} {
		if err := webhooks.ValidateConfigs([]webhooks.EndpointConfig{c}); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
	// A loopback endpoint in the file needs AllowLoopback.
	if _, err := webhooks.New(env.engine, webhooks.Options{NoDispatcher: true, Configured: map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: "http://127.0.0.1:9/x", Secrets: []string{secret}}},
	}}); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("loopback endpoint without AllowLoopback: %v", err)
	}
}

// TestEventsBackfill pages through one account's events while another
// account's entries interleave, and checks each page against the records.
func TestEventsBackfill(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{NoDispatcher: true})
	var mine []*fiscal.SettleResult
	for i := 1; i <= 7; i++ {
		country := "DE"
		if i%3 == 0 {
			country = "" // pending review
		}
		mine = append(mine, env.settle("acct_0", i, country))
		env.settle("acct_1", 100+i, "FR")
	}
	var got []webhooks.EventPayload
	cursor := ""
	pages := 0
	for {
		page, err := env.svc.Events(ctx, "acct_0", cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		got = append(got, page.Data...)
		if page.Checkpoint == "" || page.HasMore != (page.NextCursor != "") || (page.HasMore && page.NextCursor != strconv.FormatInt(page.Data[len(page.Data)-1].Sequence, 10)) {
			t.Fatalf("page %+v", page)
		}
		if !page.HasMore {
			break
		}
		cursor = page.NextCursor
	}
	if pages != 3 || len(got) != len(mine) {
		t.Fatalf("%d pages, %d events, want 3 and %d", pages, len(got), len(mine))
	}
	for i, p := range got {
		r := mine[i]
		want := fiscal.EventSettlementProcessed
		if r.Record.ReviewStatus == fiscal.StatusPendingReview {
			want = fiscal.EventSettlementPendingReview
		}
		if p.ID != "evt_"+r.Record.ID || p.Type != want || p.Sequence != r.Record.Ledger.Index || !bytes.Equal(p.Data, r.JSON) {
			t.Errorf("event %d: %s %s %d, want %s %s %d", i, p.ID, p.Type, p.Sequence, r.Record.ID, want, r.Record.Ledger.Index)
		}
	}
	// Past the end: an empty page that keeps the cursor.
	page, err := env.svc.Events(ctx, "acct_0", strconv.FormatInt(got[len(got)-1].Sequence, 10), 0)
	if err != nil || len(page.Data) != 0 || page.HasMore || page.NextCursor != "" {
		t.Fatalf("past the end: %+v %v", page, err)
	}
	// Another account's sequence as a cursor works: sequences are global.
	page, _ = env.svc.Events(ctx, "acct_0", strconv.FormatInt(mine[2].Record.Ledger.Index+1, 10), 0)
	if len(page.Data) != 4 || page.Data[0].Sequence != mine[3].Record.Ledger.Index {
		t.Fatalf("after acct_1's sequence: %d events", len(page.Data))
	}
	for _, c := range []struct {
		cursor string
		limit  int
	}{{"-1", 0}, {"x", 0}, {"01", 0}, {"0", -1}, {"0", webhooks.MaxEventsLimit + 1}} {
		if _, err := env.svc.Events(ctx, "acct_0", c.cursor, c.limit); codeOf(err) != fiscal.CodeBadRequest {
			t.Errorf("cursor %q limit %d: %v", c.cursor, c.limit, err)
		}
	}
	// Webhooks unused: no sealing key was made (nor drawn from Config.Rand).
	if _, err := os.Stat(filepath.Join(env.dir, "keys", "webhook-secrets.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("webhook-secrets.key exists without any API endpoint: %v", err)
	}
	if _, err := env.svc.Redeliver(ctx, "acct_0", "evt_"+mine[0].Record.ID, ""); codeOf(err) != webhooks.CodeEndpointConflict {
		t.Errorf("redeliver without endpoints: %v", err)
	}
	for _, id := range []string{"evt_nope", "x402-abc", "evt_", "evt_" + mine[0].Record.ID + "x"} {
		if _, err := env.svc.Event(ctx, "acct_0", id); codeOf(err) != fiscal.CodeNotFound {
			t.Errorf("event %q: %v", id, err)
		}
	}
}

// TestWebhookSlowEndpointDoesNotBlockOthers: a receiver that hangs gets at
// most four attempts in flight; another account's delivery goes through
// meanwhile.
func TestWebhookSlowEndpointDoesNotBlockOthers(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{Concurrency: 5})
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	env.sender.setRespond(func(ctx context.Context, m *webhooks.Message, _ int) (webhooks.Response, error) {
		if !strings.Contains(m.URL, "slow") {
			return webhooks.Response{Status: 200}, nil
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		select {
		case <-release:
			return webhooks.Response{Status: 200}, nil
		case <-ctx.Done():
			return webhooks.Response{}, ctx.Err()
		}
	})
	env.endpoint("acct_0", "https://slow.example.com/hook")
	env.endpoint("acct_1", "https://fast.example.com/hook")
	for i := 1; i <= 10; i++ {
		env.settle("acct_0", i, "DE")
	}
	fast := env.settle("acct_1", 100, "FR")
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := env.svc.Event(ctx, "acct_1", "evt_"+fast.Record.ID)
		if err == nil && len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryDelivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fast endpoint's delivery waited for the slow one")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var got int
	for wait := time.Now().Add(2 * time.Second); time.Now().Before(wait); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		got = most
		mu.Unlock()
		if got >= 4 {
			break
		}
	}
	time.Sleep(20 * time.Millisecond) // room for a fifth, which must not come
	mu.Lock()
	got = most
	mu.Unlock()
	if got != 4 {
		t.Errorf("%d attempts in flight to the slow endpoint at most, want 4", got)
	}
	close(release)
	env.eventually("the slow endpoint's backlog", func() bool {
		n := 0
		for _, m := range env.sender.messages() {
			if strings.Contains(m.URL, "slow") {
				n++
			}
		}
		return n >= 10
	})
}

// TestWebhookHangingAccountDoesNotDelayOthers (issue 19 item 13): one
// account's 8 endpoints that never answer, with 16 events (128
// deliveries), hold at most the account's share of the slots; another
// account's event is delivered at once, and all the while the first
// account keeps its share busy.
func TestWebhookHangingAccountDoesNotDelayOthers(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{}) // the default 32 slots
	var mu sync.Mutex
	hanging, most := 0, 0
	stop := make(chan struct{})
	defer close(stop)
	env.sender.setRespond(func(ctx context.Context, m *webhooks.Message, _ int) (webhooks.Response, error) {
		if !strings.Contains(m.URL, "hang-") {
			return webhooks.Response{Status: 200}, nil
		}
		mu.Lock()
		hanging++
		most = max(most, hanging)
		mu.Unlock()
		defer func() { mu.Lock(); hanging--; mu.Unlock() }()
		select { // never answers
		case <-ctx.Done():
			return webhooks.Response{}, ctx.Err()
		case <-stop:
			return webhooks.Response{}, context.Canceled
		}
	})
	for i := range 8 {
		env.endpoint("acct_0", fmt.Sprintf("https://hang-%d.example.com/hook", i))
	}
	env.endpoint("acct_1", "https://fast.example.com/hook")
	for i := 1; i <= 16; i++ {
		env.settle("acct_0", i, "DE")
	}
	// Wait until the hanging account holds all it may.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := hanging
		mu.Unlock()
		if n >= 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d attempts to the hanging endpoints in flight", n)
		}
	}
	start := time.Now()
	fast := env.settle("acct_1", 100, "FR")
	for {
		d, err := env.svc.Event(ctx, "acct_1", "evt_"+fast.Record.ID)
		if err == nil && len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryDelivered {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the other account's event waited more than 5 s behind the hanging receivers (an attempt times out after 10 s)")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("the other account's event was delivered %v after it was recorded", time.Since(start).Round(time.Millisecond))
	time.Sleep(50 * time.Millisecond) // room for a ninth, which must not come
	mu.Lock()
	got := most
	mu.Unlock()
	if got != 8 {
		t.Errorf("%d attempts in flight to one account's endpoints at most, want its share, 8 of 32", got)
	}
}

// TestWebhookFewSlotsStillShared: with only two slots, one account's
// hanging receiver holds one, never both.
func TestWebhookFewSlotsStillShared(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{Concurrency: 2})
	stop := make(chan struct{})
	defer close(stop)
	env.sender.setRespond(func(ctx context.Context, m *webhooks.Message, _ int) (webhooks.Response, error) {
		if !strings.Contains(m.URL, "hang") {
			return webhooks.Response{Status: 200}, nil
		}
		select {
		case <-ctx.Done():
			return webhooks.Response{}, ctx.Err()
		case <-stop:
			return webhooks.Response{}, context.Canceled
		}
	})
	env.endpoint("acct_0", "https://hang.example.com/hook")
	env.endpoint("acct_1", "https://fast.example.com/hook")
	for i := 1; i <= 6; i++ {
		env.settle("acct_0", i, "DE")
	}
	fast := env.settle("acct_1", 100, "FR")
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		d, err := env.svc.Event(ctx, "acct_1", "evt_"+fast.Record.ID)
		if err == nil && len(d.Deliveries) == 1 && d.Deliveries[0].Status == webhooks.DeliveryDelivered {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("with two slots, the hanging account held both")
		}
	}
}

// TestEventsListOnlyTheAccountsOwn: the outbox and its account index are
// not covered by the log. An entry posted in account 0's events index
// whose event names account 1's record is LEDGER_INTEGRITY for account 0's
// list and for the event itself, never account 1's record listed to
// account 0; account 1 still reads its own event.
func TestEventsListOnlyTheAccountsOwn(t *testing.T) {
	env := newWebhookEnv(t, webhooks.Options{NoDispatcher: true})
	env.settle("acct_0", 1, "DE")
	theirs := env.settle("acct_1", 2, "DE")
	if page, err := env.svc.Events(ctx, "acct_0", "", 0); err != nil || len(page.Data) != 1 {
		t.Fatalf("before: %v", err)
	}
	l := env.engine.Ledger()
	const forged = "x402-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	doc := []byte(`{"id":"` + forged + `","object":"settlement","account":"acct_0"}`)
	app, err := l.Append(ctx, ledger.Append{Entry: &ledger.Entry{ID: forged, Leaf: doc, Docs: map[string][]byte{fiscal.OutboxDocument: doc},
		Postings: []ledger.Posting{{Index: fiscal.OutboxAccountIndex, Key: []byte("acct_0\x00"), AppendIndex: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := json.Marshal(fiscal.Event{ID: "evt_" + forged, Type: fiscal.EventSettlementProcessed, Sequence: app.Index,
		Account: "acct_0", RecordID: theirs.Record.ID, EntryID: theirs.Record.ID})
	if err != nil {
		t.Fatal(err)
	}
	seq := binary.BigEndian.AppendUint64(nil, uint64(app.Index))
	if err := l.Update(func(tx ledger.Tx) error { return tx.Put(fiscal.OutboxEvents, seq, ev) }); err != nil {
		t.Fatal(err)
	}
	if _, err := env.svc.Events(ctx, "acct_0", "", 0); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
		t.Errorf("account 0's events: %v, want LEDGER_INTEGRITY", err)
	}
	if _, err := env.svc.Event(ctx, "acct_0", "evt_"+forged); fiscaltest.Code(err) != fiscal.CodeLedgerIntegrity {
		t.Errorf("the event: %v, want LEDGER_INTEGRITY", err)
	}
	if page, err := env.svc.Events(ctx, "acct_1", "", 0); err != nil || len(page.Data) != 1 || !bytes.Equal(page.Data[0].Data, theirs.JSON) {
		t.Errorf("account 1's own event: %v", err)
	}
}

// TestMaintenanceOpenKeepsConfigEndpoints: a tool that opens the data
// directory without dispatching (NoDispatcher, no accounts file) leaves the
// accounts file's endpoints as the service set them. A review found such an
// open deleting them all; the next start made them anew (another creation
// time and first sequence), which cancelled their pending deliveries and
// skipped the events recorded in between.
func TestMaintenanceOpenKeepsConfigEndpoints(t *testing.T) {
	secret := "whsec_operator_chosen_secret_0002"
	configured := webhooks.Options{Configured: map[string][]webhooks.EndpointConfig{
		"acct_0": {{URL: "https://erp.example.com/fiscal402", Secrets: []string{secret}}},
	}}
	env := newWebhookEnv(t, configured)
	before, err := env.svc.Endpoints(ctx, "acct_0")
	if err != nil || len(before) != 1 {
		t.Fatal(before, err)
	}
	env.settle("acct_0", 1, "DE")
	env.eventually("a delivery", func() bool { return env.sender.count() == 1 })
	env.opts = webhooks.Options{NoDispatcher: true}
	env.reopen()
	kept, err := env.svc.Endpoints(ctx, "acct_0")
	if err != nil || len(kept) != 1 || kept[0].ID != before[0].ID {
		t.Fatalf("after a maintenance open the account has endpoints %+v (%v), want %s kept", kept, err, before[0].ID)
	}
	env.settle("acct_0", 2, "DE") // recorded while nothing dispatches
	env.opts = configured
	env.reopen()
	after, err := env.svc.Endpoints(ctx, "acct_0")
	if err != nil || len(after) != 1 || after[0].ID != before[0].ID || after[0].FirstSequence != before[0].FirstSequence {
		t.Fatalf("the service's endpoint after the maintenance open: %+v (%v), want %+v", after, err, before[0])
	}
	env.eventually("the event recorded meanwhile", func() bool { return env.sender.count() == 2 })
}
