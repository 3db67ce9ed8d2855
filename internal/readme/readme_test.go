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
