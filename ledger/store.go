package ledger

import (
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// store is what a Ledger keeps its data in: the bbolt file (boltStore) or a
// PostgreSQL schema that several processes share (pgStore, pg.go). Everything that does not depend on
// the storage is the Ledger's and shared: batching (the committer), claim
// semantics, the Hook, RFC 6962 hashing from the right frontier, checkpoint
// signing, the entry codec and dictionaries, proofs from stored hashes
// (tlog over the store's HashReader), verified reads and the log part of
// Check. A store provides one durable commit of a batch, reads, and side
// data; # Storage backends in the package doc says how the calls map to SQL.
//
// Its one commit is batch-shaped so that it maps to one SQL transaction of
// at most three round trips: the store loads the committed head and the keys
// the batch names (keys) under the log's sequencer lock, plan decides every
// append from those reads alone (no I/O), and the store writes what plan
// returns and commits.
type store interface {
	// head returns the committed head as of the last commit this store
	// made or loaded (for bbolt, the only writer; a shared SQL log reads it
	// again under the lock in commit).
	head() storeHead
	// commit runs one group commit. plan gets a view of the committed data
	// (as of the start of the commit, under the sequencer lock) and returns
	// the writes, or nil to write nothing (no commit, no fsync). keys lists
	// what plan will read, for a store that loads it up front; reads outside
	// it are allowed (the bbolt store reads lazily and never calls keys; a
	// SQL store pays a round trip for each, which only the Build form and
	// dictionary cuts after a restart need). When commit returns nil the
	// writes are durable; otherwise none of them is acknowledged, and none
	// is in the store but after a *HaltedError (the bbolt store's
	// commitFailed), which then answers nothing more. The stats' cpu is the
	// thread CPU of plan and of the store's own preparation of the writes,
	// measured as one span (measuredCPU).
	commit(keys func() *batchKeys, plan func(v commitView) (*batchWrites, error)) (commitStats, error)
	// view runs fn over one consistent snapshot of the committed data.
	view(fn func(r storeReader) error) error
	// update runs fn in a write transaction over side data, durable when
	// it returns nil; it shares the store's writer with commit.
	update(fn func(tx Tx) error) error
	// check walks the whole store in one snapshot, feeding its entries and
	// checkpoints to v (the log part, shared) and checking its own layout
	// (Check).
	check(v *logChecker) error
	close() error
}

// storeHead is the committed state the committer continues from.
type storeHead struct {
	frontier frontier   // size and right edge
	latest   Checkpoint // the checkpoint of size frontier.size
	dictCut  int64      // the log size the newest dictionary was cut at (0: none)
	dictID   uint32     // the newest dictionary's id (0: none)
}

// commitStats reports what a commit spent in the storage's durable write
// (for bbolt: page writes, and the journal's write and fdatasync or, without
// the journal, bbolt's two fdatasyncs).
type commitStats struct {
	io    time.Duration
	cpu   time.Duration // the thread CPU of planning and preparing the writes (measuredCPU)
	pages int64         // pages written (bbolt: data pages and the meta page)
	trips int64         // round trips to the database (PostgreSQL)
	// durable, when set, waits until the commit is durable (a journaled
	// bbolt store syncs behind the committer: journal_sync.go), or returns
	// the error that halted the store first. Nil: durable already.
	durable func() error
}

// batchKeys are the keys a batch will read, known before its appends are
// planned: a SQL store loads them in the commit's first round trip.
type batchKeys struct {
	claims    []claimKey
	ids       []string
	postings  []postingKey
	indexed   []postingKey // AppendIndex postings: the key is this prefix and an index ≥ the size
	side      []SideKey
	sequences []string
}

type claimKey struct{ space, key string }

type postingKey struct {
	index string
	key   string
}

// commitView reads committed data inside a commit. Every answer is as of the
// start of the commit: the planner overlays the batch's own writes.
type commitView interface {
	// claim returns the holder of a claim: its index, fingerprint and
	// entry ID.
	claim(space, key string) (index int64, fingerprint []byte, id string, held bool, err error)
	hasID(id string) (bool, error)
	hasPosting(index string, key []byte) (bool, error)
	// side returns a side value (nil when absent).
	side(bucket string, key []byte) ([]byte, error)
	// sequence returns the last number a sequence gave (0: none).
	sequence(name string) (int64, error)
	// blob returns the stored form of entry index, for a dictionary cut
	// after a restart (rare).
	entry(index int64) (rawEntry, error)
}

// batchWrites is everything one commit writes.
type batchWrites struct {
	entries  []entryWrite // consecutive indexes from the committed size on
	hashes   []tlog.Hash  // stored hashes from tlog.StoredHashIndex(0, first index) on
	claims   []claimWrite
	postings []postingWrite
	side     []Put // in order; Value nil deletes
	// sideUnique: no two writes of side have the same bucket and key (the
	// planner knows; the store then need not look for the last of each).
	sideUnique bool
	seqs       map[string]int64
	dict       *dictWrite
	head       storeHead // the head after the commit: size, right edge, checkpoint
	// signed, when set, is the signature of head.latest being made on
	// another goroutine while the store puts the other writes
	// (Ledger.signAhead); checkpoint waits for it.
	signed *pendingSign
}

// pendingSign is a checkpoint signature handed to another goroutine. Its
// state says who signs: the goroutine if it started before the committer
// needed the note, else the committer itself, so that a goroutine still
// waiting for a CPU never holds the commit up.
type pendingSign struct {
	state atomic.Int32 // signQueued, then signByGoroutine or signByCommitter
	sign  func() ([]byte, error)
	done  chan signedNote // buffered: the goroutine never blocks
}

const (
	signQueued int32 = iota
	signByGoroutine
	signByCommitter
)

type signedNote struct {
	note []byte
	err  error
}

// checkpoint completes head.latest with its signed note, waiting for it
// (or making it) when it was handed to another goroutine; a failed
// signature fails the commit.
func (w *batchWrites) checkpoint() error {
	ps := w.signed
	if ps == nil {
		return nil
	}
	w.signed = nil
	var sn signedNote
	if ps.state.CompareAndSwap(signQueued, signByCommitter) {
		sn.note, sn.err = ps.sign()
	} else {
		sn = <-ps.done
	}
	if sn.err != nil {
		return sn.err
	}
	w.head.latest.Note = sn.note
	return nil
}

type entryWrite struct {
	index int64
	id    string
	blob  []byte
}

type claimWrite struct {
	space, key  string
	index       int64
	fingerprint []byte
}

type postingWrite struct {
	index string
	key   []byte
	id    string
	at    int64 // the entry's index
}

type dictWrite struct {
	id      uint32
	cutAt   int64
	content []byte
}

// rawEntry is an entry as stored: a blob (schema 2), or for entries below
// the schema-2 boundary of an upgraded file, the leaf and documents as
// schema 1 stored them. Its slices are valid only inside the read.
type rawEntry struct {
	id   string
	blob []byte
	leaf []byte
	docs []namedDoc
}

// storeReader reads one consistent snapshot. The slices it returns are
// valid only inside the read.
type storeReader interface {
	// ReadHashes reads stored hashes (tlog's HashReader): proofs and tree
	// hashes are computed from them by tlog, whatever the store.
	tlog.HashReader
	// size is the snapshot's tree size.
	size() int64
	// entryIndex looks an entry ID up.
	entryIndex(id string) (index int64, ok bool, err error)
	// entry returns the stored form of entry index (< size).
	entry(index int64) (rawEntry, error)
	// entryID returns the ID of entry index (< size).
	entryID(index int64) (string, error)
	// checkpoint returns the stored checkpoint note of a tree size.
	checkpoint(size int64) (note []byte, ok bool, err error)
	// checkpointAbove returns the stored checkpoint with the smallest size
	// greater than index.
	checkpointAbove(index int64) (note []byte, ok bool, err error)
	claim(space, key string) (index int64, fingerprint []byte, held bool, err error)
	posting(index string, key []byte) (id string, ok bool, err error)
	scan(index string, prefix, after []byte, reverse bool, fn func(k []byte, id string) bool) error
	// sideTx reads side data (its writes fail with ErrReadOnly).
	sideTx() Tx
	sequence(name string) (int64, error)
}
