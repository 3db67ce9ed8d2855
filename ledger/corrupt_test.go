package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// damageFixture builds a closed ledger of n entries in commits of 7, with
// side data, and returns its bytes.
func damageFixture(t *testing.T, n int) ([]byte, note.Verifier) {
	t.Helper()
	l, path, v := testLedger(t, func(o *Options) { o.MaxBatch = 7 })
	apps := make([]Append, n)
	for i := range apps {
		name := fmt.Sprintf("e%03d", i)
		apps[i] = Append{
			Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
			Build: func(index int64) (Entry, error) {
				e, _ := simpleEntry(name)(index)
				e.Puts = []Put{{Bucket: "events", Key: u64(index), Value: []byte("event " + name)}}
				return e, nil
			},
		}
	}
	for _, o := range startAppends(context.Background(), l, apps)() {
		if o.err != nil {
			t.Fatal(o.err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, v
}

// usedBytes is the part of a bbolt file below its high-water mark; the rest
// is preallocated and unused.
func usedBytes(t *testing.T, data []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probe.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &pageWalker{f: f, fileSize: int64(len(data))}
	if _, err := w.readMeta(); err != nil {
		t.Fatal(err)
	}
	return int(w.highMark) * int(w.pageSize)
}

// acceptable reports whether err is an answer a damaged or edited file may
// give: nil, or one of the documented typed errors.
func acceptable(err error) bool {
	var co *CorruptError
	var ie *IntegrityError
	var ce *CheckError
	return err == nil || errors.As(err, &co) || errors.As(err, &ie) || errors.As(err, &ce) ||
		errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrOriginMismatch) ||
		errors.Is(err, ErrLogKeyMismatch) || errors.Is(err, ErrDuplicate) || errors.Is(err, ErrBadCheckpoint)
}

// exercise calls every exported method of an open ledger and fails the
// test on a panic or an error outside the documented ones. It returns the
// errors seen, so that callers can look for specific ones.
func exercise(t *testing.T, l *Ledger, label string) []error {
	t.Helper()
	var errs []error
	call := func(name string, fn func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: %s panicked: %v", label, name, r)
			}
		}()
		err := fn()
		if !acceptable(err) {
			t.Fatalf("%s: %s = %v, not a documented error", label, name, err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	size := l.Size()
	call("Checkpoint", func() error { _, err := l.Checkpoint(); return err })
	for i := int64(0); i < size; i++ {
		id := fmt.Sprintf("e%03d", i)
		call("Entry", func() error { _, err := l.Entry(id); return err })
		call("EntryAt", func() error { _, err := l.EntryAt(i); return err })
		call("Doc", func() error { _, err := l.Doc(id, "record"); return err })
		sum := sha256.Sum256([]byte(`{"id":"` + id + `"}`))
		call("DocVerified", func() error { _, err := l.DocVerified(id, "record", sum); return err })
		call("Lookup", func() error { _, err := l.Lookup("by_name", []byte(id)); return err })
		call("ClaimHolder", func() error { _, _, err := l.ClaimHolder("payment", id); return err })
		call("Get", func() error { _, err := l.Get("events", u64(i)); return err })
		call("CoveringCheckpoint", func() error { _, err := l.CoveringCheckpoint(i); return err })
		call("InclusionProof", func() error { _, err := l.InclusionProof(i, size); return err })
		call("CheckpointAt", func() error { _, err := l.CheckpointAt(i); return err })
		call("TreeHash", func() error { _, err := l.TreeHash(i); return err })
		if i > 0 {
			call("ConsistencyProof", func() error { _, err := l.ConsistencyProof(i, size); return err })
		}
	}
	call("ReadHashes", func() error { _, err := l.ReadHashes([]int64{0, 1, 2}); return err })
	call("Scan", func() error { _, err := l.Scan("by_name", nil, nil, false, 0); return err })
	call("Scan reverse", func() error { _, err := l.Scan("by_name", []byte("e"), nil, true, 5); return err })
	call("View", func() error {
		return l.View(func(tx Tx) error {
			return tx.Scan("events", nil, nil, false, func(k, v []byte) bool { return true })
		})
	})
	call("Check", l.Check)
	call("Update", func() error {
		return l.Update(func(tx Tx) error { return tx.Put("events", []byte("k"), []byte("v")) })
	})
	call("Append", func() error {
		_, err := l.Append(context.Background(), Append{
			Claims: []Claim{{Space: "payment", Key: "new " + label}},
			Build:  simpleEntry("new " + label),
		})
		if errors.Is(err, ErrUnavailable) {
			return nil // a commit on a damaged file may fail as storage
		}
		return err
	})
	_ = l.Stats()
	call("Close", l.Close)
	return errs
}

// openDamaged writes data to a new file and opens it; a refusal must be one
// of the documented errors and, when it is a *CorruptError, one line that
// tells the operator to restore the backup.
func openDamaged(t *testing.T, data []byte, label string) *Ledger {
	t.Helper()
	path := filepath.Join(t.TempDir(), "damaged.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, v, _ := testKey(t, testOrigin, "log key 1")
	var l *Ledger
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: Open panicked: %v", label, r)
			}
		}()
		l, err = Open(path, Options{Origin: testOrigin, Signer: s, Verifier: v})
	}()
	if err != nil {
		if !acceptable(err) {
			t.Fatalf("%s: Open = %v, not a documented error", label, err)
		}
		var co *CorruptError
		if errors.As(err, &co) {
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "restore it from the latest backup") || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: Open = %q, want one line telling the operator to restore the backup", label, msg)
			}
		}
		return nil
	}
	return l
}

// TestDamagedFileNeverPanics flips bytes at offsets spread over the whole
// file: Open refuses the file with a documented error, or opens it and then
// no exported method panics or answers an undocumented error.
func TestDamagedFileNeverPanics(t *testing.T) {
	data, _ := damageFixture(t, 24)
	used := usedBytes(t, data)
	flips := 400
	if testing.Short() {
		flips = 60
	}
	step := max(1, used/flips) | 1 // odd, so offsets drift across page fields
	refused, opened := 0, 0
	for off := 0; off < used; off += step {
		for _, x := range []byte{0x01, 0xFF} {
			flipped := clone(data)
			flipped[off] ^= x
			label := fmt.Sprintf("flip %#x at %d", x, off)
			l := openDamaged(t, flipped, label)
			if l == nil {
				refused++
				continue
			}
			opened++
			exercise(t, l, label)
		}
	}
	t.Logf("%d byte flips: %d refused at Open, %d opened (the byte was unused or is caught on read)", refused+opened, refused, opened)
	if refused == 0 {
		t.Error("no flip was refused at Open")
	}
}

// TestTruncatedFileNeverPanics truncates the file at many lengths: Open
// refuses it with a *CorruptError, or opens it (only the unused tail was
// cut) and then nothing panics.
func TestTruncatedFileNeverPanics(t *testing.T) {
	data, _ := damageFixture(t, 24)
	used := usedBytes(t, data)
	step := 487
	if testing.Short() {
		step = 4093
	}
	lengths := []int{0, 1, 100, 4095, 4096, 8191, 8192, 8193, used - 1, used, len(data) - 1}
	for n := 8192; n < used; n += step {
		lengths = append(lengths, n)
	}
	refused := 0
	for _, n := range lengths {
		label := fmt.Sprintf("truncated to %d of %d bytes", n, len(data))
		l := openDamaged(t, data[:n], label)
		if l == nil {
			refused++
			continue
		}
		exercise(t, l, label)
	}
	if refused == 0 {
		t.Error("no truncation was refused")
	}
	// An empty file is refused, not made into a new log.
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, _ := testKey(t, testOrigin, "log key 1")
	if _, err := Open(path, Options{Origin: testOrigin, Signer: s}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open of an empty file = %v, want ErrCorrupt", err)
	}
}

// TestDamageWhileOpen damages the file under an open ledger (bbolt reads
// it through a memory map): reads and writes answer *CorruptError instead
// of crashing, and writing stops.
func TestDamageWhileOpen(t *testing.T) {
	l, path, _ := testLedger(t)
	for i := range 30 {
		mustAppend(t, l, fmt.Sprintf("e%03d", i))
	}
	// Cutting the file under the map makes every access past the end a
	// SIGBUS, which the read guard turns into a panic and then an error.
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	_, err := l.Entry("e005")
	var co *CorruptError
	if !errors.As(err, &co) {
		t.Fatalf("Entry on a truncated file = %v, want *CorruptError", err)
	}
	if _, err := l.Append(context.Background(), Append{Build: simpleEntry("after")}); !errors.As(err, &co) {
		t.Fatalf("Append on a truncated file = %v, want *CorruptError", err)
	}
	if _, err := l.Append(context.Background(), Append{Build: simpleEntry("after2")}); !errors.As(err, &co) {
		t.Fatalf("second Append = %v, want the ledger to stay stopped", err)
	}
	if err := l.Update(func(tx Tx) error { return tx.Put("x", []byte("k"), nil) }); !errors.As(err, &co) {
		t.Fatalf("Update after damage = %v, want *CorruptError", err)
	}
	if n := l.Stats().IntegrityFailures; n == 0 {
		t.Error("damage was not counted")
	}
}

// TestVerifiedReads edits a leaf older than the ones Open re-hashes: Open
// accepts the file, reading that entry answers *IntegrityError naming its
// index (counted), other entries read fine, Check reports the index, and
// the full check at Open refuses the file.
func TestVerifiedReads(t *testing.T) {
	l, path, v := testLedger(t)
	for i := range OpenCheckLeaves + 20 {
		mustAppend(t, l, fmt.Sprintf("e%03d", i))
	}
	l.Close()
	tamper(t, path, putLeaf(5, []byte("forged leaf")))

	l = reopen(t, path)
	var ie *IntegrityError
	if _, err := l.Entry("e005"); !errors.As(err, &ie) || ie.Index != 5 || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("Entry of the edited leaf = %v, want *IntegrityError at index 5", err)
	}
	if e, err := l.EntryAt(5); !errors.As(err, &ie) || e.Leaf != nil {
		t.Fatalf("EntryAt(5) = %+v, %v: the edited bytes must not be returned", e, err)
	}
	if _, err := l.Entry("e006"); err != nil {
		t.Errorf("Entry of an intact leaf: %v", err)
	}
	if n := l.Stats().IntegrityFailures; n != 2 {
		t.Errorf("IntegrityFailures = %d, want 2", n)
	}
	var ce *CheckError
	if err := l.Check(); !errors.As(err, &ce) || ce.Index != 5 {
		t.Errorf("Check = %v, want the first bad index 5", err)
	}
	l.Close()

	s, _, _ := testKey(t, testOrigin, "log key 1")
	_, err := Open(path, Options{Origin: testOrigin, Signer: s, Verifier: v, FullCheck: true})
	var co *CorruptError
	if !errors.As(err, &co) || co.Index != 5 || !errors.As(err, &ce) {
		t.Fatalf("Open with FullCheck = %v, want *CorruptError at index 5 wrapping the *CheckError", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
}

// TestOpenChecksTheNewestLeaves: an edit among the newest OpenCheckLeaves
// leaves, or of an interior hash they completed, is refused at Open.
func TestOpenChecksTheNewestLeaves(t *testing.T) {
	l, path, _ := testLedger(t)
	for i := range 100 {
		mustAppend(t, l, fmt.Sprintf("e%03d", i))
	}
	l.Close()
	for name, tc := range map[string]struct {
		edit  func(*bolt.Tx) error
		index int64
	}{
		"newest leaf":              {putLeaf(99, []byte("forged")), 99},
		"a leaf 60 from the end":   {putLeaf(40, []byte("forged")), 40},
		"root-side interior hash":  {put("hashes", u64(tlog.StoredHashIndex(6, 0)), make([]byte, 32)), 100},
		"latest checkpoint edited": {editNote(100, flipSignatureByte), 100},
	} {
		t.Run(name, func(t *testing.T) {
			p := copyFile(t, path)
			tamper(t, p, tc.edit)
			s, _, _ := testKey(t, testOrigin, "log key 1")
			_, err := Open(p, Options{Origin: testOrigin, Signer: s})
			var co *CorruptError
			if !errors.As(err, &co) || co.Index != tc.index {
				t.Fatalf("Open = %v, want *CorruptError at index %d", err, tc.index)
			}
		})
	}
}

// TestDocVerified: a document is served only when it matches the digest
// its caller anchors it by.
func TestDocVerified(t *testing.T) {
	l, _, _ := testLedger(t)
	mustAppend(t, l, "a")
	good := sha256.Sum256([]byte(`{"id":"a"}`))
	doc, err := l.DocVerified("a", "record", good)
	if err != nil || string(doc) != `{"id":"a"}` {
		t.Fatalf("DocVerified with the right digest = %q, %v", doc, err)
	}
	var ie *IntegrityError
	doc, err = l.DocVerified("a", "record", sha256.Sum256([]byte("other")))
	if !errors.As(err, &ie) || ie.Index != 0 || doc != nil {
		t.Fatalf("DocVerified with another digest = %q, %v; want *IntegrityError at 0 and no bytes", doc, err)
	}
	if _, err := l.DocVerified("a", "missing", good); !errors.Is(err, ErrNotFound) {
		t.Errorf("DocVerified of a missing document = %v", err)
	}
	if n := l.Stats().IntegrityFailures; n != 1 {
		t.Errorf("IntegrityFailures = %d, want 1", n)
	}
}

// TestCallerPanicsAreNotDamage: a panic in caller code is the caller's: a
// Build panic fails its append only, a View function's panic propagates.
func TestCallerPanicsAreNotDamage(t *testing.T) {
	l, _, _ := testLedger(t)
	_, err := l.Append(context.Background(), Append{Build: func(int64) (Entry, error) { panic("boom") }})
	if err == nil || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Append with a panicking Build = %v", err)
	}
	mustAppend(t, l, "after")
	func() {
		defer func() {
			if r := recover(); r != "view boom" {
				t.Errorf("View's panic = %v, want it propagated", r)
			}
		}()
		l.View(func(Tx) error { panic("view boom") })
	}()
	if n := l.Stats().IntegrityFailures; n != 0 {
		t.Errorf("caller panics counted as integrity failures: %d", n)
	}
	mustCheck(t, l)
}

// TestFreelistDamageRefused marks a page that is in use as free: bbolt
// would hand it out again and overwrite live data. Open and Check refuse.
func TestFreelistDamageRefused(t *testing.T) {
	data, v := damageFixture(t, 24)
	path := filepath.Join(t.TempDir(), "freelist.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := &pageWalker{f: f, fileSize: int64(len(data))}
	root, err := w.readMeta()
	if err != nil {
		t.Fatal(err)
	}
	off := int64(w.freelistPage) * w.pageSize
	page := data[off : off+w.pageSize]
	if binary.NativeEndian.Uint16(page[8:10]) != freelistPageFlag || binary.NativeEndian.Uint16(page[10:12]) == 0 {
		t.Skip("the fixture has no free page to re-point")
	}
	binary.NativeEndian.PutUint64(page[pageHeaderSize:], root) // the root page, in use
	if _, err := f.WriteAt(page, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var ce *CheckError
	if err := Check(path, v); !errors.As(err, &ce) || !strings.Contains(ce.What, "free and in use") {
		t.Errorf("Check = %v, want the freelist damage", err)
	}
	s, _, _ := testKey(t, testOrigin, "log key 1")
	if _, err := Open(path, Options{Origin: testOrigin, Signer: s}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "free and in use") {
		t.Errorf("Open = %v, want ErrCorrupt naming the freelist damage", err)
	}
}

// TestQuickWalkChecksBounds: Open's walk reads ordinary leaf pages only as
// far as their element bounds, and still refuses an element pointing
// outside its page; an element whose key was merely reordered passes Open
// and is reported by the full walk (Check).
func TestQuickWalkChecksBounds(t *testing.T) {
	data, v := damageFixture(t, 24)
	used := usedBytes(t, data)
	refused, outOfOrder := 0, 0
	for off := 2 * 4096; off+4096 <= used; off += 4096 {
		p := data[off : off+4096]
		flags, count := binary.NativeEndian.Uint16(p[8:10]), int(binary.NativeEndian.Uint16(p[10:12]))
		if flags != leafPageFlag || count < 2 || binary.NativeEndian.Uint32(p[pageHeaderSize:])&bucketLeafFlag != 0 {
			continue
		}
		// The first element's data offset past the end of the page.
		bad := clone(data)
		binary.NativeEndian.PutUint32(bad[off+pageHeaderSize+4:], 1<<20)
		if l := openDamaged(t, bad, fmt.Sprintf("element out of page %d", off/4096)); l != nil {
			l.Close() // a free page: nothing reads it
		} else {
			refused++
		}
		// Swap the first two elements' headers: keys out of order.
		swapped := clone(data)
		e := swapped[off+pageHeaderSize:]
		var tmp [elementSize]byte
		copy(tmp[:], e[:elementSize])
		copy(e[:elementSize], e[elementSize:2*elementSize])
		copy(e[elementSize:2*elementSize], tmp[:])
		// Element offsets are relative to the element: fix them up so only
		// the order changes.
		binary.NativeEndian.PutUint32(e[4:], binary.NativeEndian.Uint32(e[4:])+elementSize)
		binary.NativeEndian.PutUint32(e[elementSize+4:], binary.NativeEndian.Uint32(e[elementSize+4:])-elementSize)
		path := filepath.Join(t.TempDir(), "swapped.db")
		if err := os.WriteFile(path, swapped, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Check(path, v); err != nil && strings.Contains(err.Error(), "keys out of order") {
			outOfOrder++
		}
	}
	if refused == 0 || outOfOrder == 0 {
		t.Fatalf("refused %d pages with an element out of bounds, full walk found %d reorderings", refused, outOfOrder)
	}
}

// TestUnknownSchemaRefused: a meta bucket without a known schema (an edited
// or damaged key) is refused, never initialized over.
func TestUnknownSchemaRefused(t *testing.T) {
	for name, edit := range map[string]func(*bolt.Tx) error{
		"schema key gone":           del("meta", metaSchema),
		"schema of a newer version": put("meta", metaSchema, []byte("fiscal402.ledger/9")),
	} {
		t.Run(name, func(t *testing.T) {
			base, _ := tamperFixture(t)
			tamper(t, base, edit)
			before, _ := os.ReadFile(base)
			s, _, _ := testKey(t, testOrigin, "log key 1")
			if _, err := Open(base, Options{Origin: testOrigin, Signer: s}); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Open = %v, want ErrInvalid", err)
			}
			if after, _ := os.ReadFile(base); !bytes.Equal(before, after) {
				t.Fatal("Open changed the file")
			}
		})
	}
}

// TestCheckOfADirectory: a directory given as the file to check (an
// operator's -ledger DIR) is refused as the wrong argument, not reported as
// a damaged file ("no valid meta page"), which would send the operator to
// restore a backup that is fine; nothing is written into the directory.
func TestCheckOfADirectory(t *testing.T) {
	_, v, _ := testKey(t, "example.com/log", "dir")
	dir := t.TempDir()
	err := Check(dir, v)
	var ce *CheckError
	if err == nil || errors.As(err, &ce) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("Check(%s) = %v; want ErrInvalid naming a directory, not a damaged file", dir, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check wrote into the directory: %v", entries)
	}
}
