package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The journal (journal.go): a commit's bucket operations, replayed after a
// crash onto the state of the newest checkpoint, must rebuild exactly what
// the live ledger holds; what does not belong to the file must be refused.

// noCheckpoints keeps l's journal from making checkpoints after Open (no
// timed ones, no switch of files), so that the file as it was at Open and
// the journal files as they are now make the disk of a crash that lost
// every page bbolt wrote since.
func noCheckpoints(l *Ledger) {
	s := l.store.(*boltStore)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.js.every = time.Hour
}

// crashDisk writes, in a new directory, the ledger file as snapshot and the
// journal files of the ledger at path as they are now, and returns the new
// ledger file's path.
func crashDisk(t *testing.T, path string, snapshot []byte) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "ledger.db")
	if err := os.WriteFile(out, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, p := range journalPaths(path) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(journalPaths(out)[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// crashedAfter opens a new ledger without checkpoints after Open, appends
// e0 … e(n-1), and returns it and the path of the disk a crash would leave
// (crashDisk: the file as at Open, the journal as now).
func crashedAfter(t *testing.T, n int) (*Ledger, string) {
	t.Helper()
	return crashedWith(t, n, func(l *Ledger, i int) { mustAppend(t, l, fmt.Sprintf("e%d", i)) })
}

// crashedWith is crashedAfter with the appends made by add (i from 0 to
// n-1).
func crashedWith(t *testing.T, n int, add func(l *Ledger, i int)) (*Ledger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	noCheckpoints(l)
	snapshot, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		add(l, i)
	}
	return l, crashDisk(t, path, snapshot)
}

// scannedAfter is crashedAfter, with the journal of the crash's disk as
// readJournal finds it: n batches.
func scannedAfter(t *testing.T, n int) (*Ledger, string, journalState) {
	t.Helper()
	l, out := crashedAfter(t, n)
	st, err := readJournal(out)
	if err != nil || len(st.batches) != n {
		t.Fatalf("journal: %d batches, %v; want %d", len(st.batches), err, n)
	}
	return l, out, st
}

// TestJournalReplayRebuildsTheState: appends with claims, postings that
// go behind into the posting log and are moved into their index buckets
// (which deletes and creates the log's bucket), side values written and
// deleted by hooks, and sequences; the ledger file as it was at Open plus
// the journal then opens to the same entries, postings, side values,
// sequence and checkpoint as the live ledger, and passes Check.
func TestJournalReplayRebuildsTheState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	noCheckpoints(l)
	l.store.(*boltStore).flushAt = 7
	snapshot, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		name := fmt.Sprintf("e%02d", i)
		_, err := l.Append(context.Background(), Append{
			Claims:    []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp:" + name)}},
			Entry:     prebuiltEntry(name),
			Sequences: []string{"seq"},
			Hook: func(h *Hook) error {
				n, err := h.Sequence("seq")
				if err != nil {
					return err
				}
				if err := h.Put("numbers", []byte(name), fmt.Appendf(nil, "%d", n)); err != nil {
					return err
				}
				if i%3 == 2 { // delete a value an earlier commit wrote
					return h.Put("numbers", []byte(fmt.Sprintf("e%02d", i-1)), nil)
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	replayed := reopen(t, crashDisk(t, path, snapshot))
	mustCheck(t, replayed)
	if replayed.Size() != l.Size() {
		t.Fatalf("size after the replay %d, live %d", replayed.Size(), l.Size())
	}
	a, errA := replayed.Checkpoint()
	b, errB := l.Checkpoint()
	if errA != nil || errB != nil || !bytes.Equal(a.Note, b.Note) {
		t.Fatalf("latest checkpoint after the replay:\n%s\nlive:\n%s", a.Note, b.Note)
	}
	for i := range 40 {
		name := fmt.Sprintf("e%02d", i)
		a, errA := replayed.Entry(name)
		b, errB := l.Entry(name)
		if errA != nil || errB != nil || a.Index != b.Index || !bytes.Equal(a.Leaf, b.Leaf) || !bytes.Equal(a.Docs["ubl"], b.Docs["ubl"]) {
			t.Fatalf("entry %s after the replay: %v %v", name, errA, errB)
		}
		va, errA := replayed.Get("numbers", []byte(name))
		vb, errB := l.Get("numbers", []byte(name))
		if !bytes.Equal(va, vb) || (errA == nil) != (errB == nil) {
			t.Fatalf("side value %s after the replay: %q %v, live %q %v", name, va, errA, vb, errB)
		}
		ia, errA := replayed.Lookup("by_name", []byte(name))
		ib, errB := l.Lookup("by_name", []byte(name))
		if ia != ib || errA != nil || errB != nil {
			t.Fatalf("posting %s after the replay: %q %v, live %q %v", name, ia, errA, ib, errB)
		}
	}
	na, _ := replayed.Sequence("seq")
	nb, _ := l.Sequence("seq")
	if na != nb || na != 40 {
		t.Fatalf("sequence after the replay %d, live %d, want 40", na, nb)
	}
	// And it goes on from there.
	mustAppend(t, replayed, "after")
	mustCheck(t, replayed)
}

// TestJournalTornTail: the last batch record of the journal torn (its
// bytes half written): recovery ends the journal before it, as at a power
// cut during that batch's write (its append was never acknowledged), and
// the ledger opens at the batch before it.
func TestJournalTornTail(t *testing.T) {
	l, out, st := scannedAfter(t, 5)
	last := st.files[0].end - int64(st.batches[4].n)/2
	f, err := os.OpenFile(journalPaths(out)[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("torn"), last); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := reopen(t, out)
	if r.Size() != l.Size()-1 {
		t.Fatalf("size after a torn last batch %d, want %d", r.Size(), l.Size()-1)
	}
	if _, err := r.Entry("e3"); err != nil {
		t.Fatalf("the batch before the torn one: %v", err)
	}
	if _, err := r.Entry("e4"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the torn batch's entry: %v, want ErrNotFound", err)
	}
	mustCheck(t, r)
	// The rest of that journal file was zeroed: the torn record can never
	// come back as one of the new turn's.
	mustAppend(t, r, "e4 again")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r2 := reopen(t, out)
	if _, err := r2.Entry("e4 again"); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, r2)
}

// TestJournalReadOnlyNeedsRecovery: a file whose journal holds commits a
// writer did not checkpoint at Close is refused read-only (Check, a
// verifier's Open) with ErrNeedsRecovery; once a writer opened and closed
// it, both read it.
func TestJournalReadOnlyNeedsRecovery(t *testing.T) {
	l, out := crashedAfter(t, 3)
	_, v, _ := testKey(t, testOrigin, "log key 1")
	if err := Check(out, v); !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("Check: %v, want ErrNeedsRecovery", err)
	}
	if _, err := Open(out, Options{Origin: testOrigin, Verifier: v}); !errors.Is(err, ErrNeedsRecovery) {
		t.Fatalf("read-only Open: %v, want ErrNeedsRecovery", err)
	}
	if err := reopen(t, out).Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(out, v); err != nil {
		t.Fatalf("Check after a writer's replay: %v", err)
	}
	ro, err := Open(out, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.Size() != l.Size() {
		t.Fatalf("read-only size %d, want %d", ro.Size(), l.Size())
	}
}

// TestJournalRefusesAnOlderFile: a copy of the ledger from before its
// journal's checkpoint (a backup copied over it) is refused with a message
// naming the journal, not written over with a meta page that points at
// pages it lacks; moving the journal away opens it as it is.
func TestJournalRefusesAnOlderFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	mustAppend(t, l, "first")
	var old bytes.Buffer
	if _, err := l.WriteTo(&old); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := putSide(l); err != nil { // side writes checkpoint at once
			t.Fatal(err)
		}
		mustAppend(t, l, fmt.Sprintf("e%d", i))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s, v, _ := testKey(t, testOrigin, "log key 1")
	_, err := Open(path, Options{Origin: testOrigin, Signer: s})
	var jm *JournalMismatchError
	if !errors.As(err, &jm) || !errors.Is(err, ErrJournalMismatch) || errors.Is(err, ErrCorrupt) || !NeedsOperator(err) {
		t.Fatalf("Open of an older copy under the journal: %v, want a *JournalMismatchError (not ErrCorrupt)", err)
	}
	if jm.FileTxid >= jm.CheckpointTxid || jm.Path != path {
		t.Fatalf("the refusal names file transaction %d and checkpoint %d of %s", jm.FileTxid, jm.CheckpointTxid, jm.Path)
	}
	jp := journalPaths(path)
	for _, want := range []string{jp[0], jp[1], "move the journal files away", "put back the file they belong to"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the refusal %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "damaged") || strings.Contains(err.Error(), "restore it from") {
		t.Fatalf("the refusal %q calls the file damaged", err)
	}
	if _, err := Open(path, Options{Origin: testOrigin, Verifier: v}); !errors.As(err, &jm) {
		t.Fatalf("read-only Open of an older copy under the journal: %v, want a *JournalMismatchError", err)
	}
	for _, p := range journalPaths(path) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r := reopen(t, path)
	if r.Size() != 1 {
		t.Fatalf("the older copy opened at size %d, want 1", r.Size())
	}
	mustCheck(t, r)
}

// TestJournalBesideACompactedCopy: a copy made by bbolt compact (bbolt.Compact,
// what its command line runs) of a ledger closed cleanly holds every commit
// but numbers its transactions anew, so the journal left beside it is
// refused as another file's (the remedy README's Restore gives); with the
// journal files moved away it opens at the same size and root and passes
// the check.
func TestJournalBesideACompactedCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	for i := range 40 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
		if i%7 == 0 {
			if err := putSide(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	head := l.Size()
	root, err := l.TreeHash(head)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	compacted := path + ".compact"
	dst, err := bolt.Open(compacted, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Compact(dst, src, 0); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	if err := os.Rename(compacted, path); err != nil {
		t.Fatal(err)
	}
	s, _, _ := testKey(t, testOrigin, "log key 1")
	_, err = Open(path, Options{Origin: testOrigin, Signer: s})
	var jm *JournalMismatchError
	if !errors.As(err, &jm) {
		t.Fatalf("Open of a compacted copy beside the journal: %v, want a *JournalMismatchError", err)
	}
	for _, p := range journalPaths(path) {
		if err := os.Rename(p, p+".moved"); err != nil {
			t.Fatal(err)
		}
	}
	r := reopen(t, path)
	if r.Size() != head {
		t.Fatalf("the compacted copy opened at size %d, want %d", r.Size(), head)
	}
	if got, err := r.TreeHash(head); err != nil || got != root {
		t.Fatalf("the compacted copy's root %x (%v), want %x", got, err, root)
	}
	mustCheck(t, r)
	mustAppend(t, r, "after")
}

// TestJournalOfAFileNoLongerThere: journal files left by a deleted ledger
// file are removed when a new file is created at its path, not replayed
// onto it.
func TestJournalOfAFileNoLongerThere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	noCheckpoints(l)
	for i := range 5 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
	}
	// The journal as a crash would leave it, the file deleted.
	var saved [2][]byte
	for i, p := range journalPaths(path) {
		saved[i], _ = os.ReadFile(p)
	}
	_ = l.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for i, p := range journalPaths(path) {
		if err := os.WriteFile(p, saved[i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := reopen(t, path)
	if r.Size() != 0 {
		t.Fatalf("a new file opened at size %d, want 0", r.Size())
	}
	mustAppend(t, r, "new")
	mustCheck(t, r)
}

// TestJournalBackupCopiesOpen: bbolt's Tx.WriteTo writes the copy's meta
// page for transaction n into slot 0 and n-1 into slot 1, whatever n's
// parity (a commit writes slot n%2): copies taken at an odd and at an even
// transaction both open, replay nothing and check.
func TestJournalBackupCopiesOpen(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	seen := map[int]bool{}
	for i := range 2 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
		var b bytes.Buffer
		if _, err := l.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "copy.db")
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(p, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		tx, _ := db.Begin(false)
		parity := tx.ID() % 2
		seen[parity] = true
		tx.Rollback()
		db.Close()
		c := reopen(t, p)
		if c.Size() != int64(i+1) {
			t.Fatalf("copy at an %s transaction: size %d, want %d", map[int]string{0: "even", 1: "odd"}[parity], c.Size(), i+1)
		}
		mustCheck(t, c)
	}
	if len(seen) != 2 {
		t.Fatalf("the copies were taken at transactions of parities %v, want both", seen)
	}
}

// TestNeedsRecoveryWhenBatchesFollowACleanCheckpoint: a journal whose
// newest checkpoint is a clean close but which holds a batch after it (in
// the older file: crafted, a writer never leaves one) has something a
// writer's Open replays, so NeedsRecovery says so and a read-only open
// refuses it, rather than read a file the next writer would change. A
// review found NeedsRecovery reporting false for it.
func TestNeedsRecoveryWhenBatchesFollowACleanCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	ps := journalPaths(path)
	meta := bytes.Repeat([]byte{7}, journalMetaSize)
	rec := func(kind, flags byte, gen, txid uint64, payload []byte) []byte {
		return appendRecord(nil, kind, flags, gen, txid, payload)
	}
	f0 := bytes.Join([][]byte{rec(recHeader, 0, 5, 0, nil), rec(recCheckpoint, 0, 5, 10, meta), rec(recBatch, 0, 5, 11, []byte("a")), rec(recBatch, 0, 5, 12, []byte("b"))}, nil)
	f1 := bytes.Join([][]byte{rec(recHeader, 0, 6, 0, nil), rec(recCheckpoint, flagClean, 6, 11, meta)}, nil)
	if err := os.WriteFile(ps[0], f0, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ps[1], f1, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	needs, err := NeedsRecovery(path)
	t.Logf("readJournal: clean %v, %d batch(es) to replay; NeedsRecovery %v, %v", st.clean, len(st.batches), needs, err)
	if len(st.batches) != 1 || !needs || err != nil {
		t.Errorf("the writable Open would replay %d batch(es); NeedsRecovery %v, %v", len(st.batches), needs, err)
	}
	if err := journalClean(path); !errors.Is(err, ErrNeedsRecovery) {
		t.Errorf("a read-only open: %v, want ErrNeedsRecovery", err)
	}
}
