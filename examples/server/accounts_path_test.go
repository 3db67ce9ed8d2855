package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccountsInMissingDirectoryRefused: -accounts FILE (or
// FISCAL402_ACCOUNTS) in a directory that does not exist, a mistyped
// /etc/fiscal042/accounts.json, made that directory and a demo account in
// it, and the server served that account instead of the operator's. The
// real binary now refuses to start naming -accounts and the missing
// directory, and makes nothing. -accounts naming a directory (empty or
// not) is refused by the flag too: it names the file. The file missing in
// an existing directory is a first start, as with the default
// <data>/accounts.json: it is created there with the demo account (README
// "Configuration"); so is an -accounts inside -data, made on first start.
func TestAccountsInMissingDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "accounts.json")
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"-accounts", missing}},
		{"variable", []string{"FISCAL402_ACCOUNTS=" + missing}, nil},
	} {
		data := filepath.Join(dir, "data-"+c.name)
		out, errOut, exited, code := runUntilListening(t, data, c.env, c.args...)
		if !exited || code != 1 {
			t.Errorf("%s: started with an accounts file in a missing directory (exited %v, code %d)\n%s%s", c.name, exited, code, out, errOut)
		} else if !strings.Contains(errOut, "-accounts") || !strings.Contains(errOut, filepath.Dir(missing)+" does not exist") {
			t.Errorf("%s: %q; want -accounts and the missing directory named", c.name, errOut)
		}
		if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
			t.Fatalf("%s: the refused start made %s", c.name, filepath.Dir(missing))
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s: the refused start made %s", c.name, data)
		}
	}

	// A directory given as the file: refused by the flag, empty or not.
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, exited, code := runUntilListening(t, filepath.Join(dir, "data-dir"), nil, "-accounts", empty)
	if !exited || code != 1 || !strings.Contains(errOut, "-accounts "+empty+": is a directory") {
		t.Errorf("-accounts DIR: exited %v code %d\n%s%s", exited, code, out, errOut)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("-accounts DIR wrote into it: %v", entries)
	}

	// The file missing in an existing directory: the first start.
	inEmpty := filepath.Join(empty, "accounts.json")
	if out, errOut, exited, _ := runUntilListening(t, filepath.Join(dir, "data-first"), nil, "-accounts", inEmpty); exited || !strings.Contains(out, "demo account acct_demo created") {
		t.Errorf("-accounts in an existing directory: exited %v\n%s%s", exited, out, errOut)
	}
	if _, err := os.Stat(inEmpty); err != nil {
		t.Errorf("the first start made no accounts file: %v", err)
	}
	// Inside -data, which the first start makes.
	data := filepath.Join(dir, "data-new")
	if out, errOut, exited, _ := runUntilListening(t, data, nil, "-accounts", filepath.Join(data, "sellers.json")); exited {
		t.Errorf("-accounts inside a new -data: exited\n%s%s", out, errOut)
	}

	// accounts create: the same rule; nothing made.
	if _, errOut, err := runCommand(t, nil, "accounts", "create", "-accounts", missing, "-id", "acct_x", "-legal-name", "X", "-country", "IE", "-allow-review"); err == nil || !strings.Contains(errOut, filepath.Dir(missing)+" does not exist") {
		t.Errorf("accounts create into a missing directory: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("accounts create made %s", filepath.Dir(missing))
	}
}
