package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFXFileRefusalNamesTheFlag: a rates file that cannot be read (missing)
// or is not an ECB file is refused at start naming -fx-file and the file,
// as every other flag's refusal names its flag; the operator reviews found
// the bare reader error ("open ...: no such file", "no rates found").
func TestFXFileRefusalNamesTheFlag(t *testing.T) {
	dir := t.TempDir()
	notECB := filepath.Join(dir, "rates.csv")
	if err := os.WriteFile(notECB, []byte("hello,world\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"missing": filepath.Join(dir, "nope.csv"), "not an ECB file": notECB} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, serverBinary(t), "-data", filepath.Join(t.TempDir(), "data"), "-listen", "127.0.0.1:0", "-fx-file", file)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("-fx-file %s: the server started\n%s", file, stderr.String())
			}
			if !strings.Contains(stderr.String(), "-fx-file "+file+":") {
				t.Errorf("the refusal does not name -fx-file and the file:\n%s", stderr.String())
			}
		})
	}
}
