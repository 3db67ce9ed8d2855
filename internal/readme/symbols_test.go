package readme_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestREADMESymbolsExist: every pkg.Name (or pkg.Type.Method, .Field) of the
// module's packages that the README names is declared in that package, and
// every Go file it names (`dir/file.go`) exists. It named fiscal.Pricing
// and fiscal/capabilities.go, which moved to package catalog.
func TestREADMESymbolsExist(t *testing.T) {
	root := testtool.RepoDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]map[string]bool{} // package dir -> names
	names := func(pkg string) map[string]bool {
		if d, ok := declared[pkg]; ok {
			return d
		}
		d := map[string]bool{}
		pkgs, err := parser.ParseDir(token.NewFileSet(), filepath.Join(root, pkg), func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, decl := range f.Decls {
					switch decl := decl.(type) {
					case *ast.FuncDecl:
						if decl.Recv == nil {
							d[decl.Name.Name] = true
							continue
						}
						recv := decl.Recv.List[0].Type
						if s, ok := recv.(*ast.StarExpr); ok {
							recv = s.X
						}
						if id, ok := recv.(*ast.Ident); ok {
							d[id.Name+"."+decl.Name.Name] = true
						}
					case *ast.GenDecl:
						for _, spec := range decl.Specs {
							switch spec := spec.(type) {
							case *ast.TypeSpec:
								d[spec.Name.Name] = true
								if st, ok := spec.Type.(*ast.StructType); ok {
									for _, fld := range st.Fields.List {
										for _, n := range fld.Names {
											d[spec.Name.Name+"."+n.Name] = true
										}
									}
								}
							case *ast.ValueSpec:
								for _, n := range spec.Names {
									d[n.Name] = true
								}
							}
						}
					}
				}
			}
		}
		declared[pkg] = d
		return d
	}
	pkgs := "fiscal|refunds|returns|invoicing|fiscalevent|ingest|receipt|webhooks|listing|rates|fx|ledger|vat|vies|ubl|evmverify|x402|catalog|sandbox|settlement|parties|invoicelaw|recordid|metrics|httpserver"
	refs := regexp.MustCompile(`\b(`+pkgs+`)\.([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)?)`).FindAllStringSubmatch(string(readme), -1)
	if len(refs) == 0 {
		t.Fatal("README.md names no package symbol: the pattern is stale")
	}
	for _, m := range refs {
		if !names(m[1])[m[2]] {
			t.Errorf("README.md names %s.%s, which package %s does not declare", m[1], m[2], m[1])
		}
	}
	for _, m := range regexp.MustCompile("`([a-z0-9_]+(?:/[a-z0-9_]+)*\\.go)`").FindAllStringSubmatch(string(readme), -1) {
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.md names %s, which does not exist", m[1])
		}
	}
}
