package main

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocUsageNamesEveryCommand: the package documentation's Usage (what
// "go doc ./examples/server" shows an operator) lists every command run
// dispatches; "migrate" was missing from it.
func TestDocUsageNamesEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	usage, _, _ := strings.Cut(doc[strings.Index(doc, "Usage:"):], "Every flag")
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)[strings.Index(string(src), "func run("):]
	body = body[:strings.Index(body, "\n}\n")]
	cmds := regexp.MustCompile(`case "([a-z-]+)":`).FindAllStringSubmatch(body, -1)
	if len(cmds) < 4 {
		t.Fatalf("found %d commands in run", len(cmds))
	}
	for _, c := range cmds {
		if !strings.Contains(usage, "go run ./examples/server "+c[1]+" ") {
			t.Errorf("the package doc's Usage does not list %q:\n%s", c[1], usage)
		}
	}
}
