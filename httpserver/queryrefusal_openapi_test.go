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

// TestEveryOperationDeclaresItsRepeatedParameterRefusal: a query parameter
// given twice is a 400 BAD_REQUEST naming it on every endpoint, the /verify
// page included (README "Errors": "on every endpoint"; only an unknown
// parameter is let through there), so every operation must list a 400:
// GET /verify?id=a&id=b answered a problem document its operation, which
// listed 200, 304, 413 and 500, does not declare.
func TestEveryOperationDeclaresItsRepeatedParameterRefusal(t *testing.T) {
	f := newFixture(t)
	eachDocumentedOperation(t, f, func(m, path, concrete string, responses map[string]json.RawMessage) bool {
		url := concrete + "?colour=red&colour=blue"
		var body []byte
		if m == "POST" {
			body = []byte(`{}`)
		}
		r := f.do(m, url, keyA, body)
		if r.status != 400 || r.json(t)["field"] != "colour" {
			t.Errorf("%s %s: %d %.300s, want 400 naming colour", m, url, r.status, r.body)
			return false
		}
		if _, ok := responses["400"]; !ok {
			t.Errorf("%s %s answers 400 for a repeated query parameter; its OpenAPI operation lists no 400", m, path)
		}
		return true
	})
}
