package httpserver_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
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
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	methods := []string{"get", "post", "put", "patch", "delete"}
	n := 0
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			if !slices.Contains(methods, method) || path == "/verify" {
				continue
			}
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			m := strings.ToUpper(method)
			url := param.ReplaceAllString(path, "x") + "?colour=red"
			var body []byte
			if m == "POST" {
				body = []byte(`{}`)
			}
			r := f.do(m, url, keyA, body)
			if r.status != 400 || r.json(t)["field"] != "colour" {
				t.Errorf("%s %s: %d %s, want 400 naming colour", m, url, r.status, r.body)
				continue
			}
			n++
			if _, ok := op.Responses["400"]; !ok {
				t.Errorf("%s %s answers 400 for an unknown query parameter; its OpenAPI operation lists no 400", m, path)
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d operations checked", n)
	}
}
