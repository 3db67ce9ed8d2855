package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// CheckError is the first inconsistency Check found. Index is the log index
// the problem concerns (for a checkpoint: its tree size), or -1 when it
// concerns the file as a whole.
type CheckError struct {
	Index int64
	What  string
}

func (e *CheckError) Error() string {
	if e.Index < 0 {
		return "ledger: check: " + e.What
	}
	return fmt.Sprintf("ledger: check: index %d: %s", e.Index, e.What)
}

// Check opens the ledger file at path read-only (waiting at most
// DefaultOpenTimeout for the file lock; a running writer holds it, which is
// ErrUnavailable) and re-verifies everything in it against the log key
// logKey. It returns nil when all is well and *CheckError for the first
// inconsistency, in the order given in the package doc (# Invariants).
func Check(path string, logKey note.Verifier) (err error) {
	if logKey == nil {
		return fmt.Errorf("ledger: check %s: nil log key: %w", path, ErrInvalid)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("ledger: check %s: %w", path, ErrNotFound)
		}
		return fmt.Errorf("ledger: check %s: %w", path, err)
	}
	// The page structure is walked with bounds checks before bbolt reads
	// the file: on a damaged file bbolt's cursors can loop forever or
	// fault, and its Open can panic. bbolt's own Tx.Check is not used: it
	// walks the pages on a goroutine of its own, where such a fault kills
	// the process.
	if err := checkStructure(path, false, DefaultOpenTimeout); err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			return ce
		}
		if errors.Is(err, ErrUnavailable) {
			return fmt.Errorf("ledger: check %s: file locked by a writer: %w", path, err)
		}
		return err
	}
	// A file damaged below what the walk sees can still make bbolt panic
	// or fault on its memory map; that is an inconsistency to report, not
	// a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &CheckError{Index: -1, What: "bbolt file structure is damaged: " + panicText(r)}
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: DefaultOpenTimeout})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return fmt.Errorf("ledger: check %s: file locked by a writer: %w: %w", path, ErrUnavailable, err)
		}
		return &CheckError{Index: -1, What: "bbolt cannot open the file: " + err.Error()}
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error { return checkTx(tx, logKey, "") })
}

// Check runs the checks of the package-level Check on the open ledger, in one
// read transaction (a consistent snapshot; appends continue meanwhile).
// Signatures are verified with Options.Verifier, or with the Signer.
func (l *Ledger) Check() (err error) {
	if l.verifier == nil {
		return fmt.Errorf("ledger: check: read-only ledger opened without Options.Verifier: %w", ErrInvalid)
	}
	defer func() {
		// Damage that makes bbolt panic is an inconsistency Check reports.
		var co *CorruptError
		if errors.As(err, &co) && co.Err == nil {
			err = &CheckError{Index: -1, What: "bbolt file structure is damaged: " + co.Reason}
		}
	}()
	return l.view(func(tx *bolt.Tx) error { return checkTx(tx, l.verifier, l.origin) })
}

// checker holds the state of one verification pass.
type checker struct {
	tx      *bolt.Tx
	key     note.Verifier
	origin  string
	size    int64
	buckets map[string]*bolt.Bucket
	hashes  hashReader
}

// fail returns a *CheckError.
func fail(index int64, format string, args ...any) error {
	return &CheckError{Index: index, What: fmt.Sprintf(format, args...)}
}

// checkTx verifies the invariants in the documented order.
func checkTx(tx *bolt.Tx, key note.Verifier, wantOrigin string) error {
	c := &checker{tx: tx, key: key, buckets: map[string]*bolt.Bucket{}}
	for _, step := range []func() error{
		func() error { return c.meta(wantOrigin) },
		c.leavesAndHashes,
		c.entries,
		c.ids,
		c.checkpoints,
		c.claims,
		c.postings,
		c.docs,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// meta checks that every bucket exists, the schema version, the origin (it
// must be the log key's name) and the size.
func (c *checker) meta(wantOrigin string) error {
	for _, name := range ownBuckets {
		b := c.tx.Bucket(name)
		if b == nil {
			return fail(-1, "bucket %q is missing", name)
		}
		c.buckets[string(name)] = b
	}
	c.hashes = hashReader{c.buckets["hashes"]}
	meta := c.buckets["meta"]
	if v := meta.Get(metaSchema); string(v) != schemaVersion {
		return fail(-1, "meta schema is %q, want %q", v, schemaVersion)
	}
	c.origin = string(meta.Get(metaOrigin))
	if c.origin != c.key.Name() {
		return fail(-1, "meta origin %q is not the log key's name %q", c.origin, c.key.Name())
	}
	if wantOrigin != "" && c.origin != wantOrigin {
		return fail(-1, "meta origin %q is not the ledger's origin %q", c.origin, wantOrigin)
	}
	size, err := parseU64(meta.Get(metaSize))
	if err != nil {
		return fail(-1, "meta size: %v", err)
	}
	c.size = size
	return nil
}

// leavesAndHashes checks that the leaves are exactly 0…size−1, non-empty, and
// that every stored hash equals the hash recomputed from the leaves
// (tlog.StoredHashes, RFC 6962 §2.1). Leaves are visited in order, so the
// earlier hashes StoredHashes reads have already been verified.
func (c *checker) leavesAndHashes() error {
	cur := c.buckets["leaves"].Cursor()
	k, leaf := cur.First()
	for i := int64(0); i < c.size; i++ {
		if k == nil {
			return fail(i, "leaf %d is missing (meta size %d)", i, c.size)
		}
		at, err := parseU64(k)
		if err != nil {
			return fail(i, "leaves: malformed key %x: %v", k, err)
		}
		if at != i {
			return fail(i, "leaf %d is missing (next stored leaf is %d)", i, at)
		}
		if len(leaf) == 0 {
			return fail(i, "leaf %d is empty", i)
		}
		hs, err := tlog.StoredHashes(i, leaf, c.hashes)
		if err != nil {
			return fail(i, "leaf %d: hashes of earlier subtrees are unreadable: %v", i, err)
		}
		base := tlog.StoredHashIndex(0, i)
		for j, h := range hs {
			s := base + int64(j)
			stored := c.buckets["hashes"].Get(u64(s))
			if bytes.Equal(stored, h[:]) {
				continue
			}
			if j == 0 {
				return fail(i, "leaf %d: its record hash SHA-256(0x00‖leaf) differs from stored hash %d (leaf or hash altered)", i, s)
			}
			level, n := tlog.SplitStoredHashIndex(s)
			return fail(i, "stored hash %d (level %d, node %d, over leaves %d–%d) differs from the hash recomputed from the leaves",
				s, level, n, n<<level, (n+1)<<level-1)
		}
		k, leaf = cur.Next()
	}
	if k != nil {
		at, _ := parseU64(k)
		return fail(at, "leaf key %x beyond meta size %d", k, c.size)
	}
	want := tlog.StoredHashCount(c.size)
	var count int64
	hc := c.buckets["hashes"].Cursor()
	for k, _ := hc.First(); k != nil; k, _ = hc.Next() {
		if s, err := parseU64(k); err != nil || s >= want {
			return fail(-1, "stored hash key %x beyond the %d hashes of a tree of size %d", k, want, c.size)
		}
		count++
	}
	if count != want {
		return fail(-1, "%d stored hashes, want %d for a tree of size %d", count, want, c.size)
	}
	return nil
}

// entries checks that every index 0…size−1 has an ID, that no other index
// has one, and that the ids index maps the ID back to the same index.
func (c *checker) entries() error {
	ids := c.buckets["ids"]
	cur := c.buckets["entries"].Cursor()
	k, id := cur.First()
	for i := int64(0); i < c.size; i++ {
		if k == nil || !bytes.Equal(k, u64(i)) {
			return fail(i, "entry %d has no ID", i)
		}
		if len(id) == 0 {
			return fail(i, "entry %d has an empty ID", i)
		}
		back := ids.Get(id)
		if back == nil {
			return fail(i, "entry %d: ID %q is missing from the ids index", i, id)
		}
		if !bytes.Equal(back, k) {
			at, _ := parseU64(back)
			return fail(i, "entry %d: ids index maps its ID %q to %d", i, id, at)
		}
		k, id = cur.Next()
	}
	if k != nil {
		at, _ := parseU64(k)
		return fail(at, "entry key %x beyond meta size %d", k, c.size)
	}
	return nil
}

// ids checks that the ids index holds nothing but the entries' IDs.
func (c *checker) ids() error {
	entries := c.buckets["entries"]
	cur := c.buckets["ids"].Cursor()
	var n int64
	for id, v := cur.First(); id != nil; id, v = cur.Next() {
		at, err := parseU64(v)
		if err != nil || at >= c.size {
			return fail(-1, "ids index: ID %q points at %x, not an index below %d", id, v, c.size)
		}
		if got := entries.Get(v); !bytes.Equal(got, id) {
			return fail(at, "ids index: ID %q points at entry %d, whose ID is %q", id, at, got)
		}
		n++
	}
	if n != c.size {
		return fail(-1, "ids index has %d IDs for %d entries", n, c.size)
	}
	return nil
}

// checkpoints checks every stored checkpoint: signed by the log key, origin
// and size as stored, size within the log, root equal to the tree hash of
// the verified hashes, consistent with the previous checkpoint (RFC 6962
// §2.1.2), and the latest one at meta size.
func (c *checker) checkpoints() error {
	verifiers := note.VerifierList(c.key)
	var prev *Checkpoint
	cur := c.buckets["checkpoints"].Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		size, err := parseU64(k)
		if err != nil {
			return fail(-1, "checkpoints: malformed key %x: %v", k, err)
		}
		n, err := note.Open(v, verifiers)
		if err != nil {
			return fail(size, "checkpoint %d: signature by log key %s+%08x does not verify: %v", size, c.key.Name(), c.key.KeyHash(), err)
		}
		cp, err := parseCheckpointText(n.Text)
		if err != nil {
			return fail(size, "checkpoint %d: %v", size, err)
		}
		if cp.Origin != c.origin {
			return fail(size, "checkpoint %d: origin %q is not the log's %q", size, cp.Origin, c.origin)
		}
		if cp.Size != size {
			return fail(size, "checkpoint stored under size %d says size %d", size, cp.Size)
		}
		if size > c.size {
			return fail(size, "checkpoint %d is beyond meta size %d", size, c.size)
		}
		root, err := tlog.TreeHash(size, c.hashes)
		if err != nil {
			return fail(size, "checkpoint %d: tree hash: %v", size, err)
		}
		if root != cp.Root {
			return fail(size, "checkpoint %d: signed root %s is not the tree hash %s of the stored leaves", size, cp.Root, root)
		}
		if prev != nil && prev.Size > 0 {
			p, err := tlog.ProveTree(size, prev.Size, c.hashes)
			if err == nil {
				err = tlog.CheckTree(p, size, cp.Root, prev.Size, prev.Root)
			}
			if err != nil {
				return fail(size, "checkpoint %d is not consistent with checkpoint %d: %v", size, prev.Size, err)
			}
		}
		prev = &cp
	}
	if prev == nil {
		return fail(-1, "no checkpoint stored")
	}
	if prev.Size != c.size {
		return fail(c.size, "latest checkpoint has size %d, meta size is %d", prev.Size, c.size)
	}
	return nil
}

// claims checks that every claim points at an existing entry.
func (c *checker) claims() error {
	return forEachSub(c.buckets["claims"], "claims", func(space, key, v []byte) error {
		at, _, err := parseClaimValue(v)
		if err != nil {
			return fail(-1, "claim %q %q: %v", space, key, err)
		}
		if at >= c.size {
			return fail(at, "claim %q %q points at index %d, beyond meta size %d", space, key, at, c.size)
		}
		return nil
	})
}

// postings checks that every posting names an existing entry.
func (c *checker) postings() error {
	ids := c.buckets["ids"]
	return forEachSub(c.buckets["postings"], "postings", func(index, key, id []byte) error {
		v := ids.Get(id)
		if v == nil {
			return fail(-1, "posting %q %q names entry %q, which does not exist", index, key, id)
		}
		return nil
	})
}

// docs checks that every document belongs to an index within the log.
func (c *checker) docs() error {
	cur := c.buckets["docs"].Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		if len(k) <= docKeyPrefix {
			return fail(-1, "docs: malformed key %x", k)
		}
		at, err := parseU64(k[:docKeyPrefix])
		if err != nil || at >= c.size {
			return fail(-1, "document %q of index %x beyond meta size %d", k[docKeyPrefix:], k[:docKeyPrefix], c.size)
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
