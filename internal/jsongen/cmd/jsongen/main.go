// Command jsongen writes the module's JSON encoders (package
// internal/jsongen, Targets) and their bootstraps. Run it from anywhere in
// the module with the bootstrap tag, so that it builds even when an
// encoder no longer compiles against its types:
//
//	go run -tags jsongen_bootstrap ./internal/jsongen/cmd/jsongen
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fiscal402/fiscal402/internal/jsongen"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	for _, t := range jsongen.Targets() {
		enc, boot, err := jsongen.Generate(t)
		if err != nil {
			fail(err)
		}
		for name, src := range map[string][]byte{t.File: enc, t.Bootstrap: boot} {
			if err := os.WriteFile(filepath.Join(root, name), src, 0o644); err != nil {
				fail(err)
			}
		}
	}
}

// moduleRoot is the nearest directory up from here with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("jsongen: no go.mod above the working directory")
		}
		dir = parent
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
