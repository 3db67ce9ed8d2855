package readme_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestLayoutNamesEveryCommand: the README's "Layout" section lists the
// commands examples/ holds. It named server, verify-receipt, x402hook and
// walkthrough.sh, but not examples/audit, the auditor's command that
// verify-receipt is "the former name" of, nor examples/soak, the crash soak
// the README's second command block runs.
func TestLayoutNamesEveryCommand(t *testing.T) {
	root := testtool.RepoDir(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "\n## Layout\n")
	if start < 0 {
		t.Fatal("README.md has no ## Layout section")
	}
	layout := s[start+1:]
	if end := strings.Index(layout[3:], "\n## "); end >= 0 {
		layout = layout[:end+3]
	}
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(root, "examples", name, "main.go")); err != nil {
				continue // not a command (examples/internal)
			}
		} else if !strings.HasSuffix(name, ".sh") {
			continue
		}
		seen++
		if !strings.Contains(layout, "`"+name+"`") {
			t.Errorf("README.md's Layout section does not name the command examples/%s", name)
		}
	}
	if seen == 0 {
		t.Fatal("examples/ holds no command: the pattern is stale")
	}
}
