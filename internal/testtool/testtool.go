// Package testtool decides what a test does when an external tool it needs
// (xmllint, Saxon, node, anvil, ...) is missing: skip with a message naming
// the tool, or fail when FISCAL402_STRICT=1 (set by .ci/run).
package testtool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Strict reports whether FISCAL402_STRICT=1 is set, in which case a missing
// external tool is a test failure instead of a skip.
func Strict() bool { return os.Getenv("FISCAL402_STRICT") == "1" }

// Missing skips the test (or fails it under FISCAL402_STRICT=1) because the
// named tool is not available; why says what was looked for.
func Missing(t testing.TB, tool, why string) {
	t.Helper()
	if Strict() {
		t.Fatalf("%s is required under FISCAL402_STRICT=1: %s", tool, why)
	}
	t.Skipf("skipping: %s not available (%s); set FISCAL402_STRICT=1 to make this a failure", tool, why)
}

// LookPath returns the path of the named executable, or skips/fails the test
// through Missing when it is not on PATH.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, "not found on PATH")
	}
	return p
}

// File returns path if it names an existing file, or skips/fails the test
// through Missing, naming tool as what is absent.
func File(t testing.TB, tool, path string) string {
	t.Helper()
	if path == "" {
		Missing(t, tool, "no path configured")
	}
	if _, err := os.Stat(path); err != nil {
		Missing(t, tool, err.Error())
	}
	return path
}

// RepoDir returns the repository root: the directory holding go.mod, found
// by walking up from the test's working directory. Everything a test reads
// lives under it; nothing beside the repository is needed.
func RepoDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Conformance returns the path of elem under testdata/conformance at the
// repository root: the OASIS UBL 2.1 XSDs (ubl-2.1/, with their notice),
// the validate-ubl script and the example invoices (see its SOURCES.md).
func Conformance(t testing.TB, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{RepoDir(t), "testdata", "conformance"}, elem...)...)
}

// Golden compares got with the golden file at path, or, when update is set
// (each package's -update flag), rewrites the file. A difference fails the
// test and shows the first differing line, so a reviewer sees what changed.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run the test with -update and review the diff):\n%s", path, FirstDiff(want, got))
	}
}

// FirstDiff describes the first line where want and got differ.
func FirstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, w, g)
		}
	}
	return "(no line differs: the files differ in line endings or a trailing newline)"
}
