package httpserver_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteInREADME: every route the OpenAPI document lists is named
// in the README (its path, a {param} standing for any value), so a reader
// of the README alone can find every flow; POST /settlements/{id}/resolve,
// the way out of PENDING_MANUAL_REVIEW, and GET /v1/fx/status were not.
func TestEveryRouteInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\\\{[^}]+\\\}`)
	for path := range doc.Paths {
		pat := param.ReplaceAllString(regexp.QuoteMeta(path), "[^ `?/]+")
		if !regexp.MustCompile(pat + `([^A-Za-z0-9/._-]|$)`).Match(readme) {
			t.Errorf("%s is not named in the README", path)
		}
	}
	if len(doc.Paths) < 40 || !strings.Contains(string(readme), "/settlements") {
		t.Fatalf("only %d paths", len(doc.Paths))
	}
}
