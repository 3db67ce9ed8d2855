package httpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestNotModifiedHeadersInOpenAPI: a 304 carries the header fields a 200
// would have sent that describe the cached answer (RFC 9110 §15.4.5:
// Cache-Control, Content-Location, ETag, Expires, Vary), and the server
// sends them. The
// document's 304 of each conditional operation must declare every header
// the real 304 answers, or a client generated from it cannot read the
// freshness lifetime it is meant to apply to the stored copy.
func TestNotModifiedHeadersInOpenAPI(t *testing.T) {
	f := newFixture(t)
	var doc struct {
		Paths map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for path, ops := range doc.Paths {
		get := ops["get"]
		if strings.Contains(path, "{") || get == nil {
			continue
		}
		responses, _ := get["responses"].(map[string]any)
		r304, ok := responses["304"].(map[string]any)
		if !ok {
			continue
		}
		first := f.do("GET", path, "", nil)
		etag := first.header.Get("ETag")
		if first.status != 200 || etag == "" {
			continue // needs query parameters
		}
		r := f.do("GET", path, "", nil, "If-None-Match", etag)
		if r.status != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", path, r.status)
			continue
		}
		checked++
		declared := map[string]bool{}
		for name := range r304["headers"].(map[string]any) {
			declared[http.CanonicalHeaderKey(name)] = true
		}
		for _, name := range []string{"Cache-Control", "Content-Location", "Etag", "Expires", "Vary"} { // RFC 9110 §15.4.5
			if r.header.Get(name) != "" && !declared[name] {
				t.Errorf("GET %s 304: the answer sends %s: %q, the document does not declare it", path, name, r.header.Get(name))
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d conditional operations checked", checked)
	}
}
