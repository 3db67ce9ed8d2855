package httpserver_test

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEveryOperationDeclaresItsBodyLimit: a request whose body is over the
// limit is answered 413 PAYLOAD_TOO_LARGE on every endpoint, whether it
// reads a body or not (the README's errors table; preflight, before any
// handler), so the OpenAPI document must list a 413 for each operation: a
// client built from the document would otherwise meet an answer it does
// not declare (OpenAPI 3.1 Responses Object: the document should cover the
// known errors).
func TestEveryOperationDeclaresItsBodyLimit(t *testing.T) {
	f := newFixture(t)
	big := bytes.Repeat([]byte(" "), 64<<10+1)
	eachDocumentedOperation(t, f, func(m, path, concrete string, responses map[string]json.RawMessage) bool {
		r := f.do(m, concrete, keyA, big)
		if r.status != 413 || r.json(t)["code"] != "PAYLOAD_TOO_LARGE" {
			t.Errorf("%s %s with a body over the limit: %d %s, want 413", m, path, r.status, r.body)
			return false
		}
		if _, ok := responses["413"]; !ok {
			t.Errorf("%s %s answers 413 for a body over the limit; its OpenAPI operation lists no 413", m, path)
		}
		return true
	})
}
