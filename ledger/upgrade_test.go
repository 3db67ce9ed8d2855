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
	"golang.org/x/mod/sumdb/tlog"
)

// v1Leaf is the leaf testdata/v1/README.md documents for entry i.
func v1Leaf(i int64) []byte {
	return fmt.Appendf(nil, "LEAF-MARKER-%02d-%s", i, strings.Repeat("x", 40))
}

// readsV1 checks every entry of the schema-1 fixture as its README says.
func readsV1(t *testing.T, l *Ledger) {
	t.Helper()
	cp, err := l.Checkpoint()
	if err != nil || cp.Size < 10 {
		t.Fatalf("Checkpoint = %+v, %v", cp, err)
	}
	for i := int64(0); i < 10; i++ {
		id := fmt.Sprintf("e%d", i)
		e, err := l.Entry(id)
		if err != nil || e.Index != i || !bytes.Equal(e.Leaf, v1Leaf(i)) ||
			string(e.Docs["record"]) != `{"id":"`+id+`"}` || string(e.Docs["ubl"]) != "<Invoice>"+id+"</Invoice>" {
			t.Fatalf("Entry(%s) = %+v, %v", id, e, err)
		}
		if doc, err := l.Doc(id, "ubl"); err != nil || string(doc) != "<Invoice>"+id+"</Invoice>" {
			t.Fatalf("Doc(%s) = %q, %v", id, doc, err)
		}
		if v, err := l.Get("events", u64(i)); err != nil || string(v) != "event "+id {
			t.Fatalf("Get events %d = %q, %v", i, v, err)
		}
		if got, err := l.Lookup("by_name", []byte(id)); err != nil || got != id {
			t.Fatalf("Lookup(%s) = %q, %v", id, got, err)
		}
		p, err := l.InclusionProof(i, cp.Size)
		if err != nil || tlog.CheckRecord(p, cp.Size, cp.Root, i, tlog.RecordHash(v1Leaf(i))) != nil {
			t.Fatalf("inclusion of %d: %v", i, err)
		}
	}
}

func schemaOf(t *testing.T, path string) (schema string, v2from []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		schema, v2from = string(meta.Get(metaSchema)), clone(meta.Get(metaV2From))
		return nil
	})
	return schema, v2from
}

// TestSchema1FileKeepsWorking: a file written by the schema-1 version is
// read as it is when opened read-only, and upgraded in place when opened
// for writing: its entries stay where they are, new ones are blobs, and
// both read, prove and check.
func TestSchema1FileKeepsWorking(t *testing.T) {
	path, v := v1Fixture(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("Check of the schema-1 file: %v", err)
	}
	ro, err := Open(path, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	readsV1(t, ro)
	mustCheck(t, ro)
	ro.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("a read-only open changed the file")
	}

	reopen(t, path).Close()
	if schema, from := schemaOf(t, path); schema != schemaVersion || !bytes.Equal(from, u64(10)) {
		t.Fatalf("after a writable open: schema %q, v2from %x", schema, from)
	}
	l := reopen(t, path)
	readsV1(t, l)
	mustAppend(t, l, "built")
	if _, err := l.Append(context.Background(), Append{Entry: prebuiltEntry("prebuilt")}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"built", "prebuilt"} {
		if e, err := l.Entry(id); err != nil || e.Index < 10 {
			t.Fatalf("Entry(%s) = %+v, %v", id, e, err)
		}
	}
	readsV1(t, l)
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("Check after the upgrade: %v", err)
	}
	l = reopen(t, path)
	readsV1(t, l)
	if l.Size() != 12 {
		t.Fatalf("size %d", l.Size())
	}
	l.Close()

	// Tampering below the schema-2 boundary is still found, at its index.
	tamper(t, path, putLeaf(3, []byte("LEAF-MARKER-03-forged")))
	var ce *CheckError
	if err := Check(path, v); !errors.As(err, &ce) || ce.Index != 3 {
		t.Fatalf("Check after editing schema-1 leaf 3 = %v", err)
	}
}

// TestDictionaries: dictionaries are cut as the log grows, entries after a
// cut use it and shrink, everything reads back after a reopen, and a cut
// right after a restart takes the newest entries' bodies from the file.
func TestDictionaries(t *testing.T) {
	r := loadRealistic(t)
	l, path, v := testLedger(t)
	appendN := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			e := r.entry(int64(i))
			en, hook := e.prebuilt()
			if _, err := l.Append(context.Background(), Append{Claims: e.claims(), Entry: &en, Hook: hook}); err != nil {
				t.Fatal(err)
			}
		}
	}
	blobOf := func(i int64) (blob []byte) {
		l.store.view(func(r storeReader) error {
			e, _ := r.entry(i)
			blob = clone(e.blob)
			return nil
		})
		return blob
	}
	appendN(0, 14)
	l.Close()
	l = reopen(t, path)
	appendN(14, 6) // crosses 16 with two entries of this run: the others come from the file
	d1 := l.codec.dicts[1]
	if d1 == nil {
		t.Fatal("no dictionary cut at size 16")
	}
	var want []byte
	for i := int64(12); i < 16; i++ {
		l.store.view(func(rd storeReader) error {
			e, _ := rd.entry(i)
			b, err := l.rawBody(i, e)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, b...)
			return nil
		})
	}
	if !bytes.Equal(d1, want) {
		t.Fatalf("dictionary 1 is not the raw bodies of entries 12–15 (%d vs %d bytes)", len(d1), len(want))
	}
	small, _ := parseBlob(blobOf(19))
	big, _ := parseBlob(blobOf(3))
	if small.dict != 1 || big.dict != 0 || len(blobOf(19)) >= len(blobOf(3))/2 {
		t.Fatalf("entry 19: dictionary %d, %d bytes; entry 3: dictionary %d, %d bytes", small.dict, len(blobOf(19)), big.dict, len(blobOf(3)))
	}
	appendN(20, 250)
	if l.codec.enc.Load().dict != 2 {
		t.Fatalf("newest dictionary %d at size %d, want 2", l.codec.enc.Load().dict, l.Size())
	}
	mustCheck(t, l)
	l.Close()
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
	l = reopen(t, path)
	for i := int64(0); i < l.Size(); i += 7 {
		e, err := l.EntryAt(i)
		want := r.entry(i)
		if err != nil || !bytes.Equal(e.Leaf, want.leaf) || !bytes.Equal(e.Docs["ubl"], want.ubl) {
			t.Fatalf("entry %d after reopen: %v", i, err)
		}
	}
}

// TestFreelistKindsShareFiles: files written up to now used bbolt's
// hashmap freelist, new ones the array kind; each opens and extends a file
// the other wrote, and the page walk's freelist accounting holds after
// each (the freelist is synced: Open reads it, it is not rebuilt).
func TestFreelistKindsShareFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, v, _ := testKey(t, testOrigin, "log key 1")
	n := 0
	for round, kind := range []bolt.FreelistType{bolt.FreelistMapType, bolt.FreelistArrayType, bolt.FreelistMapType, ""} {
		l, err := open(path, Options{Origin: testOrigin, Signer: s}, func(o *bolt.Options) {
			if kind != "" {
				o.FreelistType = kind
			}
		})
		if err != nil {
			t.Fatalf("round %d (%q): open: %v", round, kind, err)
		}
		for range 40 {
			mustAppend(t, l, fmt.Sprintf("e%d", n))
			n++
		}
		// Deletes free pages, so that the freelist carries ids over.
		err = l.Update(func(tx Tx) error {
			for i := range 200 {
				if err := tx.Put("scratch", fmt.Appendf(nil, "k%03d", i), bytes.Repeat([]byte{'v'}, 200)); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = l.Update(func(tx Tx) error {
				for i := range 200 {
					if err := tx.Delete("scratch", fmt.Appendf(nil, "k%03d", i)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := Check(path, v); err != nil {
			t.Fatalf("round %d (%q): %v", round, kind, err)
		}
	}
	l := reopen(t, path)
	defer l.Close()
	if l.Size() != int64(n) {
		t.Fatalf("size %d, want %d", l.Size(), n)
	}
	if _, err := l.Entry("e0"); err != nil {
		t.Fatal(err)
	}
}
