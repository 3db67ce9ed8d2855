package httpserver_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
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
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	big := bytes.Repeat([]byte(" "), 64<<10+1)
	n := 0
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			m := strings.ToUpper(method)
			r := f.do(m, param.ReplaceAllString(path, "x"), keyA, big)
			if r.status != 413 || r.json(t)["code"] != "PAYLOAD_TOO_LARGE" {
				t.Errorf("%s %s with a body over the limit: %d %s, want 413", m, path, r.status, r.body)
				continue
			}
			n++
			if _, ok := op.Responses["413"]; !ok {
				t.Errorf("%s %s answers 413 for a body over the limit; its OpenAPI operation lists no 413", m, path)
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d operations checked", n)
	}
}
