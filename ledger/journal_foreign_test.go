package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalOfAnotherLedgerRefused: the journal files of one ledger left
// beside another ledger's file (a restore that mixed two servers' data
// directories: a backup copied in, the journals of another server kept) must
// be refused before anything is written, even when the file's newest
// transaction is past the journal's checkpoint (the check of an older copy
// cannot see it then). The journal here holds batches after its checkpoint
// (its ledger was not closed), whose pages lie beyond the end of the other
// file: putting its checkpoint's meta page into that file ruined it (an
// operator review found "meta high-water mark 22 does not fit a file of 17
// pages" after check -recover), where a refusal leaves it as it was.
func TestJournalOfAnotherLedgerRefused(t *testing.T) {
	// B: a few commits of many pages, not closed: its journal holds a
	// checkpoint and batches after it.
	pathB := filepath.Join(t.TempDir(), "ledger.db")
	b := reopen(t, pathB)
	for i := range 40 {
		mustAppend(t, b, fmt.Sprintf("b%d", i))
	}
	if err := putSide(b); err != nil { // a checkpoint at once
		t.Fatal(err)
	}
	for i := range 3 {
		mustAppend(t, b, fmt.Sprintf("after%d", i))
	}
	// A: more transactions than B, in fewer pages; closed cleanly.
	pathA := filepath.Join(t.TempDir(), "ledger.db")
	a := reopen(t, pathA)
	mustAppend(t, a, "a0")
	for range 400 {
		if err := putSide(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	fileA, err := os.ReadFile(pathA)
	if err != nil {
		t.Fatal(err)
	}
	st, err := readJournal(pathB)
	if err != nil {
		t.Fatal(err)
	}
	if st.clean || !st.found {
		t.Fatalf("B's journal: found %v, clean %v; the case needs one with batches after its checkpoint", st.found, st.clean)
	}
	hwm := int64(metaPgid(st.ckptMeta)) * pageSizeOf(st.ckptMeta)
	if int64(len(fileA)) >= hwm {
		t.Fatalf("A's file (%d bytes) holds B's checkpoint's pages (%d bytes): the case needs a smaller file", len(fileA), hwm)
	}
	mixed := crashDisk(t, pathB, fileA) // A's file, B's journal files
	s, _, _ := testKey(t, testOrigin, "log key 1")
	l, err := Open(mixed, Options{Origin: testOrigin, Signer: s})
	if err == nil {
		l.Close()
	}
	var jm *JournalMismatchError
	if !errors.As(err, &jm) || !NeedsOperator(err) {
		t.Fatalf("Open of a file under another ledger's journal: %v, want a *JournalMismatchError", err)
	}
	for _, want := range []string{"nothing was written", "restore it from the latest backup", "belong to another ledger file", journalPaths(mixed)[0]} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	after, rerr := os.ReadFile(mixed)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !bytes.Equal(after, fileA) {
		t.Fatalf("the refused Open wrote to the file (%d bytes before, %d after)", len(fileA), len(after))
	}
}

// TestJournalCheckpointTxidWithAnotherMeta: a file whose meta slot holds the
// journal's checkpoint transaction, valid, but not the meta page the
// checkpoint noted, is not the state the journal was written over: bbolt
// writes one meta page per transaction, so the same transaction with other
// roots is another file's. Open refuses it and writes nothing, even where
// the file is as large as the checkpoint's pages.
func TestJournalCheckpointTxidWithAnotherMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, path)
	// No timed checkpoint: one started by a commit after checkpointEvery
	// (50 ms, easily reached on a loaded machine) would move the journal's
	// checkpoint past the one this case alters, and the journal would no
	// longer be the one written over that meta page.
	noCheckpoints(l)
	for i := range 10 {
		mustAppend(t, l, fmt.Sprintf("e%d", i))
	}
	if err := putSide(l); err != nil { // a checkpoint at once
		t.Fatal(err)
	}
	st, err := readJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, ps := metaTxid(st.ckptMeta), pageSizeOf(st.ckptMeta)
	slot := -1
	for i := range 2 {
		m := file[int64(i)*ps : int64(i)*ps+journalMetaSize]
		if metaValid(m) && metaTxid(m) == want {
			slot = i
		}
	}
	if slot < 0 {
		t.Fatalf("no meta slot of the file holds the checkpoint's transaction %d", want)
	}
	for i := range 3 { // batches after the checkpoint: the journal is not clean
		mustAppend(t, l, fmt.Sprintf("after%d", i))
	}
	if st, err = readJournal(path); err != nil || st.clean || metaTxid(st.ckptMeta) != want {
		t.Fatalf("the journal: %v, clean %v, checkpoint %d; want checkpoint %d with batches after it", err, st.clean, metaTxid(st.ckptMeta), want)
	}
	// The slot of that transaction with another freelist page, its checksum
	// made again: valid, the same transaction, another state.
	other := bytes.Clone(file)
	m := other[int64(slot)*ps : int64(slot)*ps+journalMetaSize]
	binary.LittleEndian.PutUint64(m[48:56], binary.LittleEndian.Uint64(m[48:56])+1)
	binary.LittleEndian.PutUint64(m[72:80], fnv64a(m[16:72]))
	if !metaValid(m) {
		t.Fatal("the altered meta page does not pass as valid")
	}
	if int64(len(other)) < int64(metaPgid(st.ckptMeta))*ps {
		t.Fatalf("the file is smaller than the checkpoint's pages: the case is the size guard's, not this one's")
	}
	crash := crashDisk(t, path, other)
	s, _, _ := testKey(t, testOrigin, "log key 1")
	r, err := Open(crash, Options{Origin: testOrigin, Signer: s})
	if err == nil {
		r.Close()
	}
	var jm *JournalMismatchError
	if !errors.As(err, &jm) || !jm.Foreign {
		t.Fatalf("Open of a file with another meta page at the checkpoint's transaction: %v, want a foreign *JournalMismatchError", err)
	}
	if after, _ := os.ReadFile(crash); !bytes.Equal(after, other) {
		t.Fatal("the refused Open wrote to the file")
	}
}
