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

// TestCPUProfileNeverTruncatesAnotherFile: -cpuprofile created its file
// with os.Create before anything else, truncating whatever was there: a
// mistyped -cpuprofile naming the ledger (the data directory's ledger.db,
// the one a running server has open too), the accounts file or a key was
// emptied before the start could be refused. A file that is there is now
// replaced only when it is an earlier profile (gzip data, what pprof
// writes) or empty; anything else refuses the start, naming -cpuprofile,
// and is left as it was. The profile of the previous run is still
// replaced, as before.
func TestCPUProfileNeverTruncatesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	prof := filepath.Join(dir, "server.pprof")
	p := startServer(t, data, "-cpuprofile", prof)
	if status, body := p.post(1); status != 201 {
		t.Fatalf("post: %d %s", status, body)
	}
	p.stop(t)

	for _, name := range []string{"ledger.db", "accounts.json", filepath.Join("keys", "log.key")} {
		target := filepath.Join(data, name)
		before, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		// Another server (its own data directory), so that only the
		// profile's path meets the file; one that starts is stopped.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, serverBinary(t), "-data", filepath.Join(dir, "other"), "-listen", "127.0.0.1:0", "-fx-refresh=false", "-cpuprofile", target)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err = cmd.Run()
		started := ctx.Err() != nil // stopped by the context: it served
		cancel()
		if err == nil || started || !strings.Contains(stderr.String(), "-cpuprofile") || !strings.Contains(stderr.String(), target) {
			t.Errorf("-cpuprofile %s: %v (started: %v), want a refusal naming -cpuprofile and the file:\n%s", name, err, started, stderr.String())
		}
		if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
			t.Errorf("-cpuprofile %s: the file changed (%d bytes, was %d)", name, len(after), len(before))
		}
	}

	// The previous run's profile is replaced by this run's.
	old, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	p = startServer(t, data, "-cpuprofile", prof)
	p.stop(t)
	raw, err := os.ReadFile(prof)
	if err != nil || !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) || bytes.Equal(raw, old) {
		t.Errorf("the earlier profile was not replaced by a new one: %v, %d bytes", err, len(raw))
	}
}
