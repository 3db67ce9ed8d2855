package ledger

import (
	"bytes"
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
