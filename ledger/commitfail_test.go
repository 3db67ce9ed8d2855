package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// errSync stands for an fdatasync that failed (EIO from a failing disk).
var errSync = errors.New("fdatasync: input/output error")

// syncFailsAfterMeta commits tx and then reports the meta page's fdatasync
// as failed: the state bbolt is left in when its second sync fails (the
// meta page is in the page cache, so bbolt's next transactions begin from
// it; tx.go writeMeta). The commit itself succeeded, so bbolt's own
// rollback after a failed writeMeta (its free pages reloaded from that
// meta page) does not run; what the ledger sees is the same.
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

// setCommitTx replaces the store's commit function, under the writers'
// lock that commit and update read it under.
func setCommitTx(l *Ledger, fn func(*bolt.Tx) error) {
	s := l.store.(*boltStore)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.commitTx = fn
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

// isHalted reports whether err is the halt of a failed sync: a
// *HaltedError that wraps ErrUnavailable and the sync's own error, and
// not a damage found (ErrCorrupt).
func isHalted(err error) bool { return isHaltedBy(err, errSync) }

// isHaltedBy is isHalted for a sync that failed with cause.
func isHaltedBy(err, cause error) bool {
	var h *HaltedError
	return errors.As(err, &h) && errors.Is(err, ErrUnavailable) && errors.Is(err, cause) && !errors.Is(err, ErrCorrupt)
}

func appendClaimed(l *Ledger, name string) (Appended, error) {
	return l.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp:" + name)}},
		Build:  simpleEntry(name),
	})
}

func putSide(l *Ledger) error {
	return l.Update(func(tx Tx) error { return tx.Put("side", []byte("k"), []byte("v")) })
}

// TestCommitFailedAfterMetaHalts: a commit whose meta page was written but
// whose sync failed is in force in bbolt yet perhaps not durable, and its
// callers are told it failed. The ledger must stop reading and writing (an
// append, a retry of the failed append under its claim, a side-data
// update, every read that would see bbolt's snapshot, Check) with a
// *HaltedError rather than build on it or answer from it; its backup copy
// still works, and the file opens again.
//
// With the journal the commit never reached it, so the file opened again
// does not hold it (nobody was told it succeeded); without, bbolt's meta
// page did reach the file.
func TestCommitFailedAfterMetaHalts(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			haltsAfterMeta(t, filepath.Join(t.TempDir(), "ledger.db"), errSync, legacy, legacy,
				func(l *Ledger) { setCommitTx(l, syncFailsAfterMeta) },
				func(l *Ledger) { setCommitTx(l, (*bolt.Tx).Commit) })
		})
	}
}

// reopenWith is reopen, without the journal when legacy.
func reopenWith(t testing.TB, path string, legacy bool) *Ledger {
	t.Helper()
	s, _, _ := testKey(t, testOrigin, "log key 1")
	l, err := openWith(path, Options{Origin: testOrigin, Signer: s}, nil, legacy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// haltsAfterMeta is TestCommitFailedAfterMetaHalts on the file at path
// (opened without the journal when legacy): fail makes the next commit's
// sync after its meta page fail with cause, and after (called once the
// append failed) restores the commit. kept: the failed commit reached the
// file, which holds it when opened again.
func haltsAfterMeta(t *testing.T, path string, cause error, legacy, kept bool, fail, after func(*Ledger)) {
	t.Helper()
	l := reopenWith(t, path, legacy)
	mustAppend(t, l, "before")
	size := l.Size()
	fail(l)
	if _, err := appendClaimed(l, "uncertain"); !isHaltedBy(err, cause) {
		t.Fatalf("append whose sync failed after the meta page: %v, want the *HaltedError of %v", err, cause)
	}
	inForce := bboltTxID(t, l)

	after(l)
	for name, call := range map[string]func() error{
		"a retry of the failed append": func() error { _, err := appendClaimed(l, "uncertain"); return err },
		"another append":               func() error { _, err := appendClaimed(l, "after"); return err },
		"a side-data update":           func() error { return putSide(l) },
		"the failed append's entry":    func() error { _, err := l.Entry("uncertain"); return err },
		"an entry committed before":    func() error { _, err := l.Entry("before"); return err },
		"the failed append's claim":    func() error { _, _, err := l.ClaimHolder("payment", "uncertain"); return err },
		"a posting":                    func() error { _, err := l.Lookup("by_name", []byte("uncertain")); return err },
		"side data":                    func() error { return l.View(func(Tx) error { return nil }) },
		"Check":                        l.Check,
	} {
		if err := call(); !isHaltedBy(err, cause) {
			t.Errorf("%s after the failed commit: %v, want the *HaltedError", name, err)
		}
	}
	if got := bboltTxID(t, l); got != inForce {
		t.Fatalf("bbolt's transaction after the refused calls is %d, want %d: something was written", got, inForce)
	}
	if got := l.Size(); got != size {
		t.Fatalf("size after the failed commit: %d, want %d (the state before it)", got, size)
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

	// Where the commit did reach the file (only its sync was reported as
	// failed), the file opened again holds it, and a retry under its
	// claim is answered with it; otherwise the retry appends it anew.
	l2 := reopenWith(t, path, legacy)
	mustCheck(t, l2)
	want := size
	if kept {
		want++
	}
	if got := l2.Size(); got != want {
		t.Fatalf("size after reopening: %d, want %d", got, want)
	}
	if a, err := appendClaimed(l2, "uncertain"); err != nil || a.Existing != kept || a.ID != "uncertain" {
		t.Fatalf("retry after reopening: %+v, %v; want existing=%v", a, err, kept)
	}
	mustAppend(t, l2, "after")
	mustCheck(t, l2)
}

// TestCommitFailedBeforeMetaGoesOn: a commit that failed before its meta
// page left bbolt as it was: the append or update is answered
// ErrUnavailable, nothing of it is found, and writing goes on.
func TestCommitFailedBeforeMetaGoesOn(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			goesOnBeforeMeta(t, filepath.Join(t.TempDir(), "ledger.db"), errSync, legacy,
				func(l *Ledger) { setCommitTx(l, syncFailsBeforeMeta) },
				func(l *Ledger) { setCommitTx(l, (*bolt.Tx).Commit) })
		})
	}
}

// goesOnBeforeMeta is TestCommitFailedBeforeMetaGoesOn on the file at
// path: fail makes the next commit fail with cause before its meta page
// (called before the append and again before the update), and after
// restores the commit.
func goesOnBeforeMeta(t *testing.T, path string, cause error, legacy bool, fail, after func(*Ledger)) {
	t.Helper()
	l := reopenWith(t, path, legacy)
	mustAppend(t, l, "before")
	size := l.Size()
	fail(l)
	_, err := appendClaimed(l, "failed")
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, cause) || isHaltedBy(err, cause) {
		t.Fatalf("append whose commit failed before the meta page: %v, want ErrUnavailable of %v", err, cause)
	}
	fail(l)
	if err := putSide(l); !errors.Is(err, ErrUnavailable) || !errors.Is(err, cause) || isHaltedBy(err, cause) {
		t.Fatalf("update whose commit failed before the meta page: %v, want ErrUnavailable of %v", err, cause)
	}
	after(l)
	if _, err := l.Entry("failed"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("entry of the failed append: %v, want ErrNotFound", err)
	}
	if v, err := l.Get("side", []byte("k")); err == nil || v != nil {
		t.Fatalf("the failed update's value: %q, %v; want none", v, err)
	}
	mustAppend(t, l, "after")
	// The failed append's claim was never taken: appended again, it is new.
	if a, err := appendClaimed(l, "failed"); err != nil || a.Existing {
		t.Fatalf("the failed append again: %+v, %v; want a new entry", a, err)
	}
	if got := l.Size(); got != size+2 {
		t.Fatalf("size: %d, want %d", got, size+2)
	}
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := reopenWith(t, path, legacy)
	mustCheck(t, l2)
	if got := l2.Size(); got != size+2 {
		t.Fatalf("size after reopening: %d, want %d", got, size+2)
	}
}

// TestUpdateFailedAfterMetaHalts: the same for a side-data update, whose
// commit is bbolt's too.
func TestUpdateFailedAfterMetaHalts(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	mustAppend(t, l, "before")
	setCommitTx(l, syncFailsAfterMeta)
	if err := putSide(l); !isHalted(err) {
		t.Fatalf("update whose sync failed after the meta page: %v, want the *HaltedError", err)
	}
	setCommitTx(l, (*bolt.Tx).Commit)
	if _, err := l.Append(context.Background(), Append{Build: simpleEntry("after")}); !isHalted(err) {
		t.Fatalf("append after the failed update: %v, want the *HaltedError", err)
	}
}

// TestCommitFailedWithAWriterWaiting: bbolt releases its writer lock when
// a failed commit rolls back, before the ledger has read which case it
// was. A side-data update waiting then (as GET /readyz's does) must
// neither commit on top of a commit whose meta page was written (and be
// told it succeeded), nor, after a failure before the meta page, commit
// under the same transaction id and so make the ledger halt for nothing.
func TestCommitFailedWithAWriterWaiting(t *testing.T) {
	for _, c := range []struct {
		name string
		fail func(*bolt.Tx) error
		// halts: the append and the waiting update both answer the halt;
		// otherwise the append ErrUnavailable and the update nil.
		halts bool
	}{
		{"after the meta page", syncFailsAfterMeta, true},
		{"before the meta page", syncFailsBeforeMeta, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
			mustAppend(t, l, "before")
			updated := make(chan error, 1)
			failed := false // read and set under the store's wmu
			setCommitTx(l, func(tx *bolt.Tx) error {
				if failed {
					return tx.Commit()
				}
				failed = true
				err := c.fail(tx) // bbolt's writer lock is free from here
				started := make(chan struct{})
				go func() {
					close(started)
					updated <- putSide(l)
				}()
				<-started
				// Room for the update to take bbolt's lock, if nothing
				// else held it off, before the failure is looked at.
				time.Sleep(50 * time.Millisecond)
				return err
			})
			_, err := l.Append(context.Background(), Append{Build: simpleEntry("failed")})
			uerr := <-updated
			setCommitTx(l, (*bolt.Tx).Commit)
			if c.halts {
				if !isHalted(err) || !isHalted(uerr) {
					t.Fatalf("append %v; waiting update %v; want both the *HaltedError", err, uerr)
				}
				return
			}
			if !errors.Is(err, ErrUnavailable) || isHalted(err) || uerr != nil {
				t.Fatalf("append %v (want ErrUnavailable, no halt); waiting update %v (want nil)", err, uerr)
			}
			mustAppend(t, l, "after")
		})
	}
}

// TestUpdateFailedWhileClosing: a Close that comes between a failed
// commit and the look at which case it was must wait, or the look would
// find the file closed and the halt be lost.
func TestUpdateFailedWhileClosing(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	mustAppend(t, l, "before")
	closed := make(chan error, 1)
	setCommitTx(l, func(tx *bolt.Tx) error {
		err := syncFailsAfterMeta(tx)
		started := make(chan struct{})
		go func() {
			close(started)
			closed <- l.Close()
		}()
		<-started
		time.Sleep(50 * time.Millisecond) // room for the Close to run, if nothing held it off
		return err
	})
	if err := putSide(l); !isHalted(err) {
		t.Fatalf("update whose sync failed while the ledger closed: %v, want the *HaltedError", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
}

// TestNeedsOperator: the errors a background loop may wait a minute on
// are those only an operator ends, however wrapped.
func TestNeedsOperator(t *testing.T) {
	for err, want := range map[error]bool{
		fmt.Errorf("x: %w", &HaltedError{Path: "p", Err: errSync}):        true,
		fmt.Errorf("x: %w", &CorruptError{Path: "p", Reason: "bad page"}): true,
		fmt.Errorf("x: %w", &IntegrityError{What: "leaf"}):                true,
		fmt.Errorf("x: %w", ErrUnavailable):                               false,
		ErrClosed:                                                         false,
		ErrNotFound:                                                       false,
		errSync:                                                           false,
	} {
		if got := NeedsOperator(err); got != want {
			t.Errorf("NeedsOperator(%v) = %v, want %v", err, got, want)
		}
	}
}
