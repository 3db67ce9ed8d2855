package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfile: -cpuprofile writes a profile (gzip-compressed protobuf,
// what go tool pprof reads) when the server stops on SIGTERM, and a path
// the server cannot create is refused at the start.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "server.pprof")
	p := startServer(t, filepath.Join(dir, "data"), "-cpuprofile", prof)
	if status, body := p.post(1); status != 201 {
		t.Fatalf("post: %d %s", status, body)
	}
	p.stop(t)
	raw, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		t.Errorf("the profile is not gzip data: %d bytes, % x...", len(raw), raw[:min(len(raw), 8)])
	}

	var stderr bytes.Buffer
	err = run([]string{"-data", filepath.Join(dir, "data2"), "-listen", "127.0.0.1:0", "-cpuprofile", filepath.Join(dir, "missing", "x.pprof")}, &bytes.Buffer{}, &stderr)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("-cpuprofile")) {
		t.Errorf("an unwritable -cpuprofile path: %v, want an error naming -cpuprofile", err)
	}
}
