package ledger

import (
	"bytes"
	"fmt"
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
	// Postings are checked alongside, in a snapshot of their own: a later
	// snapshot holds the same postings and entries and maybe more, and each
	// posting is checked against the entries of the same snapshot.
	postings := make(chan error, 1)
	go func() { postings <- s.checkPostings() }()
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

// checkPostings checks that every posting names an existing entry.
func (s *boltStore) checkPostings() (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fail(-1, "the file structure is damaged: %s", panicText(r))
		}
	}()
	return s.db.View(func(tx *bolt.Tx) error {
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
	})
}

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
	v2     bool
	v2from int64
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
	switch v := string(meta.Get(metaSchema)); v {
	case schemaV1:
	case schemaVersion:
		b.v2 = true
	default:
		return b, fail(-1, "meta schema is %q, want %q or %q", v, schemaVersion, schemaV1)
	}
	names := schema1Buckets
	if b.v2 {
		names = ownBuckets
	}
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
	c.size, b.v2from = size, size
	if b.v2 {
		if b.v2from, err = parseU64(meta.Get(metaV2From)); err != nil || b.v2from > size {
			return b, fail(-1, "meta v2from %x is not an index up to the size %d", meta.Get(metaV2From), size)
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
	var blobs *bolt.Cursor                 // schema 2 from v2from on
	var bk, bv []byte
	if b.v2 {
		blobs = b.get(bucketBlobs).Cursor()
		if k, _ := blobs.First(); k != nil && bytes.Compare(k, u64(b.v2from)) < 0 {
			at, _ := parseU64(k)
			return failAt(fail(at, "blob key %x below v2from %d: a schema-1 entry stored twice", k, b.v2from))
		}
		bk, bv = blobs.First()
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
		// The entry's ID (a worker looks it up in the ids index).
		if bytes.Equal(ek, key) {
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
	for _, kc := range []struct {
		k    []byte
		what string
	}{{lk, "leaf"}, {bk, "leaf"}, {ek, "entry"}} {
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
	size := c.size
	entries, ids := b.get(bucketEntries), b.get(bucketIDs)
	// The stream found every entry's ID mapping back to its index, so the
	// ids index holds nothing else exactly when it holds size IDs; only
	// when it does not are the IDs looked up, to name the one too many.
	if n := ids.Stats().KeyN; int64(n) != size {
		cur := ids.Cursor()
		for id, v := cur.First(); id != nil; id, v = cur.Next() {
			at, err := parseU64(v)
			if err != nil || at >= size {
				return fail(-1, "ids index: ID %q points at %x, not an index below %d", id, v, size)
			}
			if got := entries.Get(v); !bytes.Equal(got, id) {
				return fail(at, "ids index: ID %q points at entry %d, whose ID is %q", id, at, got)
			}
		}
		return fail(-1, "ids index has %d IDs for %d entries", n, size)
	}
	err := forEachSub(b.get(bucketClaims), "claims", func(space, key, v []byte) error {
		at, _, err := parseClaimValue(v)
		if err != nil {
			return fail(-1, "claim %q %q: %v", space, key, err)
		}
		if at >= size {
			return fail(at, "claim %q %q points at index %d, beyond meta size %d", space, key, at, size)
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
