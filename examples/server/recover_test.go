package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckRecoverAfterAKill: a server killed (SIGKILL) after answering
// settlements leaves a ledger file whose newest commits only its journal
// holds. `check` refuses it and names -recover; `check -recover` refuses
// while the server runs (it would replay under a live writer) and on a
// ledger file that is not there (it never makes one); on the stopped
// server's directory it replays the journal, reports the log size the
// server had served, and ledger.Check passes; the server then starts on
// it and serves the same checkpoint (size and root).
func TestCheckRecoverAfterAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server binary")
	}
	dir := t.TempDir()
	p := startServer(t, dir)
	for n := range 12 {
		if status, body := p.post(n); status != 201 {
			t.Fatalf("settlement %d: %d %s", n, status, body)
		}
	}
	_, served := p.get(t, "/v1/log/checkpoint", false)
	size := checkpointSize(t, served)

	// While the server runs: refused, nothing replayed under it.
	out, errOut, err := runCommand(t, nil, "check", "-data", dir, "-recover")
	if err == nil || strings.Contains(out, "replayed") {
		t.Fatalf("check -recover while the server runs: %v\n%s%s", err, out, errOut)
	}
	p.kill()

	out, errOut, err = runCommand(t, nil, "check", "-data", dir)
	if err == nil || !strings.Contains(errOut, "not closed") || !strings.Contains(errOut, "check -recover") {
		t.Fatalf("check of a killed server's ledger: %v\n%s%s; want the refusal naming -recover", err, out, errOut)
	}

	// A data directory without a ledger file: no new, empty ledger.
	empty := t.TempDir()
	copyTree(t, filepath.Join(dir, "keys"), filepath.Join(empty, "keys"))
	if out, errOut, err := runCommand(t, nil, "check", "-data", empty, "-recover"); err == nil {
		t.Fatalf("check -recover without a ledger file: passed\n%s%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, "ledger.db")); !os.IsNotExist(err) {
		t.Fatalf("check -recover without a ledger file made one: %v", err)
	}

	out, errOut, err = runCommand(t, nil, "check", "-data", dir, "-recover")
	want := "journal replayed and checkpointed; log size " + strconv.FormatInt(size, 10) + "\n"
	if err != nil || !strings.Contains(out, want) || !strings.Contains(out, "ledger.Check passed") || !strings.Contains(out, "log size "+strconv.FormatInt(size, 10)+",") {
		t.Fatalf("check -recover: %v\n%s%s; want %q and ledger.Check passed at size %d", err, out, errOut, want, size)
	}
	// Closed at the replayed state: a plain check passes now.
	if out, errOut, err := runCommand(t, nil, "check", "-data", dir); err != nil || !strings.Contains(out, "ledger.Check passed") {
		t.Fatalf("check after -recover: %v\n%s%s", err, out, errOut)
	}

	r := startServer(t, dir)
	_, again := r.get(t, "/v1/log/checkpoint", false)
	if a, b := checkpointBody(served), checkpointBody(again); a != b {
		t.Fatalf("checkpoint after check -recover and a start:\n%s\nwant the one served before the kill:\n%s", b, a)
	}
	if status, body := r.post(12); status != 201 {
		t.Fatalf("settlement after the recovery: %d %s", status, body)
	}
}

// checkpointBody is a checkpoint's signed text (origin, size, root),
// without its signature lines.
func checkpointBody(cp []byte) string {
	body, _, _ := strings.Cut(string(cp), "\n\n")
	return body
}
