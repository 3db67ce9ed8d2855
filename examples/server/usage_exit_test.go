package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestUsageExitsTwo: a command line the server or a command cannot run (a
// flag it does not define, a flag's value that does not parse, a flag
// without its value, an argument it does not take, a command it does not
// have, a required flag or argument left out) exits with status 2, as Go's
// flag package and the auditor's command (README "Receipts, the log and
// auditors") do, so that a script or a service manager can tell a mistyped
// unit file from a failure of the work (status 1: a ledger that does not
// check, a server that refused the backup). Each names what was wrong on
// stderr and makes nothing in the working directory. A failure of the work
// stays 1.
func TestUsageExitsTwo(t *testing.T) {
	bin := serverBinary(t)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		dir := t.TempDir()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "FISCAL402_OPERATOR_KEY=", "FISCAL402_DATABASE_URL=", "FISCAL402_STORE=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		entries, _ := os.ReadDir(dir)
		made := ""
		if len(entries) > 0 {
			made = entries[0].Name()
		}
		return code, stderr.String(), made
	}
	for _, args := range [][]string{
		{"-no-such-flag"}, {"-rate-limit", "fast"}, {"-listen"}, {"serve-now"},
		{"backup", "-no-such-flag"}, {"backup", "extra"},
		{"check", "-recover=maybe"}, {"check", "ledger.db"},
		{"accounts"}, {"accounts", "remove"}, {"accounts", "list", "extra"}, {"accounts", "list", "-json=x"},
		{"accounts", "create", "-legal-name", "X", "-country", "IE"}, {"accounts", "rotate-key"}, {"accounts", "drop-old-keys"},
		{"migrate"}, {"migrate", "-store"}, {"migrate", "-store", "postgres://127.0.0.1/x", "extra"},
		{"vat-rates"}, {"vat-rates", "import"}, {"vat-rates", "check"}, {"vat-rates", "export", "-x"},
	} {
		code, stderr, made := run(args...)
		if code != 2 {
			t.Errorf("%q: exit status %d, want 2 (usage)\n%s", args, code, stderr)
		}
		if stderr == "" {
			t.Errorf("%q: nothing on stderr says what was wrong", args)
		}
		if made != "" {
			t.Errorf("%q made %s in the working directory", args, made)
		}
	}
	// A failure of the work, with a command line that is fine, stays 1.
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, args := range [][]string{
		{"check", "-ledger", missing, "-log-key", "x"},
		{"vat-rates", "check", missing},
	} {
		if code, stderr, _ := run(args...); code != 1 {
			t.Errorf("%q: exit status %d, want 1 (a failure, not a usage problem)\n%s", args, code, stderr)
		}
	}
}
