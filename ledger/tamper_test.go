package ledger

import (
	"bytes"
	"context"
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

// tamperFixture builds a closed ledger of 10 entries, one commit each (so
// checkpoints 0…10 exist), and returns its path and the log verifier.
func tamperFixture(t *testing.T) (string, note.Verifier) {
	t.Helper()
	l, path, v := testLedger(t)
	for i := range 10 {
		name := fmt.Sprintf("e%d", i)
		_, err := l.Append(context.Background(), Append{
			Claims: []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}},
			Build: func(index int64) (Entry, error) {
				return Entry{
					ID:       name,
					Leaf:     []byte(fmt.Sprintf("LEAF-MARKER-%02d-%s", index, strings.Repeat("x", 40))),
					Docs:     map[string][]byte{"record": []byte("{}")},
					Postings: []Posting{{Index: "by_name", Key: []byte(name)}},
				}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("fixture does not check: %v", err)
	}
	return path, v
}

// tamper edits the ledger file with bbolt directly, as an attacker with
// write access to the file (but not the log key) could.
func tamper(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func put(bucket string, key, value []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucket)).Put(key, value) }
}

func del(bucket string, key []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error { return tx.Bucket([]byte(bucket)).Delete(key) }
}

func copyFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestCheckReportsTampering(t *testing.T) {
	base, v := tamperFixture(t)
	signer, _, _ := testKey(t, testOrigin, "log key 1")
	otherSigner, _, _ := testKey(t, testOrigin, "someone else's key")

	tests := []struct {
		name      string
		edit      func(*bolt.Tx) error
		wantIndex int64
		wantWhat  string
	}{
		{"leaf altered", put("leaves", u64(5), []byte("LEAF-MARKER-05-forged")), 5,
			"leaf 5: its record hash SHA-256(0x00‖leaf) differs from stored hash 8"},
		{"leaf deleted", del("leaves", u64(7)), 7, "leaf 7 is missing (next stored leaf is 8)"},
		{"leaf emptied", put("leaves", u64(2), []byte{}), 2, "leaf 2 is empty"},
		{"leaf beyond size", put("leaves", u64(10), []byte("extra")), 10, "leaf key 000000000000000a beyond meta size 10"},
		{"record hash altered", put("hashes", u64(tlog.StoredHashIndex(0, 3)), bytes.Repeat([]byte{1}, 32)), 3,
			"leaf 3: its record hash"},
		{"interior hash altered", put("hashes", u64(tlog.StoredHashIndex(1, 1)), bytes.Repeat([]byte{1}, 32)), 3,
			"stored hash 5 (level 1, node 1, over leaves 2–3) differs from the hash recomputed from the leaves"},
		{"level-3 hash altered", put("hashes", u64(tlog.StoredHashIndex(3, 0)), bytes.Repeat([]byte{1}, 32)), 7,
			"stored hash 14 (level 3, node 0, over leaves 0–7)"},
		{"hash beyond the tree", put("hashes", u64(tlog.StoredHashCount(10)), bytes.Repeat([]byte{1}, 32)), -1,
			"stored hash key 0000000000000012 beyond the 18 hashes of a tree of size 10"},
		{"leaf and hashes rewritten consistently", rewriteLeaf(5, []byte("LEAF-MARKER-05-forged")), 6,
			"checkpoint 6: signed root"},
		{"checkpoint text altered", editNote(4, func(n []byte) []byte { return bytes.Replace(n, []byte("\n4\n"), []byte("\n3\n"), 1) }), 4,
			"checkpoint 4: signature by log key fiscal402.test/log+"},
		{"checkpoint signature altered", editNote(9, flipSignatureByte), 9, "checkpoint 9: signature by log key"},
		{"checkpoint signed by another key", resign(otherSigner, 8, nil), 8, "checkpoint 8: signature by log key"},
		{"checkpoint with a wrong root signed by the log key", resign(signer, 8, func(*tlog.Hash) tlog.Hash { return tlog.RecordHash([]byte("x")) }), 8,
			"checkpoint 8: signed root"},
		{"checkpoint under the wrong size", copyNote(3, 5), 5, "checkpoint stored under size 5 says size 3"},
		{"latest checkpoint deleted", del("checkpoints", u64(10)), 10, "latest checkpoint has size 9, meta size is 10"},
		{"checkpoint beyond the log", resign(signer, 11, nil), 11, "checkpoint 11 is beyond meta size 10"},
		{"entry ID changed", put("entries", u64(2), []byte("zz")), 2, `entry 2: ID "zz" is missing from the ids index`},
		{"entry ID deleted", del("entries", u64(4)), 4, "entry 4 has no ID"},
		{"ids index altered", put("ids", []byte("e3"), u64(4)), 3, `entry 3: ids index maps its ID "e3" to 4`},
		{"ghost id", put("ids", []byte("ghost"), u64(1)), 1, `ids index: ID "ghost" points at entry 1, whose ID is "e1"`},
		{"ghost id beyond", put("ids", []byte("ghost"), u64(99)), -1, `ids index: ID "ghost" points at 0000000000000063, not an index below 10`},
		{"posting to a missing entry", subPut("postings", "by_name", []byte("x"), []byte("nobody")), -1,
			`posting "by_name" "x" names entry "nobody", which does not exist`},
		{"claim beyond the log", subPut("claims", "payment", []byte("p"), claimValue(12, nil)), 12,
			`claim "payment" "p" points at index 12, beyond meta size 10`},
		{"claim value truncated", subPut("claims", "payment", []byte("e1"), []byte{1, 2}), -1,
			`claim "payment" "e1": claim value of 2 bytes`},
		{"document of a missing index", put("docs", docKey(10, "record"), []byte("{}")), -1,
			`document "record" of index 000000000000000a beyond meta size 10`},
		{"meta size raised", put("meta", metaSize, u64(11)), 10, "leaf 10 is missing (meta size 11)"},
		{"meta size lowered", put("meta", metaSize, u64(9)), 9, "leaf key 0000000000000009 beyond meta size 9"},
		{"meta origin changed", put("meta", metaOrigin, []byte("evil.example/log")), -1,
			`meta origin "evil.example/log" is not the log key's name "fiscal402.test/log"`},
		{"schema changed", put("meta", metaSchema, []byte("fiscal402.ledger/0")), -1, `meta schema is "fiscal402.ledger/0"`},
		{"bucket dropped", func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("postings")) }, -1, `bucket "postings" is missing`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := copyFile(t, base)
			tamper(t, path, tc.edit)
			err := Check(path, v)
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want *CheckError", err)
			}
			if ce.Index != tc.wantIndex || !strings.Contains(ce.What, tc.wantWhat) {
				t.Fatalf("Check = index %d %q\nwant index %d containing %q", ce.Index, ce.What, tc.wantIndex, tc.wantWhat)
			}
		})
	}
}

// rewriteLeaf replaces a leaf and rewrites every stored hash so that the
// tree is internally consistent again: only the signed checkpoints can
// reveal it.
func rewriteLeaf(index int64, leaf []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		leaves, hashes := tx.Bucket(bucketLeaves), tx.Bucket(bucketHashes)
		if err := leaves.Put(u64(index), leaf); err != nil {
			return err
		}
		size, _ := txSize(tx)
		for i := int64(0); i < size; i++ {
			hs, err := tlog.StoredHashes(i, leaves.Get(u64(i)), hashReader{hashes})
			if err != nil {
				return err
			}
			for j, h := range hs {
				if err := hashes.Put(u64(tlog.StoredHashIndex(0, i)+int64(j)), h[:]); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func editNote(size int64, fn func([]byte) []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints)
		return b.Put(u64(size), fn(clone(b.Get(u64(size)))))
	}
}

func flipSignatureByte(n []byte) []byte {
	// The base64 signature ends the note; change a character well inside it.
	i := len(n) - 10
	if n[i] == 'A' {
		n[i] = 'B'
	} else {
		n[i] = 'A'
	}
	return n
}

// resign stores a checkpoint of size signed by s, with the true root of the
// stored tree unless root alters it.
func resign(s note.Signer, size int64, root func(*tlog.Hash) tlog.Hash) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		var h tlog.Hash
		if size <= 10 {
			var err error
			if h, err = tlog.TreeHash(size, hashReader{tx.Bucket(bucketHashes)}); err != nil {
				return err
			}
		}
		if root != nil {
			h = root(&h)
		}
		cp, err := signCheckpoint(s, testOrigin, size, h)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketCheckpoints).Put(u64(size), cp.Note)
	}
}

func copyNote(from, to int64) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints)
		return b.Put(u64(to), clone(b.Get(u64(from))))
	}
}

func subPut(parent, sub string, key, value []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		b, err := tx.Bucket([]byte(parent)).CreateBucketIfNotExists([]byte(sub))
		if err != nil {
			return err
		}
		return b.Put(key, value)
	}
}

// TestCheckReportsFlippedFileBytes flips bytes of the raw file, below
// bbolt, as disk corruption or a careless editor would.
func TestCheckReportsFlippedFileBytes(t *testing.T) {
	base, v := tamperFixture(t)
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		marker string
		at     int // offset of the flipped byte after the marker
		want   func(*CheckError) bool
	}{
		{"leaf 6", "LEAF-MARKER-06-", 3, func(ce *CheckError) bool {
			return ce.Index == 6 && strings.Contains(ce.What, "leaf 6: its record hash")
		}},
		{"leaf 0", "LEAF-MARKER-00-", 3, func(ce *CheckError) bool {
			return ce.Index == 0 && strings.Contains(ce.What, "leaf 0: its record hash")
		}},
		// Flipping the low bit of a base64 letter keeps it base64.
		{"checkpoint signature", "— " + testOrigin + " ", 20, func(ce *CheckError) bool {
			return strings.Contains(ce.What, "signature by log key")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// bbolt is copy-on-write: freed pages may still hold stale
			// copies. Flip each copy in turn; flipping a live one must be
			// reported, flipping a stale one must change nothing.
			detected := 0
			for off := 0; ; {
				i := bytes.Index(data[off:], []byte(tc.marker))
				if i < 0 {
					break
				}
				i += off
				off = i + 1
				flipped := clone(data)
				flipped[i+len(tc.marker)+tc.at] ^= 0x01
				path := filepath.Join(t.TempDir(), "flipped.db")
				if err := os.WriteFile(path, flipped, 0o600); err != nil {
					t.Fatal(err)
				}
				err := Check(path, v)
				if err == nil {
					continue
				}
				var ce *CheckError
				if !errors.As(err, &ce) || !tc.want(ce) {
					t.Fatalf("flip at offset %d: Check = %v", i, err)
				}
				detected++
			}
			if detected == 0 {
				t.Fatal("no flip was detected")
			}
			t.Logf("%d live copies detected", detected)
		})
	}
	// Garbage over the bbolt meta pages is reported, not a crash.
	t.Run("meta pages", func(t *testing.T) {
		flipped := clone(data)
		for i := 0; i < 2*4096 && i < len(flipped); i++ {
			flipped[i] = 0xA5
		}
		path := filepath.Join(t.TempDir(), "flipped.db")
		if err := os.WriteFile(path, flipped, 0o600); err != nil {
			t.Fatal(err)
		}
		var ce *CheckError
		if err := Check(path, v); !errors.As(err, &ce) || ce.Index != -1 {
			t.Fatalf("Check = %v, want a file-level CheckError", err)
		}
	})
}

func TestCheckWrongKeyAndMissingFile(t *testing.T) {
	base, _ := tamperFixture(t)
	_, other, _ := testKey(t, testOrigin, "someone else's key")
	var ce *CheckError
	if err := Check(base, other); !errors.As(err, &ce) || ce.Index != 0 || !strings.Contains(ce.What, "checkpoint 0: signature") {
		t.Errorf("Check with another key = %v, want the genesis checkpoint's signature to fail", err)
	}
	if err := Check(filepath.Join(t.TempDir(), "none.db"), other); !errors.Is(err, ErrNotFound) {
		t.Errorf("Check of a missing file = %v, want ErrNotFound", err)
	}
	if err := Check(base, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Check with a nil key = %v, want ErrInvalid", err)
	}
}

// TestOpenRefusesInconsistentHead: Open's quick check stops a writer from
// extending a log whose head is broken.
func TestOpenRefusesInconsistentHead(t *testing.T) {
	base, _ := tamperFixture(t)
	for name, edit := range map[string]func(*bolt.Tx) error{
		"meta size ahead":          put("meta", metaSize, u64(11)),
		"latest checkpoint gone":   del("checkpoints", u64(10)),
		"latest checkpoint forged": editNote(10, flipSignatureByte),
	} {
		t.Run(name, func(t *testing.T) {
			path := copyFile(t, base)
			tamper(t, path, edit)
			s, _, _ := testKey(t, testOrigin, "log key 1")
			l, err := Open(path, Options{Origin: testOrigin, Signer: s})
			if err == nil {
				l.Close()
				t.Fatal("Open accepted a file with an inconsistent head")
			}
			var ce *CheckError
			if !errors.As(err, &ce) && !errors.Is(err, ErrLogKeyMismatch) {
				t.Errorf("Open = %v, want *CheckError or ErrLogKeyMismatch", err)
			}
		})
	}
}

// writeForeignBolt writes a bbolt file that is not a ledger.
func writeForeignBolt(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("someone-else"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzCheck flips bytes anywhere in a valid ledger file: Check must never
// panic or hang, and must answer nil (the bytes were unused, e.g. a freed
// page) or a *CheckError, nothing else.
func FuzzCheck(f *testing.F) {
	base, v := fuzzFixture(f)
	data, err := os.ReadFile(base)
	if err != nil {
		f.Fatal(err)
	}
	for _, off := range []uint32{0, 16, 4096, 8192, 12288, 16384, 20000} {
		f.Add(off, byte(1), uint32(0), byte(0))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, off1 uint32, x1 byte, off2 uint32, x2 byte) {
		mutated := clone(data)
		mutated[int(off1)%len(mutated)] ^= x1
		mutated[int(off2)%len(mutated)] ^= x2
		path := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(path, mutated, 0o600); err != nil {
			t.Fatal(err)
		}
		err := Check(path, v)
		var ce *CheckError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("Check = %v, want nil or *CheckError", err)
		}
	})
}

// fuzzFixture is tamperFixture for a *testing.F.
func fuzzFixture(f *testing.F) (string, note.Verifier) {
	s, v, _ := testKey(f, testOrigin, "log key 1")
	path := filepath.Join(f.TempDir(), "ledger.db")
	l, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		f.Fatal(err)
	}
	for i := range 20 {
		name := fmt.Sprintf("e%d", i)
		_, err := l.Append(context.Background(), Append{
			Claims: []Claim{{Space: "payment", Key: name}},
			Build:  simpleEntry(name),
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	return path, v
}

// TestCheckPagesCycle points the checkpoints bucket's root at the file's
// root page, making the page graph cyclic. bbolt itself would follow the
// cycle; Check must report it before any cursor runs.
func TestCheckPagesCycle(t *testing.T) {
	base, v := tamperFixture(t)
	path := copyFile(t, base)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	w := &pageWalker{f: f, fileSize: fi.Size()}
	root, err := w.readMeta()
	if err != nil {
		t.Fatal(err)
	}
	page := make([]byte, w.pageSize)
	if _, err := f.ReadAt(page, int64(root)*w.pageSize); err != nil {
		t.Fatal(err)
	}
	if flags := binary.NativeEndian.Uint16(page[8:10]); flags != leafPageFlag {
		t.Skipf("root page is not a leaf (flags %#x); the fixture grew", flags)
	}
	count := int(binary.NativeEndian.Uint16(page[10:12]))
	patched := false
	for i := range count {
		off := pageHeaderSize + i*elementSize
		e := page[off : off+elementSize]
		pos, ksize := int(binary.NativeEndian.Uint32(e[4:8])), int(binary.NativeEndian.Uint32(e[8:12]))
		if string(page[off+pos:off+pos+ksize]) != "checkpoints" {
			continue
		}
		value := page[off+pos+ksize:]
		if binary.NativeEndian.Uint64(value[0:8]) == 0 {
			t.Skip("checkpoints bucket is inline in this fixture")
		}
		binary.NativeEndian.PutUint64(value[0:8], root)
		patched = true
	}
	if !patched {
		t.Fatal("checkpoints bucket not found in the root page")
	}
	if _, err := f.WriteAt(page, int64(root)*w.pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var ce *CheckError
	if err := Check(path, v); !errors.As(err, &ce) || ce.Index != -1 || !strings.Contains(ce.What, "referenced twice") {
		t.Fatalf("Check = %v, want a page-structure CheckError naming the cycle", err)
	}
}
