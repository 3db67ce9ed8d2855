package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The streaming journal reader (scanJournalFile, readJournal,
// journalReader) against the reader it replaced, which read each file
// whole (os.ReadFile) and kept every record with its payload: that one is
// the specification, but for memory. Kept here as the oracle.

type oracleRecord struct {
	kind, flags byte
	gen, txid   uint64
	payload     []byte
}

type oracleFile struct {
	gen       uint64
	recs      []oracleRecord
	end, size int64
}

// oracleScan is scanJournalFile before the stream (commit e288ca5).
func oracleScan(path string) (oracleFile, error) {
	var jf oracleFile
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return jf, nil
	}
	if err != nil {
		return jf, err
	}
	jf.size = int64(len(b))
	off := 0
	for len(b)-off >= journalHeaderSize {
		h := b[off : off+journalHeaderSize]
		if string(h[:4]) != journalMagic {
			break
		}
		n := int(binary.LittleEndian.Uint32(h[24:28]))
		if n > len(b)-off-journalHeaderSize {
			break
		}
		c := crc32.Update(0, crc32c, h[:28])
		c = crc32.Update(c, crc32c, b[off+journalHeaderSize:off+journalHeaderSize+n])
		if c != binary.LittleEndian.Uint32(h[28:32]) {
			break
		}
		r := oracleRecord{kind: h[4], flags: h[5], gen: binary.LittleEndian.Uint64(h[8:16]), txid: binary.LittleEndian.Uint64(h[16:24]),
			payload: b[off+journalHeaderSize : off+journalHeaderSize+n]}
		if off == 0 {
			if r.kind != recHeader {
				break
			}
			jf.gen = r.gen
		} else if r.gen != jf.gen || r.kind == recHeader {
			break
		}
		jf.recs = append(jf.recs, r)
		off += journalHeaderSize + n
		jf.end = int64(off)
	}
	return jf, nil
}

// journalView is what a reader decides, in terms both readers share.
type journalView struct {
	err           bool
	found, clean  bool
	ckptTxid      uint64
	ckptFlags     byte
	ckptMeta      []byte
	batchTxids    []uint64
	batchPayloads [][]byte
	gens          [2]uint64
	counts        [2]int
	ends, sizes   [2]int64
}

// oracleRead is readJournal before the stream (commit e288ca5).
func oracleRead(path string) journalView {
	var v journalView
	var files [2]oracleFile
	for i, p := range journalPaths(path) {
		jf, err := oracleScan(p)
		if err != nil {
			return journalView{err: true}
		}
		files[i] = jf
		v.gens[i], v.counts[i], v.ends[i], v.sizes[i] = jf.gen, len(jf.recs), jf.end, jf.size
		v.found = v.found || len(jf.recs) > 0
	}
	if !v.found {
		return v
	}
	order := []int{0, 1}
	a, b := files[0], files[1]
	switch {
	case len(a.recs) > 0 && len(b.recs) > 0 && a.gen == b.gen:
		v.err = true
		return v
	case len(b.recs) > 0 && (len(a.recs) == 0 || b.gen < a.gen):
		order = []int{1, 0}
	}
	var ckpt, last *oracleRecord
	for _, i := range order {
		for k := range files[i].recs {
			r := &files[i].recs[k]
			if r.kind == recCheckpoint {
				ckpt = r
			}
			last = r
		}
	}
	if ckpt == nil || len(ckpt.payload) != journalMetaSize {
		v.err = true
		return v
	}
	v.ckptTxid, v.ckptFlags, v.ckptMeta = ckpt.txid, ckpt.flags, ckpt.payload
	next := ckpt.txid + 1
	for _, i := range order {
		for _, r := range files[i].recs {
			switch {
			case r.kind != recBatch || r.txid < next:
			case r.txid == next:
				v.batchTxids = append(v.batchTxids, r.txid)
				v.batchPayloads = append(v.batchPayloads, r.payload)
				next++
			default:
				v.err = true
				return v
			}
		}
	}
	v.clean = last == ckpt && ckpt.flags&flagClean != 0
	return v
}

// streamRead is readJournal, with the batches' payloads read back as the
// replay reads them.
func streamRead(path string) journalView {
	st, err := readJournal(path)
	var v journalView
	for i, jf := range st.files {
		v.gens[i], v.counts[i], v.ends[i], v.sizes[i] = jf.gen, jf.count, jf.end, jf.size
	}
	v.found = st.found
	if err != nil {
		return journalView{err: true}
	}
	if !st.found {
		return v
	}
	v.ckptTxid, v.ckptFlags, v.ckptMeta, v.clean = st.ckpt.txid, st.ckpt.flags, st.ckptMeta, st.clean
	jr := &journalReader{path: path}
	defer jr.close()
	for _, r := range st.batches {
		p, err := jr.payload(r)
		if err != nil {
			return journalView{err: true}
		}
		v.batchTxids = append(v.batchTxids, r.txid)
		v.batchPayloads = append(v.batchPayloads, slices.Clone(p))
	}
	return v
}

func sameView(a, b journalView) error {
	switch {
	case a.err != b.err:
		return fmt.Errorf("error: oracle %v, stream %v", a.err, b.err)
	case a.err:
		return nil
	case a.found != b.found || a.clean != b.clean || a.ckptTxid != b.ckptTxid || a.ckptFlags != b.ckptFlags || !bytes.Equal(a.ckptMeta, b.ckptMeta):
		return fmt.Errorf("found %v/%v clean %v/%v checkpoint %d/%d flags %d/%d meta equal %v",
			a.found, b.found, a.clean, b.clean, a.ckptTxid, b.ckptTxid, a.ckptFlags, b.ckptFlags, bytes.Equal(a.ckptMeta, b.ckptMeta))
	case a.gens != b.gens || a.counts != b.counts || a.ends != b.ends || a.sizes != b.sizes:
		return fmt.Errorf("files: gens %v/%v counts %v/%v ends %v/%v sizes %v/%v", a.gens, b.gens, a.counts, b.counts, a.ends, b.ends, a.sizes, b.sizes)
	case !slices.Equal(a.batchTxids, b.batchTxids):
		return fmt.Errorf("batches %v/%v", a.batchTxids, b.batchTxids)
	}
	for i := range a.batchPayloads {
		if !bytes.Equal(a.batchPayloads[i], b.batchPayloads[i]) {
			return fmt.Errorf("batch %d: payloads differ", a.batchTxids[i])
		}
	}
	return nil
}

// TestJournalReaderMatchesTheWholeFileReader: crafted files (every edge of
// a record's framing, in one file and in two), then random damage to both
// files of a real journal that switched files: the streaming reader
// decides as the whole-file reader did, batch payloads included.
func TestJournalReaderMatchesTheWholeFileReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.db")
	ps := journalPaths(path)
	cases := 0
	try := func(name string, f0, f1 []byte) {
		t.Helper()
		for i, b := range [][]byte{f0, f1} {
			os.Remove(ps[i])
			if b != nil {
				if err := os.WriteFile(ps[i], b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		cases++
		if err := sameView(oracleRead(path), streamRead(path)); err != nil {
			t.Errorf("%s (%d and %d bytes): %v", name, len(f0), len(f1), err)
		}
	}
	rec := func(kind, flags byte, gen, txid uint64, payload []byte) []byte {
		return appendRecord(nil, kind, flags, gen, txid, payload)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	meta := bytes.Repeat([]byte{7}, journalMetaSize)
	hdr := rec(recHeader, 0, 5, 0, nil)
	ck := rec(recCheckpoint, 0, 5, 10, meta)
	b1 := rec(recBatch, 0, 5, 11, []byte("ops of 11"))
	b2 := rec(recBatch, 0, 5, 12, bytes.Repeat([]byte("x"), 200000)) // more than the scan's 64 KB buffer
	base := cat(hdr, ck, b1, b2)

	try("missing", nil, nil)
	try("empty", []byte{}, nil)
	try("header only", hdr, nil)
	try("a header's size of zeros", make([]byte, journalHeaderSize), nil)
	try("header then 31 bytes", cat(hdr, make([]byte, 31)), nil)
	try("whole", base, nil)
	try("whole plus zeros", cat(base, make([]byte, 1<<20)), nil)
	try("clean close", cat(base, rec(recCheckpoint, flagClean, 5, 12, meta)), nil)
	try("clean checkpoint, then a batch", cat(base, rec(recCheckpoint, flagClean, 5, 12, meta), rec(recBatch, 0, 5, 13, []byte("13"))), nil)
	try("earlier generation after", cat(base, rec(recBatch, 0, 4, 13, []byte("old"))), nil)
	try("second header after", cat(base, rec(recHeader, 0, 5, 0, nil)), nil)
	try("zero-length batch", cat(base, rec(recBatch, 0, 5, 13, nil)), nil)
	try("zero-length checkpoint", cat(base, rec(recCheckpoint, 0, 5, 13, nil)), nil)
	try("checkpoint of 4096", cat(base, rec(recCheckpoint, 0, 5, 13, make([]byte, 4096))), nil)
	try("checkpoint of 4097", cat(base, rec(recCheckpoint, 0, 5, 13, make([]byte, 4097))), nil)
	try("checkpoint of 4097 after a good one", cat(hdr, ck, rec(recCheckpoint, 0, 5, 11, make([]byte, 4097)), b1), nil)
	try("huge record of an unknown kind", cat(base, rec(9, 0, 5, 13, make([]byte, 300000))), nil)
	try("first record not a header", cat(ck, b1), nil)
	try("no checkpoint", cat(hdr, b1), nil)
	try("a gap", cat(hdr, ck, b1, rec(recBatch, 0, 5, 14, nil)), nil)
	try("batches before the checkpoint", cat(hdr, b1, rec(recCheckpoint, 0, 5, 11, meta), b2), nil)
	for _, delta := range []int{-1, 1, 1 << 20, -(1 << 31)} {
		b := slices.Clone(base)
		at := len(hdr) + len(ck) + len(b1)
		binary.LittleEndian.PutUint32(b[at+24:at+28], uint32(int(binary.LittleEndian.Uint32(b[at+24:at+28]))+delta))
		try(fmt.Sprintf("length %+d", delta), b, nil)
	}
	for _, cut := range []int{0, 1, 31, 32, 33, len(hdr) + 1, len(hdr) + len(ck) - 1, len(hdr) + len(ck), len(base) - 1, len(base) - len(b2) + 65536} {
		try(fmt.Sprintf("cut at %d", cut), base[:cut], nil)
	}
	// Two files: the newer generation in either, the same generation in
	// both, the other file empty or holding only a header.
	hdr6, ck6 := rec(recHeader, 0, 6, 0, nil), rec(recCheckpoint, 0, 6, 12, meta)
	next := cat(hdr6, ck6, rec(recBatch, 0, 6, 13, []byte("13")))
	try("next turn in the second file", base, next)
	try("next turn in the first file", next, base)
	try("same generation twice", base, base)
	try("next turn, header only", base, hdr6)
	try("next turn without its checkpoint", base, cat(hdr6, rec(recBatch, 0, 6, 13, []byte("13"))))
	try("next turn, a gap", base, cat(hdr6, ck6, rec(recBatch, 0, 6, 14, nil)))

	// A real journal that switched files, damaged at random in either file.
	p := filepath.Join(t.TempDir(), "ledger.db")
	l := reopen(t, p)
	noCheckpoints(l)
	setJournalLimit(l, 8<<10)
	for i := range 12 {
		if err := appendBulky(l, fmt.Sprintf("e%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var real [2][]byte
	for i, jp := range journalPaths(p) {
		b, err := os.ReadFile(jp)
		if err != nil {
			t.Fatal(err)
		}
		st, err := scanJournalFile(jp, i)
		if err != nil || st.count == 0 {
			t.Fatalf("journal file %d: %d records, %v (want both files in use)", i, st.count, err)
		}
		real[i] = b[:min(len(b), int(st.end)+4096)]
	}
	try("the real journal", real[0], real[1])
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		b := [2][]byte{slices.Clone(real[0]), slices.Clone(real[1])}
		k := rnd.IntN(2)
		switch i % 3 {
		case 0:
			b[k][rnd.IntN(len(b[k]))] ^= byte(1 << rnd.IntN(8))
		case 1:
			b[k] = b[k][:rnd.IntN(len(b[k])+1)]
		case 2: // a length field rewritten, of a record found by walking the framing
			off := 0
			for steps := rnd.IntN(8); steps > 0 && off+journalHeaderSize <= len(b[k]); steps-- {
				n := int(binary.LittleEndian.Uint32(b[k][off+24:]))
				if off+journalHeaderSize+n+journalHeaderSize > len(b[k]) {
					break
				}
				off += journalHeaderSize + n
			}
			if off+journalHeaderSize <= len(b[k]) {
				binary.LittleEndian.PutUint32(b[k][off+24:], rnd.Uint32N(uint32(len(b[k]))))
			}
		}
		try(fmt.Sprintf("random %d (file %d)", i, k), b[0], b[1])
	}
	t.Logf("%d journals read alike by both readers", cases)
}
