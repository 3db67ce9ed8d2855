package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsSayAServerIsRunning: "check", "check -recover", "migrate"
// and a second server on the data directory of a running server were
// refused with the ledger's "file locked by another process or open
// Ledger: ledger: unavailable", which does not say that a server is
// running or what to do (README: stop the server; a hot copy is "backup").
// -rotate-receipt-key already said so. Each now names the ledger file, says
// a running server has it open, and what to do instead.
func TestCommandsSayAServerIsRunning(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	if status, raw := p.post(1); status != 201 {
		t.Fatalf("settle: %d %s", status, raw)
	}
	ledgerFile := filepath.Join(dir, "ledger.db")
	for _, c := range []struct {
		name string
		args []string
		want string // the remedy
	}{
		{"check", []string{"check", "-data", dir}, "backup -o"},
		{"check -recover", []string{"check", "-data", dir, "-recover"}, "stop"},
		{"migrate", []string{"migrate", "-data", dir, "-store", "postgres://fiscal@127.0.0.1:1/fiscal402"}, "stop"},
		{"second server", []string{"-data", dir, "-listen", "127.0.0.1:0"}, "-data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, err := runCommand(t, []string{"FISCAL402_FX_REFRESH=false"}, c.args...)
			if err == nil {
				t.Fatalf("succeeded beside a running server:\n%s", errOut)
			}
			if !strings.Contains(errOut, ledgerFile) || !strings.Contains(errOut, "a running server") || !strings.Contains(errOut, c.want) {
				t.Errorf("want a message naming %s, a running server and %q:\n%s", ledgerFile, c.want, errOut)
			}
		})
	}
	if status, raw := p.post(2); status != 201 {
		t.Fatalf("settle after the refused commands: %d %s", status, raw)
	}
}
