package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// Claim reserves a unique key for the entry being appended, for example
// Space "payment", Key "eip155:8453:0xabc…" (one record per settled payment),
// or Space "idem", Key "<account>\x00<Idempotency-Key>". A claim is held
// forever by the entry that took it.
type Claim struct {
	Space       string
	Key         string
	Fingerprint []byte // compared when the key is already held
}

// Append is one entry to append, with the claims it must take first.
type Append struct {
	// Claims are checked in the order given; the first one already held
	// decides: an equal fingerprint answers Existing, a different one
	// *ClaimConflictError. All free claims are taken by the new entry.
	Claims []Claim
	// Build is called inside the write transaction, after every claim was
	// found free (in the committed data and among the earlier appends of the
	// same batch), with the log index the entry will get. It runs on the
	// committer goroutine while the write lock is held, so it must be quick,
	// must not call Append or Update (deadlock) and must not panic. It must
	// be deterministic for a given index: this implementation calls it once
	// per append, but a batch may be retried in a future one. An error from
	// Build fails only this append; nothing of it is written. The slices of
	// the returned Entry must not change until Append returns.
	Build func(index int64) (Entry, error)
}

// Entry is what Build returns: the leaf for the Merkle log and what is stored
// with it in the same transaction.
type Entry struct {
	ID       string            // unique entry id; ErrDuplicate if already present
	Leaf     []byte            // the exact bytes appended to the Merkle log; non-empty
	Docs     map[string][]byte // named documents stored with the entry; written in sorted name order
	Postings []Posting         // secondary index entries → this entry's ID
	Puts     []Put             // other writes in the same transaction (outbox events, state pointers…)
}

// Posting is a secondary index entry: Key in index Index maps to the entry's
// ID. Keys are unique within an index (ErrDuplicate otherwise).
type Posting struct {
	Index string
	Key   []byte
}

// Put is a side-data write in the append's transaction. Value nil deletes
// Key. Buckets are created on demand in the side namespace, which cannot
// collide with the ledger's own buckets; Get, Update and View read them.
type Put struct {
	Bucket     string
	Key, Value []byte
}

// Appended is the result of a successful Append.
type Appended struct {
	Index int64
	ID    string
	// Existing: a claim was already held with an equal fingerprint; nothing
	// was appended and Index/ID are the holder's.
	Existing bool
}

// ClaimConflictError reports that a claim's key is held with a different
// fingerprint (the HTTP service answers 409 IDEMPOTENCY_CONFLICT); nothing
// was appended.
type ClaimConflictError struct {
	Claim    Claim
	HolderID string
}

func (e *ClaimConflictError) Error() string {
	return fmt.Sprintf("ledger: claim %q %q is held by entry %q with a different fingerprint", e.Claim.Space, e.Claim.Key, e.HolderID)
}

// request is one Append travelling to the committer.
type request struct {
	a    Append
	done chan result // buffered (1): the committer never waits for the caller
}

type result struct {
	appended Appended
	err      error
	// ownFault: the error is the append's own (Build failed, invalid entry)
	// and stays true whatever happens to the batch's commit.
	ownFault bool
}

// Append appends one entry to the log, or answers from the claims.
//
// The append is handed to the committer goroutine, which groups everything
// queued (up to Options.MaxBatch) into one bbolt write transaction with one
// new signed checkpoint, and answers each caller only after that transaction
// was committed and fsynced. Errors: *ClaimConflictError; ErrClosed;
// ErrReadOnly; ErrInvalid (malformed Append or Entry); ErrDuplicate; Build's
// own error (wrapped); ErrUnavailable when the commit, the fsync or the
// checkpoint signature failed (nothing of the batch was written). If ctx ends
// before the committer took the append, Append returns ctx.Err() and nothing
// is written; once taken, Append waits for the commit (one fsync) and
// returns its true outcome, so ctx.Err() always means "not written".
func (l *Ledger) Append(ctx context.Context, a Append) (Appended, error) {
	if l.reqs == nil {
		return Appended{}, ErrReadOnly
	}
	if err := validateAppend(a); err != nil {
		return Appended{}, err
	}
	if l.closed.Load() {
		return Appended{}, ErrClosed
	}
	if err := l.broken.Load(); err != nil {
		return Appended{}, err
	}
	if err := ctx.Err(); err != nil {
		return Appended{}, err
	}
	r := &request{a: a, done: make(chan result, 1)}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return Appended{}, ctx.Err()
	case <-l.closing:
		return Appended{}, ErrClosed
	}
	res := <-r.done
	return res.appended, res.err
}

// validateAppend checks what can be checked before the append is queued.
func validateAppend(a Append) error {
	if a.Build == nil {
		return fmt.Errorf("ledger: append without Build: %w", ErrInvalid)
	}
	for _, c := range a.Claims {
		if c.Space == "" || c.Key == "" {
			return fmt.Errorf("ledger: claim %q %q: space and key must be non-empty: %w", c.Space, c.Key, ErrInvalid)
		}
		if len(c.Space) > maxKeySize || len(c.Key) > maxKeySize || len(c.Fingerprint) > maxValueSize-8 {
			return fmt.Errorf("ledger: claim %q: too large: %w", c.Space, ErrInvalid)
		}
	}
	return nil
}

// run is the committer: it takes one append (waiting), then everything else
// already waiting, without any artificial delay. While one batch is being
// fsynced the callers of the next one queue up on the unbuffered channel,
// which is what makes batches grow with load (natural group commit).
func (l *Ledger) run() {
	defer close(l.done)
	batch := make([]*request, 0, l.maxBatch)
	for {
		batch = batch[:0]
		select {
		case r := <-l.reqs:
			batch = append(batch, r)
		case <-l.closing:
			return
		}
	drain:
		for len(batch) < l.maxBatch {
			select {
			case r := <-l.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		results := l.commit(batch)
		for i, r := range batch {
			r.done <- results[i]
		}
		clear(batch)
	}
}

// commit applies a batch in one write transaction and commits it. If the
// transaction cannot be committed, every append that did not fail on its
// own gets an error wrapping ErrUnavailable.
func (l *Ledger) commit(batch []*request) []result {
	results := make([]result, len(batch))
	start := time.Now()
	cp, wrote, ioTime, err := l.applyBatch(batch, results)
	l.prof.serial.Add(int64(time.Since(start) - ioTime))
	l.prof.io.Add(int64(ioTime))
	var co *CorruptError
	if errors.As(err, &co) {
		l.broken.CompareAndSwap(nil, co)
	}
	if err != nil {
		if errors.Is(err, ErrUnavailable) || co != nil {
			err = fmt.Errorf("ledger: commit of %d appends: %w", len(batch), err)
		} else {
			err = fmt.Errorf("ledger: commit of %d appends: %w: %w", len(batch), ErrUnavailable, err)
		}
		for i := range results {
			if !results[i].ownFault {
				results[i] = result{err: err}
			}
		}
		return results
	}
	if wrote {
		l.prof.commits.Add(1)
		l.prof.appended.Add(cp.Size - l.size.Load())
		l.size.Store(cp.Size)
		l.latest.Store(&cp)
	}
	return results
}

// applyBatch runs the batch's write transaction. It reports whether anything
// was written; a batch that only answered from claims or failed every append
// is rolled back instead of committed (no fsync, no new checkpoint).
func (l *Ledger) applyBatch(batch []*request, results []result) (_ Checkpoint, _ bool, ioTime time.Duration, err error) {
	// A panic inside bbolt means damaged pages or state: the batch fails
	// with a *CorruptError and writing stops (commit sets l.broken).
	defer l.readGuard(&err)()
	tx, err := l.db.Begin(true)
	if err != nil {
		return Checkpoint{}, false, 0, mapClosed(err)
	}
	defer tx.Rollback() // a no-op after Commit
	w, err := newBatchWriter(tx)
	if err != nil {
		return Checkpoint{}, false, 0, err
	}
	start := w.size
	for i, r := range batch {
		results[i], err = w.apply(r.a)
		if err != nil {
			return Checkpoint{}, false, 0, err
		}
	}
	if w.size == start {
		return Checkpoint{}, false, 0, nil
	}
	root, err := tlog.TreeHash(w.size, w.hashes)
	if err != nil {
		return Checkpoint{}, false, 0, err
	}
	cp, err := signCheckpoint(l.signer, l.origin, w.size, root)
	if err != nil {
		return Checkpoint{}, false, 0, err
	}
	if err := w.checkpoints.Put(u64(cp.Size), cp.Note); err != nil {
		return Checkpoint{}, false, 0, err
	}
	if err := w.meta.Put(metaSize, u64(w.size)); err != nil {
		return Checkpoint{}, false, 0, err
	}
	err = tx.Commit()
	st := tx.Stats()
	if err != nil {
		return Checkpoint{}, false, st.GetWriteTime(), err
	}
	return cp, true, st.GetWriteTime(), nil
}

// batchWriter applies appends to the batch's write transaction. Because a
// bbolt transaction reads its own writes, claims, IDs and postings taken by
// earlier appends of the batch are seen exactly like committed ones.
type batchWriter struct {
	size                                    int64
	meta, leaves, checkpoints, entries, ids *bolt.Bucket
	docs, claims, postings, side            *bolt.Bucket
	hashes                                  hashReader
	hashBucket                              *bolt.Bucket
}

func newBatchWriter(tx *bolt.Tx) (*batchWriter, error) {
	size, err := txSize(tx)
	if err != nil {
		return nil, err
	}
	w := &batchWriter{
		size:        size,
		meta:        tx.Bucket(bucketMeta),
		leaves:      tx.Bucket(bucketLeaves),
		checkpoints: tx.Bucket(bucketCheckpoints),
		entries:     tx.Bucket(bucketEntries),
		ids:         tx.Bucket(bucketIDs),
		docs:        tx.Bucket(bucketDocs),
		claims:      tx.Bucket(bucketClaims),
		postings:    tx.Bucket(bucketPostings),
		side:        tx.Bucket(bucketSide),
		hashBucket:  tx.Bucket(bucketHashes),
	}
	w.hashes = hashReader{w.hashBucket}
	return w, nil
}

// apply decides one append and writes it. Decisions that concern only this
// append (claim held, Build error, invalid entry) come back in the result
// with a nil error, before anything of the append is written. A non-nil
// error is a storage failure that dooms the whole transaction.
func (w *batchWriter) apply(a Append) (result, error) {
	for _, c := range a.Claims {
		index, fingerprint, held, err := w.claimHolder(c)
		if err != nil {
			return result{}, err
		}
		if !held {
			continue
		}
		id := string(w.entries.Get(u64(index)))
		if bytes.Equal(fingerprint, c.Fingerprint) {
			return result{appended: Appended{Index: index, ID: id, Existing: true}}, nil
		}
		c.Fingerprint = clone(c.Fingerprint)
		return result{err: &ClaimConflictError{Claim: c, HolderID: id}}, nil
	}
	index := w.size
	e, err := build(a.Build, index)
	if err != nil {
		return result{err: fmt.Errorf("ledger: build entry %d: %w", index, err), ownFault: true}, nil
	}
	if err := w.validateEntry(e); err != nil {
		return result{err: fmt.Errorf("ledger: entry %d (%q): %w", index, e.ID, err), ownFault: true}, nil
	}
	if err := w.write(index, a.Claims, e); err != nil {
		return result{}, err
	}
	w.size++
	return result{appended: Appended{Index: index, ID: e.ID}}, nil
}

// claimHolder looks a claim up.
func (w *batchWriter) claimHolder(c Claim) (index int64, fingerprint []byte, held bool, err error) {
	b := w.claims.Bucket([]byte(c.Space))
	if b == nil {
		return 0, nil, false, nil
	}
	v := b.Get([]byte(c.Key))
	if v == nil {
		return 0, nil, false, nil
	}
	index, fingerprint, err = parseClaimValue(v)
	if err != nil {
		return 0, nil, false, fmt.Errorf("ledger: claim %q %q: %w", c.Space, c.Key, err)
	}
	return index, fingerprint, true, nil
}

// validateEntry checks everything about e that could make a write fail, so
// that write fails only on storage errors.
func (w *batchWriter) validateEntry(e Entry) error {
	switch {
	case e.ID == "":
		return fmt.Errorf("empty entry ID: %w", ErrInvalid)
	case len(e.ID) > maxKeySize:
		return fmt.Errorf("entry ID of %d bytes: %w", len(e.ID), ErrInvalid)
	case len(e.Leaf) == 0:
		return fmt.Errorf("empty leaf: %w", ErrInvalid)
	case len(e.Leaf) > maxValueSize:
		return fmt.Errorf("leaf of %d bytes: %w", len(e.Leaf), ErrInvalid)
	}
	if w.ids.Get([]byte(e.ID)) != nil {
		return fmt.Errorf("entry ID %q already present: %w", e.ID, ErrDuplicate)
	}
	for name, doc := range e.Docs {
		if name == "" || docKeyPrefix+len(name) > maxKeySize || len(doc) > maxValueSize {
			return fmt.Errorf("document %q: empty or too large name, or too large document: %w", name, ErrInvalid)
		}
	}
	type posting struct{ index, key string }
	seen := make(map[posting]bool, len(e.Postings))
	for _, p := range e.Postings {
		if p.Index == "" || len(p.Index) > maxKeySize || len(p.Key) == 0 || len(p.Key) > maxKeySize {
			return fmt.Errorf("posting %q %q: index and key must be non-empty and fit a bbolt key: %w", p.Index, p.Key, ErrInvalid)
		}
		if seen[posting{p.Index, string(p.Key)}] {
			return fmt.Errorf("posting %q %q given twice: %w", p.Index, p.Key, ErrDuplicate)
		}
		seen[posting{p.Index, string(p.Key)}] = true
		if b := w.postings.Bucket([]byte(p.Index)); b != nil && b.Get(p.Key) != nil {
			return fmt.Errorf("posting %q %q already present: %w", p.Index, p.Key, ErrDuplicate)
		}
	}
	for _, p := range e.Puts {
		if err := validSideKey(p.Bucket, p.Key); err != nil {
			return err
		}
		if len(p.Value) > maxValueSize {
			return fmt.Errorf("side value of %d bytes: %w", len(p.Value), ErrInvalid)
		}
	}
	return nil
}

// write stores one validated entry at index.
func (w *batchWriter) write(index int64, claims []Claim, e Entry) error {
	key := u64(index)
	if err := w.leaves.Put(key, e.Leaf); err != nil {
		return err
	}
	// RFC 6962 §2.1 leaf hash SHA-256(0x00‖leaf) and the interior hashes
	// completed by this leaf, stored from StoredHashIndex(0, index) on.
	hs, err := tlog.StoredHashes(index, e.Leaf, w.hashes)
	if err != nil {
		return err
	}
	base := tlog.StoredHashIndex(0, index)
	for i := range hs {
		if err := w.hashBucket.Put(u64(base+int64(i)), hs[i][:]); err != nil {
			return err
		}
	}
	if err := w.entries.Put(key, []byte(e.ID)); err != nil {
		return err
	}
	if err := w.ids.Put([]byte(e.ID), key); err != nil {
		return err
	}
	names := make([]string, 0, len(e.Docs))
	for name := range e.Docs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		doc := e.Docs[name]
		if doc == nil {
			doc = []byte{}
		}
		if err := w.docs.Put(docKey(index, name), doc); err != nil {
			return err
		}
	}
	for _, c := range claims {
		b, err := w.claims.CreateBucketIfNotExists([]byte(c.Space))
		if err != nil {
			return err
		}
		if err := b.Put([]byte(c.Key), claimValue(index, c.Fingerprint)); err != nil {
			return err
		}
	}
	for _, p := range e.Postings {
		b, err := w.postings.CreateBucketIfNotExists([]byte(p.Index))
		if err != nil {
			return err
		}
		if err := b.Put(p.Key, []byte(e.ID)); err != nil {
			return err
		}
	}
	for _, p := range e.Puts {
		if err := sidePut(w.side, p.Bucket, p.Key, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// build calls a Build function; a panic in it fails only its append.
func build(fn func(int64) (Entry, error), index int64) (e Entry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ledger: Build panicked: %v", r)
		}
	}()
	return fn(index)
}
