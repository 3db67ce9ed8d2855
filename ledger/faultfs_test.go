package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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

// TestRealSyncFailureAfterMetaHalts: without the journal, the fdatasync
// that follows the meta page's write fails with EIO: the ledger halts (a
// *HaltedError wrapping the kernel's EIO), as with the stand-in.
func TestRealSyncFailureAfterMetaHalts(t *testing.T) {
	ffs := faultfs.Mount(t)
	haltsAfterMeta(t, filepath.Join(ffs.Dir, "ledger.db"), syscall.EIO, true, true,
		func(l *Ledger) { ffs.FailSyncAfterWriteTo(t, "ledger.db", 0, metaPages(l)) },
		func(*Ledger) { fired(t, ffs) })
}

// TestRealSyncFailureBeforeMetaGoesOn: without the journal, the fdatasync
// of the data pages, before the meta page is written, fails with EIO:
// bbolt rolls back, the append and the update are answered
// ErrUnavailable, and writing goes on.
func TestRealSyncFailureBeforeMetaGoesOn(t *testing.T) {
	ffs := faultfs.Mount(t)
	goesOnBeforeMeta(t, filepath.Join(ffs.Dir, "ledger.db"), syscall.EIO, true,
		func(l *Ledger) { ffs.FailSyncAfterWriteOutside(t, "ledger.db", 0, metaPages(l)) },
		func(*Ledger) { fired(t, ffs) })
}

// TestRealJournalSyncFailureHalts: the journal's fdatasync of an append's
// batch fails with EIO. The commit is in force in bbolt and perhaps on the
// disk: the ledger halts as above. The batch did reach the journal (only
// its sync failed), so the file opened again replays it and a retry is
// answered with it.
func TestRealJournalSyncFailureHalts(t *testing.T) {
	ffs := faultfs.Mount(t)
	haltsAfterMeta(t, filepath.Join(ffs.Dir, "ledger.db"), syscall.EIO, false, true,
		func(l *Ledger) { ffs.FailSyncAfterWriteTo(t, "ledger.db.journal0", 0, 1<<40) },
		func(*Ledger) { fired(t, ffs) })
}

// TestRealCheckpointSyncFailureHalts: the fdatasync of the ledger file at a
// checkpoint (here a side-data update's, which is not journaled and so is
// made durable by one) fails with EIO: the update's commit is in force in
// bbolt and not durable, so the ledger halts. The file opened again holds
// every acknowledged append and not the update.
func TestRealCheckpointSyncFailureHalts(t *testing.T) {
	ffs := faultfs.Mount(t)
	path := filepath.Join(ffs.Dir, "ledger.db")
	l := reopen(t, path)
	for i := range 5 {
		mustAppend(t, l, fmt.Sprintf("before-%d", i))
	}
	ffs.FailSyncAfterWriteTo(t, "ledger.db", 0, 1<<40)
	if err := putSide(l); !isHaltedBy(err, syscall.EIO) {
		t.Fatalf("update whose checkpoint's sync failed: %v, want the *HaltedError of EIO", err)
	}
	fired(t, ffs)
	if _, err := appendClaimed(l, "after"); !isHaltedBy(err, syscall.EIO) {
		t.Fatalf("append after the failed checkpoint: %v, want the *HaltedError", err)
	}
	_ = l.Close()
	l2 := reopen(t, path)
	for i := range 5 {
		if _, err := l2.Entry(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatalf("acknowledged entry before-%d after reopening: %v", i, err)
		}
	}
	if v, err := l2.Get("side", []byte("k")); err == nil || v != nil {
		t.Fatalf("the failed update's value after reopening: %q, %v; want none", v, err)
	}
	mustCheck(t, l2)
	mustAppend(t, l2, "after")
	mustCheck(t, l2)
}

// fired fails the test when the armed fault never met its sync (the test
// would then not have tested a failure).
func fired(t *testing.T, ffs *faultfs.FS) {
	t.Helper()
	if armed, _, failed := ffs.Stat(t); armed || failed == 0 {
		t.Fatalf("the armed sync failure never fired (armed %v, %d syncs failed)", armed, failed)
	}
}

// A power cut, modelled by internal/faultfs: the disk keeps, of every block
// written since its file's last sync, a random share (none, some or all, in
// any order: write-back promises none) and the file system answers nothing
// more. What an append was acknowledged for (Append returned nil: its
// commit's two fdatasyncs succeeded) must be in the file the disk holds,
// whole, under a log that Check passes, and the ledger must go on from it.
// A kill -9 (crash_test.go, the server's soak) keeps the page cache, so it
// never tests this.

// bulkyEntry is simpleEntry with documents the size of a settlement's
// (~3 KB record, ~6 KB invoice, hardly compressible), so that a commit
// writes many pages, overflow pages among them.
func bulkyEntry(name string) func(int64) (Entry, error) {
	return func(index int64) (Entry, error) {
		e, err := simpleEntry(name)(index)
		if err != nil {
			return e, err
		}
		e.Docs["record"] = noise(name+"/record", 3<<10)
		e.Docs["ubl"] = noise(name+"/ubl", 6<<10)
		return e, nil
	}
}

// appendBulky appends bulkyEntry(name) under its claim, as mustAppend
// does a simple entry.
func appendBulky(l *Ledger, name string) error {
	_, err := l.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp:" + name)}},
		Build:  bulkyEntry(name),
	})
	return err
}

// noise is n bytes of hex derived from seed: the same for the same seed.
func noise(seed string, n int) []byte {
	out := make([]byte, 0, n+64)
	sum := sha256.Sum256([]byte(seed))
	for len(out) < n {
		out = hex.AppendEncode(out, sum[:])
		sum = sha256.Sum256(sum[:])
	}
	return out[:n]
}

// loadUntilRefused appends bulky entries from 8 goroutines until each is
// refused once, and returns the names of the acknowledged ones. Once 50
// load appends were acknowledged it calls arm on the test's goroutine
// while the appenders go on; if they are not all refused within 20 s of
// that (the cut never came), it stops them and fails the test.
func loadUntilRefused(t *testing.T, l *Ledger, prefix string, arm func()) []string {
	t.Helper()
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		stop  atomic.Bool
	)
	half, done := make(chan struct{}), make(chan struct{})
	var halfOnce sync.Once
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				name := fmt.Sprintf("%s-%d-%d", prefix, g, i)
				if err := appendBulky(l, name); err != nil {
					return
				}
				mu.Lock()
				acked = append(acked, name)
				n := len(acked)
				mu.Unlock()
				if n >= 50 {
					halfOnce.Do(func() { close(half) })
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-half:
		arm()
	case <-done:
		t.Fatal("every appender was refused before 50 load appends were acknowledged")
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		stop.Store(true)
		<-done
		t.Fatal("the appenders were still acknowledged 20 s after the cut was armed: the cut never came")
	}
	return acked
}

// afterPowerCut opens the file the disk holds after the cut and checks that
// every acknowledged entry is there, whole, that Check passes and that the
// ledger takes a new append.
func afterPowerCut(t *testing.T, path string, acked []string) {
	t.Helper()
	l := reopen(t, path)
	for _, name := range acked {
		e, err := l.Entry(name)
		if err != nil {
			t.Fatalf("acknowledged entry %s after the power cut: %v", name, err)
		}
		want, _ := bulkyEntry(name)(e.Index)
		if !bytes.Equal(e.Leaf, want.Leaf) || !bytes.Equal(e.Docs["record"], want.Docs["record"]) || !bytes.Equal(e.Docs["ubl"], want.Docs["ubl"]) {
			t.Fatalf("acknowledged entry %s after the power cut: not the bytes appended", name)
		}
		if id, err := l.Lookup("by_name", []byte(name)); err != nil || id != name {
			t.Fatalf("posting of %s after the power cut: %q, %v", name, id, err)
		}
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check after the power cut: %v", err)
	}
	mustAppend(t, l, "after the cut")
	if err := l.Check(); err != nil {
		t.Fatalf("Check after an append that followed the power cut: %v", err)
	}
}

// setJournalLimit lowers the size at which l's journal switches files, so
// that a test's load makes checkpoints (each switch starts one).
func setJournalLimit(l *Ledger, n int64) {
	s := l.store.(*boltStore)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.js.jr.limit = n
}

// testJournalLimit is the journal's size limit under the power-cut tests:
// a switch (and a checkpoint) every few commits of bulky entries.
const testJournalLimit = 256 << 10

// TestPowerCutKeepsAcknowledged: power cut under load from 8 appenders
// (group commits of several appends), on a ledger with its journal (a
// limit that makes a checkpoint every few commits) and on one without.
// With the journal: at the fdatasync of a journal file, at the one of a
// checkpoint (the ledger file), in the middle of the writes (at the 1st to
// 60th write after the cut is armed) and at a moment the test does not
// choose. Without: at the fdatasync of a commit's data pages, at the one
// after its meta page, at a write and at any moment. The disk keeps none,
// some or all of the blocks written since their last sync. And at each of
// the next 4 syncs with the disk keeping exactly the ledger file's meta
// pages and none of the rest, the write-back order that finds a missing
// barrier (a meta page on the disk before the pages it points to: with
// the journal, every commit's). Every acknowledged append survives.
func TestPowerCutKeepsAcknowledged(t *testing.T) {
	type cut struct {
		name string
		arm  func(t *testing.T, ffs *faultfs.FS, meta int64, seed uint64, keep int)
	}
	atWrite := cut{"a write", func(t *testing.T, ffs *faultfs.FS, _ int64, seed uint64, keep int) {
		ffs.PowerCutAtWrite(t, 1+int(seed*7919%60), seed, keep)
	}}
	anyMoment := cut{"any moment", func(t *testing.T, ffs *faultfs.FS, _ int64, seed uint64, keep int) { ffs.PowerCut(t, seed, keep) }}
	modes := []struct {
		name   string
		legacy bool
		cuts   []cut
	}{
		{"journal", false, []cut{
			{"a journal file's sync", func(t *testing.T, ffs *faultfs.FS, _ int64, seed uint64, keep int) {
				ffs.PowerCutAtSyncAfterWriteTo(t, "ledger.db.journal1", 0, 1<<40, seed, keep)
			}},
			{"a checkpoint's sync", func(t *testing.T, ffs *faultfs.FS, _ int64, seed uint64, keep int) {
				ffs.PowerCutAtSyncAfterWriteTo(t, "ledger.db", 0, 1<<40, seed, keep)
			}},
			atWrite, anyMoment,
		}},
		{"legacy", true, []cut{
			{"data pages' sync", func(t *testing.T, ffs *faultfs.FS, meta int64, seed uint64, keep int) {
				ffs.PowerCutAtSyncAfterWriteOutside(t, "ledger.db", 0, meta, seed, keep)
			}},
			{"meta page's sync", func(t *testing.T, ffs *faultfs.FS, meta int64, seed uint64, keep int) {
				ffs.PowerCutAtSyncAfterWriteTo(t, "ledger.db", 0, meta, seed, keep)
			}},
			atWrite, anyMoment,
		}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			type trial struct {
				cut  cut
				keep int
			}
			var trials []trial
			for _, c := range mode.cuts {
				for _, keep := range []int{0, 300, 700, 1000} {
					trials = append(trials, trial{c, keep})
				}
			}
			for k := 1; k <= 4; k++ {
				trials = append(trials, trial{cut{fmt.Sprintf("sync %d, keeping only the meta pages", k),
					func(t *testing.T, ffs *faultfs.FS, meta int64, _ uint64, _ int) {
						ffs.PowerCutAtSyncKeepingOnly(t, k, "ledger.db", 0, meta)
					}}, -1})
			}
			reverted := map[string]int{}
			for i, tr := range trials {
				name := tr.cut.name
				if tr.keep >= 0 {
					name += fmt.Sprintf("/keep=%d", tr.keep)
				}
				t.Run(name, func(t *testing.T) {
					ffs := faultfs.Mount(t)
					l := reopenWith(t, filepath.Join(ffs.Dir, "ledger.db"), mode.legacy)
					if !mode.legacy {
						setJournalLimit(l, testJournalLimit)
					}
					var acked []string
					for i := 0; i < 20; i++ {
						name := fmt.Sprintf("before-%d", i)
						if err := appendBulky(l, name); err != nil {
							t.Fatal(err)
						}
						acked = append(acked, name)
					}
					seed := uint64(100*len(tr.cut.name) + i + 1)
					// Read before the load: bbolt's Info races its remap.
					meta := metaPages(l)
					acked = append(acked, loadUntilRefused(t, l, "load", func() { tr.cut.arm(t, ffs, meta, seed, tr.keep) })...)
					s := ffs.Stats(t)
					if !s.Cut {
						t.Fatalf("the power was never cut: %+v", s)
					}
					reverted[tr.cut.name] += s.Reverted
					t.Logf("%d acknowledged; the cut kept %d blocks and put back %d", len(acked), s.Kept, s.Reverted)
					// Stopped before the disk is read, as the machine would be.
					_ = l.Close()
					afterPowerCut(t, filepath.Join(ffs.Disk, "ledger.db"), acked)
				})
			}
			// A cut at a chosen point that put nothing back would test
			// nothing; the moment the test does not choose may fall between
			// commits, and a sync cut keeping the meta pages may find only
			// them unsynced.
			for _, c := range mode.cuts[:3] {
				if reverted[c.name] == 0 {
					t.Errorf("no cut at %s put back a block", c.name)
				}
			}
		})
	}
}

// TestPowerCutCatchesNoSync: the same cut under load, on a ledger that
// never syncs what makes a commit durable (mutations): bbolt with NoSync
// and no journal, and the journal with its fdatasync dropped.
// Acknowledged appends are lost or the file is broken, which the checks of
// TestPowerCutKeepsAcknowledged see. It shows that they can fail.
func TestPowerCutCatchesNoSync(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			ffs := faultfs.Mount(t)
			path := filepath.Join(ffs.Dir, "ledger.db")
			s, _, _ := testKey(t, testOrigin, "log key 1")
			l, err := openWith(path, Options{Origin: testOrigin, Signer: s}, func(o *bolt.Options) { o.NoSync = true }, legacy)
			if err != nil {
				t.Fatal(err)
			}
			if !legacy {
				st := l.store.(*boltStore)
				st.wmu.Lock()
				st.js.jr.sync = func(*os.File) error { return nil }
				st.wmu.Unlock()
			}
			acked := loadUntilRefused(t, l, "load", func() { ffs.PowerCut(t, 1, 0) })
			_ = l.Close()
			if len(acked) < 50 {
				t.Fatalf("%d acknowledged before the cut, want at least 50", len(acked))
			}
			after, err := Open(filepath.Join(ffs.Disk, "ledger.db"), Options{Origin: testOrigin, Signer: s})
			if err != nil {
				t.Logf("the file after the cut does not open: %v", err)
				return
			}
			defer after.Close()
			lost := 0
			for _, name := range acked {
				if _, err := after.Entry(name); err != nil {
					lost++
				}
			}
			if lost == 0 && after.Check() == nil {
				t.Fatalf("without syncs a power cut that keeps nothing lost none of %d acknowledged appends", len(acked))
			}
			t.Logf("without syncs the cut lost %d of %d acknowledged appends", lost, len(acked))
		})
	}
}

// TestPowerCutSoak: 24 more cuts under load, each drawn: before one of
// the first 400 writes after the load began (any page of any commit, the
// meta page among them) or at one of the first 40 syncs, with a drawn
// share of the unsynced blocks kept, or at a sync keeping only the meta
// pages. The draws are seeded; the cut repeats as far as the appenders'
// writes do (their interleaving varies from run to run).
func TestPowerCutSoak(t *testing.T) {
	trials := 24
	if testing.Short() {
		trials = 4
	}
	rng := rand.New(rand.NewPCG(22, 46))
	reverted := 0
	for i := 0; i < trials; i++ {
		kind, keep, seed := rng.IntN(3), rng.IntN(1001), rng.Uint64()
		k := 1 + rng.IntN(400)
		name := fmt.Sprintf("write=%d/keep=%d", k, keep)
		arm := func(t *testing.T, ffs *faultfs.FS, _ int64) { ffs.PowerCutAtWrite(t, k, seed, keep) }
		switch kind {
		case 1:
			k = 1 + k%40
			name = fmt.Sprintf("sync=%d/keep=%d", k, keep)
			arm = func(t *testing.T, ffs *faultfs.FS, _ int64) { ffs.PowerCutAtSync(t, k, seed, keep) }
		case 2:
			k = 1 + k%40
			name = fmt.Sprintf("sync=%d/keep=meta", k)
			arm = func(t *testing.T, ffs *faultfs.FS, meta int64) {
				ffs.PowerCutAtSyncKeepingOnly(t, k, "ledger.db", 0, meta)
			}
		}
		t.Run(name, func(t *testing.T) {
			ffs := faultfs.Mount(t)
			l := reopen(t, filepath.Join(ffs.Dir, "ledger.db"))
			setJournalLimit(l, testJournalLimit)
			meta := metaPages(l) // before the load: bbolt's Info races its remap
			acked := loadUntilRefused(t, l, "soak", func() { arm(t, ffs, meta) })
			s := ffs.Stats(t)
			if !s.Cut {
				t.Fatalf("the power was never cut: %+v", s)
			}
			reverted += s.Reverted
			_ = l.Close()
			afterPowerCut(t, filepath.Join(ffs.Disk, "ledger.db"), acked)
		})
	}
	if reverted == 0 {
		t.Fatal("no cut of the soak put back a block")
	}
}
