package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/receipt"
)

// TestRotateReceiptKeyRefusedOnPostgres: README "Several replicas on
// PostgreSQL": rotating the receipt key is not supported with PostgreSQL
// in this build (the log records the active key id, and a replica whose key
// differs is refused). -rotate-receipt-key with a PostgreSQL store, by
// flag or by FISCAL402_DATABASE_URL, must refuse and leave the keys as
// they are, not retire the key the log records and delete its private
// half, after which no replica with these keys starts again.
func TestRotateReceiptKeyRefusedOnPostgres(t *testing.T) {
	for _, tc := range []struct {
		name string
		flag []string
		env  string
	}{
		{"flag", []string{"-store", "postgres://root@127.0.0.1:5432/fiscal402?sslmode=disable"}, ""},
		{"environment", nil, "postgres://root@127.0.0.1:5432/fiscal402?sslmode=disable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FISCAL402_DATABASE_URL", tc.env)
			dir := t.TempDir()
			keys := filepath.Join(dir, "keys")
			if _, err := receipt.OpenKeyring(keys, receipt.EnvProduction, time.Now(), nil); err != nil {
				t.Fatal(err)
			}
			read := func(name string) []byte {
				raw, err := os.ReadFile(filepath.Join(keys, name))
				if err != nil {
					t.Fatal(err)
				}
				return raw
			}
			jwks, key := read("production.jwks.json"), read("production.key")
			var out, errOut bytes.Buffer
			err := run(append(append([]string{"-data", dir}, tc.flag...), "-rotate-receipt-key"), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
				t.Errorf("rotation with a PostgreSQL store: %v\n%s", err, out.String())
			}
			if !bytes.Equal(jwks, read("production.jwks.json")) || !bytes.Equal(key, read("production.key")) {
				t.Error("the refused rotation changed the receipt keys")
			}
		})
	}
}

// TestRotateReceiptKeyRefusesADirectoryNeverServed: -rotate-receipt-key
// retires the key a data directory's receipts were signed with. On a
// directory that holds no ledger (a mistyped -data), there is none: the
// rotation made a keyring there, "retired" its brand-new key, and printed
// success, while the server's real keys stayed as they were. It must
// refuse, say why, and make nothing.
func TestRotateReceiptKeyRefusesADirectoryNeverServed(t *testing.T) {
	t.Setenv("FISCAL402_DATABASE_URL", "")
	dir := filepath.Join(t.TempDir(), "fiscal402-dta")
	var out, errOut bytes.Buffer
	err := run([]string{"-data", dir, "-rotate-receipt-key"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("rotation on a directory without a ledger: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused rotation made %s (%v)", dir, err)
	}
}
