package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
)

// A keys record (schema 3, bucket keys, keyed by the entry's index) holds
// what the ids and claims B-trees held for the entries before it, written
// sequentially with the entry's blob:
//
//	0x01 ‖ uvarint len(id) ‖ id ‖ uvarint n ‖
//	n × (uvarint len(space) ‖ space ‖ uvarint len(key) ‖ key ‖ uvarint len(fp) ‖ fp) ‖
//	CRC-32C (big-endian) of everything before it
const keysRecordForm = 0x01

// keysRecordSize is the encoded size of a keys record (an upper bound of
// the uvarints: 10 bytes each).
func keysRecordSize(id string, claims []claimWrite) int {
	n := 1 + 10 + len(id) + 10 + 4
	for _, c := range claims {
		n += 30 + len(c.space) + len(c.key) + len(c.fingerprint)
	}
	return n
}

// appendKeysRecord appends the keys record of an entry and its claims. A
// claim named twice by one append (same space and key) is recorded once,
// with its last fingerprint, as the batch's planning (append.go) and schema
// 2's bucket put decided it: claim keys are unique per space in the whole
// log.
func appendKeysRecord(b []byte, id string, claims []claimWrite) []byte {
	at := len(b)
	b = append(b, keysRecordForm)
	b = binary.AppendUvarint(b, uint64(len(id)))
	b = append(b, id...)
	n := 0
	for i, c := range claims {
		if !repeatedClaim(claims[i+1:], c) {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for i, c := range claims {
		if repeatedClaim(claims[i+1:], c) {
			continue
		}
		for _, f := range [][]byte{[]byte(c.space), []byte(c.key), c.fingerprint} {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b[at:], crc32c))
}

// repeatedClaim says whether c's space and key are named again in later.
func repeatedClaim(later []claimWrite, c claimWrite) bool {
	for _, e := range later {
		if e.space == c.space && e.key == c.key {
			return true
		}
	}
	return false
}

// keysRecord is a parsed keys record; its slices point into the stored
// value (valid inside the read transaction).
type keysRecord struct {
	id     []byte
	n      int
	claims []byte // the n encoded claims
}

// parseKeysRecord checks a keys record's CRC and structure.
func parseKeysRecord(v []byte) (keysRecord, error) { return parseKeysRecordCRC(v, true) }

// parseKeysRecordCRC is parseKeysRecord, the CRC verified only when crc
// is set (Check's passes over records its stream verified).
func parseKeysRecordCRC(v []byte, crc bool) (keysRecord, error) {
	var r keysRecord
	if len(v) < 1+1+1+4 || v[0] != keysRecordForm {
		return r, errors.New("not a keys record of form 0x01")
	}
	body := v[:len(v)-4]
	if crc && crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(v[len(v)-4:]) {
		return r, errors.New("keys record CRC-32C mismatch")
	}
	p := body[1:]
	id, p, ok := cutPart(p)
	if !ok || len(id) == 0 {
		return r, errors.New("keys record: malformed entry ID")
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return r, errors.New("keys record: malformed claim count")
	}
	r.id, r.n, r.claims = id, int(n), p[k:]
	rest := r.claims
	for range r.n {
		var f []byte
		for j := range 3 {
			if f, rest, ok = cutPart(rest); !ok || (j < 2 && len(f) == 0) {
				return r, errors.New("keys record: malformed claim")
			}
		}
	}
	if len(rest) != 0 {
		return r, errors.New("keys record: trailing bytes")
	}
	return r, nil
}

// each calls fn for every claim of a parsed record until fn returns false.
func (r keysRecord) each(fn func(space, key, fp []byte) bool) {
	p := r.claims
	for range r.n {
		space, rest, _ := cutPart(p)
		key, rest, _ := cutPart(rest)
		fp, rest, _ := cutPart(rest)
		p = rest
		if !fn(space, key, fp) {
			return
		}
	}
}

// claim returns the fingerprint of claim (space, key) if the record holds it.
func (r keysRecord) claim(space, key string) (fp []byte, ok bool) {
	r.each(func(s, k, f []byte) bool {
		if string(s) == space && string(k) == key {
			fp, ok = f, true
			return false
		}
		return true
	})
	return fp, ok
}

// Kinds of keys the in-memory index holds; the kind goes into the hash,
// and a hit is confirmed against the key of its kind, so an entry ID and
// a claim never answer for each other.
const (
	keyKindID    = 1
	keyKindClaim = 2
)

// idIndex is the ledger's in-memory index of entry IDs and claims (schema
// 3): 64-bit hashes (hash/maphash, seeded per Ledger) of (kind, space, key)
// to log index, in one pointer-free open-addressing table that the
// collector does not scan. It is exact by confirmation: a hit names an
// index whose keys record (or, below v3from, whose ids or claims B-tree
// key) is read in the same read transaction and compared byte for byte; a
// colliding hash probes on. The committer adds a batch's keys after the
// commit, and upTo says up to which index the table is complete: a reader
// whose snapshot is newer (the committer between its commit and the table
// update) reads the few keys records in between.
//
// A slot is the top 32 bits of the hash ‖ index+1 (0: empty); the home
// slot is the hash's top bits, so the table grows without the keys. Linear
// probing, at most three quarters full.
type idIndex struct {
	seed  maphash.Seed
	mu    sync.RWMutex
	slots []uint64
	bits  uint
	n     int
	upTo  int64
	// pending are keys load collected (Open only).
	pending []uint64
}

// maxIndexed is the largest log index a slot holds.
const maxIndexed = 1<<32 - 2

func newIDIndex(keys int) *idIndex {
	x := &idIndex{seed: maphash.MakeSeed()}
	x.slots, x.bits = makeSlots(keys)
	return x
}

// makeSlots sizes a table for keys keys.
func makeSlots(keys int) ([]uint64, uint) {
	bits := uint(10)
	for 3<<bits/4 < keys && bits < 32 {
		bits++
	}
	return make([]uint64, 1<<bits), bits
}

// Hashes of the kinds of keys: one maphash of the key, and for a claim
// of the space too, combined with a constant per kind. One call of
// maphash.String or maphash.Bytes per field, which costs less than
// filling a maphash.Hash with the kind, the space's length, the space and
// the key (Open of 1 M entries hashes 3 M keys).
const (
	idSalt    = 0x9e3779b97f4a7c15
	claimSalt = 0xc2b2ae3d27d4eb4f
)

func (x *idIndex) hashID(id string) uint64 { return maphash.String(x.seed, id) ^ idSalt }

func (x *idIndex) hashIDBytes(id []byte) uint64 { return maphash.Bytes(x.seed, id) ^ idSalt }

func (x *idIndex) hashClaim(space, key string) uint64 {
	return maphash.String(x.seed, key) ^ bits.RotateLeft64(maphash.String(x.seed, space)*claimSalt, 29)
}

func (x *idIndex) hashClaimBytes(space, key []byte) uint64 {
	return maphash.Bytes(x.seed, key) ^ bits.RotateLeft64(maphash.Bytes(x.seed, space)*claimSalt, 29)
}

// keyRef is one key of the table: its hash and the index holding it.
type keyRef struct {
	hash  uint64
	index int64
}

func insertSlot(slots []uint64, bits uint, r keyRef) {
	insertValue(slots, bits, uint64(uint32(r.hash>>32))<<32|uint64(r.index+1))
}

// insertValue puts a slot value (hash32 ‖ index+1) at or after its home.
func insertValue(slots []uint64, bits uint, v uint64) {
	mask := len(slots) - 1
	i := int(v >> (64 - bits))
	for slots[i] != 0 {
		i = (i + 1) & mask
	}
	slots[i] = v
}

// loadChunk is how many keys load collects before it inserts them.
const loadChunk = 1 << 18

// load adds a key while the table is built (Open), before any reader.
// Keys come in index order, so their home slots are random: inserted one
// by one, each would miss the cache (the table of 1 M entries is 32 MB).
// load collects a chunk, sorts it by home slot (two radix passes on the
// top 16 bits) and inserts it in that order, a forward sweep over the
// table; finish inserts the rest.
func (x *idIndex) load(r keyRef) error {
	if r.index > maxIndexed {
		return fmt.Errorf("index %d beyond the in-memory index's %d", r.index, maxIndexed)
	}
	if x.pending == nil {
		x.pending = make([]uint64, 0, loadChunk)
	}
	x.pending = append(x.pending, uint64(uint32(r.hash>>32))<<32|uint64(r.index+1))
	if len(x.pending) == loadChunk {
		x.finish()
	}
	return nil
}

// finish inserts the keys load collected.
func (x *idIndex) finish() {
	p := x.pending
	if len(p) == 0 {
		return
	}
	if x.n+len(p) > 3*len(x.slots)/4 {
		x.slots, x.bits = x.grown(x.n + len(p))
	}
	tmp := make([]uint64, len(p))
	for _, shift := range []uint{48, 56} {
		var count [257]int
		for _, v := range p {
			count[(v>>shift)&0xff+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, v := range p {
			d := (v >> shift) & 0xff
			tmp[count[d]] = v
			count[d]++
		}
		p, tmp = tmp, p
	}
	for _, v := range p {
		insertValue(x.slots, x.bits, v)
	}
	x.n += len(p)
	x.pending = x.pending[:0]
}

// grown returns a copy of the table sized for keys keys. Only the
// committer (or Open) changes the table, so it reads the current one
// without the lock.
func (x *idIndex) grown(keys int) ([]uint64, uint) {
	slots, bits := makeSlots(max(keys, 2*x.n))
	for _, s := range x.slots {
		if s != 0 {
			insertValue(slots, bits, s)
		}
	}
	return slots, bits
}

// add publishes the keys of a committed batch and the size it reached. A
// table that must grow is copied outside the lock (readers keep probing
// the old one meanwhile) and swapped in with the batch's keys.
func (x *idIndex) add(refs []keyRef, upTo int64) {
	slots, bits := x.slots, x.bits
	grow := x.n+len(refs) > 3*len(x.slots)/4
	if grow {
		slots, bits = x.grown(x.n + len(refs))
		for _, r := range refs {
			insertSlot(slots, bits, r)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if grow {
		x.slots, x.bits = slots, bits
	} else {
		for _, r := range refs {
			insertSlot(x.slots, x.bits, r)
		}
	}
	x.n += len(refs)
	x.upTo = upTo
}

// mayHold says whether a slot of the table matches hash: false means that
// no key the table holds has this hash (a key committed after upTo may
// still be in the keys records).
func (x *idIndex) mayHold(hash uint64) bool {
	_, found, _ := x.find(hash, math.MaxInt64, func(int64) (bool, error) { return true, nil })
	return found
}

// find calls confirm with every indexed index below n whose slot matches
// hash, until confirm says it found the key, and returns up to which index
// the table was complete.
func (x *idIndex) find(hash uint64, n int64, confirm func(index int64) (bool, error)) (upTo int64, found bool, err error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	mask := len(x.slots) - 1
	h32 := uint32(hash >> 32)
	for i := int(h32 >> (32 - x.bits)); ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return x.upTo, false, nil
		}
		if uint32(s>>32) != h32 {
			continue
		}
		if at := int64(uint32(s)) - 1; at < n {
			if ok, err := confirm(at); ok || err != nil {
				return x.upTo, ok, err
			}
		}
	}
}
