package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// engineDataDir is a data directory in which an engine (the account of
// fiscaltest.IrishSeller) made its ledger and keys, closed again: what
// check and migrate are given.
func engineDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	e, err := fiscal.New(fiscal.Config{Dir: dir, Accounts: fiscaltest.Accounts(fiscaltest.IrishSeller), Logger: fiscaltest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheckRefusesAnArgument: "server check -data DIR backup.db" (the
// file as an argument, not -ledger) checked the data directory's own
// ledger.db instead and printed "ledger.Check passed" and exit 0, which
// reads as the backup verified. Like backup, accounts and the server,
// check (and migrate) refuse an argument they do not take.
func TestCheckRefusesAnArgument(t *testing.T) {
	dir := engineDataDir(t)
	for _, args := range [][]string{{"check", "-data", dir, "backup.db"}, {"migrate", "-data", dir, "-store", "postgres://127.0.0.1/x", "backup.db"}} {
		var out, errOut bytes.Buffer
		err := run(args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), `unexpected argument "backup.db"`) {
			t.Errorf("%q: %v\n%s", args, err, out.String())
		}
	}
}

// TestCheckFailureNamesTheFile: the check of a file that is no ledger, or
// one signed by another log key, exits non-zero with a message naming the
// file it checked, as its success line does: a nightly check of several
// copies must say which one failed ("bbolt page structure: no valid meta
// page" alone does not).
func TestCheckFailureNamesTheFile(t *testing.T) {
	dir := engineDataDir(t)
	_, otherKey, err := note.GenerateKey(nil, "other.example/log")
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(t.TempDir(), "copy-3.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not a ledger "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "-data", dir, "-ledger", junk},
		{"check", "-ledger", filepath.Join(dir, "ledger.db"), "-log-key", otherKey},
	} {
		file := args[len(args)-1]
		if args[len(args)-2] == "-log-key" {
			file = args[2]
		}
		var out, errOut bytes.Buffer
		err := run(args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%q: %v; want an error naming %s", args, err, file)
		}
	}
}

// TestMigrateReadsTheVariables: every command reads the server's variables
// for its flags (README "Configuration": -data is FISCAL402_DATA, -store
// FISCAL402_STORE or FISCAL402_DATABASE_URL), as backup, check and
// accounts do; migrate read neither FISCAL402_DATA nor FISCAL402_STORE, so
// in the environment that configures the server it looked in
// ./fiscal402-data or asked for -store.
func TestMigrateReadsTheVariables(t *testing.T) {
	dir := engineDataDir(t)
	t.Setenv("FISCAL402_DATA", dir)
	t.Setenv("FISCAL402_STORE", "postgres://fiscal@127.0.0.1:1/none?connect_timeout=2")
	var out, errOut bytes.Buffer
	err := run([]string{"migrate"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "migrate "+dir) {
		t.Errorf("migrate with FISCAL402_DATA and FISCAL402_STORE set: %v; want it to copy %s to the store (and fail to reach it)", err, dir)
	}
}
