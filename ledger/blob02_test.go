package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// blob02Entry is entry i of testdata/blob02 (see its README), as appended:
// without the Hook's splice.
func blob02Entry(i int64) Entry {
	id := fmt.Sprintf("e%02d", i)
	sig := sha256.Sum256([]byte("sig " + id))
	sig2 := sha256.Sum256(sig[:])
	payload := fmt.Sprintf(`{"entry":"%s","amount":"%d.90","currency":"EUR","memo":"%s"}`, id, 10+i, strings.Repeat("settled ", 8))
	leaf := "eyJhbGciOiJFZERTQSJ9." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." +
		base64.RawURLEncoding.EncodeToString(append(sig[:], sig2[:]...))
	if i == 3 {
		leaf = "RAW-LEAF-" + id
	}
	e := Entry{ID: id, Leaf: []byte(leaf)}
	if i != 5 {
		e.Docs = map[string][]byte{
			"record": fmt.Appendf(nil, `{"id":"%s","n":%d,"lines":[%s]}`, id, i, strings.Repeat(`{"rate":"19%","net":"10.00"},`, 6)),
			"ubl":    fmt.Appendf(nil, "<Invoice><ID>INV-000000</ID><Note>%s</Note><Ref>%s</Ref></Invoice>", strings.Repeat("fiscal402 ", 12), id),
		}
	}
	return e
}

const invOffset = len("<Invoice><ID>INV-")

// blob02Append appends entry i as the fixture was written: odd entries
// with documents splice their index into the invoice number.
func blob02Append(t *testing.T, l *Ledger, i int64) {
	t.Helper()
	e := blob02Entry(i)
	a := Append{Entry: &e}
	if e.Docs != nil && i%2 == 1 {
		a.Hook = func(h *Hook) error { return h.Splice("ubl", invOffset, fmt.Appendf(nil, "%06d", h.Index())) }
	}
	if _, err := l.Append(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

// readsBlob02 checks entries 0…n−1 against blob02Entry, splices included.
func readsBlob02(t *testing.T, l *Ledger, n int64) {
	t.Helper()
	for i := range n {
		want := blob02Entry(i)
		if want.Docs != nil && i%2 == 1 {
			copy(want.Docs["ubl"][invOffset:], fmt.Appendf(nil, "%06d", i))
		}
		e, err := l.EntryAt(i)
		if err != nil || e.ID != want.ID || !bytes.Equal(e.Leaf, want.Leaf) || len(e.Docs) != len(want.Docs) {
			t.Fatalf("EntryAt(%d) = %+v, %v", i, e, err)
		}
		for name, d := range want.Docs {
			if !bytes.Equal(e.Docs[name], d) {
				t.Fatalf("entry %d: document %s = %q, want %q", i, name, e.Docs[name], d)
			}
		}
	}
}

// blobOf returns the stored blob of entry i.
func blobOf(t *testing.T, l *Ledger, i int64) []byte {
	t.Helper()
	var blob []byte
	if err := l.store.view(func(r storeReader) error {
		e, err := r.entry(i)
		blob = clone(e.blob)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return blob
}

// TestBlob02FileKeepsWorking: blobs the 0x02 (zstd) encoder wrote, with
// and without its dictionary and with patches, read and check; entries
// appended to the file are 0x03 blobs compressed with the S2 form of the
// same stored dictionary, and the log reads and checks as a whole.
func TestBlob02FileKeepsWorking(t *testing.T) {
	_, v, _ := testKey(t, testOrigin, "log key 1")
	path := copyFile(t, filepath.Join("testdata", "blob02", "ledger.db"))
	if err := Check(path, v); err != nil {
		t.Fatalf("Check of the 0x02 file: %v", err)
	}
	l := reopen(t, path)
	if l.Size() != 20 {
		t.Fatalf("size %d, want 20", l.Size())
	}
	for i := range int64(20) {
		p, err := parseBlob(blobOf(t, l, i))
		if err != nil || p.format != blobFormatV2 || p.dict != map[bool]uint32{true: 1, false: 0}[i >= 16] {
			t.Fatalf("entry %d: stored blob %+v, %v; want form 0x02", i, p, err)
		}
	}
	readsBlob02(t, l, 20)
	mustCheck(t, l)
	for i := int64(20); i < 40; i++ {
		blob02Append(t, l, i)
	}
	for i := int64(20); i < 40; i++ {
		p, err := parseBlob(blobOf(t, l, i))
		if err != nil || p.format != blobFormat || p.dict != 1 {
			t.Fatalf("entry %d: stored blob %+v, %v; want form 0x03 with dictionary 1", i, p, err)
		}
	}
	readsBlob02(t, l, 40)
	mustCheck(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatalf("Check after appending 0x03 blobs: %v", err)
	}
	readsBlob02(t, reopen(t, path), 40)
}
