package httpserver_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestDocumentsGolden keeps the published documents under review: any
// change to what the service says about itself shows up as a diff of
// testdata/documents/*.json (rewrite them with -update). The OpenAPI
// document is checked structurally and by Redocly instead: its schemas are
// derived from the Go types and change with every record field.
func TestDocumentsGolden(t *testing.T) {
	f := newDocFixture(t, true, testNow)
	for _, path := range []string{"/.well-known/service.json", "/.well-known/agent-card.json", "/v1/capabilities", "/v1/pricing",
		"/v1/reliability", "/v1/discovery", "/v1/preference", "/v1/seller-value", "/discover"} {
		r := f.do("GET", path, "", nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d", path, r.status)
		}
		name := strings.NewReplacer("/.well-known/", "", "/v1/", "", "/", "").Replace(path)
		name = strings.TrimSuffix(name, ".json") + ".json"
		testtool.Golden(t, filepath.Join("testdata", "documents", name), r.body, *update)
	}
}
