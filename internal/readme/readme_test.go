// Package readme_test holds the check that the README quotes the library's
// three Examples verbatim, so that the code a newcomer copies from the
// README is code that `go test` runs.
package readme_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// quoted lists, per example file, the declarations the README quotes.
var quoted = []struct {
	file  string
	decls []string
}{
	{"fiscal/example_test.go", []string{"Example"}},
	{"ingest/example_x402_test.go", []string{"exampleEngine", "Example"}},
	{"receipt/example_auditor_test.go", []string{"Example"}},
}

func TestREADMEQuotesExamples(t *testing.T) {
	root := testtool.RepoDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range quoted {
		src, err := os.ReadFile(filepath.Join(root, q.file))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, q.file, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range q.decls {
			text := declText(t, fset, f, src, name)
			if !bytes.Contains(readme, []byte("```go\n"+text+"\n```")) {
				t.Errorf("README.md does not quote %s's %s verbatim in a ```go block; paste:\n%s", q.file, name, text)
			}
		}
	}
}

// declText is the source of the function name, with its doc comment.
func declText(t *testing.T, fset *token.FileSet, f *ast.File, src []byte, name string) string {
	t.Helper()
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != name || fn.Recv != nil {
			continue
		}
		start := fn.Pos()
		if fn.Doc != nil {
			start = fn.Doc.Pos()
		}
		return strings.TrimSpace(string(src[fset.Position(start).Offset:fset.Position(fn.End()).Offset]))
	}
	t.Fatalf("%s has no func %s", f.Name.Name, name)
	return ""
}

// TestQuotedExamplesAreEmbeddable checks that the code the README quotes is
// code an embedder can copy: it uses no package under internal/ (which the
// Go toolchain refuses to import from another module), and it pins no
// Config.Clock (a copy would stamp every record at one instant, and its
// ingest queue, due by the engine clock, would never reach a retry).
func TestQuotedExamplesAreEmbeddable(t *testing.T) {
	root := testtool.RepoDir(t)
	for _, q := range quoted {
		src, err := os.ReadFile(filepath.Join(root, q.file))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, q.file, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		internal := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if !strings.Contains(path, "/internal/") {
				continue
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = path
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !slices.Contains(q.decls, fn.Name.Name) {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && internal[id.Name] != "" {
						t.Errorf("%s: the README quotes %s, which uses %s.%s: an embedder cannot import %s",
							fset.Position(n.Pos()), fn.Name.Name, id.Name, n.Sel.Name, internal[id.Name])
					}
				case *ast.KeyValueExpr:
					if id, ok := n.Key.(*ast.Ident); ok && id.Name == "Clock" {
						t.Errorf("%s: the README quotes %s, which pins Config.Clock: a copy would run on a stopped clock",
							fset.Position(n.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
}
