package audit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"
)

// tamperEntry is an attacker who knows the entry encoding (the format
// comment of ledger/codec.go): it opens a copy of the ledger file with
// bbolt, decompresses the entry at index (a 0x03 blob's S2 block, or the
// leaf or documents frame of a 0x02 blob), applies edit to the raw leaf or
// documents body and writes the entry back compressed again, with its
// checksums recomputed, so that the file stays a well-formed bbolt file
// whose only change is the edited bytes. It returns the copy's path.
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
		if len(blob) < 2 || (blob[0] != 0x02 && blob[0] != 0x03) {
			t.Fatalf("entry %d: not a 0x02 or 0x03 blob", index)
		}
		dict, n := binary.Uvarint(blob[1:])
		if n <= 0 || dict != 0 {
			t.Fatalf("entry %d is compressed with dictionary %d; tamperEntry edits only entries without one", index, dict)
		}
		if blob[0] == 0x03 {
			return b.Put(key[:], tamperS2(t, index, blob[1+n:], frame, edit))
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

// tamperS2 edits the leaf or documents body of a 0x03 blob without a
// dictionary (rest: what follows its dictionary id) and returns the blob
// with its S2 block, leaf length and body checksum made again.
func tamperS2(t *testing.T, index int64, rest []byte, frame string, edit func([]byte) []byte) []byte {
	t.Helper()
	leafLen, k := binary.Uvarint(rest)
	if k <= 0 {
		t.Fatalf("entry %d: malformed leaf length", index)
	}
	block, tail := cutFrame(t, rest[k:])
	if len(tail) < 4 {
		t.Fatalf("entry %d: no body checksum", index)
	}
	patches := tail[4:]
	body, err := s2.Decode(nil, block)
	if err != nil || leafLen > uint64(len(body)) {
		t.Fatalf("entry %d: S2 block: %v", index, err)
	}
	parts := map[string][]byte{"leaf": body[:leafLen], "docs": body[leafLen:]}
	edited := edit(append([]byte(nil), parts[frame]...))
	if bytes.Equal(edited, parts[frame]) {
		t.Fatalf("entry %d %s body: the edit changed nothing", index, frame)
	}
	parts[frame] = edited
	newBody := append(append([]byte(nil), parts["leaf"]...), parts["docs"]...)
	out := append([]byte{0x03}, binary.AppendUvarint(nil, 0)...)
	out = binary.AppendUvarint(out, uint64(len(parts["leaf"])))
	out = appendFramePart(out, s2.Encode(nil, newBody))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(newBody, crc32.MakeTable(crc32.Castagnoli)))
	return append(out, patches...)
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
