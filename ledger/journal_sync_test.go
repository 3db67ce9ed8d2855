package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// gateJournalSync makes the journal's fdatasyncs wait for open (each one
// signals entered first) and then return what fn returns. The gate opens
// at the test's end too, so that a failed test does not hang.
func gateJournalSync(t *testing.T, l *Ledger, fn func(*os.File) error) (entered chan struct{}, open func()) {
	t.Helper()
	entered, gate := make(chan struct{}, 64), make(chan struct{})
	var once sync.Once
	open = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	st := l.store.(*boltStore)
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.js.jr.sync = func(f *os.File) error {
		entered <- struct{}{}
		<-gate
		return fn(f)
	}
	return entered, open
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// notWithin fails the test if ch yields within d.
func notWithin[T any](t *testing.T, ch <-chan T, d time.Duration, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s returned (%v) while the journal's fdatasync had not finished", what, v)
	case <-time.After(d):
	}
}

// TestCommitsGoOnWhileTheJournalSyncs: the journal's fdatasync runs behind
// the committer. While the fdatasync of one batch runs, the next batch is
// committed in bbolt, and neither is answered, counted in Size, or seen
// by any read (an entry, a claim's holder, a posting, a checkpoint) until
// the fdatasync that covers it is over: an answer read from the ledger is
// never one a crash could take back.
func TestCommitsGoOnWhileTheJournalSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopenWith(t, path, false)
	mustAppend(t, l, "before")
	size := l.Size()
	entered, open := gateJournalSync(t, l, fdatasyncFile)
	inForce := bboltTxID(t, l)

	answers := make(chan error, 2)
	go func() { _, err := appendClaimed(l, "first"); answers <- err }()
	<-entered // the syncer is in first's fdatasync
	waitFor(t, "the first batch in bbolt", func() bool { return bboltTxID(t, l) >= inForce+1 })
	go func() { _, err := appendClaimed(l, "second"); answers <- err }()
	waitFor(t, "the second batch committed during the first's fdatasync", func() bool { return bboltTxID(t, l) >= inForce+2 })

	reads := map[string]func() error{
		"Entry":       func() error { _, err := l.Entry("second"); return err },
		"IndexOf":     func() error { _, err := l.IndexOf("first"); return err },
		"ClaimHolder": func() error { _, _, err := l.ClaimHolder("payment", "first"); return err },
		"Lookup":      func() error { _, err := l.Lookup("by_name", []byte("first")); return err },
		"EntryAt":     func() error { _, err := l.EntryAt(size); return err },
	}
	done := map[string]chan error{}
	for name, read := range reads {
		ch := make(chan error, 1)
		done[name] = ch
		go func() { ch <- read() }()
	}
	notWithin(t, answers, 100*time.Millisecond, "an append")
	for name, ch := range done {
		notWithin(t, ch, 10*time.Millisecond, name)
	}
	if got := l.Size(); got != size {
		t.Fatalf("Size %d while the batches were not durable, want %d", got, size)
	}
	if cp, err := l.Checkpoint(); err != nil || cp.Size != size {
		t.Fatalf("Checkpoint %d, %v while the batches were not durable, want size %d", cp.Size, err, size)
	}

	open()
	for range 2 {
		if err := <-answers; err != nil {
			t.Fatal(err)
		}
	}
	for name, ch := range done {
		if err := <-ch; err != nil {
			t.Errorf("%s once durable: %v", name, err)
		}
	}
	if got := l.Size(); got != size+2 {
		t.Fatalf("Size %d once durable, want %d", got, size+2)
	}
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFailedJournalSyncFailsEveryBatchAfterIt: when the fdatasync behind
// the committer fails, the batch it covered and the one committed in bbolt
// meanwhile both fail with the *HaltedError, nothing more is written or
// read, and the file opens again (with whatever of the two the journal
// holds: neither was answered as written) and takes both retries.
func TestFailedJournalSyncFailsEveryBatchAfterIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopenWith(t, path, false)
	mustAppend(t, l, "before")
	size := l.Size()
	entered, open := gateJournalSync(t, l, func(*os.File) error { return errSync })
	inForce := bboltTxID(t, l)

	answers := make(chan error, 2)
	go func() { _, err := appendClaimed(l, "first"); answers <- err }()
	<-entered
	go func() { _, err := appendClaimed(l, "second"); answers <- err }()
	waitFor(t, "the second batch committed during the first's fdatasync", func() bool { return bboltTxID(t, l) >= inForce+2 })
	open()
	for range 2 {
		if err := <-answers; !isHalted(err) {
			t.Fatalf("an append whose journal sync failed: %v, want the *HaltedError", err)
		}
	}
	if _, err := l.Entry("before"); !isHalted(err) {
		t.Fatalf("a read after the failed sync: %v, want the *HaltedError", err)
	}
	if _, err := appendClaimed(l, "third"); !isHalted(err) {
		t.Fatalf("an append after the failed sync: %v, want the *HaltedError", err)
	}
	if got := l.Size(); got != size {
		t.Fatalf("Size %d after the failed sync, want %d", got, size)
	}
	// Close releases the file (as after any halt: haltsAfterMeta) for
	// the open below.
	if err := l.Close(); err != nil {
		t.Fatalf("Close after the failed sync: %v", err)
	}

	l2 := reopenWith(t, path, false)
	mustCheck(t, l2)
	if got := l2.Size(); got < size || got > size+2 {
		t.Fatalf("size after reopening: %d, want %d to %d", got, size, size+2)
	}
	for _, name := range []string{"first", "second"} {
		if a, err := appendClaimed(l2, name); err != nil || a.ID != name {
			t.Fatalf("retry of %s after reopening: %+v, %v", name, a, err)
		}
	}
	if got := l2.Size(); got != size+2 {
		t.Fatalf("size after the retries: %d, want %d", got, size+2)
	}
	mustCheck(t, l2)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointSentWithABatchCountsOnceItIsDurable: a checkpoint's record
// rides in the next batch's journal write, and that write is synced behind
// the committer. Until it is, the checkpoint before stays the one recovery
// has, and its pages stay held: what commits during the sync (the next
// batch, a side write) must not write over them. The disk a crash then
// leaves (the ledger file with every write bbolt made, the journal as
// synced before the batch) opens to the state before the batch and passes
// Check.
func TestCheckpointSentWithABatchCountsOnceItIsDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopenWith(t, path, false)
	noCheckpoints(l) // the checkpoint of Open is the journal's (B)
	for i := range 10 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
	}
	s := l.store.(*boltStore)
	s.wmu.Lock()
	txid, err := s.lastTxid()
	if err == nil {
		err = s.startCheckpoint(txid) // C, of the 10 commits since B
	}
	if err == nil {
		err = s.collect(true) // its record waits for the next batch's write
	}
	queued := s.js.queued
	s.wmu.Unlock()
	if err != nil || queued != txid {
		t.Fatalf("checkpoint queued: %d, %v; want %d", queued, err, txid)
	}
	var journal [2][]byte
	for i, p := range journalPaths(path) {
		if journal[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}

	entered, open := gateJournalSync(t, l, fdatasyncFile)
	inForce := bboltTxID(t, l)
	answers := make(chan error, 2)
	go func() { _, err := appendClaimed(l, "w"); answers <- err }() // carries C's record
	<-entered
	go func() { _, err := appendClaimed(l, "w+1"); answers <- err }()
	waitFor(t, "the batch after C's", func() bool { return bboltTxID(t, l) >= inForce+2 })
	// A side write then commits (no later batch can: the committer is
	// one batch ahead at most); its synchronous checkpoint waits for the
	// journal's fdatasync in progress. The file as bbolt wrote it is
	// what a crash may leave.
	updated := make(chan error, 1)
	go func() { updated <- putSide(l) }()
	waitFor(t, "the side write in bbolt", func() bool { return bboltTxID(t, l) >= inForce+3 })
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open()
	for range 2 {
		if err := <-answers; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-updated; err != nil {
		t.Fatal(err)
	}

	crashed := filepath.Join(t.TempDir(), "ledger.db")
	if err := os.WriteFile(crashed, file, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, b := range journal {
		if err := os.WriteFile(journalPaths(crashed)[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l2 := reopenWith(t, crashed, false)
	mustCheck(t, l2)
	if got := l2.Size(); got != 10 {
		t.Fatalf("the crashed disk opens with %d entries, want 10", got)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRetryAnsweredOnceItsHolderIsDurable: a retry whose claim is held by
// a batch still syncing writes nothing, yet its answer (the existing entry)
// rests on that batch: it waits until the batch is durable.
func TestRetryAnsweredOnceItsHolderIsDurable(t *testing.T) {
	l := reopenWith(t, filepath.Join(t.TempDir(), "ledger.db"), false)
	mustAppend(t, l, "before")
	entered, open := gateJournalSync(t, l, fdatasyncFile)
	inForce := bboltTxID(t, l)
	first := make(chan error, 1)
	go func() { _, err := appendClaimed(l, "first"); first <- err }()
	<-entered
	waitFor(t, "the first batch in bbolt", func() bool { return bboltTxID(t, l) >= inForce+1 })
	type answer struct {
		a   Appended
		err error
	}
	retry := make(chan answer, 1)
	go func() { a, err := appendClaimed(l, "first"); retry <- answer{a, err} }()
	notWithin(t, retry, 100*time.Millisecond, "the retry")
	open()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r := <-retry; r.err != nil || !r.a.Existing || r.a.ID != "first" {
		t.Fatalf("retry: %+v, %v; want the existing entry", r.a, r.err)
	}
}

// TestSyncErrorSeenOnceStillFailsTheBatch: Linux reports a failed
// write-back to one fdatasync of the file only; another one, beside it or
// after it, returns 0 although the pages were lost. The syncer's
// fdatasync of a batch fails while a side write's synchronous checkpoint
// syncs the same file and would be told 0: the batch must still fail, and
// so must the side write.
func TestSyncErrorSeenOnceStillFailsTheBatch(t *testing.T) {
	l := reopenWith(t, filepath.Join(t.TempDir(), "ledger.db"), false)
	mustAppend(t, l, "before")
	var calls atomic.Int32
	entered, open := gateJournalSync(t, l, func(*os.File) error {
		if calls.Add(1) == 1 {
			return errSync // the syncer's, for the batch: its write-back failed
		}
		return nil // the error went to the other call
	})
	answer := make(chan error, 1)
	go func() { _, err := appendClaimed(l, "lost"); answer <- err }()
	<-entered
	side := make(chan error, 1)
	go func() { side <- putSide(l) }()
	time.Sleep(20 * time.Millisecond) // the side write reaches its sync, or waits for the syncer's
	open()
	if err := <-answer; !isHalted(err) {
		t.Fatalf("the batch whose journal fdatasync failed: %v, want the *HaltedError", err)
	}
	if err := <-side; !isHalted(err) {
		t.Fatalf("the side write synced after the failed fdatasync: %v, want the *HaltedError", err)
	}
}

// TestOwnFaultsWaitForTheStateTheyRead: an append that fails on its own
// because of a batch still syncing (its ID is already present) is
// answered only once that batch is durable, whether its own batch wrote
// nothing, or failed to commit (a full disk before bbolt's meta page); and
// when that batch's fdatasync fails, it is answered the failure, not
// "already present" for an entry that was never written.
func TestOwnFaultsWaitForTheStateTheyRead(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprintf("commit-fails=%v", failing), func(t *testing.T) {
			l := reopenWith(t, filepath.Join(t.TempDir(), "ledger.db"), false)
			mustAppend(t, l, "before")
			if failing {
				var commits atomic.Int32
				setCommitTx(l, func(tx *bolt.Tx) error {
					if commits.Add(1) == 1 {
						return tx.Commit()
					}
					_ = tx.Rollback()
					return errors.New("write: no space left on device")
				})
			}
			entered, open := gateJournalSync(t, l, func(*os.File) error { return errSync })
			inForce := bboltTxID(t, l)
			first := make(chan error, 1)
			go func() { _, err := l.Append(context.Background(), Append{Build: simpleEntry("a")}); first <- err }()
			<-entered
			waitFor(t, "a in bbolt", func() bool { return bboltTxID(t, l) >= inForce+1 })
			dup, other := make(chan error, 1), make(chan error, 1)
			go func() { _, err := l.Append(context.Background(), Append{Build: simpleEntry("a")}); dup <- err }()
			if failing {
				go func() { _, err := l.Append(context.Background(), Append{Build: simpleEntry("d")}); other <- err }()
			}
			notWithin(t, dup, 100*time.Millisecond, "the duplicate")
			open() // the fdatasync of "a" fails: "a" is not written
			if err := <-first; !isHalted(err) {
				t.Fatalf("a: %v, want the *HaltedError", err)
			}
			if err := <-dup; !isHalted(err) {
				t.Fatalf("the duplicate of a failed append: %v, want the *HaltedError", err)
			}
			if failing {
				if err := <-other; err == nil {
					t.Fatal("an append of the batch that failed to commit succeeded")
				}
			}
		})
	}
}
