package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupRefusesTheLiveLedgerAsItsTarget: backup -o writes the copy
// beside the target and renames it into place. Named after the running
// server's own ledger.db (one wrong argument), the rename put the copy in
// place of the file the server writes: every settlement acknowledged after
// it went to the unlinked file and was lost, and the next start refused
// the copy beside its journal. The command must refuse a target a running
// server holds and leave it alone.
func TestBackupRefusesTheLiveLedgerAsItsTarget(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	if status, raw := p.post(1); status != 201 {
		t.Fatalf("settle: %d %s", status, raw)
	}
	live := filepath.Join(dir, "ledger.db")
	before, err := os.Stat(live)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCommand(t, nil, "backup", "-server", p.base, "-data", dir, "-o", live)
	if err == nil {
		t.Errorf("backup -o onto the running server's ledger.db succeeded:\n%s", stderr)
	} else if !strings.Contains(stderr, live) {
		t.Errorf("the refusal does not name the target:\n%s", stderr)
	}
	after, err := os.Stat(live)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the running server's ledger.db was replaced (%v)", err)
	}
	if status, raw := p.post(2); status != 201 {
		t.Fatalf("settle after the refused backup: %d %s", status, raw)
	}
}
