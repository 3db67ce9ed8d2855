package httpserver_test

import (
	"encoding/json"
	"testing"
)

// TestEveryOperationDeclaresItsQueryRefusal: every endpoint but the /verify
// page answers an unknown query parameter with 400 BAD_REQUEST (the README's
// errors table: "on every endpoint"), so the OpenAPI document must list a
// 400 for each of them; operations without a body or query parameters (a
// receipt, the JWKS, a record by id, ...) listed none, and a client built
// from the document met an answer it does not declare.
func TestEveryOperationDeclaresItsQueryRefusal(t *testing.T) {
	f := newFixture(t)
	eachDocumentedOperation(t, f, func(m, path, concrete string, responses map[string]json.RawMessage) bool {
		if path == "/verify" {
			return false
		}
		url := concrete + "?colour=red"
		var body []byte
		if m == "POST" {
			body = []byte(`{}`)
		}
		r := f.do(m, url, keyA, body)
		if r.status != 400 || r.json(t)["field"] != "colour" {
			t.Errorf("%s %s: %d %s, want 400 naming colour", m, url, r.status, r.body)
			return false
		}
		if _, ok := responses["400"]; !ok {
			t.Errorf("%s %s answers 400 for an unknown query parameter; its OpenAPI operation lists no 400", m, path)
		}
		return true
	})
}
