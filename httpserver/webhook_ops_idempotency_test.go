package httpserver_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// concurrently sends the same request n times at once and returns the
// answers.
func (f *webhookFixture) concurrently(n int, method, path, key string, headers ...string) []response {
	var wg sync.WaitGroup
	out := make([]response, n)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = f.do(method, path, key, nil, headers...)
		}()
	}
	wg.Wait()
	return out
}

// oneFirst checks that identical concurrent requests were answered once
// (no Idempotent-Replayed) and replayed otherwise, all with the same status
// and body, and returns that answer.
func oneFirst(t *testing.T, what string, status int, got []response) response {
	t.Helper()
	first := 0
	for _, r := range got {
		if r.status != status || !bytes.Equal(r.body, got[0].body) {
			t.Fatalf("%s: %d %s, want %d and the one answer %s", what, r.status, r.body, status, got[0].body)
		}
		if r.header.Get("Idempotent-Replayed") == "" {
			first++
		}
	}
	if first != 1 {
		t.Fatalf("%s: %d first answers among %d concurrent requests, want 1", what, first, len(got))
	}
	return got[0]
}

// TestWebhookRotationIdempotent: POST /v1/webhook-endpoints/{id}/secrets
// binds an Idempotency-Key as POST /v1/webhook-endpoints does. It ignored
// the key: a client whose connection dropped after a rotation and retried
// added a second new secret (a third, at the limit a 409 for its own
// request) and never learnt the secret of the first. Now the retry gets
// the first answer again, the same new secret included (Idempotent-Replayed:
// true; the secret is unsealed again for the account that sent the key, as
// a creation's replay is), also after a restart; concurrent retries
// rotate once; the key for another endpoint or another operation is 409
// IDEMPOTENCY_CONFLICT; another account's key is its own, and cannot read
// this account's secret; once the secret is no longer the endpoint's
// newest, the key is 409 naming the endpoint and shows no secret.
func TestWebhookRotationIdempotent(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{})
	ep := f.createEndpoint(keyA, "https://hooks.example.com/a")
	id, oldSecretID := ep["id"].(string), ep["secretId"].(string)
	other := f.createEndpoint(keyA, "https://hooks.example.com/b")["id"].(string)
	path := "/v1/webhook-endpoints/" + id + "/secrets"
	secretCount := func() int {
		t.Helper()
		return len(f.do("GET", "/v1/webhook-endpoints/"+id, keyA, nil).json(t)["secrets"].([]any))
	}

	first := oneFirst(t, "concurrent rotations", 201, f.concurrently(6, "POST", path, keyA, "Idempotency-Key", "rotate-1"))
	rotated := first.json(t)
	secret := rotated["secret"].(string)
	if n := secretCount(); n != 2 || secret == ep["secret"] {
		t.Fatalf("after the rotation: %d secrets, new secret %q", n, secret)
	}
	if first.header.Get("Cache-Control") != "no-store" {
		t.Errorf("rotation headers: %v", first.header)
	}
	replay := func(what string, secrets int) {
		t.Helper()
		again := f.do("POST", path, keyA, nil, "Idempotency-Key", "rotate-1")
		if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("Cache-Control") != "no-store" || !bytes.Equal(again.body, first.body) {
			t.Fatalf("%s: replay %d %v\n%s\nwant the first answer\n%s", what, again.status, again.header, again.body, first.body)
		}
		if n := secretCount(); n != secrets {
			t.Fatalf("%s: the replay rotated: %d secrets, want %d", what, n, secrets)
		}
	}
	replay("replay", 2)
	f.reopenWebhooks()
	replay("after a restart", 2)

	// The key is bound to this rotation: another endpoint, or another
	// operation, is a conflict and changes nothing.
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints/"+other+"/secrets", keyA, nil, "Idempotency-Key", "rotate-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	if n := len(f.do("GET", "/v1/webhook-endpoints/"+other, keyA, nil).json(t)["secrets"].([]any)); n != 1 {
		t.Errorf("the conflict rotated the other endpoint: %d secrets", n)
	}
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"https://hooks.example.com/c"}`), "Idempotency-Key", "rotate-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	// Another account's same key is its own; on this account's endpoint it
	// is 404, never this account's secret.
	if r := f.do("POST", path, keyB, nil, "Idempotency-Key", "rotate-1"); r.status != 404 || strings.Contains(string(r.body), secret) {
		t.Fatalf("another account, same key: %d %s", r.status, r.body)
	}
	epB := f.createEndpoint(keyB, "https://hooks.example.com/a")
	if r := f.do("POST", "/v1/webhook-endpoints/"+epB["id"].(string)+"/secrets", keyB, nil, "Idempotency-Key", "rotate-1"); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" || r.json(t)["secret"] == secret {
		t.Fatalf("another account's own rotation with the key: %d %v %s", r.status, r.header, r.body)
	}
	assertProblem(t, f.do("POST", path, keyA, nil, "Idempotency-Key", "not visible ascii"), 400, "BAD_REQUEST", "Idempotency-Key")

	// Ending the rotation keeps the new secret the newest: still replayed.
	if r := f.do("DELETE", path+"/"+oldSecretID, keyA, nil); r.status != 200 {
		t.Fatalf("delete the old secret: %d %s", r.status, r.body)
	}
	replay("after the old secret was deleted", 1)

	// Rotated again (another key): the first answer's secret is no longer
	// the newest; the key is a conflict naming the endpoint, and shows no
	// secret.
	if r := f.do("POST", path, keyA, nil, "Idempotency-Key", "rotate-2"); r.status != 201 {
		t.Fatalf("second rotation: %d %s", r.status, r.body)
	}
	p := problemCode(t, f.do("POST", path, keyA, nil, "Idempotency-Key", "rotate-1"), 409, "IDEMPOTENCY_CONFLICT")
	if d, _ := p["detail"].(string); !strings.Contains(d, id) || strings.Contains(d, "whsec_") {
		t.Errorf("rotated since: %v", p)
	}
	if n := secretCount(); n != 2 {
		t.Errorf("the refused replay changed the secrets: %d", n)
	}
	// Deleted: the same, nothing made.
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+id, keyA, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	problemCode(t, f.do("POST", path, keyA, nil, "Idempotency-Key", "rotate-2"), 409, "IDEMPOTENCY_CONFLICT")
}

// TestWebhookRedeliverIdempotent: POST /v1/events/{id}/redeliver binds an
// Idempotency-Key. It ignored the key: a client that retried a redelivery
// whose answer it lost scheduled another round, and the receiver got the
// event again. Now the retry gets the first answer (202, the same
// deliveries, Idempotent-Replayed: true), also after a restart, and
// schedules nothing; concurrent identical requests schedule one round; the
// key for another event or another endpoint filter is 409
// IDEMPOTENCY_CONFLICT and schedules nothing.
func TestWebhookRedeliverIdempotent(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, "evt_"+f.settle(keyA, i)["id"].(string))
	}
	rc := newReceiver(t, f.clock, nil)
	ep := f.createEndpoint(keyA, rc.URL) // after the events: it receives them only when redelivered
	rc.setSecrets(ep["secret"].(string))
	deliveries := func(event string) []any {
		t.Helper()
		r := f.do("GET", "/v1/events/"+event, keyA, nil)
		if r.status != 200 {
			t.Fatalf("event %s: %d %s", event, r.status, r.body)
		}
		d, _ := r.json(t)["deliveries"].([]any)
		return d
	}
	status := func(event string) string {
		t.Helper()
		d := deliveries(event)
		if len(d) != 1 {
			t.Fatalf("event %s: deliveries %v", event, d)
		}
		return d[0].(map[string]any)["status"].(string)
	}

	path := "/v1/events/" + ids[0] + "/redeliver"
	first := oneFirst(t, "concurrent redeliveries", 202, f.concurrently(6, "POST", path, keyA, "Idempotency-Key", "redeliver-1"))
	f.eventually("the redelivery", func() bool { return status(ids[0]) == "delivered" })
	replay := func(what string) {
		t.Helper()
		again := f.do("POST", path, keyA, nil, "Idempotency-Key", "redeliver-1")
		if again.status != 202 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
			t.Fatalf("%s: replay %d %v\n%s\nwant the first answer\n%s", what, again.status, again.header, again.body, first.body)
		}
		// A redelivery would have made the delivery pending again.
		if s := status(ids[0]); s != "delivered" {
			t.Fatalf("%s: the replay scheduled a delivery: %s", what, s)
		}
	}
	replay("replay")
	f.reopenWebhooks()
	replay("after a restart")
	if got := rc.delivered()[ids[0]]; got != 1 {
		t.Errorf("the receiver got event %s %d times, want once", ids[0], got)
	}

	// Another event, or another filter, under the key: a conflict that
	// schedules nothing.
	assertProblem(t, f.do("POST", "/v1/events/"+ids[1]+"/redeliver", keyA, nil, "Idempotency-Key", "redeliver-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	assertProblem(t, f.do("POST", path+"?endpoint="+ep["id"].(string), keyA, nil, "Idempotency-Key", "redeliver-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	if d := deliveries(ids[1]); len(d) != 0 {
		t.Errorf("the conflict scheduled %v", d)
	}
	if s := status(ids[0]); s != "delivered" {
		t.Errorf("the conflict scheduled a delivery of %s: %s", ids[0], s)
	}
	// The key of an endpoint operation is not a redelivery's.
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints/"+ep["id"].(string)+"/secrets", keyA, nil, "Idempotency-Key", "redeliver-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	assertProblem(t, f.do("POST", path, keyA, nil, "Idempotency-Key", "not visible ascii"), 400, "BAD_REQUEST", "Idempotency-Key")
	// Without a key, a redelivery is a new round, as before.
	if r := f.do("POST", path, keyA, nil); r.status != 202 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("redeliver without a key: %d %v %s", r.status, r.header, r.body)
	}
	f.eventually("the redelivery without a key", func() bool { return rc.delivered()[ids[0]] == 2 })
}
