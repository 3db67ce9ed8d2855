package httpserver_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// operatorRoutes are the operators' endpoints, not in the OpenAPI
// document (README "Operations").
var operatorRoutes = []string{"/healthz", "/readyz", "/metrics", "/v1/admin/backup"}

// TestREADMENamesOnlyRealRoutes: every "METHOD /path" the README names in
// code is a route the server mounts (the OpenAPI document's, or an
// operator's), so a reader never tries an endpoint that answers 404; the
// Operations section sent readers to GET /v1/records/…, which does not
// exist.
func TestREADMENamesOnlyRealRoutes(t *testing.T) {
	readme, paths := readmeAndPaths(t)
	var routes []*regexp.Regexp
	param := regexp.MustCompile(`\\\{[^}]+\\\}`)
	for _, p := range append(operatorRoutes, paths...) {
		routes = append(routes, regexp.MustCompile("^"+param.ReplaceAllString(regexp.QuoteMeta(p), "[^/]+")+"$"))
	}
	named := regexp.MustCompile("`(?:GET|POST|DELETE|PUT|PATCH) (/[^`\\s?\\[]*)")
	matches := named.FindAllStringSubmatch(string(readme), -1)
	if len(matches) < 30 {
		t.Fatalf("only %d routes named in the README", len(matches))
	}
	for _, m := range matches {
		path := m[1]
		// Placeholders the README writes in a segment: …, {id}, <id>.
		path = regexp.MustCompile(`\{[^}]*\}|<[^>]*>|…|\.\.\.`).ReplaceAllString(path, "x")
		path = strings.TrimSuffix(path, "/")
		found := false
		for _, r := range routes {
			if r.MatchString(path) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the README names %q, which is no route of the server", m[0][1:])
		}
	}
}

// readmeAndPaths is the README and the paths of the server's OpenAPI
// document.
func readmeAndPaths(t *testing.T) (readme []byte, paths []string) {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(newFixture(t).do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	return readme, paths
}
