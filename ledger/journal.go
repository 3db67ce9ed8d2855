package ledger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fiscal402/fiscal402/internal/durable"
)

// The journal (# Durability in the package doc) makes a commit durable with
// one fdatasync: the commit's writes, as a list of bucket operations, are
// appended to a journal file and synced, while bbolt writes its pages and
// meta page without syncing (NoSync). Now and then a checkpoint syncs the
// bbolt file and notes, in the journal, the meta page of the state it made
// durable. A read transaction held from one checkpoint to the next keeps
// bbolt from reusing that state's pages. After a power cut, Open puts the
// newest noted meta page back into both meta slots of the file (whatever
// later, possibly half-written, commits left there) and replays the
// journal's batches after it.
//
// Two files take turns: <ledger>.journal0 and <ledger>.journal1. Each
// begins with a header record carrying its generation; every record carries
// it too, so that records a reused file still holds from an earlier turn
// end its scan. A record is
//
//	magic  4 bytes "F4J1"
//	kind   1 byte (header, batch, checkpoint)
//	flags  1 byte (checkpoint: 1 when the ledger was closed at it)
//	zero   2 bytes
//	gen    8 bytes: the file's generation
//	txid   8 bytes: the bbolt transaction the batch made, or checkpointed
//	length 4 bytes: of the payload
//	crc    4 bytes: CRC-32C of the 28 bytes before and the payload
//	payload
//
// all integers little-endian. A batch's payload is its operations (opLog);
// a checkpoint's is the first journalMetaSize bytes of the meta page of its
// transaction (page header and meta, with bbolt's own checksum).
//
// A file switches turns once it holds journalLimit bytes: the batch that
// does not fit starts the other file, with a new generation, and the
// commit that made it starts a checkpoint in the background (an fdatasync
// of the bbolt file). The checkpoint's record goes into the next write of
// the journal, which syncs anyway, and once it is durable the other file
// and the read transaction of the checkpoint before are free. A file that
// fills up before its predecessor is free waits for that checkpoint.
const (
	journalMagic      = "F4J1"
	journalHeaderSize = 32
	journalMetaSize   = 80 // page header (16) and meta (64) of bbolt's meta page
	journalLimit      = 32 << 20
	// journalChunk is how much of a file is filled with zeros ahead of
	// its records: an fdatasync into written blocks need not also write
	// the file's size and block map (see bench/HISTORY.md, stop 43).
	journalChunk = 1 << 20

	recHeader     = 1
	recBatch      = 2
	recCheckpoint = 3

	flagClean = 1
)

// ErrNeedsRecovery: a read-only Open (or Check) of a file whose journal holds
// commits a writer has not checkpointed into it (the writer did not close:
// a crash, a kill, a power cut). Opening it once for writing (with a Signer;
// the bundled server's start) replays the journal.
var ErrNeedsRecovery = errors.New("ledger: the file was not closed and its journal holds commits not yet in it: open it for writing once (the bundled server's start does) to replay them")

// journalPaths are the two journal files of the ledger file path.
func journalPaths(path string) [2]string {
	return [2]string{path + ".journal0", path + ".journal1"}
}

// journal is the writer side of the journal, used by the committer only
// (under the store's wmu).
type journal struct {
	path  [2]string
	f     [2]*os.File
	gen   [2]uint64
	size  [2]int64  // length of each file (records and zeros)
	maxTx [2]uint64 // highest batch txid in each file's current turn
	act   int       // the file being written
	off   int64     // where the next record goes in it
	// ckpt is the txid of the newest checkpoint durable in the journal,
	// ckptMeta its meta page: every new turn begins with it, so that the
	// file written over never holds the only checkpoint recovery has.
	ckpt     uint64
	ckptMeta []byte
	// out is the next write: records queued (a header, a checkpoint)
	// before the batch.
	out []byte
	// limit is journalLimit (tests lower it to switch files often);
	// sync is fdatasyncFile (a mutation test drops it).
	limit int64
	sync  func(*os.File) error
	zeros []byte // journalChunk zeros, written ahead of the records
	// smu orders the fdatasyncs of the journal's files, the syncer's
	// (jsyncer) and the committer's (a switch, a synchronous checkpoint),
	// and serr is the first that failed: every one after it fails too
	// (syncFile).
	smu  sync.Mutex
	serr error
}

// appendRecord appends a record of kind to b: the header, then payload.
func appendRecord(b []byte, kind, flags byte, gen, txid uint64, payload []byte) []byte {
	at := len(b)
	b = append(b, make([]byte, journalHeaderSize)...)
	b = append(b, payload...)
	sealRecord(b[at:], kind, flags, gen, txid)
	return b
}

// sealRecord writes the header of the record r (journalHeaderSize bytes,
// then its payload): its fields, then the checksum of them and the payload.
func sealRecord(r []byte, kind, flags byte, gen, txid uint64) {
	copy(r, journalMagic)
	r[4], r[5], r[6], r[7] = kind, flags, 0, 0
	binary.LittleEndian.PutUint64(r[8:16], gen)
	binary.LittleEndian.PutUint64(r[16:24], txid)
	binary.LittleEndian.PutUint32(r[24:28], uint32(len(r)-journalHeaderSize))
	binary.LittleEndian.PutUint32(r[28:32], recordSum(r))
}

// recordSum is the checksum of the record r (its header, then its
// payload): CRC-32C of the header's 28 bytes before the checksum and of
// the payload.
func recordSum(r []byte) uint32 {
	c := crc32.Update(0, crc32c, r[:28])
	return crc32.Update(c, crc32c, r[journalHeaderSize:])
}

// jrecord is a checkpoint or batch record read back: where it is, not its
// payload. A batch's payload is read again, one batch at a time, when
// Open replays it (journalReader); of the checkpoints only the newest
// one's meta page is kept (jfile.ckptMeta). Reading the journal takes
// memory for the records' positions (24 bytes each), not for their bytes
// (the two files hold up to 2 × journalLimit).
type jrecord struct {
	kind, flags byte
	file        uint8  // the journal file (0 or 1)
	n           uint32 // the payload's length
	txid        uint64
	off         int64 // where the record begins in its file
}

// recordList is a list of records in chunks of a fixed size: appending
// never copies what it holds, so a scan of many small records allocates
// their 24 bytes each, not the several times that a slice's growth by
// append costs.
type recordList struct {
	chunks [][]jrecord
	n      int
}

const recordChunk = 1024

func (l *recordList) add(r jrecord) {
	if l.n%recordChunk == 0 {
		l.chunks = append(l.chunks, make([]jrecord, 0, recordChunk))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, r)
	l.n++
}

// all yields the records in the order they were added.
func (l *recordList) all() iter.Seq[jrecord] {
	return func(yield func(jrecord) bool) {
		for _, c := range l.chunks {
			for _, r := range c {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// maxKeptPayload is the largest checkpoint payload a scan keeps (a valid
// one is journalMetaSize bytes; a larger one is refused by its length).
const maxKeptPayload = 4096

// jfile is what a scan found in one journal file: its generation and its
// records, up to the first that is not whole or not of its generation.
type jfile struct {
	gen   uint64
	count int // records (its header included)
	// batches are its batch records, in file order; ckpt is its last
	// checkpoint record (the newest), ckptMeta its payload when at most
	// maxKeptPayload bytes; last is its last record.
	batches  recordList
	ckpt     *jrecord
	ckptMeta []byte
	last     jrecord
	end      int64 // offset after the last record
	size     int64
}

// scanJournalFile reads journal file i of a ledger (path is the file's own
// path) from start to end through a buffer; a missing or empty file (or
// one whose header record is not whole) has no records. Each record's
// checksum is verified as its bytes pass.
func scanJournalFile(path string, i int) (jfile, error) {
	var jf jfile
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return jf, nil
	}
	if err != nil {
		return jf, fmt.Errorf("ledger: journal %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return jf, fmt.Errorf("ledger: journal %s: %w", path, err)
	}
	jf.size = fi.Size()
	br := bufio.NewReaderSize(f, 64<<10)
	sum := crc32.New(crc32c)
	var h [journalHeaderSize]byte
	var meta []byte
	off := int64(0)
	for jf.size-off >= journalHeaderSize {
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return jf, fmt.Errorf("ledger: journal %s: %w", path, err)
		}
		if string(h[:4]) != journalMagic {
			break
		}
		n := int64(binary.LittleEndian.Uint32(h[24:28]))
		if n > jf.size-off-journalHeaderSize {
			break
		}
		r := jrecord{kind: h[4], flags: h[5], file: uint8(i), n: uint32(n), txid: binary.LittleEndian.Uint64(h[16:24]), off: off}
		gen := binary.LittleEndian.Uint64(h[8:16])
		sum.Reset()
		sum.Write(h[:28])
		meta = nil
		if r.kind == recCheckpoint && n <= maxKeptPayload {
			meta = make([]byte, n)
			if _, err := io.ReadFull(br, meta); err != nil {
				return jf, fmt.Errorf("ledger: journal %s: %w", path, err)
			}
			sum.Write(meta)
		} else {
			// Through the reader's own buffer (io.CopyN would allocate
			// one for every record).
			for rem := n; rem > 0; {
				b, err := br.Peek(int(min(rem, int64(br.Size()))))
				if err != nil {
					return jf, fmt.Errorf("ledger: journal %s: %w", path, err)
				}
				sum.Write(b)
				_, _ = br.Discard(len(b))
				rem -= int64(len(b))
			}
		}
		if sum.Sum32() != binary.LittleEndian.Uint32(h[28:32]) {
			break
		}
		if off == 0 {
			if r.kind != recHeader {
				break
			}
			jf.gen = gen
		} else if gen != jf.gen || r.kind == recHeader {
			break // a record of an earlier turn
		}
		switch r.kind {
		case recBatch:
			jf.batches.add(r)
		case recCheckpoint:
			ck := r
			jf.ckpt, jf.ckptMeta = &ck, meta
		}
		jf.count++
		jf.last = r
		off += journalHeaderSize + n
		jf.end = off
	}
	return jf, nil
}

// journalReader reads batches back from the journal files of the ledger
// file path (opened as needed), one at a time into one buffer.
type journalReader struct {
	path  string
	files [2]*os.File
	buf   []byte
}

// payload reads record r's payload from its file, into the reader's buffer
// (grown if it must be: the slice returned is valid until the next call),
// and verifies it again: the journal is read twice, and what was whole at
// the scan must be the same now.
func (jr *journalReader) payload(r jrecord) ([]byte, error) {
	p := journalPaths(jr.path)[r.file]
	if jr.files[r.file] == nil {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("ledger: journal %s: %w", p, err)
		}
		jr.files[r.file] = f
	}
	size := journalHeaderSize + int(r.n)
	b := slices.Grow(jr.buf[:0], size)[:size]
	jr.buf = b
	if _, err := jr.files[r.file].ReadAt(b, r.off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("ledger: journal %s: %w", p, err)
	} else if err != nil {
		return nil, journalCorrupt(jr.path, "%s: the record of transaction %d is cut short since it was read", filepath.Base(p), r.txid)
	}
	if recordSum(b) != binary.LittleEndian.Uint32(b[28:32]) || binary.LittleEndian.Uint64(b[16:24]) != r.txid {
		return nil, journalCorrupt(jr.path, "%s: the record of transaction %d changed since it was read", filepath.Base(p), r.txid)
	}
	return b[journalHeaderSize:], nil
}

func (jr *journalReader) close() {
	for _, f := range jr.files {
		if f != nil {
			f.Close()
		}
	}
}

// journalState is what the two files say together.
type journalState struct {
	files [2]jfile
	// found: some file has a header record.
	found bool
	// ckpt is the newest checkpoint (nil: none), ckptMeta its meta page.
	ckpt     *jrecord
	ckptMeta []byte
	// batches are the batches after ckpt, in txid order.
	batches []jrecord
	// clean: the newest record of all is a checkpoint made at Close.
	clean bool
}

// readJournal reads both files of the ledger file path and works out the
// newest checkpoint and the batches to replay after it, which must follow
// one another (txid ckpt+1, +2, ...): they were written and synced in that
// order, so a gap is damage, not a torn tail.
func readJournal(path string) (journalState, error) {
	var st journalState
	ps := journalPaths(path)
	for i, p := range ps {
		jf, err := scanJournalFile(p, i)
		if err != nil {
			return st, err
		}
		st.files[i] = jf
		if jf.count > 0 {
			st.found = true
		}
	}
	if !st.found {
		return st, nil
	}
	order := []int{0, 1}
	a, b := st.files[0], st.files[1]
	switch {
	case a.count > 0 && b.count > 0 && a.gen == b.gen:
		return st, journalCorrupt(path, "both journal files are of generation %d", a.gen)
	case b.count > 0 && (a.count == 0 || b.gen < a.gen):
		order = []int{1, 0}
	}
	// The newest checkpoint is the last one written: files in the order
	// of their generations, records in file order.
	var last *jrecord
	for _, i := range order {
		jf := &st.files[i]
		if jf.ckpt != nil {
			st.ckpt, st.ckptMeta = jf.ckpt, jf.ckptMeta
		}
		if jf.count > 0 {
			last = &jf.last
		}
	}
	if st.ckpt == nil {
		return st, journalCorrupt(path, "the journal holds no checkpoint")
	}
	if st.ckpt.n != journalMetaSize {
		return st, journalCorrupt(path, "checkpoint %d: a meta page of %d bytes", st.ckpt.txid, st.ckpt.n)
	}
	// Twice: the first pass checks and counts, the second keeps, in a
	// list of the exact length.
	for pass := range 2 {
		next := st.ckpt.txid + 1
		for _, i := range order {
			for r := range st.files[i].batches.all() {
				switch {
				case r.txid < next:
				case r.txid == next:
					if pass == 1 {
						st.batches = append(st.batches, r)
					}
					next++
				default:
					return st, journalCorrupt(path, "batch %d follows batch %d", r.txid, next-1)
				}
			}
		}
		if pass == 0 {
			st.batches = make([]jrecord, 0, next-st.ckpt.txid-1)
		}
	}
	st.clean = *last == *st.ckpt && st.ckpt.flags&flagClean != 0
	return st, nil
}

func journalCorrupt(path, format string, args ...any) *CorruptError {
	return &CorruptError{Path: path, Index: -1, Reason: "journal: " + fmt.Sprintf(format, args...)}
}

// metaTxid is the transaction id of a meta page's first journalMetaSize
// bytes (bbolt's page header, then magic, version, page size, flags, root
// bucket, freelist, pgid, txid, checksum: go.etcd.io/bbolt v1.5.0,
// internal/common/page.go Page and meta.go Meta, whose Validate and Sum64
// metaValid repeats).
func metaTxid(m []byte) uint64 { return binary.LittleEndian.Uint64(m[64:72]) }

// metaPgid is the high-water mark a meta page records: the pages 0 to
// metaPgid-1 exist in the file of that state.
func metaPgid(m []byte) uint64 { return binary.LittleEndian.Uint64(m[56:64]) }

// metaValid reports whether m is a meta page bbolt would accept: its magic,
// its version (2) and its checksum (FNV-64a of the meta before the
// checksum).
func metaValid(m []byte) bool {
	if len(m) < journalMetaSize || binary.LittleEndian.Uint32(m[16:20]) != 0xED0CDAED || binary.LittleEndian.Uint32(m[20:24]) != 2 {
		return false
	}
	h := fnv64a(m[16:72])
	return binary.LittleEndian.Uint64(m[72:80]) == h
}

func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// pageSizeOf is the page size a meta page records.
func pageSizeOf(m []byte) int64 { return int64(binary.LittleEndian.Uint32(m[24:28])) }

// restoreMeta puts the checkpoint's meta page into both meta slots of the
// file at path (locked by the caller through f) and syncs it, unless the
// file already shows exactly that state (a clean close). It refuses a file
// whose meta pages are older than the checkpoint's: that is not the file
// the journal belongs to (a backup from before it, copied over it).
//
// After a close (clean) the file was synced at the checkpoint and nothing
// is put back: a later commit in the file was made by a writer without
// the journal (bbolt's own tools, an older version), which synced it.
func restoreMeta(f *os.File, path string, m []byte, clean bool) error {
	slots, ps, newest, err := metaSlots(f, path, m)
	if err != nil {
		return err
	}
	// The file is at the checkpoint already (a clean close, or a crash
	// that did not write past it) when its slot holds it and nothing
	// newer is valid in the other.
	same := (string(slots[0][16:]) == string(m[16:]) || string(slots[1][16:]) == string(m[16:])) && newest == metaTxid(m)
	if same || clean {
		return nil
	}
	if err := holdsCheckpoint(f, path, m, slots, ps, newest); err != nil {
		return err
	}
	for i := range slots {
		page := append([]byte(nil), m...)
		binary.LittleEndian.PutUint64(page[0:8], uint64(i)) // the page id
		if _, err := f.WriteAt(page, int64(i)*ps); err != nil {
			return fmt.Errorf("ledger: open %s: restoring the checkpoint's meta page: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ledger: open %s: restoring the checkpoint's meta page: %w", path, err)
	}
	return nil
}

// metaSlots reads the first journalMetaSize bytes of both meta pages of
// the bbolt file f (at path), whose page size the journal's checkpoint m
// gives, and refuses a file whose meta pages are older than the
// checkpoint's (newest < its txid): that is not the file the journal
// belongs to (a backup from before it, copied over it), whether the
// journal holds anything to replay or not.
func metaSlots(f *os.File, path string, m []byte) (slots [2][]byte, ps int64, newest uint64, err error) {
	ps = pageSizeOf(m)
	if ps < 1024 || ps&(ps-1) != 0 {
		return slots, ps, 0, journalCorrupt(path, "checkpoint %d: a page size of %d", metaTxid(m), ps)
	}
	for i := range slots {
		s := make([]byte, journalMetaSize)
		if _, err := f.ReadAt(s, int64(i)*ps); err != nil && !errors.Is(err, io.EOF) {
			return slots, ps, 0, fmt.Errorf("ledger: open %s: %w", path, err)
		}
		slots[i] = s
		if metaValid(s) {
			newest = max(newest, metaTxid(s))
		}
	}
	if want := metaTxid(m); newest < want {
		return slots, ps, newest, &JournalMismatchError{Path: path, Journal: journalPaths(path), FileTxid: newest, CheckpointTxid: want}
	}
	return slots, ps, newest, nil
}

// holdsCheckpoint refuses, before restoreMeta writes anything, a file at
// least as new as the checkpoint m that does not hold its state: every page
// the checkpoint's meta counts (the file was synced at it, and a bbolt file
// never shrinks) and, where a slot still holds the checkpoint's
// transaction, that very meta page. Such a file is damaged (truncated), or
// the journal is another ledger's (two servers' data directories mixed in
// a restore); putting the checkpoint's meta page into it would point it at
// pages it does not have, and ruin a good copy of another ledger.
func holdsCheckpoint(f *os.File, path string, m []byte, slots [2][]byte, ps int64, newest uint64) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("ledger: open %s: %w", path, err)
	}
	want, need := metaTxid(m), int64(metaPgid(m))*ps
	other := need > fi.Size()
	for _, s := range slots {
		other = other || metaValid(s) && metaTxid(s) == want && string(s[16:]) != string(m[16:])
	}
	if other {
		return &JournalMismatchError{Path: path, Journal: journalPaths(path), FileTxid: newest, CheckpointTxid: want,
			FileBytes: fi.Size(), CheckpointBytes: need, Foreign: true}
	}
	return nil
}

// openJournal opens both files for writing with a checkpoint of txid (meta
// page m), which the caller made durable in the bbolt file; everything the
// journal held (st) is in that state. Without a journal the checkpoint
// starts generation 1 in the first file. Otherwise it is appended to the
// file of the newest generation, after its last whole record, so that the
// journal on the disk holds a checkpoint at every moment (a write into the
// other file could tear the one recovery needs). After a crash the rest of
// that file is then zeroed: it may hold the torn record of the crash,
// whose bytes must never pass for a record of this generation.
func openJournal(path string, st journalState, txid uint64, m []byte) (*journal, error) {
	j := &journal{path: journalPaths(path), limit: journalLimit, sync: fdatasyncFile}
	created := false
	for i, p := range j.path {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			j.close()
			return nil, fmt.Errorf("ledger: journal %s: %w", p, err)
		}
		j.f[i] = f
		fi, err := f.Stat()
		if err != nil {
			j.close()
			return nil, fmt.Errorf("ledger: journal %s: %w", p, err)
		}
		j.size[i] = fi.Size()
		created = created || st.files[i].size == 0
		j.gen[i] = st.files[i].gen
	}
	if !st.found {
		j.act = 0
		if err := j.turn(1, txid, m); err != nil {
			j.close()
			return nil, err
		}
	} else {
		j.act = 0
		if st.files[1].count > 0 && (st.files[0].count == 0 || st.files[1].gen > st.files[0].gen) {
			j.act = 1
		}
		j.off = st.files[j.act].end
		j.maxTx = [2]uint64{txid, txid}
		j.queueCheckpoint(txid, m, false)
		err := j.ensure(0)
		if err == nil {
			err = j.put(j.out)
		}
		if err == nil && !st.clean {
			err = j.zeroRest()
		}
		if err == nil {
			err = j.syncActive()
		}
		if err != nil {
			j.close()
			return nil, err
		}
		j.out = j.out[:0]
		j.durable(txid, m)
	}
	if created {
		if err := durable.SyncDir(filepath.Dir(path)); err != nil {
			j.close()
			return nil, fmt.Errorf("ledger: journal of %s: %w", path, err)
		}
	}
	return j, nil
}

// zeroRest writes zeros over the active file from its offset to its end
// (a chunk at a time, without moving the offset): after a crash the file
// may hold, after its last whole record, a torn one of this generation,
// whose bytes must never pass for a record.
func (j *journal) zeroRest() error {
	if j.zeros == nil {
		j.zeros = make([]byte, journalChunk)
	}
	for at := j.off; at < j.size[j.act]; at += journalChunk {
		n := min(journalChunk, j.size[j.act]-at)
		if _, err := j.f[j.act].WriteAt(j.zeros[:n], at); err != nil {
			return fmt.Errorf("ledger: journal %s: %w", j.path[j.act], err)
		}
	}
	return nil
}

// turn makes the active file's generation gen, writes its header and a
// checkpoint of txid and syncs them. Both files are then free of anything
// recovery needs but this file.
func (j *journal) turn(gen, txid uint64, m []byte) error {
	j.gen[j.act], j.off, j.maxTx[j.act] = gen, 0, 0
	j.out = appendRecord(j.out[:0], recHeader, 0, gen, 0, nil)
	j.out = appendRecord(j.out, recCheckpoint, 0, gen, txid, m)
	if err := j.flush(); err != nil {
		return err
	}
	j.durable(txid, m)
	j.maxTx[1-j.act] = 0
	return nil
}

// durable notes that the checkpoint of txid (meta page m) is durable in the
// journal.
func (j *journal) durable(txid uint64, m []byte) { j.ckpt, j.ckptMeta = txid, m }

// queueCheckpoint adds a checkpoint record to the next write.
func (j *journal) queueCheckpoint(txid uint64, m []byte, clean bool) {
	flags := byte(0)
	if clean {
		flags = flagClean
	}
	j.out = appendRecord(j.out, recCheckpoint, flags, j.gen[j.act], txid, m)
}

// ensure fills the active file with zeros far enough for n more bytes,
// before anything of the commit is in force: a full disk fails the commit
// here, where failing changes nothing.
func (j *journal) ensure(n int) error {
	need := j.off + int64(len(j.out)+n)
	f := j.f[j.act]
	for j.size[j.act] < need {
		if j.zeros == nil {
			j.zeros = make([]byte, journalChunk)
		}
		if _, err := f.WriteAt(j.zeros, j.size[j.act]); err != nil {
			return fmt.Errorf("ledger: journal %s: %w: %w", j.path[j.act], ErrUnavailable, err)
		}
		j.size[j.act] += journalChunk
	}
	return nil
}

// flush writes what is queued at the active file's offset and fdatasyncs.
func (j *journal) flush() error {
	if err := j.ensure(0); err != nil {
		return err
	}
	if err := j.write(j.out); err != nil {
		return err
	}
	j.out = j.out[:0]
	return nil
}

// write writes b at the active file's offset (filled by ensure) and
// fdatasyncs the file.
func (j *journal) write(b []byte) error {
	if err := j.put(b); err != nil {
		return err
	}
	return j.syncActive()
}

// put writes b at the active file's offset (filled by ensure), without
// syncing.
func (j *journal) put(b []byte) error {
	if _, err := j.f[j.act].WriteAt(b, j.off); err != nil {
		return fmt.Errorf("ledger: journal %s: %w", j.path[j.act], err)
	}
	j.off += int64(len(b))
	return nil
}

// syncActive fdatasyncs the active file: everything written to the
// journal is durable after it (a file is synced before the other one
// takes its turn).
func (j *journal) syncActive() error {
	if err := j.syncFile(j.f[j.act]); err != nil {
		return fmt.Errorf("ledger: journal %s: %w", j.path[j.act], err)
	}
	return nil
}

// syncFile fdatasyncs f, one sync at a time, and fails once any sync of
// the journal failed. Linux reports a failed write-back to one fdatasync
// of the file only (errseq, lib/errseq.c: the others, at the same time or
// later, return 0 although the pages were lost; "PostgreSQL's fsync()
// surprise", https://lwn.net/Articles/752063/), so a sync that answers 0
// after another one failed proves nothing, and a sync running beside a
// failing one could take its error from it.
func (j *journal) syncFile(f *os.File) error {
	j.smu.Lock()
	defer j.smu.Unlock()
	if j.serr != nil {
		return j.serr
	}
	if err := j.sync(f); err != nil {
		j.serr = err
		return err
	}
	return nil
}

// full reports whether a batch of n bytes makes the active file pass its
// limit.
func (j *journal) full(n int) bool {
	return j.off+int64(len(j.out)+n) > j.limit && j.off > 0
}

// otherFree reports whether the file not being written holds nothing
// recovery needs (every batch in it is at or before a durable checkpoint).
func (j *journal) otherFree() bool { return j.maxTx[1-j.act] <= j.ckpt }

// switchFiles starts a new turn in the other file (which must be free):
// its header and the newest durable checkpoint go first into the next
// write, before any checkpoint queued since.
func (j *journal) switchFiles() {
	gen := j.gen[j.act] + 1
	pending := j.out
	j.act = 1 - j.act
	j.gen[j.act], j.off, j.maxTx[j.act] = gen, 0, 0
	j.out = appendRecord(nil, recHeader, 0, gen, 0, nil)
	j.out = appendRecord(j.out, recCheckpoint, 0, gen, j.ckpt, j.ckptMeta)
	// Queued checkpoint records carried the old generation: re-encode
	// them for the new file.
	for len(pending) >= journalHeaderSize {
		n := int(binary.LittleEndian.Uint32(pending[24:28]))
		r := pending[:journalHeaderSize+n]
		j.out = appendRecord(j.out, r[4], r[5], gen, binary.LittleEndian.Uint64(r[16:24]), r[journalHeaderSize:])
		pending = pending[journalHeaderSize+n:]
	}
}

// appendBatch writes a batch record for txid (rec: an opLog's bytes, with
// journalHeaderSize bytes of room before them) after what is queued,
// without syncing: the syncer (jsyncer) makes it durable.
func (j *journal) appendBatch(txid uint64, rec []byte) error {
	sealRecord(rec, recBatch, 0, j.gen[j.act], txid)
	var err error
	if len(j.out) == 0 {
		err = j.put(rec) // the common case: the batch alone, from its own buffer
	} else {
		j.out = append(j.out, rec...)
		if err = j.put(j.out); err == nil {
			j.out = j.out[:0]
		}
	}
	if err != nil {
		return err
	}
	j.maxTx[j.act] = txid
	return nil
}

func (j *journal) close() error {
	var first error
	for i, f := range j.f {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
			j.f[i] = nil
		}
	}
	return first
}

// readMeta reads the meta page of txid from the file (the page cache: bbolt
// wrote it with pwrite). A commit writes it to slot txid%2; a copy made by
// bbolt's Tx.WriteTo (a backup) has it in slot 0 and txid-1 in slot 1.
func readMeta(f *os.File, pageSize int, txid uint64) ([]byte, error) {
	var seen [2]uint64
	for i, slot := range []uint64{txid % 2, 1 - txid%2} {
		m := make([]byte, journalMetaSize)
		if _, err := f.ReadAt(m, int64(slot)*int64(pageSize)); err != nil {
			return nil, err
		}
		if metaValid(m) && metaTxid(m) == txid {
			return m, nil
		}
		seen[i] = metaTxid(m)
	}
	return nil, fmt.Errorf("ledger: no meta page of transaction %d (the pages read as %d and %d)", txid, seen[0], seen[1])
}

// journalClean refuses a read-only open of a file whose journal holds
// commits not checkpointed at a close (ErrNeedsRecovery): without the
// journal's replay the file may be behind, or torn by a power cut. It
// refuses, as a writer's Open does, a file older than the journal's
// checkpoint (a backup copied over a live file, its journal left beside
// it), which the journal does not belong to.
func journalClean(path string) error {
	st, err := readJournal(path)
	if err != nil {
		return err
	}
	if needsRecovery(st) {
		return fmt.Errorf("ledger: open %s read-only: %w", path, ErrNeedsRecovery)
	}
	if !st.found {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ledger: open %s: %w", path, err)
	}
	defer f.Close()
	_, _, _, err = metaSlots(f, path, st.ckptMeta)
	return err
}

// NeedsRecovery reports whether the bbolt ledger file at path was not
// closed and its journal holds commits not yet in it (ErrNeedsRecovery):
// only an Open for writing (with a Signer), which replays them, makes the
// file whole. It reads the journal only (a file without one needs
// none), and fails with a *CorruptError for a journal that cannot be
// read as one.
func NeedsRecovery(path string) (bool, error) {
	st, err := readJournal(path)
	if err != nil {
		return false, err
	}
	return needsRecovery(st), nil
}

// needsRecovery: the journal was not closed at its newest checkpoint, or
// holds batches after it (which a writer's Open replays, closed or not).
func needsRecovery(st journalState) bool {
	return st.found && (!st.clean || len(st.batches) > 0)
}
