package audit

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// tamperEntry is an attacker who knows the schema-2 entry encoding (the
// format comment of ledger/codec.go): it opens a copy of the ledger file
// with bbolt, decompresses the leaf or documents frame of the entry at
// index, applies edit to the raw body and writes the entry back compressed
// again, so that the file stays a well-formed bbolt file whose only change
// is the edited bytes. It returns the copy's path.
//
// Only entries compressed without a dictionary are edited (the first 16 of
// a log, where the fixture's entries are); the test fails otherwise rather
// than editing something else.
func tamperEntry(t *testing.T, src string, index int64, frame string, edit func(body []byte) []byte) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], uint64(index))
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("blobs"))
		if b == nil {
			t.Fatal("no blobs bucket: not a schema-2 ledger")
		}
		blob := b.Get(key[:])
		if len(blob) < 2 || blob[0] != 0x02 {
			t.Fatalf("entry %d: not a schema-2 blob", index)
		}
		dict, n := binary.Uvarint(blob[1:])
		if n <= 0 || dict != 0 {
			t.Fatalf("entry %d is compressed with dictionary %d; tamperEntry edits only entries without one", index, dict)
		}
		rest := blob[1+n:]
		leafFrame, rest := cutFrame(t, rest)
		docsFrame, patches := cutFrame(t, rest)
		frames := map[string][]byte{"leaf": leafFrame, "docs": docsFrame}
		body, err := unzstd(frames[frame])
		if err != nil {
			t.Fatalf("entry %d %s frame: %v", index, frame, err)
		}
		edited := edit(append([]byte(nil), body...))
		if bytes.Equal(edited, body) {
			t.Fatalf("entry %d %s frame: the edit changed nothing", index, frame)
		}
		frames[frame] = zstdFrame(t, edited)
		out := append([]byte{0x02}, binary.AppendUvarint(nil, 0)...)
		out = appendFramePart(out, frames["leaf"])
		out = appendFramePart(out, frames["docs"])
		out = append(out, patches...)
		return b.Put(key[:], out)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cutFrame(t *testing.T, b []byte) (frame, rest []byte) {
	t.Helper()
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		t.Fatal("malformed frame length")
	}
	return b[k : k+int(n)], b[k+int(n):]
}

func appendFramePart(b, frame []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(frame))), frame...)
}

func unzstd(frame []byte) ([]byte, error) {
	if len(frame) == 0 {
		return nil, nil
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(frame, nil)
}

func zstdFrame(t *testing.T, body []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(body, nil)
}

// replaceOnce returns an edit that replaces old (which must occur) by new.
func replaceOnce(t *testing.T, old, new []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		if !bytes.Contains(b, old) {
			t.Fatalf("the stored body does not contain %.60q", old)
		}
		return bytes.Replace(b, old, new, 1)
	}
}

// flipLast returns an edit that changes the body's last byte (in a leaf
// body: the last byte of the receipt's Ed25519 signature).
func flipLast(b []byte) []byte {
	b[len(b)-1] ^= 0x01
	return b
}
