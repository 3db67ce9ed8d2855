package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// StoredEntry is an entry as read back from the ledger. Its slices are
// copies owned by the caller.
type StoredEntry struct {
	Index int64
	ID    string
	Leaf  []byte
	Docs  map[string][]byte
}

// Hit is one posting returned by Scan.
type Hit struct {
	Key []byte
	ID  string
}

// Entry returns the entry with the given ID (ErrNotFound if none).
func (l *Ledger) Entry(id string) (StoredEntry, error) {
	var e StoredEntry
	err := l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketIDs).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("ledger: entry %q: %w", id, ErrNotFound)
		}
		index, err := parseU64(v)
		if err != nil {
			return l.damaged(-1, fmt.Sprintf("ids index: entry %q: %v", id, err))
		}
		e, err = l.readEntry(tx, index)
		return err
	})
	return e, err
}

// EntryAt returns the entry at log index index (ErrNotFound beyond the log).
func (l *Ledger) EntryAt(index int64) (StoredEntry, error) {
	var e StoredEntry
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		e, err = l.readEntry(tx, index)
		return err
	})
	return e, err
}

// readEntry reads the entry at index and verifies its leaf against the
// stored record hash (one SHA-256): an edited or damaged leaf is an
// *IntegrityError, never returned as the entry's.
func (l *Ledger) readEntry(tx *bolt.Tx, index int64) (StoredEntry, error) {
	if index < 0 {
		return StoredEntry{}, fmt.Errorf("ledger: entry at %d: %w", index, ErrNotFound)
	}
	size, err := txSize(tx)
	if err != nil {
		return StoredEntry{}, l.damaged(-1, err.Error())
	}
	if index >= size {
		return StoredEntry{}, fmt.Errorf("ledger: entry at %d: %w", index, ErrNotFound)
	}
	key := u64(index)
	id := tx.Bucket(bucketEntries).Get(key)
	leaf := tx.Bucket(bucketLeaves).Get(key)
	if len(id) == 0 || len(leaf) == 0 {
		return StoredEntry{}, l.integrity(&IntegrityError{Index: index, What: "its ID or leaf is missing from a log that holds it"})
	}
	if err := verifyLeaf(index, leaf, tx.Bucket(bucketHashes).Get(u64(tlog.StoredHashIndex(0, index)))); err != nil {
		return StoredEntry{}, l.integrity(err)
	}
	e := StoredEntry{Index: index, ID: string(id), Leaf: clone(leaf), Docs: map[string][]byte{}}
	c := tx.Bucket(bucketDocs).Cursor()
	for k, v := c.Seek(key); k != nil && bytes.HasPrefix(k, key); k, v = c.Next() {
		e.Docs[string(k[docKeyPrefix:])] = append([]byte{}, v...)
	}
	return e, nil
}

// Doc returns the document name of entry id (ErrNotFound if either is
// missing). Documents are not covered by the Merkle log, so Doc cannot
// verify them; a caller that knows a document's digest (fiscal402's receipt
// leaf carries the SHA-256 of the record and of the invoice) reads it with
// DocVerified.
func (l *Ledger) Doc(id, name string) ([]byte, error) {
	doc, _, err := l.doc(id, name)
	return doc, err
}

// DocVerified returns the document name of entry id after checking it
// against the SHA-256 digest sum the caller knows for it, from the entry's
// leaf (which Entry verified against the log) or from another anchored
// document. A mismatch is an *IntegrityError naming the entry's index, is
// counted in Stats().IntegrityFailures, and the bytes are not returned.
func (l *Ledger) DocVerified(id, name string, sum [sha256.Size]byte) ([]byte, error) {
	doc, index, err := l.doc(id, name)
	if err != nil {
		return nil, err
	}
	if err := verifyDoc(index, name, doc, sum); err != nil {
		return nil, l.integrity(err)
	}
	return doc, nil
}

// doc reads a document and the index of its entry.
func (l *Ledger) doc(id, name string) (doc []byte, index int64, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketIDs).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("ledger: document %q of entry %q: %w", name, id, ErrNotFound)
		}
		var err error
		if index, err = parseU64(v); err != nil {
			return l.damaged(-1, fmt.Sprintf("ids index: entry %q: %v", id, err))
		}
		// A cursor, unlike Get, tells an empty document from a missing one.
		want := docKey(index, name)
		k, d := tx.Bucket(bucketDocs).Cursor().Seek(want)
		if !bytes.Equal(k, want) {
			return fmt.Errorf("ledger: document %q of entry %q: %w", name, id, ErrNotFound)
		}
		doc = append([]byte{}, d...)
		return nil
	})
	return doc, index, err
}

// integrity counts an integrity failure and returns err.
func (l *Ledger) integrity(err error) error {
	l.integrityFailures.Add(1)
	return err
}

// damaged counts and returns a *CorruptError for a value of the ledger's own
// layout that does not parse.
func (l *Ledger) damaged(index int64, what string) error {
	l.integrityFailures.Add(1)
	return &CorruptError{Path: l.path, Index: index, Reason: oneLine(what)}
}

// Lookup returns the ID of the entry that posted key in index (ErrNotFound if
// none).
func (l *Ledger) Lookup(index string, key []byte) (id string, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucketPostings).Bucket([]byte(index)); b != nil && len(key) > 0 {
			v = b.Get(key)
		}
		if v == nil {
			return fmt.Errorf("ledger: posting %q %q: %w", index, key, ErrNotFound)
		}
		id = string(v)
		return nil
	})
	return id, err
}

// Scan lists the postings of index whose keys start with prefix, in byte
// order of the keys (descending when reverse; newest first when keys embed a
// big-endian time or sequence). after is an exclusive cursor: the scan starts
// just past it in the scan's direction (pass the last Key of the previous
// page). limit ≤ 0 means no limit. An index that was never posted to is
// empty, not an error.
func (l *Ledger) Scan(index string, prefix, after []byte, reverse bool, limit int) ([]Hit, error) {
	hits := []Hit{}
	err := l.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPostings).Bucket([]byte(index))
		if b == nil {
			return nil
		}
		scanBucket(b, prefix, after, reverse, func(k, v []byte) bool {
			hits = append(hits, Hit{Key: clone(k), ID: string(v)})
			return limit <= 0 || len(hits) < limit
		})
		return nil
	})
	return hits, err
}

// ClaimHolder returns the entry ID holding a claim and the fingerprint it was
// taken with (ErrNotFound if the key is free).
func (l *Ledger) ClaimHolder(space, key string) (id string, fingerprint []byte, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucketClaims).Bucket([]byte(space)); b != nil && key != "" {
			v = b.Get([]byte(key))
		}
		if v == nil {
			return fmt.Errorf("ledger: claim %q %q: %w", space, key, ErrNotFound)
		}
		index, fp, err := parseClaimValue(v)
		if err != nil {
			return l.damaged(-1, fmt.Sprintf("claim %q %q: %v", space, key, err))
		}
		id = string(tx.Bucket(bucketEntries).Get(u64(index)))
		fingerprint = clone(fp)
		if fingerprint == nil {
			fingerprint = []byte{}
		}
		return nil
	})
	return id, fingerprint, err
}

// Get returns a side-data value written with Put or Update (ErrNotFound if
// absent). The value is a copy.
func (l *Ledger) Get(bucket string, key []byte) ([]byte, error) {
	var out []byte
	err := l.View(func(tx Tx) error {
		out = tx.Get(bucket, key)
		if out == nil {
			return fmt.Errorf("ledger: side %q %q: %w", bucket, key, ErrNotFound)
		}
		return nil
	})
	return out, err
}

// Tx is a transaction over side data: caller-named buckets (quota counters,
// webhook endpoints, delivery states…) kept in the ledger file under a
// namespace of their own. Buckets spring into existence on the first Put;
// reading or scanning a bucket that does not exist finds nothing.
type Tx interface {
	// Get returns a copy of the value, or nil when absent.
	Get(bucket string, key []byte) []byte
	// Put stores value (nil is stored as empty) under a non-empty key.
	Put(bucket string, key, value []byte) error
	// Delete removes key; deleting an absent key is not an error.
	Delete(bucket string, key []byte) error
	// Scan calls fn for the keys starting with prefix in byte order
	// (descending when reverse), starting just past the exclusive cursor
	// after, until fn returns false. k and v are valid only during fn.
	Scan(bucket string, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) error
}

// Update runs fn in a write transaction over side data and commits it
// (fsync) before returning. An error from fn rolls everything back and is
// returned as is; a failed commit wraps ErrUnavailable.
func (l *Ledger) Update(fn func(tx Tx) error) error {
	if l.reqs == nil {
		return ErrReadOnly
	}
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.broken.Load(); err != nil {
		return err
	}
	var fnErr error
	err := l.guardedUpdate(func(tx *bolt.Tx) error {
		_, fnErr = callUser(func() (struct{}, error) { return struct{}{}, fn(sideTx{tx}) })
		return fnErr
	})
	var co *CorruptError
	switch {
	case errors.As(err, &co):
		return err
	case fnErr != nil:
		return fnErr
	case err != nil:
		if err = mapClosed(err); errors.Is(err, ErrClosed) {
			return err
		}
		return fmt.Errorf("ledger: update: %w: %w", ErrUnavailable, err)
	}
	return nil
}

// View runs fn in a read transaction over side data; the data it sees is a
// consistent snapshot. Writes in fn fail with ErrReadOnly.
func (l *Ledger) View(fn func(tx Tx) error) error {
	var fnErr error
	err := l.view(func(tx *bolt.Tx) error {
		_, fnErr = callUser(func() (struct{}, error) { return struct{}{}, fn(sideTx{tx}) })
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// guardedUpdate is db.Update with the read guard: a panic inside bbolt
// while writing means the file or bbolt's state is damaged, so writing
// stops (Stats, Append and Update then answer the *CorruptError).
func (l *Ledger) guardedUpdate(fn func(tx *bolt.Tx) error) (err error) {
	defer func() {
		var co *CorruptError
		if errors.As(err, &co) && co.Err == nil {
			l.broken.CompareAndSwap(nil, co)
		}
	}()
	defer l.readGuard(&err)()
	return l.db.Update(fn)
}

// sideTx is the Tx over the side namespace of a bbolt transaction.
type sideTx struct{ tx *bolt.Tx }

func (s sideTx) bucket(name string) *bolt.Bucket {
	if name == "" {
		return nil
	}
	return s.tx.Bucket(bucketSide).Bucket([]byte(name))
}

func (s sideTx) Get(bucket string, key []byte) []byte {
	defer storeGuard()
	b := s.bucket(bucket)
	if b == nil || len(key) == 0 {
		return nil
	}
	// A cursor, unlike Get, tells an empty value from a missing one.
	k, v := b.Cursor().Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return append([]byte{}, v...)
}

func (s sideTx) Put(bucket string, key, value []byte) error {
	defer storeGuard()
	if !s.tx.Writable() {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	if len(value) > maxValueSize {
		return fmt.Errorf("ledger: side %q: value of %d bytes: %w", bucket, len(value), ErrInvalid)
	}
	if value == nil {
		value = []byte{}
	}
	return sidePut(s.tx.Bucket(bucketSide), bucket, key, value)
}

func (s sideTx) Delete(bucket string, key []byte) error {
	defer storeGuard()
	if !s.tx.Writable() {
		return ErrReadOnly
	}
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	b := s.bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Delete(key)
}

func (s sideTx) Scan(bucket string, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) error {
	defer storeGuard()
	if b := s.bucket(bucket); b != nil {
		scanBucket(b, prefix, after, reverse, func(k, v []byte) bool {
			more, _ := callUser(func() (bool, error) { return fn(k, v), nil })
			return more
		})
	}
	return nil
}

// validSideKey checks a side bucket name and key against bbolt's rules.
func validSideKey(bucket string, key []byte) error {
	if bucket == "" || len(bucket) > maxKeySize || len(key) == 0 || len(key) > maxKeySize {
		return fmt.Errorf("ledger: side %q %q: bucket and key must be non-empty and fit a bbolt key: %w", bucket, key, ErrInvalid)
	}
	return nil
}

// sidePut writes (value non-nil) or deletes (value nil) a side key, creating
// the bucket on a write.
func sidePut(side *bolt.Bucket, bucket string, key, value []byte) error {
	if value == nil {
		if b := side.Bucket([]byte(bucket)); b != nil {
			return b.Delete(key)
		}
		return nil
	}
	b, err := side.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return err
	}
	return b.Put(key, value)
}

// scanBucket walks the keys of b that start with prefix, ascending or
// descending, strictly past after, until fn returns false. An empty after is
// no cursor. The buckets scanned hold no nested buckets.
func scanBucket(b *bolt.Bucket, prefix, after []byte, reverse bool, fn func(k, v []byte) bool) {
	c := b.Cursor()
	var k, v []byte
	if !reverse {
		start := prefix
		if len(after) > 0 && bytes.Compare(after, prefix) >= 0 {
			start = after
		}
		k, v = c.Seek(start)
		if len(after) > 0 && bytes.Equal(k, after) {
			k, v = c.Next()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if !fn(k, v) {
				return
			}
		}
		return
	}
	// Descending: start at the largest key below the bound, which is the
	// smaller of after and the first key past the prefix range.
	bound := prefixEnd(prefix)
	if len(after) > 0 && (bound == nil || bytes.Compare(after, bound) < 0) {
		bound = after
	}
	if bound == nil {
		k, v = c.Last()
	} else if k, _ = c.Seek(bound); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if !fn(k, v) {
			return
		}
	}
}

// prefixEnd returns the smallest key greater than every key starting with
// prefix, or nil when there is none (empty prefix or all 0xff bytes).
func prefixEnd(prefix []byte) []byte {
	end := clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
