package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDocUsageNamesEveryCommand: the package documentation's Usage (what
// "go doc ./examples/server" shows an operator) lists every command run
// dispatches (operatorCommands); "migrate" was missing from it.
func TestDocUsageNamesEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	usage, _, _ := strings.Cut(doc[strings.Index(doc, "Usage:"):], "Every flag")
	if len(operatorCommands) < 4 {
		t.Fatalf("found %d commands in operatorCommands", len(operatorCommands))
	}
	for _, c := range operatorCommands {
		if !strings.Contains(usage, "go run ./examples/server "+c.name+" ") {
			t.Errorf("the package doc's Usage does not list %q:\n%s", c.name, usage)
		}
	}
}
