package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupTargetIsADirectory: "backup -o DIR" (a directory, say the
// backups folder without a file name) made its temporary copy in DIR's
// parent, asked the server for the whole ledger, checked it, and only then
// failed to rename it over the directory, with a message naming the
// temporary file. The target is refused before the server is asked,
// naming -o, and nothing is written beside it.
func TestBackupTargetIsADirectory(t *testing.T) {
	data := operatorKeyData(t, "op_0123456789abcdef0123456789abcdef")
	srv, asked := notALedgerServer(t)
	parent := t.TempDir()
	target := filepath.Join(parent, "backups")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := run([]string{"backup", "-data", data, "-server", srv.URL, "-o", target}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "-o "+target) || strings.Contains(err.Error(), ".part") || !strings.Contains(err.Error(), "directory") {
		t.Errorf("backup -o DIR: %v; want an error naming -o %s as a directory", err, target)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the server was asked %d time(s) for a copy that could not be written", n)
	}
	for _, d := range []string{parent, target} {
		if entries, _ := os.ReadDir(d); len(entries) != map[string]int{parent: 1, target: 0}[d] {
			t.Errorf("%s holds %d entries after the refused backup", d, len(entries))
		}
	}
}

// TestBackupRefusalNamesServerAndKey: a server that refuses the copy is
// named (-server), and so is where the refused operator key came from (a
// data directory of another server, a stale key file), never the key; an
// answer that is no fiscal402 problem document (another program on the
// port) says so with its status, instead of "answered 501 : ".
func TestBackupRefusalNamesServerAndKey(t *testing.T) {
	const key = "op_0123456789abcdef0123456789abcdef"
	data := operatorKeyData(t, key)
	keyFile := filepath.Join(data, "keys", "operator.key")
	refuses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":"AUTHENTICATION_FAILED","detail":"the operator key is not valid"}`))
	}))
	defer refuses.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotImplemented)
		w.Write([]byte("<html>Unsupported method</html>"))
	}))
	defer other.Close()
	cases := []struct {
		name, server string
		want         []string
	}{
		{"refused key", refuses.URL, []string{"-server " + refuses.URL, "401", "AUTHENTICATION_FAILED", keyFile}},
		{"not fiscal402", other.URL, []string{"-server " + other.URL, "501 Not Implemented", "not a fiscal402"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := filepath.Join(t.TempDir(), "b.db")
			var out, errOut bytes.Buffer
			err := run([]string{"backup", "-data", data, "-server", c.server, "-o", target}, &out, &errOut)
			if err == nil {
				t.Fatal("backup succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error()+errOut.String(), key) {
				t.Errorf("the operator key is printed: %v", err)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Errorf("%s written", target)
			}
		})
	}
}
