package ledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Reading the journal at Open takes memory for one record, not for the
// files: a scan keeps where each record is, and the replay reads one
// batch at a time (journal.go, journalReader).

// crashedWithLargeBatches is crashedAfter with n entries each carrying a
// document of size random bytes (which no compression shrinks), so that
// the journal holds about n·size bytes of batches.
func crashedWithLargeBatches(t *testing.T, n, size int) (*Ledger, string) {
	t.Helper()
	return crashedWith(t, n, func(l *Ledger, i int) {
		name := fmt.Sprintf("big%d", i)
		doc := make([]byte, size)
		_, _ = rand.Read(doc)
		_, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) {
			return Entry{ID: name, Leaf: []byte("leaf " + name), Docs: map[string][]byte{"blob": doc}}, nil
		}})
		if err != nil {
			t.Fatalf("append %s: %v", name, err)
		}
	})
}

// TestReadJournalMemoryIsBounded: a journal of ~12 MB of batches is read
// (every record's checksum verified) with a small fraction of its size
// allocated, and still opens to every entry (the replay reads each batch
// when it commits it).
func TestReadJournalMemoryIsBounded(t *testing.T) {
	const entries, size = 24, 512 << 10
	l, out := crashedWithLargeBatches(t, entries, size)
	fi, err := os.Stat(journalPaths(out)[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < entries*size {
		t.Fatalf("journal of %d bytes, want at least %d", fi.Size(), entries*size)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st, err := readJournal(out)
	runtime.ReadMemStats(&after)
	if err != nil || len(st.batches) != entries {
		t.Fatalf("journal: %d batches, %v; want %d", len(st.batches), err, entries)
	}
	// The scan's own buffer (64 KB), the two files' record lists and the
	// checkpoint's meta page: less than one of the batches.
	got := after.TotalAlloc - before.TotalAlloc
	if got > size/2 {
		t.Fatalf("reading a journal of %d bytes allocated %d bytes, want at most %d", fi.Size(), got, size/2)
	}
	t.Logf("a journal of %d bytes read with %d bytes allocated", fi.Size(), got)
	r := reopen(t, out)
	if r.Size() != l.Size() {
		t.Fatalf("size after the replay %d, want %d", r.Size(), l.Size())
	}
	for i := range entries {
		name := fmt.Sprintf("big%d", i)
		got, err := r.Entry(name)
		want, _ := l.Entry(name)
		if err != nil || !bytes.Equal(got.Docs["blob"], want.Docs["blob"]) || len(got.Docs["blob"]) != size {
			t.Fatalf("entry %s after the replay: %d bytes, %v", name, len(got.Docs["blob"]), err)
		}
	}
	mustCheck(t, r)
}

// TestJournalReplayRefusesABatchChangedAfterTheScan: the replay reads a
// batch again and verifies it; a record that no longer matches what the
// scan found (a file changed under the lock, a medium returning other
// bytes) is damage, reported, and nothing of it is committed.
func TestJournalReplayRefusesABatchChangedAfterTheScan(t *testing.T) {
	_, out, st := scannedAfter(t, 3)
	jr := &journalReader{path: out}
	defer jr.close()
	r := st.batches[1]
	if _, err := jr.payload(r); err != nil {
		t.Fatalf("batch %d as scanned: %v", r.txid, err)
	}
	f, err := os.OpenFile(journalPaths(out)[r.file], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff}, r.off+journalHeaderSize+int64(r.n)-1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = jr.payload(r)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("batch %d changed after the scan: %v, want a CorruptError", r.txid, err)
	}
}

// TestJournalOpenZeroesTheRestOfTheFile: after a crash, the active file
// may go on, past its last whole record, with bytes of a torn record or
// of an earlier turn (a reused file is longer than its new turn). Open
// writes its checkpoint after the last whole record and zeros over
// everything after it, to the file's end (in chunks: the rest may be most
// of journalLimit), so that no later scan reads those bytes as records.
func TestJournalOpenZeroesTheRestOfTheFile(t *testing.T) {
	_, out, st := scannedAfter(t, 4)
	p := journalPaths(out)[0]
	end := st.files[0].end
	// Not a multiple of the chunk: the last one is short.
	junk := bytes.Repeat([]byte{0xab}, 2*journalChunk+12345)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(junk, end); err != nil {
		t.Fatal(err)
	}
	f.Close()
	size := end + int64(len(junk))
	r := reopen(t, out)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != size {
		t.Fatalf("journal of %d bytes after Open, want %d (the file as it was)", len(b), size)
	}
	after, err := scanJournalFile(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.end != end+journalHeaderSize+journalMetaSize {
		t.Fatalf("records end at %d after Open, want %d (the open's checkpoint after %d)", after.end, end+journalHeaderSize+journalMetaSize, end)
	}
	if i := bytes.IndexFunc(b[after.end:], func(c rune) bool { return c != 0 }); i >= 0 {
		t.Fatalf("byte %d of %d after the checkpoint is not zero", after.end+int64(i), size)
	}
	mustAppend(t, r, "after")
	mustCheck(t, r)
}

// TestReadJournalMemoryPerRecord: a journal of many small batches (100,000
// of 150 bytes, as an embedder appending tiny entries one at a time would
// write) is read with memory for the records' positions (24 bytes each,
// in the file's list and again in the list of batches to replay), not for
// their bytes: at most 60 bytes a record, where the file holds 182 (the
// whole-file reader allocated the file, then its list of every record with
// its payload; a slice grown by append allocates several times what it
// ends up holding).
func TestReadJournalMemoryPerRecord(t *testing.T) {
	const batches = 100_000
	path := filepath.Join(t.TempDir(), "ledger.db")
	meta := make([]byte, journalMetaSize)
	b := appendRecord(nil, recHeader, 0, 1, 0, nil)
	b = appendRecord(b, recCheckpoint, 0, 1, 7, meta)
	payload := bytes.Repeat([]byte("o"), 150)
	for i := range batches {
		b = appendRecord(b, recBatch, 0, 1, uint64(8+i), payload)
	}
	if err := os.WriteFile(journalPaths(path)[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st, err := readJournal(path)
	runtime.ReadMemStats(&after)
	if err != nil || len(st.batches) != batches || st.ckpt.txid != 7 {
		t.Fatalf("journal: %d batches after checkpoint %v, %v; want %d after 7", len(st.batches), st.ckpt, err, batches)
	}
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("a journal of %d bytes in %d records read with %d bytes allocated (%.1f a record)", len(b), batches+2, got, float64(got)/batches)
	if got > 60*batches {
		t.Fatalf("reading %d records allocated %d bytes, more than 60 a record", batches, got)
	}
}
