package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAccountsCreateRefusesAnIDTheServerRefuses: accounts create checks the
// new account's id as the server does at its start (1-64 of A-Z a-z 0-9 _
// . -, its help says so), and writes nothing for one it refuses: an id the
// command wrote but the server refuses would keep the server from starting
// again.
func TestAccountsCreateRefusesAnIDTheServerRefuses(t *testing.T) {
	dir := t.TempDir()
	seller := []string{"-legal-name", "Shop GmbH", "-country", "DE", "-vat-number", "DE136695976", "-city", "Berlin", "-over-threshold", "-allow-review"}
	var out, errOut bytes.Buffer
	if err := run(append([]string{"accounts", "create", "-data", dir, "-id", "acct_ok"}, seller...), &out, &errOut); err != nil {
		t.Fatalf("a valid id: %v\n%s", err, errOut.String())
	}
	before, err := os.ReadFile(filepath.Join(dir, "accounts.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"shop 1", "acct/other", "ä-shop", "x12345678901234567890123456789012345678901234567890123456789012345"} {
		out.Reset()
		errOut.Reset()
		err := run(append([]string{"accounts", "create", "-data", dir, "-id", id}, seller...), &out, &errOut)
		if err == nil {
			t.Errorf("id %q: created (key %q), though the server refuses it at start", id, out.String())
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "accounts.json")); !bytes.Equal(before, after) {
			t.Errorf("id %q: the refused account changed the accounts file", id)
			_ = os.WriteFile(filepath.Join(dir, "accounts.json"), before, 0o600)
		}
	}
}
