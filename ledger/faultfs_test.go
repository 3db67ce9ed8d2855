package ledger

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/fiscal402/fiscal402/internal/faultfs"
)

// The failed-sync tests of commitfail_test.go again, on a real file system
// whose fdatasync fails (internal/faultfs: a FUSE mount served by a child
// process), so that the failure comes from the kernel into bbolt's own
// commit and bbolt's own rollback runs: not a stand-in for Tx.Commit.
//
// bbolt v1.5.0's Tx.Commit grows the file first when it must (a truncate
// and an fsync, after no write), writes the dirty pages, fdatasyncs, writes
// the meta page (page 0 or 1: the file's first two pages) and fdatasyncs
// again (bbolt tx.go, Commit, write, writeMeta; db.go, grow). Which sync
// fails is chosen by what was written to ledger.db since its last sync, so
// a grow's sync never takes the fault (were it to, bbolt's error would not
// wrap EIO and the tests would fail, not pass).

// metaPages is the length of bbolt's two meta pages, at the start of l's
// file.
func metaPages(l *Ledger) int64 { return 2 * int64(l.store.(*boltStore).db.Info().PageSize) }

// TestRealSyncFailureAfterMetaHalts: the fdatasync that follows the meta
// page's write fails with EIO: the ledger halts (a *HaltedError wrapping
// the kernel's EIO), as with the stand-in.
func TestRealSyncFailureAfterMetaHalts(t *testing.T) {
	ffs := faultfs.Mount(t)
	haltsAfterMeta(t, filepath.Join(ffs.Dir, "ledger.db"), syscall.EIO,
		func(l *Ledger) { ffs.FailSyncAfterWriteTo(t, "ledger.db", 0, metaPages(l)) },
		func(*Ledger) { fired(t, ffs) })
}

// TestRealSyncFailureBeforeMetaGoesOn: the fdatasync of the data pages,
// before the meta page is written, fails with EIO: bbolt rolls back, the
// append and the update are answered ErrUnavailable, and writing goes on.
func TestRealSyncFailureBeforeMetaGoesOn(t *testing.T) {
	ffs := faultfs.Mount(t)
	goesOnBeforeMeta(t, filepath.Join(ffs.Dir, "ledger.db"), syscall.EIO,
		func(l *Ledger) { ffs.FailSyncAfterWriteOutside(t, "ledger.db", 0, metaPages(l)) },
		func(*Ledger) { fired(t, ffs) })
}

// fired fails the test when the armed fault never met its sync (the test
// would then not have tested a failure).
func fired(t *testing.T, ffs *faultfs.FS) {
	t.Helper()
	if armed, _, failed := ffs.Stat(t); armed || failed == 0 {
		t.Fatalf("the armed sync failure never fired (armed %v, %d syncs failed)", armed, failed)
	}
}
