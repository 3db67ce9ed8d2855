package httpserver_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/fiscal402/fiscal402/webhooks"
)

// TestBodylessEndpointsRefuseABody: the endpoints that read no request body
// (a redelivery, whose only filter is the endpoint query parameter; the
// webhook endpoint's enable, new secret and deletes) refuse a body that says
// something, as every endpoint refuses a query parameter it does not read:
// a filter sent in the body must not be silently dropped and the event
// redelivered to every endpoint of the account (README "Errors": unknown
// fields are a 400 naming them). Nothing is scheduled or changed. No body,
// whitespace, or an empty JSON object say nothing and are served as before.
func TestBodylessEndpointsRefuseABody(t *testing.T) {
	f := newWebhookFixture(t, webhooks.Options{AllowLoopback: true, NoDispatcher: true})
	evt := "evt_" + f.settle(keyA, 1)["id"].(string)
	ep1 := f.createEndpoint(keyA, "http://127.0.0.1:1/one")["id"].(string)
	ep2 := f.createEndpoint(keyA, "http://127.0.0.1:1/two")["id"].(string)
	state := func() []byte {
		t.Helper()
		var all []byte
		for _, p := range []string{"/v1/events/" + evt, "/v1/webhook-endpoints/" + ep1, "/v1/webhook-endpoints/" + ep2} {
			r := f.do("GET", p, keyA, nil)
			if r.status != 200 {
				t.Fatalf("GET %s: %d %s", p, r.status, r.body)
			}
			all = append(all, r.body...)
		}
		return all
	}
	before := state()
	for _, tc := range []struct{ method, path string }{
		{"POST", "/v1/events/" + evt + "/redeliver"},
		{"POST", "/v1/webhook-endpoints/" + ep1 + "/enable"},
		{"POST", "/v1/webhook-endpoints/" + ep1 + "/secrets"},
		{"DELETE", "/v1/webhook-endpoints/" + ep1 + "/secrets/whs_0000000000000000"},
		{"DELETE", "/v1/webhook-endpoints/" + ep1},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := f.do(tc.method, tc.path, keyA, []byte(`{"endpoint":"`+ep1+`"}`))
			assertProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", "/endpoint")
			r = f.do(tc.method, tc.path, keyA, []byte(`[1]`))
			assertProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", "")
			r = f.do(tc.method, tc.path, keyA, []byte(`{}`), "Content-Type", "text/plain")
			assertProblem(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "Content-Type")
		})
	}
	if after := state(); !bytes.Equal(before, after) {
		t.Fatalf("a refused request changed the state:\n%s\n%s", before, after)
	}
	// Saying nothing is served as before.
	for _, body := range [][]byte{nil, []byte(" \n"), []byte(`{}`)} {
		if r := f.do("POST", "/v1/events/"+evt+"/redeliver", keyA, body); r.status != http.StatusAccepted {
			t.Errorf("redeliver with body %q: %d %s", body, r.status, r.body)
		}
	}
	if r := f.do("DELETE", "/v1/webhook-endpoints/"+ep2, keyA, []byte(`{}`)); r.status != http.StatusNoContent {
		t.Errorf("delete with {}: %d %s", r.status, r.body)
	}
}
