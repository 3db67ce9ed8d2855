package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupReplacesOnlyAnOlderCopy: "backup -o FILE" renamed its verified
// copy over whatever FILE was: a mistyped target (the data directory's
// accounts.json or keys/log.key, a report) was destroyed, and so was a
// ledger of another server (a stopped server's own ledger.db while the
// command asked another one). An existing FILE is replaced only when it
// is an earlier copy of the same log (it passes the check against the
// server's log key, at no larger a size), as a nightly backup to one name
// does; anything else is refused, naming -o, before the server is asked
// for a copy, and left as it was.
func TestBackupReplacesOnlyAnOlderCopy(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	if status, raw := p.post(1); status != 201 {
		t.Fatalf("settlement: %d %s", status, raw)
	}
	backup := func(out string) (string, error) {
		t.Helper()
		_, stderr, err := runCommand(t, nil, "backup", "-server", p.base, "-data", dir, "-o", out)
		return stderr, err
	}
	refused := func(name, out string) {
		t.Helper()
		before, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		stderr, err := backup(out)
		if err == nil {
			t.Errorf("%s: backup -o %s replaced it:\n%s", name, out, stderr)
		} else if !strings.Contains(stderr, "-o "+out) {
			t.Errorf("%s: the refusal does not name -o %s:\n%s", name, out, stderr)
		}
		if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
			t.Errorf("%s: %s changed (%d bytes, was %d)", name, out, len(after), len(before))
		}
		if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
			t.Errorf("%s: %d entries beside it after the refusal", name, len(entries))
		}
	}

	// A file that is no ledger: an accounts file given as the target.
	notes := filepath.Join(t.TempDir(), "accounts.json")
	accounts, err := os.ReadFile(filepath.Join(dir, "accounts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, accounts, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("an accounts file", notes)

	// The ledger of another server (its own log key), stopped.
	other := t.TempDir()
	q := startServer(t, other)
	if status, raw := q.post(2); status != 201 {
		t.Fatalf("settlement on the other server: %d %s", status, raw)
	}
	q.stop(t)
	foreign := filepath.Join(t.TempDir(), "ledger.db")
	raw, err := os.ReadFile(filepath.Join(other, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("another server's ledger", foreign)

	// An earlier copy of this server's log is replaced by the newer one.
	nightly := filepath.Join(t.TempDir(), "nightly.db")
	if stderr, err := backup(nightly); err != nil {
		t.Fatalf("first backup: %v\n%s", err, stderr)
	}
	first, _ := os.ReadFile(nightly)
	if status, raw := p.post(3); status != 201 {
		t.Fatalf("settlement: %d %s", status, raw)
	}
	stderr, err := backup(nightly)
	if err != nil {
		t.Fatalf("backup over the earlier copy: %v\n%s", err, stderr)
	}
	if second, _ := os.ReadFile(nightly); bytes.Equal(first, second) {
		t.Errorf("the earlier copy was not replaced by the newer one:\n%s", stderr)
	}
	if !strings.Contains(stderr, "log size 2") {
		t.Errorf("the newer copy does not hold both settlements:\n%s", stderr)
	}
}
