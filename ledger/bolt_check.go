package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"
	"slices"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// check walks the file in one read transaction: meta and buckets, then the
// entries in index order (leaf or blob, ID, the stored hashes each leaf
// completes, the ids index) with the checkpoints interleaved at their
// sizes, all through the logChecker, then the indexes that name entries
// (ids, claims, postings, schema-1 documents) and the dictionaries. Every
// bucket is read with one cursor front to back, except the ids index, which
// is looked up once per entry and once per posting (postingChecker);
// memory stays bounded (see logChecker).
func (s *boltStore) check(c *logChecker) error {
	if h := s.halted.Load(); h != nil {
		return h
	}
	// Postings are checked alongside, in a snapshot of their own: a later
	// snapshot holds the same postings and entries and maybe more, and each
	// posting is checked against the entries of the same snapshot.
	// On a schema-3 file, checkKeys checks the postings with the keys.
	postings := make(chan error, 1)
	go func() { postings <- s.checkSide() }()
	err := s.db.View(func(tx *bolt.Tx) error {
		bk, err := checkMetaBuckets(tx, c)
		if err != nil {
			return err
		}
		if err := s.checkStream(bk, c); err != nil {
			return err
		}
		return checkIndexes(bk, c)
	})
	perr := <-postings
	if err != nil {
		return err
	}
	return perr
}

// checkSide runs, in one snapshot of its own, checkKeys on a schema-3
// file and checkPostings on an older one; a page damaged so that reading
// it faults or panics is reported, not a crash.
func (s *boltStore) checkSide() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fail(-1, "the file structure is damaged: %s", panicText(r))
		}
	}()
	return s.db.View(func(tx *bolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil && hasKeysRecords(string(m.Get(metaSchema))) {
			return checkKeys(tx)
		}
		return checkPostings(tx)
	})
}

// checkPostings checks that every posting names an existing entry.
func checkPostings(tx *bolt.Tx) error {
	ids, postings := tx.Bucket(bucketIDs), tx.Bucket(bucketPostings)
	if ids == nil || postings == nil {
		return nil // the main pass reports the missing bucket
	}
	pc := &postingChecker{ids: ids, size: postingBatch}
	err := forEachSub(postings, "postings", func(index, key, id []byte) error {
		return pc.add(index, key, id)
	})
	if err != nil {
		return err
	}
	return pc.flush()
}

// keysBelowV3From reports a keys record (key, v3from) where an upgraded
// file's legacy entries are: Check and Open say it alike.
const keysBelowV3From = "keys record %x below v3from %d"

// postingBatch is how many postings checkPostings looks up together.
const postingBatch = 4 << 10

// postingChecker looks the IDs that postings name up in the ids index in
// batches sorted by ID, so that one cursor walks the index forward
// (mostly by Next: a batch's IDs are a dense sample of the index), instead
// of one search from the root per posting in random order. Memory is one
// batch (the postings' bytes point into the read transaction).
type postingChecker struct {
	ids    *bolt.Bucket
	size   int       // postings per batch: postingBatch
	walked []posting // the batch in walk order
	byID   []postingRef
}

type posting struct{ index, key, id []byte }

// postingRef is what the sort moves: the ID and the posting's position in
// the walk (the first missing one in walk order is reported).
type postingRef struct {
	id  []byte
	seq int
}

func (pc *postingChecker) add(index, key, id []byte) error {
	pc.byID = append(pc.byID, postingRef{id: id, seq: len(pc.walked)})
	pc.walked = append(pc.walked, posting{index: index, key: key, id: id})
	if len(pc.walked) == pc.size {
		return pc.flush()
	}
	return nil
}

// flush checks the batch, reporting the first posting in walk order whose
// entry does not exist.
func (pc *postingChecker) flush() error {
	b, walked := pc.byID, pc.walked
	pc.byID, pc.walked = b[:0], walked[:0]
	if len(b) == 0 {
		return nil
	}
	slices.SortFunc(b, func(x, y postingRef) int { return bytes.Compare(x.id, y.id) })
	missing := -1
	cur := pc.ids.Cursor()
	k, v := cur.Seek(b[0].id)
	for i := range b {
		// Step forward up to 64 keys (a Next costs a few comparisons,
		// a Seek a search from the root) before searching again.
		for step := 0; k != nil && bytes.Compare(k, b[i].id) < 0; step++ {
			if step == 64 {
				k, v = cur.Seek(b[i].id)
				break
			}
			k, v = cur.Next()
		}
		// As ids.Get: a key that is a nested bucket has no value.
		found := k != nil && v != nil && bytes.Equal(k, b[i].id)
		if !found && (missing < 0 || b[i].seq < missing) {
			missing = b[i].seq
		}
	}
	if missing >= 0 {
		p := walked[missing]
		return fail(-1, "posting %q %q names entry %q, which does not exist", p.index, p.key, p.id)
	}
	return nil
}

// checkBuckets are the buckets of the file being checked.
type checkBuckets struct {
	all    map[string]*bolt.Bucket
	v2, v3 bool
	v2from int64
	v3from int64 // the size for a file before schema 3
}

func (b checkBuckets) get(name []byte) *bolt.Bucket { return b.all[string(name)] }

// checkMetaBuckets checks that every bucket exists, the schema version, the
// origin (it must be the log key's name) and the size.
func checkMetaBuckets(tx *bolt.Tx, c *logChecker) (checkBuckets, error) {
	b := checkBuckets{all: map[string]*bolt.Bucket{}}
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return b, fail(-1, "bucket %q is missing", bucketMeta)
	}
	v := string(meta.Get(metaSchema))
	names, ok := schemaBuckets(v)
	if !ok {
		return b, fail(-1, "meta schema is %q, want %q, %q, %q or %q", v, schemaVersion, schemaV3, schemaV2, schemaV1)
	}
	b.v2, b.v3 = v != schemaV1, hasKeysRecords(v)
	for _, name := range names {
		bk := tx.Bucket(name)
		if bk == nil {
			return b, fail(-1, "bucket %q is missing", name)
		}
		b.all[string(name)] = bk
	}
	origin := string(meta.Get(metaOrigin))
	if origin != c.key.Name() {
		return b, fail(-1, "meta origin %q is not the log key's name %q", origin, c.key.Name())
	}
	if c.origin != "" && origin != c.origin {
		return b, fail(-1, "meta origin %q is not the ledger's origin %q", origin, c.origin)
	}
	size, err := parseU64(meta.Get(metaSize))
	if err != nil {
		return b, fail(-1, "meta size: %v", err)
	}
	c.size, b.v2from, b.v3from = size, size, size
	if b.v2 {
		if b.v2from, err = parseU64(meta.Get(metaV2From)); err != nil || b.v2from > size {
			return b, fail(-1, "meta v2from %x is not an index up to the size %d", meta.Get(metaV2From), size)
		}
	}
	if b.v3 {
		if b.v3from, err = parseU64(meta.Get(metaV3From)); err != nil || b.v3from > size || b.v3from < b.v2from {
			return b, fail(-1, "meta v3from %x is not an index from v2from %d up to the size %d", meta.Get(metaV3From), b.v2from, size)
		}
	}
	return b, nil
}

// checkStream feeds the entries and checkpoints to the logChecker. A
// problem the walk itself finds is fed as an event too, so that the error
// returned is the first in index order.
func (s *boltStore) checkStream(b checkBuckets, c *logChecker) error {
	size := c.size
	failAt := func(err error) error {
		c.pending = append(c.pending, checkEvent{err: err})
		return c.finish()
	}
	entries := b.get(bucketEntries).Cursor()
	c.lookupIDs = s.idReader
	hashes := b.get(bucketHashes).Cursor()
	cps := b.get(bucketCheckpoints).Cursor()
	leaves := b.get(bucketLeaves).Cursor() // schema 1 below v2from
	// from opens a bucket keyed by index whose keys start at index from;
	// a key below it is damage, which what names.
	from := func(name []byte, start int64, what string) (*bolt.Cursor, []byte, []byte, error) {
		cur := b.get(name).Cursor()
		k, v := cur.First()
		if k != nil && bytes.Compare(k, u64(start)) < 0 {
			at, _ := parseU64(k)
			return nil, nil, nil, failAt(fail(at, what, k, start))
		}
		return cur, k, v, nil
	}
	var blobs, keys *bolt.Cursor // schema 2 from v2from on; schema 3 from v3from on
	var bk, bv, kk, kv []byte
	var err error
	if b.v2 {
		if blobs, bk, bv, err = from(bucketBlobs, b.v2from, "blob key %x below v2from %d: a schema-1 entry stored twice"); err != nil {
			return err
		}
	}
	if b.v3 {
		if keys, kk, kv, err = from(bucketKeys, b.v3from, keysBelowV3From); err != nil {
			return err
		}
	}
	lk, lv := leaves.First()
	ek, ev := entries.First()
	var slab []tlog.Hash // backing of the events' stored hashes
	hk, hv := hashes.First()
	ck, cv := cps.First()
	// checkpoints feeds the stored checkpoints of sizes up to limit.
	checkpoints := func(limit int64) error {
		for ; ck != nil; ck, cv = cps.Next() {
			n, err := parseU64(ck)
			if err != nil {
				return failAt(fail(-1, "checkpoints: malformed key %x: %v", ck, err))
			}
			if n > limit {
				return nil
			}
			if err := c.checkpoint(n, cv); err != nil {
				return err
			}
		}
		return nil
	}
	for i := int64(0); i < size; i++ {
		if err := checkpoints(i); err != nil {
			return err
		}
		e := checkEvent{index: i}
		// The leaf: schema 1 below v2from, a blob above.
		key := u64(i)
		var k, v []byte
		if i < b.v2from {
			k, v = lk, lv
			lk, lv = leaves.Next()
		} else {
			k, v = bk, bv
			if blobs != nil {
				bk, bv = blobs.Next()
			}
		}
		switch {
		case k == nil:
			return failAt(fail(i, "leaf %d is missing (meta size %d)", i, size))
		case !bytes.Equal(k, key):
			at, err := parseU64(k)
			if err != nil {
				return failAt(fail(i, "leaves: malformed key %x: %v", k, err))
			}
			return failAt(fail(i, "leaf %d is missing (next stored leaf is %d)", i, at))
		case len(v) == 0:
			return failAt(fail(i, "leaf %d is empty", i))
		case i < b.v2from:
			e.entry.leaf = v
		default:
			e.entry.blob = v
		}
		// The stored hashes the leaf completes, from StoredHashIndex(0, i).
		base := tlog.StoredHashIndex(0, i)
		n := 1
		for i>>(n-1)&1 == 1 {
			n++
		}
		if len(slab) < n {
			slab = make([]tlog.Hash, 4*checkChunkLeaves)
		}
		e.stored, slab = slab[:0:n], slab[n:]
		for j := range n {
			want := u64(base + int64(j))
			if !bytes.Equal(hk, want) {
				if hk != nil && bytes.Compare(hk, want) < 0 {
					e.missed = fmt.Sprintf("unexpected stored hash key %x before it", hk)
				} else {
					e.missed = "no such key"
				}
				break
			}
			if len(hv) != tlog.HashSize {
				e.missed = fmt.Sprintf("it has %d bytes", len(hv))
				break
			}
			e.stored = append(e.stored, tlog.Hash(hv))
			hk, hv = hashes.Next()
		}
		// The entry's ID: below v3from a worker looks it up in the ids
		// index; from v3from on it is the keys record's, which its key
		// maps to the index (uniqueness: checkKeys).
		switch {
		case i >= b.v3from && !bytes.Equal(kk, key):
			return failAt(fail(i, "keys record %d is missing", i))
		case i >= b.v3from:
			rec, err := parseKeysRecord(kv)
			if err != nil {
				return failAt(fail(i, "keys record %d: %v", i, err))
			}
			e.id, e.keyed = rec.id, true
			kk, kv = keys.Next()
		case bytes.Equal(ek, key):
			e.id = ev
			ek, ev = entries.Next()
		}
		if err := c.leaf(e); err != nil {
			return err
		}
	}
	// Keys beyond the size, then the checkpoints above the last leaf.
	if lk != nil {
		if at, _ := parseU64(lk); at < size {
			return failAt(fail(at, "leaf %d is stored as schema 1 above v2from %d", at, b.v2from))
		}
	}
	if ek != nil {
		if at, _ := parseU64(ek); at >= b.v3from && at < size {
			return failAt(fail(at, "entries key %x at or above v3from %d (its ID is in its keys record)", ek, b.v3from))
		}
	}
	for _, kc := range []struct {
		k    []byte
		what string
	}{{lk, "leaf"}, {bk, "leaf"}, {ek, "entry"}, {kk, "keys record"}} {
		if kc.k != nil {
			at, _ := parseU64(kc.k)
			return failAt(fail(at, "%s key %x beyond meta size %d", kc.what, kc.k, size))
		}
	}
	if hk != nil {
		return failAt(fail(-1, "stored hash key %x beyond the %d hashes of a tree of size %d", hk, tlog.StoredHashCount(size), size))
	}
	if err := checkpoints(1<<63 - 1); err != nil {
		return err
	}
	return c.finish()
}

// idReader opens a read transaction for a worker of Check: the ids index
// of a snapshot taken later holds every entry of the checked one unchanged.
func (s *boltStore) idReader() (func(id []byte) ([]byte, error), func()) {
	tx, err := s.db.Begin(false)
	if err != nil {
		return func([]byte) ([]byte, error) { return nil, err }, func() {}
	}
	ids := tx.Bucket(bucketIDs)
	if ids == nil {
		return func([]byte) ([]byte, error) { return nil, fail(-1, "bucket %q is missing", bucketIDs) }, func() { tx.Rollback() }
	}
	// One cursor for all the worker's lookups: Bucket.Get makes a cursor
	// (and its stack) per call.
	cur := ids.Cursor()
	return func(id []byte) ([]byte, error) {
		// As ids.Get: nil for an absent key or a nested bucket.
		k, v := cur.Seek(id)
		if v == nil || !bytes.Equal(k, id) {
			return nil, nil
		}
		return v, nil
	}, func() { tx.Rollback() }
}

// checkIndexes checks what names entries: the ids index holds nothing but
// the entries' IDs; claims point at indexes within the log; schema-1
// documents belong to schema-1 entries; the dictionaries and sequences
// parse. (Postings are checked alongside: checkPostings.)
func checkIndexes(b checkBuckets, c *logChecker) error {
	size, limit := c.size, b.v3from
	entries, ids := b.get(bucketEntries), b.get(bucketIDs)
	// The stream found every entry's ID below v3from mapping back to its
	// index, so the ids index holds nothing else exactly when it holds
	// v3from IDs; only when it does not are the IDs looked up, to name the
	// one too many.
	if n := ids.Stats().KeyN; int64(n) != limit {
		cur := ids.Cursor()
		for id, v := cur.First(); id != nil; id, v = cur.Next() {
			at, err := parseU64(v)
			if err != nil || at >= size {
				return fail(-1, "ids index: ID %q points at %x, not an index below %d", id, v, size)
			}
			if at >= limit {
				return fail(at, "ids index: ID %q points at %d, at or above v3from %d (schema 3 keeps it in the keys record)", id, at, limit)
			}
			if got := entries.Get(v); !bytes.Equal(got, id) {
				return fail(at, "ids index: ID %q points at entry %d, whose ID is %q", id, at, got)
			}
		}
		return fail(-1, "ids index has %d IDs for %d entries", n, limit)
	}
	err := forEachSub(b.get(bucketClaims), "claims", func(space, key, v []byte) error {
		at, _, err := parseClaimValue(v)
		if err != nil {
			return fail(-1, "claim %q %q: %v", space, key, err)
		}
		if at >= size {
			return fail(at, "claim %q %q points at index %d, beyond meta size %d", space, key, at, size)
		}
		if at >= limit {
			return fail(at, "claim %q %q points at index %d, at or above v3from %d (schema 3 keeps it in the keys record)", space, key, at, limit)
		}
		return nil
	})
	if err != nil {
		return err
	}
	dc := b.get(bucketDocs).Cursor()
	for k, _ := dc.First(); k != nil; k, _ = dc.Next() {
		if len(k) <= docKeyPrefix {
			return fail(-1, "docs: malformed key %x", k)
		}
		if at, err := parseU64(k[:docKeyPrefix]); err != nil || at >= b.v2from {
			if b.v2 {
				return fail(-1, "document %q of index %x is not of a schema-1 entry (below %d)", k[docKeyPrefix:], k[:docKeyPrefix], b.v2from)
			}
			return fail(-1, "document %q of index %x beyond meta size %d", k[docKeyPrefix:], k[:docKeyPrefix], size)
		}
	}
	if !b.v2 {
		return nil
	}
	dk := b.get(bucketDicts).Cursor()
	for k, v := dk.First(); k != nil; k, v = dk.Next() {
		id, err := parseU64(k)
		if err != nil || id == 0 || id > 1<<32-1 || len(v) < 8 {
			return fail(-1, "dicts: malformed entry %x", k)
		}
	}
	sc := b.get(bucketSequences).Cursor()
	for k, v := sc.First(); k != nil; k, v = sc.Next() {
		if _, err := parseU64(v); err != nil {
			return fail(-1, "sequence %q: %v", k, err)
		}
	}
	return nil
}

// forEachSub calls fn for every key of every sub-bucket of parent, which
// must hold sub-buckets only.
func forEachSub(parent *bolt.Bucket, what string, fn func(sub, k, v []byte) error) error {
	cur := parent.Cursor()
	for name, v := cur.First(); name != nil; name, v = cur.Next() {
		sub := parent.Bucket(name)
		if v != nil || sub == nil {
			return fail(-1, "%s: key %q is not a sub-bucket", what, name)
		}
		sc := sub.Cursor()
		for k, v := sc.First(); k != nil; k, v = sc.Next() {
			if err := fn(name, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// keysPartition is how many key hashes one pass of checkKeys holds (8
// bytes each: 4 MB, and a quarter more before a pass gives up and the
// partitions are split finer).
const keysPartition = 1 << 19

// checkKeys checks a schema-3 file's keys with bounded memory: entry IDs
// are unique and claim keys unique per space across the legacy ids and
// claims B-trees (below v3from) and the keys records, and every posting
// names an existing entry. The keys' 64-bit hashes (maphash, seeded per
// check) are split by hash into as many partitions as keep one under
// keysPartition; each pass walks the keys and keeps one partition's
// hashes, sorts them and finds equal neighbours, which are then confirmed
// by comparing the keys themselves (another walk, only then: two keys
// with one hash are otherwise a collision); the postings' entry IDs of
// the partition are looked up among its ID hashes (a posting naming a
// missing entry escapes only if its ID's 64-bit hash equals another key's).
// It runs on its own snapshot beside the stream, which reports a keys
// record that does not parse (skipped here).
func checkKeys(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	size, err1 := parseU64(meta.Get(metaSize))
	v3from, err2 := parseU64(meta.Get(metaV3From))
	b := checkBuckets{all: map[string]*bolt.Bucket{}}
	for _, name := range ownBuckets {
		b.all[string(name)] = tx.Bucket(name)
	}
	if err1 != nil || err2 != nil || b.get(bucketKeys) == nil || b.get(bucketPostings) == nil {
		return nil // the main pass reports it
	}
	b.v3, b.v3from = true, v3from
	kc := keysCheck{b: b, size: size, x: newIDIndex(0)}
	if err := kc.run(); err != nil {
		return err
	}
	if string(meta.Get(metaSchema)) == schemaV3 && tx.Bucket(bucketPostLog) != nil {
		return fail(-1, "bucket %q in a schema-3 file (its postings would be read, and a schema-3 build would miss them)", bucketPostLog)
	}
	return checkPostLog(tx, size, v3from)
}

// checkPostLog checks the posting log of a schema-4 file (postlog.go):
// every record parses, names an entry of the log by its index and that
// entry's ID, and is not also in its index bucket nor given twice. The log
// holds under postLogFlush postings (more only if damaged: memory is one
// map entry per posting).
func checkPostLog(tx *bolt.Tx, size, v3from int64) error {
	log := tx.Bucket(bucketPostLog)
	if log == nil {
		return nil // schema 3; a schema-4 file without it fails the main pass
	}
	keys, postings := tx.Bucket(bucketKeys), tx.Bucket(bucketPostings)
	seen := map[[2]string]bool{}
	c := log.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		at, index, key, id, err := parsePostLog(k, v)
		if err != nil {
			return fail(-1, "%v", err)
		}
		if at >= size {
			return fail(at, "posting log: posting %q %q of index %d, beyond meta size %d", index, key, at, size)
		}
		if at < v3from {
			return fail(at, "posting log: posting %q %q of index %d, below v3from %d", index, key, at, v3from)
		}
		rec, err := parseKeysRecordCRC(keys.Get(u64(at)), false)
		if err != nil || !bytes.Equal(rec.id, id) {
			return fail(at, "posting log: posting %q %q names entry %q, but entry %d is %q", index, key, id, at, rec.id)
		}
		pk := [2]string{string(index), string(key)}
		if seen[pk] {
			return fail(at, "posting log: posting %q %q is given twice", index, key)
		}
		seen[pk] = true
		if b := postings.Bucket(index); b != nil && b.Get(key) != nil {
			return fail(at, "posting log: posting %q %q is also in its index bucket", index, key)
		}
	}
	return nil
}

type keysCheck struct {
	b     checkBuckets
	size  int64
	x     *idIndex // for its seed and hash functions; its table stays empty
	parts uint64
	items []uint64 // the hashes of one partition
}

func (kc *keysCheck) run() error {
	kc.parts = 1 + uint64(3*kc.size)/keysPartition
	for p := uint64(0); p < kc.parts; p++ {
		ok, err := kc.pass(p)
		if err != nil {
			return err
		}
		if !ok { // a partition too large: split finer and start again
			kc.parts *= 2
			p = ^uint64(0)
		}
	}
	return nil
}

func (kc *keysCheck) part(h uint64) uint64 {
	hi, _ := bits.Mul64(h, kc.parts)
	return hi
}

// pass checks partition p; false means it held more than keysPartition
// and a quarter.
func (kc *keysCheck) pass(p uint64) (bool, error) {
	if kc.items == nil {
		// Sized for three keys per entry; append grows it up to the bound.
		kc.items = make([]uint64, 0, min(keysPartition+keysPartition/4, 1024+int(3*uint64(kc.size)/kc.parts)))
	}
	items := kc.items[:0]
	over := false
	err := kc.walk(func(kind byte, space, key []byte, at int64) error {
		if h := kc.hash(kind, space, key); kc.part(h) == p {
			if len(items) >= keysPartition+keysPartition/4 {
				over = true
				return errStop
			}
			items = append(items, h)
		}
		return nil
	})
	kc.items = items[:0]
	if over {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	slices.Sort(items)
	for i := 1; i < len(items); i++ {
		if items[i] == items[i-1] {
			if err := kc.confirm(items[i]); err != nil {
				return false, err
			}
		}
	}
	// Postings: the partition's IDs are among items.
	return true, forEachSub(kc.b.get(bucketPostings), "postings", func(index, key, id []byte) error {
		h := kc.x.hashIDBytes(id)
		if kc.part(h) != p {
			return nil
		}
		if _, found := slices.BinarySearch(items, h); !found {
			return fail(-1, "posting %q %q names entry %q, which does not exist", index, key, id)
		}
		return nil
	})
}

var errStop = errors.New("stop")

func (kc *keysCheck) hash(kind byte, space, key []byte) uint64 {
	if kind == keyKindID {
		return kc.x.hashIDBytes(key)
	}
	return kc.x.hashClaimBytes(space, key)
}

// confirm walks the keys again for the ones with hash h and reports two
// equal keys.
func (kc *keysCheck) confirm(h uint64) error {
	type seen struct {
		kind       byte
		space, key []byte
		at         int64
	}
	var same []seen
	return kc.walk(func(kind byte, space, key []byte, at int64) error {
		if kc.hash(kind, space, key) != h {
			return nil
		}
		for _, o := range same {
			if o.kind == kind && bytes.Equal(o.space, space) && bytes.Equal(o.key, key) {
				if kind == keyKindID {
					return fail(max(o.at, at), "entry ID %q is held by entries %d and %d", key, o.at, at)
				}
				return fail(max(o.at, at), "claim %q %q is held by entries %d and %d", space, key, o.at, at)
			}
		}
		same = append(same, seen{kind, space, key, at})
		return nil
	})
}

// walk calls fn for every key: the legacy IDs and claims below v3from,
// then the keys records' IDs and claims in index order.
func (kc *keysCheck) walk(fn func(kind byte, space, key []byte, at int64) error) error {
	v3from := kc.b.v3from
	if v3from > 0 {
		c := kc.b.get(bucketIDs).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if at, err := parseU64(v); err == nil && at < v3from {
				if err := fn(keyKindID, nil, k, at); err != nil {
					return err
				}
			}
		}
		err := forEachSub(kc.b.get(bucketClaims), "claims", func(space, key, v []byte) error {
			if at, _, err := parseClaimValue(v); err == nil && at < v3from {
				return fn(keyKindClaim, space, key, at)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	c := kc.b.get(bucketKeys).Cursor()
	for k, v := c.Seek(u64(v3from)); k != nil; k, v = c.Next() {
		at, err := parseU64(k)
		if err != nil || at >= kc.size {
			break
		}
		rec, err := parseKeysRecordCRC(v, false)
		if err != nil {
			continue
		}
		if err := fn(keyKindID, nil, rec.id, at); err != nil {
			return err
		}
		rec.each(func(space, key, _ []byte) bool {
			err = fn(keyKindClaim, space, key, at)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
