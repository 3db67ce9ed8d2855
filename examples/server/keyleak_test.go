package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAKeyPastedAsItsHashIsNeverLogged: an operator who pastes an account's
// key itself into "keyHashes" (instead of its sha256: hash) had the key
// quoted back in the refusal: on stderr of a refused start, and in the server's log (a log shipper, a ticket)
// when a running server re-read the file. The refusal names the account
// and the entry and says what is wrong, never the value.
func TestAKeyPastedAsItsHashIsNeverLogged(t *testing.T) {
	const pasted = "sk_PastedKey0123456789abcdefghijklmnopqrstuvw"
	dir := t.TempDir()
	var log syncBuffer // ops_test.go
	p := startServerWith(t, dir, nil, &log, "-accounts-reload", "0")
	path := filepath.Join(dir, "accounts.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	for _, f := range strings.Split(string(raw), `"`) {
		if strings.HasPrefix(f, "sha256:") {
			hash = f
		}
	}
	if hash == "" {
		t.Fatalf("no key hash in %s", raw)
	}
	bad := strings.Replace(string(raw), hash, pasted, 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "accounts file not applied") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "accounts file not applied") {
		t.Fatalf("the reload of the bad file was not logged:\n%s", log.String())
	}
	p.stop(t)
	if strings.Contains(log.String(), "PastedKey") {
		t.Errorf("the server's log holds the pasted key:\n%s", log.String())
	}

	// A start on the file refuses it without the key.
	_, stderr, err := runCommand(t, nil, "-data", dir, "-listen", "127.0.0.1:0", "-fx-refresh=false")
	if err == nil {
		t.Fatal("the server started with a key where its hash belongs")
	}
	for what, out := range map[string]string{"start": stderr} {
		if strings.Contains(out, "PastedKey") {
			t.Errorf("%s printed the pasted key:\n%s", what, out)
		}
		if !strings.Contains(out, "acct_demo") {
			t.Errorf("%s does not name the account:\n%s", what, out)
		}
	}
}
