package readme_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestTwoCommandsNamesEveryTestTool: the README's "Two commands" section
// tells a new user which external tools or facilities make tests skip (and
// fail under FISCAL402_STRICT=1). Every tool a test asks testtool for by
// name must be named there. It named xmllint, Java + Saxon, node, anvil
// and FUSE, but not PostgreSQL (the ledger's second backend: the tests
// need a server on 127.0.0.1:5432, which .ci/run starts but does not
// install), chromium (the receipt page's browser test), python3 or curl
// (the walkthrough's), so `FISCAL402_STRICT=1 go test ./...` failed on
// tools the section never mentioned.
func TestTwoCommandsNamesEveryTestTool(t *testing.T) {
	root := testtool.RepoDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "\n## Two commands\n")
	if start < 0 {
		t.Fatal("README.md has no ## Two commands section")
	}
	section := s[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	section = strings.ToLower(section)
	// The toolchain and the shell the README's own commands run in.
	exempt := map[string]bool{"go": true, "bash": true}
	call := regexp.MustCompile(`testtool\.(?:Missing|LookPath)\(tb?, "([^" (]+)`)
	tools := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			tools[m[1]] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("no testtool.Missing or testtool.LookPath call found: the pattern is stale")
	}
	for tool, path := range tools {
		if !exempt[tool] && !strings.Contains(section, strings.ToLower(tool)) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("README.md's Two commands section does not name %s, which %s needs (a test skips without it, and fails under FISCAL402_STRICT=1)", tool, rel)
		}
	}
}
