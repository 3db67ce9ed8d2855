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

// checkTampered edits a copy of base and checks that Check reports a
// *CheckError at wantIndex whose text contains wantWhat; it returns the
// copy's path.
func checkTampered(t *testing.T, base string, edit func(*bolt.Tx) error, v note.Verifier, wantIndex int64, wantWhat string) string {
	t.Helper()
	path := copyFile(t, base)
	tamper(t, path, edit)
	err := Check(path, v)
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("Check = %v, want *CheckError", err)
	}
	if ce.Index != wantIndex || !strings.Contains(ce.What, wantWhat) {
		t.Fatalf("Check = index %d %q\nwant index %d containing %q", ce.Index, ce.What, wantIndex, wantWhat)
	}
	return path
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

// v1Fixture copies the schema-1 ledger file of testdata/v1 (ten entries
// like tamperFixture's, one commit each) and returns the copy's path.
func v1Fixture(t *testing.T) (string, note.Verifier) {
	t.Helper()
	_, v, _ := testKey(t, testOrigin, "log key 1")
	return copyFile(t, filepath.Join("testdata", "v1", "ledger.db")), v
}

// v2Fixture copies the schema-2 ledger file of testdata/v2 (tamperFixture's
// ten entries, written by the schema-2 version) and returns the copy's path.
func v2Fixture(t *testing.T) (string, note.Verifier) {
	t.Helper()
	_, v, _ := testKey(t, testOrigin, "log key 1")
	return copyFile(t, filepath.Join("testdata", "v2", "ledger.db")), v
}

// TestCheckReportsTampering edits a file of each schema with bbolt, as an
// attacker with write access to the file (but not the log key) could, and
// checks that Check reports the first inconsistency at the right index.
func TestCheckReportsTampering(t *testing.T) {
	t.Run("schema 4", func(t *testing.T) {
		base, v := tamperFixture(t)
		if schema, _ := schemaOf(t, base); schema != "fiscal402.ledger/4" {
			t.Fatalf("tamperFixture writes schema %q, want fiscal402.ledger/4 (the rows skipped from schema 3 on assume it)", schema)
		}
		checkReportsTampering(t, base, v, 4)
	})
	t.Run("schema 2", func(t *testing.T) {
		base, v := v2Fixture(t)
		checkReportsTampering(t, base, v, 2)
	})
	t.Run("schema 1", func(t *testing.T) {
		base, v := v1Fixture(t)
		checkReportsTampering(t, base, v, 1)
	})
}

// checkReportsTampering runs the tampering table on base, a file of the
// given schema (1, 2 or 4; schema 3 is schema 4 without the posting log).
func checkReportsTampering(t *testing.T, base string, v note.Verifier, schema int) {
	signer, _, _ := testKey(t, testOrigin, "log key 1")
	otherSigner, _, _ := testKey(t, testOrigin, "someone else's key")
	// The docs bucket holds schema-1 entries' documents only. A schema-1
	// file's size bounds them; from schema 2 on (schema 3 keeps the
	// schema-2 blobs) v2from does, 0 in the fixtures, written by schema 2
	// and 3 from their first entry.
	var docWhat string
	switch schema {
	case 1:
		docWhat = `document "record" of index 000000000000000a beyond meta size 10`
	case 2, 4:
		docWhat = `document "record" of index 000000000000000a is not of a schema-1 entry (below 0)`
	default:
		t.Fatalf("schema %d: no such schema", schema)
	}
	// Schema 3 keeps the IDs in keys records, not in the entries and ids
	// buckets, which these rows edit: there they are a no-op (the entries
	// bucket is empty) or a stray key. TestCheckReportsKeysTampering
	// covers their schema-3 counterparts (a keys record missing, a
	// duplicated ID, stray entries and ids keys).
	notSchema3 := map[string]bool{
		"entry ID changed":  true,
		"entry ID deleted":  true,
		"ids index altered": true,
		"ghost id":          true,
	}

	tests := []struct {
		name      string
		edit      func(*bolt.Tx) error
		wantIndex int64
		wantWhat  string
	}{
		{"leaf altered", putLeaf(5, []byte("LEAF-MARKER-05-forged")), 5,
			"leaf 5: its record hash SHA-256(0x00‖leaf) differs from stored hash 8"},
		{"leaf deleted", delLeaf(7), 7, "leaf 7 is missing (next stored leaf is 8)"},
		{"leaf emptied", putStoredLeaf(2, []byte{}), 2, "leaf 2 is empty"},
		{"leaf beyond size", putLeaf(10, []byte("extra")), 10, "leaf key 000000000000000a beyond meta size 10"},
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
		{"document of a missing index", put("docs", docKey(10, "record"), []byte("{}")), -1, docWhat},
		{"meta size raised", put("meta", metaSize, u64(11)), 10, "leaf 10 is missing (meta size 11)"},
		{"meta size lowered", put("meta", metaSize, u64(9)), 9, "leaf key 0000000000000009 beyond meta size 9"},
		{"meta origin changed", put("meta", metaOrigin, []byte("evil.example/log")), -1,
			`meta origin "evil.example/log" is not the log key's name "fiscal402.test/log"`},
		{"schema changed", put("meta", metaSchema, []byte("fiscal402.ledger/0")), -1, `meta schema is "fiscal402.ledger/0"`},
		{"bucket dropped", func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("postings")) }, -1, `bucket "postings" is missing`},
	}
	namesRows(t, "notSchema3", notSchema3, len(tests), func(i int) string { return tests[i].name })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if schema >= 3 && notSchema3[tc.name] {
				t.Skip("schema 3 keeps IDs in keys records: TestCheckReportsKeysTampering")
			}
			checkTampered(t, base, tc.edit, v, tc.wantIndex, tc.wantWhat)
		})
	}
}

// rewriteLeaf replaces a leaf and rewrites every stored hash so that the
// tree is internally consistent again: only the signed checkpoints can
// reveal it.
func rewriteLeaf(index int64, leaf []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if err := putLeaf(index, leaf)(tx); err != nil {
			return err
		}
		hashes := tx.Bucket(bucketHashes)
		size, _ := txSize(tx)
		for i := int64(0); i < size; i++ {
			l, err := getLeaf(tx, i)
			if err != nil {
				return err
			}
			hs, err := tlog.StoredHashes(i, l, hashReader{hashes})
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

// txSize reads the committed tree size from meta.
func txSize(tx *bolt.Tx) (int64, error) {
	return parseU64(tx.Bucket(bucketMeta).Get(metaSize))
}

// v2from is where the blobs of a file start (its size for a schema-1 file).
func v2from(tx *bolt.Tx) int64 {
	meta := tx.Bucket(bucketMeta)
	if s := string(meta.Get(metaSchema)); s == schemaV1 {
		return 1 << 62
	}
	n, _ := parseU64(meta.Get(metaV2From))
	return n
}

// putStoredLeaf writes the stored value of a leaf as is: a blob in schema
// 2, the leaf in schema 1.
func putStoredLeaf(index int64, v []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if index >= v2from(tx) {
			return tx.Bucket(bucketBlobs).Put(u64(index), v)
		}
		return tx.Bucket(bucketLeaves).Put(u64(index), v)
	}
}

// putLeaf replaces the leaf of the entry at index, keeping its documents:
// in schema 2 it encodes the entry's blob again (without a dictionary).
func putLeaf(index int64, leaf []byte) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if index < v2from(tx) {
			return tx.Bucket(bucketLeaves).Put(u64(index), leaf)
		}
		docs := map[string][]byte{}
		if old := tx.Bucket(bucketBlobs).Get(u64(index)); old != nil {
			ds, err := txCodec(tx).decodeDocs(old)
			if err != nil {
				return err
			}
			for _, d := range ds {
				docs[d.name] = d.doc
			}
		}
		plain, _ := newCodec(nil)
		defer plain.close()
		return tx.Bucket(bucketBlobs).Put(u64(index), plain.encode(leaf, docs).blob)
	}
}

// delLeaf deletes the stored leaf of the entry at index.
func delLeaf(index int64) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		if index < v2from(tx) {
			return tx.Bucket(bucketLeaves).Delete(u64(index))
		}
		return tx.Bucket(bucketBlobs).Delete(u64(index))
	}
}

// getLeaf reads the leaf of the entry at index.
func getLeaf(tx *bolt.Tx, index int64) ([]byte, error) {
	if index < v2from(tx) {
		return tx.Bucket(bucketLeaves).Get(u64(index)), nil
	}
	return txCodec(tx).decodeLeaf(tx.Bucket(bucketBlobs).Get(u64(index)))
}

// txCodec is a codec knowing the dictionaries of the file.
func txCodec(tx *bolt.Tx) *codec {
	dicts, _ := loadDicts(tx)
	c, err := newCodec(dicts)
	if err != nil {
		panic(err)
	}
	return c
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
		cp, err := signCheckpoint(s, nil, testOrigin, size, h)
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
	// The leaves of a schema-1 file are stored as they are, so the
	// markers find them; schema 2 compresses them (TestFlippedBlobBytes).
	base, v := v1Fixture(t)
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

// TestFlippedBlobBytes flips bytes inside the stored blob of an entry (its
// compressed leaf and documents): Check reports that entry, as an entry
// that does not decode (the zstd frame checksum) or whose leaf does not
// match its record hash, and Open refuses the file (the entry is among the
// newest ones it re-hashes).
func TestFlippedBlobBytes(t *testing.T) {
	base, v := tamperFixture(t)
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	tamper(t, copyFile(t, base), func(tx *bolt.Tx) error {
		blob = clone(tx.Bucket(bucketBlobs).Get(u64(6)))
		return nil
	})
	detected, docsDetected, copies := 0, 0, 0
	for off := 0; ; {
		i := bytes.Index(data[off:], blob)
		if i < 0 {
			break
		}
		at := off + i
		off = at + 1
		copies++
		// bbolt is copy-on-write: freed pages may hold stale copies, whose
		// flips change nothing; flips of the live copy must be reported.
		for j := 1; j < len(blob); j += 5 {
			flipped := clone(data)
			flipped[at+j] ^= 0x10
			path := filepath.Join(t.TempDir(), "flipped.db")
			if err := os.WriteFile(path, flipped, 0o600); err != nil {
				t.Fatal(err)
			}
			err := Check(path, v)
			if err == nil {
				// A stale copy, or the documents' frame, which the log does
				// not cover: a read must still never serve changed bytes
				// (the frame's checksum).
				l := reopen(t, path)
				doc, err := l.Doc("e6", "record")
				var ie *IntegrityError
				if err != nil && !errors.As(err, &ie) || err == nil && string(doc) != "{}" {
					t.Fatalf("flip at blob byte %d: Doc = %q, %v", j, doc, err)
				}
				if err != nil {
					docsDetected++
				}
				l.Close()
				continue
			}
			var ce *CheckError
			if !errors.As(err, &ce) || ce.Index != 6 {
				t.Fatalf("flip at blob byte %d: Check = %v, want entry 6 reported", j, err)
			}
			detected++
			// Entry 6 is among the leaves Open re-hashes.
			s, _, _ := testKey(t, testOrigin, "log key 1")
			var co *CorruptError
			if _, err := Open(path, Options{Origin: testOrigin, Signer: s}); !errors.As(err, &co) || co.Index != 6 {
				t.Fatalf("flip at blob byte %d: Open = %v, want *CorruptError at 6", j, err)
			}
		}
	}
	t.Logf("%d copies of the blob, %d flips detected by Check, %d more when the document was read", copies, detected, docsDetected)
	if detected == 0 {
		t.Fatal("no flip was detected")
	}
}
