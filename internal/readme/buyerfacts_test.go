package readme_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestBuyerFactsNamesAreGoFields: where a README tells a Go caller what
// fiscal.BuyerFacts carries, the names it lists are the struct's fields.
// They listed the JSON names (consumerCountry, ...), which a Go caller
// cannot write in fiscal.BuyerFacts{...}.
func TestBuyerFactsNamesAreGoFields(t *testing.T) {
	root := testtool.RepoDir(t)
	typ := reflect.TypeOf(fiscal.BuyerFacts{})
	tick := regexp.MustCompile("`([A-Za-z]+)`")
	for _, file := range []string{"README.md", "examples/x402hook/README.md"} {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(src)), " ")
		i := strings.Index(text, "fiscal.BuyerFacts`")
		if i < 0 {
			t.Fatalf("%s no longer lists what fiscal.BuyerFacts carries", file)
		}
		list := text[i+len("fiscal.BuyerFacts`"):]
		list = list[:strings.IndexAny(list, ".()")] // the list ends at the sentence's end or a parenthesis
		names := tick.FindAllStringSubmatch(list, -1)
		if len(names) == 0 {
			t.Fatalf("%s: no names listed after fiscal.BuyerFacts: %q", file, list)
		}
		for _, m := range names {
			if _, ok := typ.FieldByName(m[1]); !ok {
				t.Errorf("%s lists %q as carried by fiscal.BuyerFacts, which has no such field", file, m[1])
			}
		}
	}
}
