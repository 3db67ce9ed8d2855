package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fiscal402/fiscal402"

// The floors of ARCHITECTURE.md. A package may import its own floor's
// packages only where the floor allows (leaves: none but the ground's),
// and the floors below it.
var floors = []struct {
	name     string
	pkgs     []string
	ownFloor bool // whether the floor's packages may import each other
}{
	{"ground", []string{"internal/durable", "internal/shown"}, false},
	{"leaf", []string{"vat", "vies", "fx", "ubl", "receipt", "recordid", "ledger", "evmverify", "metrics", "internal/strictjson", "internal/jsonenc", "internal/syncread", "internal/jsontop", "internal/httpconn"}, false},
	{"base", []string{"x402", "internal/wire", "invoicelaw", "settlement", "internal/anchor"}, true},
	{"core", []string{"fiscal"}, false},
	{"accessory", []string{"parties", "ingest", "fiscalevent", "sandbox", "webhooks", "catalog", "listing", "refunds", "invoicing", "rates", "returns"}, true},
	{"service", []string{"httpserver"}, false},
}

// TestFloors: every import of ours points down the floors (or sideways
// where a floor allows it), and every package of the module (outside
// examples, bench, tests' helpers and internal tools) has a floor, so
// that a new package is placed on purpose. Test files are not read:
// tests may reach across floors.
func TestFloors(t *testing.T) {
	floorOf := map[string]int{}
	for i, f := range floors {
		for _, p := range f.pkgs {
			floorOf[p] = i
		}
	}
	// An internal package is checked when a floor names it; the others
	// are tests' helpers and tools.
	inFloor := func(rel string) bool { _, ok := floorOf[rel]; return ok }
	root := "../.."
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" ||
				rel == "examples" || rel == "bench" || strings.HasPrefix(rel, "internal/") && !inFloor(rel) && rel != "internal" {
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if strings.Contains(pkg, "/internal/") && !strings.HasPrefix(pkg, "internal/") {
			pkg = pkg[:strings.Index(pkg, "/internal/")] // a package's own internal generator belongs to it
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil // generators (go:build ignore or internal/gen…) are commands
		}
		seen[pkg] = true
		from, ok := floorOf[pkg]
		if !ok {
			t.Errorf("package %s has no floor in ARCHITECTURE.md (add it to floors in %s)", pkg, "internal/archtest/floors_test.go")
			return nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			dep, ok := strings.CutPrefix(p, module+"/")
			if !ok || strings.HasPrefix(dep, pkg+"/internal/") {
				continue // not ours, or the package's own internal package (vat's rate generator reads table files too)
			}
			to, known := floorOf[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no floor", rel, dep)
			case to > from:
				t.Errorf("%s (%s) imports %s (%s): imports point down", rel, floors[from].name, dep, floors[to].name)
			case to == from && !floors[from].ownFloor:
				t.Errorf("%s (%s) imports %s, a sibling on its floor", rel, floors[from].name, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range floorOf {
		if !seen[p] {
			t.Errorf("floor table names %s, which has no Go files here", p)
		}
	}
}
