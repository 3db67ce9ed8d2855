package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/httpserver"
)

// TestRefusedStartMakesNothing: a start refused for a setting (a flag or
// its variable the server checks) names the setting and makes nothing: no
// data directory, no operator key, no accounts file. Before, the settings
// checked after the data directory was made (-check, -vies, -fx-file, the
// chain flags, -store) left a demo account behind whose key had been
// generated and never printed, so the next start, "its key is not printed
// again", served an account nobody had the key of.
func TestRefusedStartMakesNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-check", "bogus"}, "-check"},
		{[]string{"-vies", "maybe"}, "-vies"},
		{[]string{"-vies-requester", "XX123"}, "-vies-requester"},
		{[]string{"-fx-file", "no-such-rates.csv"}, "no-such-rates.csv"},
		{[]string{"-base-mode", "required"}, "-base-mode"},
		{[]string{"-ethereum-confirmations", "3"}, "-ethereum-confirmations"},
		{[]string{"-chain-timeout", "0s"}, "-chain-timeout"},
		{[]string{"-store", "mysql://db/x"}, "-store"},
		{[]string{"-log-format", "xml"}, "-log-format"},
		{[]string{"-rate-limit", "-1"}, "-rate-limit"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		var out, errOut bytes.Buffer
		err := run(append([]string{"-data", data, "-listen", "127.0.0.1:0", "-fx-refresh=false"}, c.args...), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want an error naming %s", c.args, err, c.want)
		}
		if _, serr := os.Stat(data); !os.IsNotExist(serr) {
			entries, _ := filepath.Glob(filepath.Join(data, "*"))
			t.Errorf("%q: the refused start made %s (%v)", c.args, data, entries)
		}
		if strings.Contains(out.String(), "sk_") {
			t.Errorf("%q: printed a key:\n%s", c.args, out.String())
		}
	}
}

// TestFailedStartLosesNoKey: a start that fails after the settings were
// checked (here: the port is taken, the commonest) must not leave a demo
// account whose key nobody saw. Either it makes no account (the next
// start makes one and prints its key) or it prints the key it made.
func TestFailedStartLosesNoKey(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	data := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(serverBinary(t), "-data", data, "-listen", taken.Addr().String(), "-fx-refresh=false")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FISCAL402_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err == nil || !strings.Contains(errOut.String(), "address already in use") {
		t.Fatalf("start on a taken port: %v\n%s%s", err, out.String(), errOut.String())
	}
	raw, err := os.ReadFile(filepath.Join(data, "accounts.json"))
	if os.IsNotExist(err) {
		return // nothing made: the next start makes the account and prints its key
	}
	if err != nil {
		t.Fatal(err)
	}
	_, key, ok := strings.Cut(out.String(), "only its hash is kept): ")
	key, _, _ = strings.Cut(key, "\n")
	if !ok || !bytes.Contains(raw, []byte(httpserver.HashKey(strings.TrimSpace(key)))) {
		t.Fatalf("the failed start made a demo account and did not print its key:\nstdout: %s\naccounts: %s", out.String(), raw)
	}
}

// TestBadAccountsFileMakesNothing: an accounts file that does not load is
// a refused setting like any other: the start names it and leaves no data
// directory or operator key behind.
func TestBadAccountsFileMakesNothing(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.json")
	if err := os.WriteFile(accounts, []byte(`{"accounts": [{"id": "acct_x", "seller": {"country": "ZZ"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var out, errOut bytes.Buffer
	err := run([]string{"-data", data, "-accounts", accounts, "-listen", "127.0.0.1:0", "-fx-refresh=false"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), accounts) {
		t.Errorf("start with a bad accounts file: %v; want an error naming %s", err, accounts)
	}
	if _, serr := os.Stat(data); !os.IsNotExist(serr) {
		entries, _ := filepath.Glob(filepath.Join(data, "*", "*"))
		t.Errorf("the refused start made %s (%v)", data, entries)
	}
}
