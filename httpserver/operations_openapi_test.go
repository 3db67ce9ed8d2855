package httpserver_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// eachDocumentedOperation calls fn for every operation of the served
// OpenAPI document (get, post, put, patch, delete) with its method in
// upper case, its path as documented, that path with every parameter
// replaced by "x", and its documented responses by status; fn says
// whether it checked the operation, and fewer than 40 checked fails.
func eachDocumentedOperation(t *testing.T, f *fixture, fn func(method, path, concrete string, responses map[string]json.RawMessage) bool) {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
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
			if fn(strings.ToUpper(method), path, param.ReplaceAllString(path, "x"), op.Responses) {
				n++
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d operations checked", n)
	}
}
