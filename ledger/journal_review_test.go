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

// Cases a review of the journal found broken (stop 48), each failing before
// its fix: a switch of journal files that wrote over the only checkpoint on
// the disk, or over batches no durable checkpoint covered; a writer's Open
// that read the journal before it held the lock and put a stale meta page
// over a file another writer had moved on; a backup one transaction older
// than the journal's checkpoint taken for the file the journal belongs to.

// TestJournalSwitchKeepsACheckpoint: a side write checkpoints into the
// active file; the next batch switches files and starts a checkpoint whose
// fdatasync is slow (held here); the batch after fills the new file and
// switches back over the first while that checkpoint is not durable. The
// disk of a power cut then must still hold a checkpoint: each new turn
// begins with the newest durable one.
func TestJournalSwitchKeepsACheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	mustAppend(t, l, "a")
	if err := putSide(l); err != nil { // synchronous checkpoint U into the active file
		t.Fatal(err)
	}
	s := l.store.(*boltStore)
	s.wmu.Lock()
	s.js.every = time.Hour
	s.js.jr.limit = 1 // every batch overflows a non-empty file
	s.wmu.Unlock()
	mustAppend(t, l, "b") // switch #1, starts a background checkpoint
	// Model a slow fdatasync of the bbolt file: hold the checkpoint's answer.
	gate := make(chan error, 1)
	s.wmu.Lock()
	orig := s.js.running
	s.js.running = gate
	s.wmu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := appendClaimed(l, "c")
		done <- err
	}()
	// wait until c's batch is durable in the journal (the committer then waits in collect(true))
	var err error
	for i := 0; i < 50 && err == nil; i++ {
		time.Sleep(10 * time.Millisecond)
		_, err = readJournal(path)
	}
	snap, _ := os.ReadFile(path)
	crash := crashDisk(t, path, snap)
	if err != nil {
		t.Errorf("the journal while c's commit waits: %v", err)
	}
	gate <- <-orig
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sg, _, _ := testKey(t, testOrigin, "log key 1")
	if r, oerr := Open(crash, Options{Origin: testOrigin, Signer: sg}); oerr != nil {
		t.Fatalf("a power cut at that moment: Open fails: %v (acknowledged entry b is in the journal)", oerr)
	} else {
		r.Close()
	}
}

// TestJournalOpenWaitsForTheWriter: a second writer's Open waits for the
// lock while the first appends 300 more entries and closes; it must then
// read the journal as the first left it, not as it was when it began.
func TestJournalOpenWaitsForTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	a := reopen(t, path)
	for i := range 5 {
		mustAppend(t, a, fmt.Sprintf("a%d", i))
	}
	type res struct {
		l   *Ledger
		err error
	}
	ch := make(chan res, 1)
	go func() {
		sg, _, _ := testKey(t, testOrigin, "log key 1")
		l, err := Open(path, Options{Origin: testOrigin, Signer: sg, OpenTimeout: 10 * time.Second})
		ch <- res{l, err}
	}()
	time.Sleep(300 * time.Millisecond) // B has read the journal and waits for the lock
	for i := range 300 {
		mustAppend(t, a, fmt.Sprintf("b%d", i))
		if i%30 == 0 {
			time.Sleep(60 * time.Millisecond) // let checkpoints come and go
		}
	}
	want := a.Size()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatalf("second open: %v", r.err)
	}
	defer r.l.Close()
	if r.l.Size() != want {
		t.Errorf("second writer opened at size %d; the first closed at %d", r.l.Size(), want)
	}
	if err := r.l.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	for i := range 300 {
		if _, err := r.l.Entry(fmt.Sprintf("b%d", i)); err != nil {
			t.Errorf("acknowledged b%d: %v", i, err)
			break
		}
	}
}

// TestJournalRefusesACopyOneBehind: a backup one transaction older than
// the journal's clean checkpoint, put in the file's place with the journal
// left beside it, is refused like any older copy: accepted, a crash after
// the next append put the journal's (newer) meta page over the copy's
// pages and lost that append.
func TestJournalRefusesACopyOneBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	for i := range 5 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
	}
	var old bytes.Buffer
	if _, err := l.WriteTo(&old); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(context.Background(), Append{Claims: []Claim{{Space: "payment", Key: "big", Fingerprint: []byte("x")}}, Build: bulkyEntry("big")}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	sg, _, _ := testKey(t, testOrigin, "log key 1")
	if _, err := Open(path, Options{Origin: testOrigin, Signer: sg}); !errors.Is(err, ErrJournalMismatch) {
		t.Fatalf("Open of a copy one transaction behind the journal: %v, want ErrJournalMismatch", err)
	}
}

// TestJournalEverySwitchKeepsACheckpoint: a file limit that switches files
// at every batch; after each acknowledged append the journal on the disk
// holds a checkpoint and every batch after it.
func TestJournalEverySwitchKeepsACheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	setJournalLimit(l, 1)
	bad := 0
	for i := range 100 {
		if err := appendBulky(l, fmt.Sprintf("e%d", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := readJournal(path); err != nil {
			bad++
			if bad == 1 {
				t.Logf("after append %d: %v", i, err)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 100 acknowledged appends left a journal without a checkpoint on the disk", bad)
	}
}

// TestJournalFailedSwitchThenFull: a commit fails (before bbolt took it)
// after its batch switched files, so no checkpoint starts at that switch;
// when the new file fills, the checkpoint that does come (started before,
// slow) does not cover the other file's last batch, and writing over it
// would lose that acknowledged append.
func TestJournalFailedSwitchThenFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	s := l.store.(*boltStore)
	mustAppend(t, l, "a")
	s.wmu.Lock()
	s.js.every = 0 // the next commit starts a checkpoint
	s.wmu.Unlock()
	mustAppend(t, l, "r") // checkpoint R started
	gate := make(chan error, 1)
	s.wmu.Lock()
	s.js.every = time.Hour
	orig := s.js.running
	s.js.running = gate // its fdatasync is slow
	s.wmu.Unlock()
	mustAppend(t, l, "y") // batch R+1 in the active file
	s.wmu.Lock()
	s.js.jr.limit = 1
	s.commitTx = func(tx *bolt.Tx) error { tx.Rollback(); return fmt.Errorf("no space left (test)") }
	s.wmu.Unlock()
	if _, err := appendClaimed(l, "z"); err == nil { // switchFiles ran, then the commit failed
		t.Fatal("z: want an error")
	}
	s.wmu.Lock()
	s.commitTx = (*bolt.Tx).Commit
	s.wmu.Unlock()
	mustAppend(t, l, "w") // goes to the new file
	gate <- <-orig        // checkpoint R done
	mustAppend(t, l, "v") // blocking path, then switch over the file with y
	if _, err := readJournal(path); err != nil {
		t.Errorf("journal on the disk after v was acknowledged: %v", err)
	}
	snap, _ := os.ReadFile(path)
	crash := crashDisk(t, path, snap)
	sg, _, _ := testKey(t, testOrigin, "log key 1")
	c, err := Open(crash, Options{Origin: testOrigin, Signer: sg})
	if err != nil {
		t.Fatalf("after a crash: %v", err)
	}
	defer c.Close()
	if _, err := c.Entry("y"); err != nil {
		t.Errorf("acknowledged y: %v", err)
	}
}
