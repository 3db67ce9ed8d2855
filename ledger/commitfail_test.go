package ledger

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// errSync stands for an fdatasync that failed (EIO from a failing disk).
var errSync = errors.New("fdatasync: input/output error")

// syncFailsAfterMeta commits tx and then reports the meta page's fdatasync
// as failed: the state bbolt is left in when its second sync fails (the
// meta page is in the page cache, so bbolt's next transactions begin from
// it; tx.go writeMeta, then rollback reloading from db.meta()).
func syncFailsAfterMeta(tx *bolt.Tx) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	return errSync
}

// syncFailsBeforeMeta fails the commit before its meta page is written (a
// failed first sync, a full disk): bbolt rolls back, its state unchanged.
func syncFailsBeforeMeta(tx *bolt.Tx) error {
	if err := tx.Rollback(); err != nil {
		return err
	}
	return errSync
}

// bboltTxID is the id of the newest transaction bbolt has in force.
func bboltTxID(t *testing.T, l *Ledger) int {
	t.Helper()
	tx, err := l.store.(*boltStore).db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return tx.ID()
}

// TestCommitFailedAfterMetaStopsWriting: a commit whose meta page was
// written but whose sync failed is in force in bbolt yet not durable, and
// its callers are told it failed. The ledger must stop writing (an append,
// a retry of the failed append under its claim, a side-data update) with a
// *CorruptError rather than build on it, keep answering reads from its
// state before the commit, and open again from the file.
func TestCommitFailedAfterMetaStopsWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	mustAppend(t, l, "before")
	size := l.Size()
	s := l.store.(*boltStore)
	s.commitTx = syncFailsAfterMeta

	appendNamed := func(name string) error {
		_, err := l.Append(context.Background(), Append{
			Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp:" + name)}},
			Build:  simpleEntry(name),
		})
		return err
	}
	err := appendNamed("uncertain")
	var co *CorruptError
	if !errors.As(err, &co) || co.Index != -1 || co.Path != path {
		t.Fatalf("append whose sync failed after the meta page: %v, want a *CorruptError of the file", err)
	}
	inForce := bboltTxID(t, l)

	// Writing stopped, whatever the commit function does now.
	s.commitTx = (*bolt.Tx).Commit
	for name, write := range map[string]func() error{
		"a retry of the failed append": func() error { return appendNamed("uncertain") },
		"another append":               func() error { return appendNamed("after") },
		"a side-data update": func() error {
			return l.Update(func(tx Tx) error { return tx.Put("side", []byte("k"), []byte("v")) })
		},
	} {
		if err := write(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s after the failed commit: %v, want ErrCorrupt", name, err)
		}
	}
	if got := bboltTxID(t, l); got != inForce {
		t.Fatalf("bbolt's transaction after the refused writes is %d, want %d: something was written", got, inForce)
	}

	// Reads stop too (bbolt's snapshots hold the failed commit); what the
	// process holds in memory is the state before it.
	for name, read := range map[string]func() error{
		"the failed append's entry": func() error { _, err := l.Entry("uncertain"); return err },
		"an entry committed before": func() error { _, err := l.Entry("before"); return err },
		"the failed append's claim": func() error { _, _, err := l.ClaimHolder("payment", "uncertain"); return err },
		"a posting":                 func() error { _, err := l.Lookup("by_name", []byte("uncertain")); return err },
		"side data":                 func() error { return l.View(func(Tx) error { return nil }) },
	} {
		if err := read(); !errors.As(err, &co) || !strings.Contains(err.Error(), "may be damaged") {
			t.Errorf("%s after the failed commit: %v, want the *CorruptError of the failed sync", name, err)
		}
	}
	if got := l.Size(); got != size {
		t.Fatalf("size after the failed commit: %d, want %d", got, size)
	}
	// The consistent copy still works: the operator's rescue of a failing
	// disk. It holds what bbolt holds, the failed commit included.
	var backup bytes.Buffer
	if _, err := l.WriteTo(&backup); err != nil {
		t.Fatalf("backup after the failed commit: %v", err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(copyPath, backup.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := reopen(t, copyPath).Size(); got != size+1 {
		t.Fatalf("the backup holds %d entries, want %d", got, size+1)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Opened again, the file is the truth: here the commit reached it.
	l2 := reopen(t, path)
	mustCheck(t, l2)
	if got := l2.Size(); got != size+1 {
		t.Fatalf("size after reopening: %d, want %d", got, size+1)
	}
	a, err := l2.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: "uncertain", Fingerprint: []byte("fp:uncertain")}},
		Build:  simpleEntry("uncertain"),
	})
	if err != nil || !a.Existing || a.ID != "uncertain" {
		t.Fatalf("retry after reopening: %+v, %v; want the existing entry", a, err)
	}
	mustAppend(t, l2, "after")
	mustCheck(t, l2)
}

// TestCommitFailedBeforeMetaGoesOn: a commit that failed before its meta
// page left bbolt as it was: the append is answered ErrUnavailable,
// nothing of it is found, and the next append is written.
func TestCommitFailedBeforeMetaGoesOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	mustAppend(t, l, "before")
	size := l.Size()
	s := l.store.(*boltStore)
	s.commitTx = syncFailsBeforeMeta
	_, err := l.Append(context.Background(), Append{Build: simpleEntry("failed")})
	if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("append whose commit failed before the meta page: %v, want ErrUnavailable", err)
	}
	if err := l.Update(func(tx Tx) error { return tx.Put("side", []byte("k"), []byte("v")) }); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("update whose commit failed before the meta page: %v, want ErrUnavailable", err)
	}
	s.commitTx = (*bolt.Tx).Commit
	if _, err := l.Entry("failed"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("entry of the failed append: %v, want ErrNotFound", err)
	}
	mustAppend(t, l, "after")
	if got := l.Size(); got != size+1 {
		t.Fatalf("size: %d, want %d", got, size+1)
	}
	mustCheck(t, l)
}

// TestUpdateFailedAfterMetaStopsWriting: the same for a side-data
// update, whose commit is bbolt's too.
func TestUpdateFailedAfterMetaStopsWriting(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	mustAppend(t, l, "before")
	l.store.(*boltStore).commitTx = syncFailsAfterMeta
	if err := l.Update(func(tx Tx) error { return tx.Put("side", []byte("k"), []byte("v")) }); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("update whose sync failed after the meta page: %v, want ErrCorrupt", err)
	}
	l.store.(*boltStore).commitTx = (*bolt.Tx).Commit
	if _, err := l.Append(context.Background(), Append{Build: simpleEntry("after")}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("append after the failed update: %v, want ErrCorrupt", err)
	}
}
