package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// TestBackupTargetDirectoryMissing: "backup -o DIR/FILE" where DIR does
// not exist failed only after it had asked the server for the whole copy,
// with a message naming its own temporary file (".FILE.part123") rather
// than the -o the operator gave. The target is checked before the server
// is asked, and the message names it.
func TestBackupTargetDirectoryMissing(t *testing.T) {
	data := operatorKeyData(t, "op_0123456789abcdef0123456789abcdef")
	srv, asked := notALedgerServer(t)
	target := filepath.Join(t.TempDir(), "no-such-dir", "ledger-backup.db")
	var out, errOut bytes.Buffer
	err := run([]string{"backup", "-data", data, "-server", srv.URL, "-o", target}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), target) || strings.Contains(err.Error(), ".part") {
		t.Errorf("backup -o into a missing directory: %v; want an error naming %s", err, target)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the server was asked %d time(s) for a copy that could not be written", n)
	}
}

// TestBackupFindsTheServerByItsListenVariable: README "Configuration" sets
// the server's address with FISCAL402_LISTEN, and "backup -data DIR -o
// FILE" (the README's example, no -server) is to copy that server's
// ledger. backup read only its own FISCAL402_SERVER and asked
// 127.0.0.1:8402: another server, or none. Without -server it now asks the
// address FISCAL402_LISTEN names (a wildcard host is this machine).
func TestBackupFindsTheServerByItsListenVariable(t *testing.T) {
	data := operatorKeyData(t, "op_0123456789abcdef0123456789abcdef")
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/admin/backup" {
			asked.Add(1)
		}
		http.Error(w, `{"code":"TEST","detail":"test server"}`, http.StatusTeapot)
	}))
	defer srv.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	for _, listen := range []string{"127.0.0.1:" + port, "0.0.0.0:" + port, ":" + port} {
		t.Setenv("FISCAL402_LISTEN", listen)
		var out, errOut bytes.Buffer
		before := asked.Load()
		err := run([]string{"backup", "-data", data, "-o", filepath.Join(t.TempDir(), "b.db")}, &out, &errOut)
		if asked.Load() != before+1 || err == nil || !strings.Contains(err.Error(), "418") {
			t.Errorf("FISCAL402_LISTEN=%s: the server there was not asked (%v)", listen, err)
		}
	}
}

// operatorKeyData is a data directory holding only the operator key key,
// in keys/operator.key as the server keeps it, for backup -data.
func operatorKeyData(t *testing.T, key string) string {
	t.Helper()
	data := t.TempDir()
	if err := os.MkdirAll(filepath.Join(data, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "keys", "operator.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// notALedgerServer answers every request "not a ledger" until the test
// ends; asked counts the requests.
func notALedgerServer(t *testing.T) (srv *httptest.Server, asked *atomic.Int32) {
	t.Helper()
	asked = new(atomic.Int32)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Write([]byte("not a ledger"))
	}))
	t.Cleanup(srv.Close)
	return srv, asked
}
