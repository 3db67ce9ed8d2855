package httpserver_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// reasonCodes reads every Reason* string constant of the packages whose
// reasons reach a record, a fiscal event or a capability check.
func reasonCodes(t *testing.T) map[string]string {
	t.Helper()
	codes := map[string]string{}
	for _, dir := range []string{"../vat", "../fiscal", "../parties", "../catalog"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if !strings.HasPrefix(id.Name, "Reason") || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							codes[v] = filepath.Base(dir) + "." + id.Name
						}
					}
				}
			}
		}
	}
	if len(codes) < 40 {
		t.Fatalf("only %d reason codes found", len(codes))
	}
	return codes
}

// TestEveryReasonDocumented: every reason code appears in the README's
// table of reasons and in the OpenAPI document's description of
// VatReason.code.
func TestEveryReasonDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "### Reasons")
	if start < 0 {
		t.Fatal("README has no ### Reasons section")
	}
	table := string(readme[start:])
	if end := strings.Index(table[4:], "\n## "); end >= 0 {
		table = table[:end+4]
	}
	f := newFixture(t)
	doc := string(f.do("GET", "/openapi.json", "", nil).body)
	for code, name := range reasonCodes(t) {
		if !strings.Contains(table, "`"+code+"`") {
			t.Errorf("%s (%s) is not in the README's table of reasons", code, name)
		}
		if !strings.Contains(doc, code) {
			t.Errorf("%s (%s) is not in the OpenAPI document", code, name)
		}
	}
}
