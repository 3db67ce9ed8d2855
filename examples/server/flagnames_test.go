package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartRefusalsNameTheFlag: a start refused for an address it cannot
// listen on (a port in use, a port out of range), a data directory it
// cannot make, or an operator key file it cannot read said "listen tcp
// ...: bind: address already in use", "mkdir ...", "operator key: open
// ...": the operator, with a unit file of a dozen flags and variables,
// had to guess which one. Each refusal names its flag and the value.
func TestStartRefusalsNameTheFlag(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	for _, c := range []struct{ flag, value string }{
		{"-listen", busy.Addr().String()},
		{"-listen", "127.0.0.1:99999"},
		{"-data", "/proc/fiscal402-no-such-dir/data"},
		{"-operator-key-file", filepath.Join(dir, "missing.key")},
	} {
		args := []string{"-data", filepath.Join(dir, "data"), "-listen", "127.0.0.1:0", "-fx-refresh=false", c.flag, c.value}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, serverBinary(t), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		started := ctx.Err() != nil
		cancel()
		if err == nil || started {
			t.Errorf("%s %s: the server started", c.flag, c.value)
			continue
		}
		if !strings.Contains(stderr.String(), c.flag+" "+c.value) {
			t.Errorf("%s %s: the refusal does not name the flag and its value:\n%s", c.flag, c.value, stderr.String())
		}
	}
}
