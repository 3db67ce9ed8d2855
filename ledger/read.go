package ledger

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime/debug"

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

// Entry returns the entry with the given ID (ErrNotFound if none), its leaf
// verified against the stored record hash.
func (l *Ledger) Entry(id string) (StoredEntry, error) {
	var e StoredEntry
	err := l.view(func(r storeReader) error {
		index, ok, err := r.entryIndex(id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ledger: entry %q: %w", id, ErrNotFound)
		}
		e, err = l.readEntry(r, index)
		return err
	})
	return e, err
}

// IndexOf returns the log index of the entry with the given ID (ErrNotFound
// if none): one lookup in the ID index, nothing of the entry is read. A
// caller that keys side data by entry ID can use it to tell whether an
// entry exists without writing a side value of its own.
func (l *Ledger) IndexOf(id string) (int64, error) {
	var index int64
	err := l.view(func(r storeReader) error {
		i, ok, err := r.entryIndex(id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ledger: entry %q: %w", id, ErrNotFound)
		}
		index = i
		return nil
	})
	return index, err
}

// EntryAt returns the entry at log index index (ErrNotFound beyond the log),
// its leaf verified against the stored record hash.
func (l *Ledger) EntryAt(index int64) (StoredEntry, error) {
	var e StoredEntry
	err := l.view(func(r storeReader) error {
		var err error
		e, err = l.readEntry(r, index)
		return err
	})
	return e, err
}

// readEntry reads the entry at index and verifies its leaf against the
// stored record hash (one SHA-256): an edited or damaged leaf is an
// *IntegrityError, never returned as the entry's.
func (l *Ledger) readEntry(r storeReader, index int64) (StoredEntry, error) {
	if index < 0 || index >= r.size() {
		return StoredEntry{}, fmt.Errorf("ledger: entry at %d: %w", index, ErrNotFound)
	}
	raw, err := r.entry(index)
	if err != nil {
		return StoredEntry{}, err
	}
	// A blob's body holds the leaf and the documents: decoded once for both.
	var leaf []byte
	var docs []namedDoc
	var leafErr, docsErr error
	if raw.blob != nil {
		leaf, docs, leafErr, docsErr = l.codec.decodeEntry(raw.blob)
	} else {
		leaf = raw.leaf
	}
	leaf, err = l.verifiedLeaf(r, index, raw, leaf, leafErr)
	if err != nil {
		return StoredEntry{}, err
	}
	if raw.id == "" {
		return StoredEntry{}, l.integrity(&IntegrityError{Index: index, What: "its entry ID is missing from a log that holds it"})
	}
	if raw.blob == nil {
		docs, err = l.docsOf(index, raw)
	} else {
		docs, err = l.decodedDocs(index, docs, docsErr)
	}
	if err != nil {
		return StoredEntry{}, err
	}
	e := StoredEntry{Index: index, ID: raw.id, Leaf: leaf, Docs: make(map[string][]byte, len(docs))}
	for _, d := range docs {
		e.Docs[d.name] = d.doc
	}
	return e, nil
}

// verifiedLeaf checks the leaf decoded from a stored entry (decodeErr:
// why it did not decode) against the stored record hash of its index.
func (l *Ledger) verifiedLeaf(r storeReader, index int64, raw rawEntry, leaf []byte, decodeErr error) ([]byte, error) {
	if raw.blob == nil && raw.leaf == nil {
		return nil, l.integrity(&IntegrityError{Index: index, What: "its leaf is missing from a log that holds it"})
	}
	if decodeErr != nil {
		return nil, l.integrity(&IntegrityError{Index: index, What: "its stored entry does not decode: " + decodeErr.Error()})
	}
	hs, err := r.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
	if err != nil {
		return nil, l.integrity(&IntegrityError{Index: index, What: "its stored record hash is unreadable: " + err.Error()})
	}
	if err := verifyLeaf(index, leaf, hs[0][:]); err != nil {
		return nil, l.integrity(err)
	}
	return clone(leaf), nil
}

// docsOf returns the documents of a stored entry, as copies.
func (l *Ledger) docsOf(index int64, raw rawEntry) ([]namedDoc, error) {
	if raw.blob == nil {
		docs := make([]namedDoc, len(raw.docs))
		for i, d := range raw.docs {
			docs[i] = namedDoc{d.name, append([]byte{}, d.doc...)}
		}
		return docs, nil
	}
	docs, err := l.codec.decodeDocs(raw.blob)
	return l.decodedDocs(index, docs, err)
}

// decodedDocs finishes the documents decoded from a blob (err: why they
// did not decode, an integrity failure of the entry at index): an empty
// document is served empty, not nil.
func (l *Ledger) decodedDocs(index int64, docs []namedDoc, err error) ([]namedDoc, error) {
	if err != nil {
		return nil, l.integrity(&IntegrityError{Index: index, What: "its documents do not decode: " + err.Error()})
	}
	for i := range docs {
		if docs[i].doc == nil {
			docs[i].doc = []byte{}
		}
	}
	return docs, nil
}

// Doc returns the document name of entry id (ErrNotFound if either is
// missing). Documents are not covered by the Merkle log, so Doc cannot
// verify them against it; a caller that knows a document's digest
// (fiscal402's receipt leaf carries the SHA-256 of the record and of the
// invoice) reads it with DocVerified.
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
	err = l.view(func(r storeReader) error {
		var ok bool
		var err error
		if index, ok, err = r.entryIndex(id); err != nil {
			return err
		}
		if !ok || index >= r.size() {
			return fmt.Errorf("ledger: document %q of entry %q: %w", name, id, ErrNotFound)
		}
		raw, err := r.entry(index)
		if err != nil {
			return err
		}
		docs, err := l.docsOf(index, raw)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if d.name == name {
				doc = d.doc
				return nil
			}
		}
		return fmt.Errorf("ledger: document %q of entry %q: %w", name, id, ErrNotFound)
	})
	return doc, index, err
}

// integrity counts an integrity failure and returns err.
func (l *Ledger) integrity(err error) error {
	l.integrityFailures.Add(1)
	return err
}

// Lookup returns the ID of the entry that posted key in index (ErrNotFound if
// none).
func (l *Ledger) Lookup(index string, key []byte) (id string, err error) {
	err = l.view(func(r storeReader) error {
		var ok bool
		var err error
		if id, ok, err = r.posting(index, key); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ledger: posting %q %q: %w", index, key, ErrNotFound)
		}
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
	err := l.view(func(r storeReader) error {
		return r.scan(index, prefix, after, reverse, func(k []byte, id string) bool {
			hits = append(hits, Hit{Key: clone(k), ID: id})
			return limit <= 0 || len(hits) < limit
		})
	})
	return hits, err
}

// ClaimHolder returns the entry ID holding a claim and the fingerprint it was
// taken with (ErrNotFound if the key is free).
func (l *Ledger) ClaimHolder(space, key string) (id string, fingerprint []byte, err error) {
	if cl, ok := l.store.(claimLooker); ok {
		// The engine asks before nearly every append: one lookup in a
		// read transaction of its own, without a general snapshot view.
		if l.closed.Load() {
			return "", nil, ErrClosed
		}
		defer l.readGuard(&err, debug.SetPanicOnFault(true))
		var held bool
		id, fingerprint, held, err = cl.claimHolder(space, key)
		if err == nil && !held {
			err = &claimFreeError{space, key}
		}
		return id, fingerprint, err
	}
	return l.claimHolderView(space, key)
}

// claimHolderView is ClaimHolder through a general snapshot view (apart,
// so that its closure does not move ClaimHolder's results to the heap).
func (l *Ledger) claimHolderView(space, key string) (id string, fingerprint []byte, err error) {
	err = l.view(func(r storeReader) error {
		index, fp, held, err := r.claim(space, key)
		if err != nil {
			return err
		}
		if !held {
			return &claimFreeError{space, key}
		}
		if id, err = r.entryID(index); err != nil {
			return err
		}
		fingerprint = clone(fp)
		if fingerprint == nil {
			fingerprint = []byte{}
		}
		return nil
	})
	return id, fingerprint, err
}

// claimLooker is a store that looks one claim up more cheaply than through
// view (ClaimHolder). The fingerprint it returns is the caller's (a copy,
// non-nil when held).
type claimLooker interface {
	claimHolder(space, key string) (id string, fingerprint []byte, held bool, err error)
}

// claimFreeError is ClaimHolder's ErrNotFound, the common answer (a new
// payment): its message is formatted only when asked for.
type claimFreeError struct{ space, key string }

func (e *claimFreeError) Error() string {
	return fmt.Sprintf("ledger: claim %q %q: %v", e.space, e.key, ErrNotFound)
}

func (e *claimFreeError) Unwrap() error { return ErrNotFound }

// Sequence returns the last number the named sequence gave to a written
// entry (Hook.Sequence), or 0 when it was never used: the basis of an
// optimistic guess of the next one.
func (l *Ledger) Sequence(name string) (int64, error) {
	var n int64
	err := l.view(func(r storeReader) error {
		var err error
		n, err = r.sequence(name)
		return err
	})
	return n, err
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
	// ClaimHolder reports the entry holding a claim and its fingerprint as
	// the transaction sees it (held false: the claim is free). Inside an
	// Update it is serial with every append; call it, not the Ledger's
	// read methods, there: on PostgreSQL those take a second pool
	// connection while the update holds the log's lock, and enough
	// concurrent updates wait on each other until the lock times out.
	ClaimHolder(space, key string) (id string, fingerprint []byte, held bool, err error)
}

// Update runs fn in a write transaction over side data and commits it
// (fsync) before returning. An error from fn rolls everything back and is
// returned as is; a failed commit wraps ErrUnavailable.
func (l *Ledger) Update(fn func(tx Tx) error) (err error) {
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
	err = l.guardedUpdate(func(tx Tx) error {
		_, fnErr = callUser(func() (struct{}, error) { return struct{}{}, fn(tx) })
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

// guardedUpdate is store.update with the read guard: a panic inside the
// store while writing means the file or its state is damaged, so writing
// stops (Append and Update then answer the *CorruptError).
func (l *Ledger) guardedUpdate(fn func(tx Tx) error) (err error) {
	defer func() {
		var co *CorruptError
		if errors.As(err, &co) && co.Err == nil {
			l.broken.CompareAndSwap(nil, co)
		}
	}()
	defer l.readGuard(&err, debug.SetPanicOnFault(true))
	return l.store.update(fn)
}

// View runs fn in a read transaction over side data; the data it sees is a
// consistent snapshot. Writes in fn fail with ErrReadOnly.
func (l *Ledger) View(fn func(tx Tx) error) error {
	var fnErr error
	err := l.view(func(r storeReader) error {
		_, fnErr = callUser(func() (struct{}, error) { return struct{}{}, fn(r.sideTx()) })
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// validSideKey checks a side bucket name and key against bbolt's rules.
func validSideKey(bucket string, key []byte) error {
	if bucket == "" || len(bucket) > maxKeySize || len(key) == 0 || len(key) > maxKeySize {
		return fmt.Errorf("ledger: side %q %q: bucket and key must be non-empty and fit a bbolt key: %w", bucket, key, ErrInvalid)
	}
	return nil
}
