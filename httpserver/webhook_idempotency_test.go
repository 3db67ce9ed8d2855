package httpserver_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestWebhookEndpointCreateIdempotent: POST /v1/webhook-endpoints binds an
// Idempotency-Key like the other POST routes. A client whose connection
// dropped after the endpoint was created retries with the same key and body
// and gets the first answer again, secret included (Idempotent-Replayed:
// true), not 409 for its own URL; another body under the key is 409
// IDEMPOTENCY_CONFLICT; another account's same key is its own. Once the
// endpoint's secret was rotated, or the endpoint deleted, the first answer
// cannot be given honestly: 409 IDEMPOTENCY_CONFLICT, nothing created.
func TestWebhookEndpointCreateIdempotent(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{})
	body := []byte(`{"url":"https://hooks.example.com/a","description":"books"}`)
	first := f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "create-a")
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("create: %d %v %s", first.status, first.header, first.body)
	}
	ep := first.json(t)
	id, secret := ep["id"].(string), ep["secret"].(string)

	// The retry, with the body spelt differently but the same after
	// normalisation (the URL as checked).
	again := f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"description":"books","url":"https://HOOKS.example.com/a"}`), "Idempotency-Key", "create-a")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
		t.Fatalf("replay: %d %v\n%s\nwant the first answer\n%s", again.status, again.header, again.body, first.body)
	}
	if again.header.Get("Location") != "/v1/webhook-endpoints/"+id || again.header.Get("Cache-Control") != "no-store" {
		t.Errorf("replay headers: %v", again.header)
	}
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"https://hooks.example.com/b"}`), "Idempotency-Key", "create-a"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	// Without the key, the same URL is still a conflict with the endpoint.
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, body), 409, "WEBHOOK_ENDPOINT_CONFLICT", "/url")
	// Another account: its own key space, its own endpoint and secret.
	other := f.do("POST", "/v1/webhook-endpoints", keyB, body, "Idempotency-Key", "create-a")
	if o := other.json(t); other.status != 201 || other.header.Get("Idempotent-Replayed") != "" || o["id"] == id || o["secret"] == secret {
		t.Fatalf("another account's key: %d %v %s", other.status, other.header, other.body)
	}
	if n := len(f.do("GET", "/v1/webhook-endpoints", keyA, nil).json(t)["data"].([]any)); n != 1 {
		t.Errorf("account A has %d endpoints, want 1", n)
	}
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "not visible ascii"), 400, "BAD_REQUEST", "Idempotency-Key")

	// Rotated: the first secret is no longer the endpoint's newest.
	if r := f.do("POST", "/v1/webhook-endpoints/"+id+"/secrets", keyA, nil); r.status != 201 {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	p := problemCode(t, f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "create-a"), 409, "IDEMPOTENCY_CONFLICT")
	if d, _ := p["detail"].(string); !bytes.Contains([]byte(d), []byte(id)) || bytes.Contains([]byte(d), []byte(secret)) {
		t.Errorf("rotated: %v", p)
	}

	// Deleted: the key does not make another endpoint.
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+id, keyA, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	problemCode(t, f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "create-a"), 409, "IDEMPOTENCY_CONFLICT")
	if n := len(f.do("GET", "/v1/webhook-endpoints", keyA, nil).json(t)["data"].([]any)); n != 0 {
		t.Errorf("account A has %d endpoints after the delete and a replay, want 0", n)
	}
}

// TestWebhookEndpointReplayKeepsFirstAnswerUnderNewPolicy: a retry with the
// Idempotency-Key and body of a creation that succeeded gets that creation's
// answer, whatever the URL policy says now. The replay looked the key up
// only after checking the URL against the current policy, so an endpoint
// created under -webhooks-allow-loopback, retried after a restart without
// it, answered 400 BAD_REQUEST for a request that had already succeeded:
// the same key answered differently (draft-ietf-httpapi-idempotency-key-header
// section 2.6: a retried request with the same key gets the first result).
// The key's other answers keep theirs: another body is still checked as a
// new request (400 for a URL the policy refuses, 409 for one it allows),
// and a deleted endpoint is 409 IDEMPOTENCY_CONFLICT, nothing created.
func TestWebhookEndpointReplayKeepsFirstAnswerUnderNewPolicy(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true})
	body := []byte(`{"url":"http://127.0.0.1:9/hook","description":"local"}`)
	first := f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "local-1")
	if first.status != 201 {
		t.Fatalf("create under AllowLoopback: %d %s", first.status, first.body)
	}
	id := first.json(t)["id"].(string)

	f.opts = webhooks.Options{} // restarted without -webhooks-allow-loopback
	f.reopenWebhooks()
	again := f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "local-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
		t.Fatalf("replay under the new policy: %d %v\n%s\nwant the first answer\n%s", again.status, again.header, again.body, first.body)
	}
	// Another body under the key: a new request, checked as one.
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"http://127.0.0.1:9/other"}`), "Idempotency-Key", "local-1"), 400, "BAD_REQUEST", "/url")
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, []byte(`{"url":"https://hooks.example.com/other"}`), "Idempotency-Key", "local-1"), 409, "IDEMPOTENCY_CONFLICT", "Idempotency-Key")
	// A new key with the refused URL is refused, as before.
	assertProblem(t, f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "local-2"), 400, "BAD_REQUEST", "/url")

	if r := f.do("DELETE", "/v1/webhook-endpoints/"+id, keyA, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	p := problemCode(t, f.do("POST", "/v1/webhook-endpoints", keyA, body, "Idempotency-Key", "local-1"), 409, "IDEMPOTENCY_CONFLICT")
	if d, _ := p["detail"].(string); !strings.Contains(d, id) {
		t.Errorf("deleted: %v", p)
	}
	if n := len(f.do("GET", "/v1/webhook-endpoints", keyA, nil).json(t)["data"].([]any)); n != 0 {
		t.Errorf("account A has %d endpoints, want 0", n)
	}
}
