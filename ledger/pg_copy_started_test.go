package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestCopyToPostgresIntoAStartedLog: an operator starts a replica on the
// new database before moving the file's ledger there (README "Moving a
// bbolt ledger to PostgreSQL"). The replica appended nothing (size 0, the
// same genesis), but its start wrote side data (readiness, webhook
// configuration) under keys the file has too. The copy failed half way
// with "unavailable: duplicate key value violates unique constraint
// side_pkey", an error that says retry, on a log that will never take the
// copy. It must be refused before anything is written, as a log that is
// not empty (ErrInvalid), saying what is there; nothing of it changes.
func TestCopyToPostgresIntoAStartedLog(t *testing.T) {
	url := pgtest.Schema(t)
	if url == "" {
		return
	}
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, v, _ := testKey(t, testOrigin, "log key 1")
	src, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, src, "e1")
	if err := src.Update(func(tx Tx) error { return tx.Put("ops", []byte("ready"), []byte("file")) }); err != nil {
		t.Fatal(err)
	}
	src.Close()
	started := openPG(t, url)
	if err := started.Update(func(tx Tx) error { return tx.Put("ops", []byte("ready"), []byte("replica")) }); err != nil {
		t.Fatal(err)
	}
	started.Close()

	_, err = CopyToPostgres(context.Background(), path, url, Options{Origin: testOrigin, Verifier: v})
	if err == nil || errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("copy into a log a server started on: %v, want ErrInvalid (not a retry)", err)
	}
	if !strings.Contains(err.Error(), "side") {
		t.Errorf("the refusal does not say what the log holds: %v", err)
	}
	l := openPG(t, url)
	if l.Size() != 0 {
		t.Fatalf("the refused copy left the log at size %d", l.Size())
	}
	if got, _ := l.Get("ops", []byte("ready")); string(got) != "replica" {
		t.Fatalf("the refused copy changed the log's side data: %q", got)
	}
}
