package readme_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestREADMEEngineMethodsExist: every engine.M or books.M the README names
// (in prose as well as in code) is a method of *fiscal.Engine or
// *fiscal.Books. It named engine.CheckCapabilities, which is
// catalog.Service's.
func TestREADMEEngineMethodsExist(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testtool.RepoDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{"engine": reflect.TypeOf(&fiscal.Engine{}), "books": reflect.TypeOf(&fiscal.Books{})}
	seen := 0
	for _, m := range regexp.MustCompile(`\b(engine|books)\.([A-Z][A-Za-z0-9]*)\b`).FindAllStringSubmatch(string(readme), -1) {
		seen++
		if _, ok := types[m[1]].MethodByName(m[2]); !ok {
			t.Errorf("README.md names %s.%s, but %s has no method %s", m[1], m[2], types[m[1]], m[2])
		}
	}
	if seen == 0 {
		t.Fatal("README.md names no engine or books method: the pattern is stale")
	}
}
