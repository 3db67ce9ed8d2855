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

// TestActionVariablesRefused: -rotate-receipt-key and check's -recover are
// actions and have no variable (README "Configuration"), and a FISCAL402_
// variable that is set but not read is refused, since the operator would
// believe it took effect. Yet FISCAL402_ROTATE_RECEIPT_KEY=true (a key
// thought compromised, rotated "through the container's environment")
// started the server as if unset, with the old key signing on, and
// FISCAL402_RECOVER=true ran a plain check: both were silently ignored.
// Each is refused, naming the variable and the flag to give instead, and
// nothing is started, rotated or replayed.
func TestActionVariablesRefused(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	p.stop(t)
	keys := func() map[string]string {
		out := map[string]string{}
		entries, _ := os.ReadDir(filepath.Join(dir, "keys"))
		for _, e := range entries {
			raw, _ := os.ReadFile(filepath.Join(dir, "keys", e.Name()))
			out[e.Name()] = string(raw)
		}
		return out
	}
	before := keys()
	for _, c := range []struct {
		env, flag string
		args      []string
	}{
		{"FISCAL402_RECOVER=true", "-recover", []string{"check", "-data", dir}},
		{"FISCAL402_ROTATE_RECEIPT_KEY=true", "-rotate-receipt-key", []string{"-data", dir, "-listen", "127.0.0.1:0", "-fx-refresh=false"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, serverBinary(t), c.args...)
		cmd.Env = append(os.Environ(), c.env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		started := ctx.Err() != nil
		cancel()
		name, _, _ := strings.Cut(c.env, "=")
		if err == nil || started {
			t.Errorf("%s: ran as if unset (started: %v)\n%s%s", c.env, started, stdout.String(), stderr.String())
			continue
		}
		if !strings.Contains(stderr.String(), name) || !strings.Contains(stderr.String(), c.flag) {
			t.Errorf("%s: the refusal does not name the variable and %s:\n%s", c.env, c.flag, stderr.String())
		}
	}
	after := keys()
	for name, v := range before {
		if after[name] != v {
			t.Errorf("keys/%s changed", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("keys/ holds %d files, was %d", len(after), len(before))
	}
}
