package httpserver_test

import (
	"strings"
	"testing"
)

// TestNoParamsDetailSaysNoneAreRead: an endpoint that reads no query
// parameter refuses one with a detail that says so; it said "known: "
// followed by nothing, a list that reads as cut off. An endpoint that
// reads some still lists them.
func TestNoParamsDetailSaysNoneAreRead(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/v1/receipts/rcpt_x402-00000000000000000000000000000000?colour=red", "/.well-known/jwks.json?colour=red", "/healthz?colour=red"} {
		r := f.do("GET", path, "", nil)
		m := r.json(t)
		detail, _ := m["detail"].(string)
		if r.status != 400 || m["field"] != "colour" || !strings.Contains(detail, `"colour"`) {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		if d := strings.TrimSpace(detail); strings.HasSuffix(d, ":") || strings.HasSuffix(d, ";") || strings.Contains(detail, "known: ;") {
			t.Errorf("GET %s: the detail ends in an empty list: %q", path, detail)
		}
		if !strings.Contains(detail, "no query parameter") {
			t.Errorf("GET %s: the detail does not say the endpoint reads no query parameter: %q", path, detail)
		}
	}
	r := f.do("GET", "/v1/returns/oss?colour=red", keyA, nil)
	if detail, _ := r.json(t)["detail"].(string); r.status != 400 || !strings.Contains(detail, "known: period, format") {
		t.Errorf("an endpoint that reads parameters no longer lists them: %d %s", r.status, r.body)
	}
}
