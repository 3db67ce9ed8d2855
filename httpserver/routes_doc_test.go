package httpserver_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteInREADME: every route the OpenAPI document lists is named
// in the README (its path, a {param} standing for any value), so a reader
// of the README alone can find every flow; POST /settlements/{id}/resolve,
// the way out of PENDING_MANUAL_REVIEW, and GET /v1/fx/status were not.
func TestEveryRouteInREADME(t *testing.T) {
	readme, paths := readmeAndPaths(t)
	param := regexp.MustCompile(`\\\{[^}]+\\\}`)
	for _, path := range paths {
		pat := param.ReplaceAllString(regexp.QuoteMeta(path), "[^ `?/]+")
		if !regexp.MustCompile(pat + `([^A-Za-z0-9/._-]|$)`).Match(readme) {
			t.Errorf("%s is not named in the README", path)
		}
	}
	if len(paths) < 40 || !strings.Contains(string(readme), "/settlements") {
		t.Fatalf("only %d paths", len(paths))
	}
}
