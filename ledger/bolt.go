package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/internal/durable"
)

// boltStore keeps a ledger in one bbolt file (# Storage layout).
//
// bbolt options and what they mean for a crash (# Durability in the package
// doc): with the journal (bolt_journal.go), NoSync and NoGrowSync on, the
// journal's fdatasync making a commit durable; without it (journalOn
// false), fsync on and grow-sync on, since an acknowledged append must
// survive power loss; the freelist is synced
// with every commit (NoFreelistSync false: one page more per commit, and no
// scan of the whole file at Open to rebuild it, which grows with the file);
// the array freelist (a writer that syncs the freelist serializes all of
// it every commit whatever its kind, so the hashmap kind's constant-time
// allocation saves nothing while its map upkeep cost 8 % of the
// committer's instructions; the page format is the same for both kinds,
// so either opens a file the other wrote); append-only
// buckets keyed by index split full (FillPercent 1.0), which changes how
// pages are packed, never what a crash can do.
type boltStore struct {
	db       *bolt.DB
	path     string
	readOnly bool
	v2from   int64 // first index stored as a blob; the size for a read-only schema-1 file
	// v3from is the first index whose ID and claims are a keys record
	// (schema 3); the size for a read-only schema-1 or schema-2 file.
	v3from int64
	// keys is the in-memory index of IDs and claims (nil only for Check,
	// which reads no key by name).
	keys *idIndex
	cur  atomic.Pointer[storeHead]
	// pend is the posting log of the committed state (postlog.go);
	// flushAt is postLogFlush (tests lower it).
	pend    atomic.Pointer[pendingPostings]
	flushAt int
	// wmu is held by each write transaction (commit, update) from before
	// it looks at halted until commitFailed has read bbolt: bbolt releases
	// its own writer lock when a failed commit rolls back, and another
	// writer taking it then would commit on top of a commit of uncertain
	// durability, or (after a failure before the meta page) make that
	// failure look like one after it, with the same transaction id.
	wmu sync.Mutex
	// commitTx commits a write transaction: (*bolt.Tx).Commit (tests put
	// a failing sync in its place, under wmu: commitFailed).
	commitTx func(*bolt.Tx) error
	// halted is set when a commit failed after its meta page was written
	// (commitFailed): from then on every read and write of the store, and
	// Check, answer it.
	halted atomic.Pointer[HaltedError]
	// js is the journal of a writable store (nil: read-only, or a
	// platform where bbolt syncs every commit itself).
	js *jstate
	// spoolFree, when set, stands for the free space a backup's spool
	// may use (tests: backup.go).
	spoolFree func() (uint64, bool)
}

// boltOpen are the parameters of openBoltStore.
type boltOpen struct {
	path     string
	origin   string
	readOnly bool
	timeout  time.Duration
	tune     func(*bolt.Options)
	// genesis signs the checkpoint of the empty tree for a new file.
	genesis func() (Checkpoint, error)
	// fullWalk reads every page in the structural check (FullCheck);
	// otherwise ordinary leaf pages are checked for their bounds only.
	fullWalk bool
	// lenient (Check) loads only what reading needs (the schema-2 and
	// schema-3 boundaries, v2from and v3from, and the dictionaries) and
	// leaves every verification to the
	// full check, which reports problems in its own order.
	lenient bool
	// legacy: no journal for a writable file (journalOn is false, or a
	// test of that path).
	legacy bool
}

// loadedFile is what Open learns from the file: the head and the stored
// dictionaries.
type loadedFile struct {
	head  storeHead
	dicts map[uint32]storedDict
}

// openBoltStore opens (or creates) the bbolt file and loads its head,
// refusing a damaged file with a *CorruptError (the page walk, then what
// bbolt reports) and a file of another origin or an unknown schema.
func openBoltStore(o boltOpen) (*boltStore, loadedFile, error) {
	var lf loadedFile
	fi, statErr := os.Stat(o.path)
	creating := errors.Is(statErr, os.ErrNotExist)
	switch {
	case o.readOnly && creating:
		return nil, lf, fmt.Errorf("ledger: open %s read-only: %w", o.path, ErrNotFound)
	case statErr != nil && !creating:
		return nil, lf, fmt.Errorf("ledger: open %s: %w", o.path, statErr)
	case !creating && fi.Size() == 0:
		// bbolt would silently make a new database of it: a log that
		// restarts at size 0 under the same origin, contradicting every
		// checkpoint handed out. Open never leaves an empty file behind.
		return nil, lf, &CorruptError{Path: o.path, Index: -1, Reason: "the file is empty"}
	}
	bo := &bolt.Options{Timeout: o.timeout, ReadOnly: o.readOnly, FreelistType: bolt.FreelistArrayType}
	if o.tune != nil {
		o.tune(bo)
	}
	if creating {
		if err := createBolt(o, bo); err != nil {
			return nil, lf, err
		}
	}
	if !o.readOnly && !o.legacy && journalOn() {
		return openJournaled(o, bo)
	}
	if !creating {
		if err := checkStructure(o.path, !o.readOnly, o.timeout, !o.lenient && !o.fullWalk); err != nil {
			return nil, lf, err
		}
	}
	if o.readOnly || o.legacy {
		if err := journalClean(o.path); err != nil {
			return nil, lf, err
		}
	}
	db, err := openBoltDB(o.path, bo)
	if err != nil {
		return nil, lf, err
	}
	s := &boltStore{db: db, path: o.path, readOnly: o.readOnly, flushAt: postLogFlush, commitTx: (*bolt.Tx).Commit}
	s.pend.Store(&pendingPostings{}) // load replaces it with the file's log
	if lf, err = s.load(o); err != nil {
		db.Close()
		return nil, lf, err
	}
	return s, lf, nil
}

// checkStructure walks the bbolt pages of an existing file under the lock
// bbolt will take (exclusive for a writer), so that a damaged file is
// refused before bbolt, which trusts its pages, reads it.
func checkStructure(path string, exclusive bool, timeout time.Duration, quick bool) error {
	f, err := lockForOpen(path, exclusive, timeout)
	if err != nil {
		return err
	}
	defer f.Close() // releases the lock
	return checkStructureOf(f, path, quick)
}

// lockForOpen is lockFile with Open's errors: a lock held elsewhere is
// ErrUnavailable.
func lockForOpen(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	f, err := lockFile(path, exclusive, timeout)
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("ledger: open %s: %w: %w", path, errLocked, ErrUnavailable)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	return f, nil
}

// checkStructureOf walks the pages of the file path open as f, refusing a
// damaged one with a *CorruptError.
func checkStructureOf(f *os.File, path string, quick bool) error {
	if err := checkPagesOf(f, quick); err != nil {
		return corrupt(path, &CheckError{Index: -1, What: "bbolt page structure: " + err.Error()})
	}
	return nil
}

// openBoltDB opens the bbolt file, reporting a panic or memory fault inside
// bbolt (a file damaged after the structural check) as a *CorruptError
// rather than a crash.
func openBoltDB(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, &CorruptError{Path: path, Index: -1, Reason: "bbolt cannot read the file: " + panicText(r)}
		}
	}()
	db, err = bolt.Open(path, 0o600, o)
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return nil, fmt.Errorf("ledger: open %s: %w: %w: %w", path, errLocked, ErrUnavailable, err)
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return nil, &CorruptError{Path: path, Index: -1, Reason: "bbolt cannot open the file: " + err.Error(), Err: err}
	case err != nil:
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	return db, nil
}

// createBolt makes a new ledger file: buckets, meta and the signed genesis
// checkpoint, written under a temporary name in the same directory and
// linked to path only once committed, then the directory is fsynced (bbolt
// fsyncs the file, not the directory entry that names it; without this a
// crash could lose the whole file, acknowledged appends included). Losing a
// race with another creator is not an error: Open then opens its file.
func createBolt(o boltOpen, bo *bolt.Options) error {
	dir := filepath.Dir(o.path)
	tmp, err := os.CreateTemp(dir, ".ledger-*.new") // mode 0600
	if err != nil {
		return fmt.Errorf("ledger: create %s: %w", o.path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath)
	// bbolt initializes an empty file as a new database.
	db, err := bolt.Open(tmpPath, 0o600, &bolt.Options{Timeout: bo.Timeout, PageSize: bo.PageSize, FreelistType: bo.FreelistType})
	if err != nil {
		return fmt.Errorf("ledger: create %s: %w: %w", o.path, ErrUnavailable, err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return initialize(tx, o) })
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		return fmt.Errorf("ledger: create %s: %w: %w", o.path, ErrUnavailable, err)
	}
	// Journal files with no ledger file are another file's (deleted):
	// replayed onto this one they would destroy it. (Checked again here:
	// a creator that won the race may already write its journal.)
	if _, err := os.Stat(o.path); errors.Is(err, os.ErrNotExist) {
		for _, p := range journalPaths(o.path) {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("ledger: create %s: removing the journal of a file no longer there: %w", o.path, err)
			}
		}
	}
	if err := os.Link(tmpPath, o.path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("ledger: create %s: %w", o.path, err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("ledger: create %s: %w: %w", o.path, ErrUnavailable, err)
	}
	return nil
}

// initialize writes the buckets, meta and genesis checkpoint of a new
// ledger into an empty bbolt file.
func initialize(tx *bolt.Tx, o boltOpen) error {
	for _, name := range ownBuckets {
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	for _, kv := range [][2][]byte{
		{metaSchema, []byte(schemaVersion)},
		{metaOrigin, []byte(o.origin)},
		{metaSize, u64(0)},
		{metaV2From, u64(0)},
		{metaV3From, u64(0)},
	} {
		if err := meta.Put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	cp, err := o.genesis()
	if err != nil {
		return err
	}
	return tx.Bucket(bucketCheckpoints).Put(u64(0), cp.Note)
}

// load reads meta, upgrades a schema-1 file opened for writing, and loads
// the head (size, right edge, latest checkpoint) and the dictionaries. A
// writable bbolt file without any bucket (left by a crash of an older
// version between creating the file and writing its meta) is initialized;
// a file with other buckets is not a ledger.
func (s *boltStore) load(o boltOpen) (lf loadedFile, err error) {
	defer s.guard(&err)()
	if o.lenient {
		err := s.db.View(func(tx *bolt.Tx) error {
			lf.dicts = map[uint32]storedDict{}
			meta := tx.Bucket(bucketMeta)
			if meta == nil {
				return nil
			}
			size, _ := parseU64(meta.Get(metaSize))
			s.v2from, s.v3from = size, size
			schema := string(meta.Get(metaSchema))
			if v, err := parseU64(meta.Get(metaV2From)); err == nil && (schema == schemaV2 || hasKeysRecords(schema)) {
				s.v2from = v
			}
			if v, err := parseU64(meta.Get(metaV3From)); err == nil && hasKeysRecords(schema) {
				s.v3from = v
			}
			lf.dicts, _ = loadDicts(tx)
			return nil
		})
		return lf, err
	}
	var schema string
	var first []byte
	hasMeta := false
	if err := s.db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			hasMeta, schema = true, string(meta.Get(metaSchema))
		} else {
			first, _ = tx.Cursor().First()
			first = clone(first)
		}
		return nil
	}); err != nil {
		return lf, fmt.Errorf("ledger: open %s: %w: %w", s.path, ErrUnavailable, err)
	}
	_, known := schemaBuckets(schema)
	switch {
	case hasMeta && !known:
		return lf, unknownSchema(s.path, schema)
	case schema == "" && first != nil:
		return lf, fmt.Errorf("ledger: %s is a bbolt file without ledger meta (first bucket %q): %w", s.path, first, ErrInvalid)
	case schema == "" && o.readOnly:
		return lf, fmt.Errorf("ledger: %s has no meta bucket: %w", s.path, ErrInvalid)
	case schema == "":
		if err := s.db.Update(func(tx *bolt.Tx) error { return initialize(tx, o) }); err != nil {
			return lf, fmt.Errorf("ledger: initialize %s: %w: %w", s.path, ErrUnavailable, err)
		}
	case schema != schemaVersion && !o.readOnly:
		if err := s.db.Update(upgrade); err != nil {
			return lf, fmt.Errorf("ledger: upgrade %s to %s: %w: %w", s.path, schemaVersion, ErrUnavailable, err)
		}
	}
	// The head and the index of IDs and claims from one snapshot.
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		if lf, err = s.loadHead(tx, o.origin); err != nil {
			return err
		}
		pend, err := loadPending(tx.Bucket(bucketPostLog))
		if err != nil {
			return &CheckError{Index: -1, What: err.Error()}
		}
		s.pend.Store(pend)
		return s.buildIDIndex(tx, lf.head.frontier.size)
	})
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			return lf, corrupt(s.path, ce)
		}
		return lf, err
	}
	s.cur.Store(&lf.head)
	return lf, nil
}

func unknownSchema(path, schema string) error {
	return fmt.Errorf("ledger: %s has schema %q, this version reads %q, %q, %q and %q: %w", path, schema, schemaV1, schemaV2, schemaV3, schemaVersion, ErrInvalid)
}

// upgrade turns a schema-1, -2 or -3 file into a schema-4 one in one
// transaction, without moving any entry.
func upgrade(tx *bolt.Tx) error {
	// Schema 1 → 2 adds the blob-era buckets and records where blobs
	// start (v2from); schema 2 → 3 adds the keys bucket and records where
	// keys records start (v3from): the entries below keep their keys in
	// the entries, ids and claims B-trees; schema 3 → 4 adds the posting
	// log, empty.
	if err := upgradeStep(tx, schemaV1, v2Buckets, metaV2From, schemaV2); err != nil {
		return err
	}
	if err := upgradeStep(tx, schemaV2, v3Buckets, metaV3From, schemaV3); err != nil {
		return err
	}
	return upgradeStep(tx, schemaV3, v4Buckets, nil, schemaVersion)
}

// upgradeStep turns a file of schema from into one of schema to without
// moving any key: it creates buckets and records the size at the upgrade
// under fromKey, the first index stored the new way. A file of another
// schema is left as it is.
func upgradeStep(tx *bolt.Tx, from string, buckets [][]byte, fromKey []byte, to string) error {
	meta := tx.Bucket(bucketMeta)
	if string(meta.Get(metaSchema)) != from {
		return nil
	}
	size := meta.Get(metaSize)
	if _, err := parseU64(size); err != nil {
		return &CheckError{Index: -1, What: "meta size: " + err.Error()}
	}
	for _, name := range buckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	if fromKey != nil {
		if err := meta.Put(fromKey, clone(size)); err != nil {
			return err
		}
	}
	return meta.Put(metaSchema, []byte(to))
}

// loadHead reads and cross-checks meta, the last entry and the latest
// checkpoint, and reads the right edge and the dictionaries.
func (s *boltStore) loadHead(tx *bolt.Tx, origin string) (loadedFile, error) {
	var lf loadedFile
	meta := tx.Bucket(bucketMeta)
	schema := string(meta.Get(metaSchema))
	buckets, ok := schemaBuckets(schema)
	if !ok {
		return lf, unknownSchema(s.path, schema)
	}
	if v := meta.Get(metaOrigin); string(v) != origin {
		return lf, fmt.Errorf("ledger: %s belongs to origin %q, not %q: %w", s.path, v, origin, ErrOriginMismatch)
	}
	v2, v3 := schema != schemaV1, hasKeysRecords(schema)
	for _, name := range buckets {
		if tx.Bucket(name) == nil {
			return lf, &CheckError{Index: -1, What: fmt.Sprintf("bucket %q is missing", name)}
		}
	}
	size, err := parseU64(meta.Get(metaSize))
	if err != nil {
		return lf, &CheckError{Index: -1, What: "meta size: " + err.Error()}
	}
	s.v2from, s.v3from = size, size
	if v2 {
		if s.v2from, err = parseU64(meta.Get(metaV2From)); err != nil || s.v2from > size {
			return lf, &CheckError{Index: -1, What: fmt.Sprintf("meta v2from %x is not an index up to the size %d", meta.Get(metaV2From), size)}
		}
	}
	if v3 {
		if s.v3from, err = parseU64(meta.Get(metaV3From)); err != nil || s.v3from > size || s.v3from < s.v2from {
			return lf, &CheckError{Index: -1, What: fmt.Sprintf("meta v3from %x is not an index from v2from %d up to the size %d", meta.Get(metaV3From), s.v2from, size)}
		}
	}
	// The last entry is the last leaf (schema 1) or the last blob.
	last := int64(-1)
	for _, b := range [][]byte{bucketLeaves, bucketBlobs} {
		bk := tx.Bucket(b)
		if bk == nil {
			continue
		}
		if k, _ := bk.Cursor().Last(); k != nil {
			n, err := parseU64(k)
			if err != nil {
				return lf, &CheckError{Index: -1, What: fmt.Sprintf("%s: last key: %v", b, err)}
			}
			last = max(last, n)
		}
	}
	if last+1 != size {
		return lf, &CheckError{Index: max(last, size), What: fmt.Sprintf("meta size %d but the last leaf has index %d", size, last)}
	}
	k, v := tx.Bucket(bucketCheckpoints).Cursor().Last()
	if k == nil {
		return lf, &CheckError{Index: -1, What: "no checkpoint stored"}
	}
	cp, err := parseStoredCheckpoint(v)
	if err != nil {
		return lf, &CheckError{Index: size, What: "latest checkpoint: " + err.Error()}
	}
	if cp.Size != size {
		return lf, &CheckError{Index: size, What: fmt.Sprintf("meta size %d but the latest checkpoint has size %d", size, cp.Size)}
	}
	fr, err := loadFrontier(size, hashReader{tx.Bucket(bucketHashes)})
	if err != nil {
		return lf, &CheckError{Index: size, What: "right edge of the tree: " + err.Error()}
	}
	lf.head = storeHead{frontier: fr, latest: cp}
	if lf.dicts, err = loadDicts(tx); err != nil {
		return lf, err
	}
	for id, d := range lf.dicts {
		if id > lf.head.dictID {
			lf.head.dictID, lf.head.dictCut = id, d.cutAt
		}
	}
	return lf, nil
}

// loadDicts reads the stored dictionaries (none in a schema-1 file).
func loadDicts(tx *bolt.Tx) (map[uint32]storedDict, error) {
	dicts := map[uint32]storedDict{}
	b := tx.Bucket(bucketDicts)
	if b == nil {
		return dicts, nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		id, err := parseU64(k)
		if err != nil || id == 0 || id > 1<<32-1 || len(v) < 8 {
			return dicts, &CheckError{Index: -1, What: fmt.Sprintf("dicts: malformed entry %x", k)}
		}
		cut, _ := parseU64(v[:8])
		dicts[uint32(id)] = storedDict{cutAt: cut, content: clone(v[8:])}
	}
	return dicts, nil
}

// guard is the read guard of a store without a Ledger yet (Open).
func (s *boltStore) guard(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if up, ok := r.(userPanic); ok {
				panic(up.v)
			}
			if sp, ok := r.(storePanic); ok {
				r = sp.v
			}
			*err = &CorruptError{Path: s.path, Index: -1, Reason: "reading the file failed: " + panicText(r)}
		}
	}
}

func (s *boltStore) head() storeHead { return *s.cur.Load() }

// close closes the file once no write transaction is between its failed
// commit and commitFailed (wmu): a close there would hide the halt.
func (s *boltStore) close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	if s.js != nil {
		err = s.closeJournal()
	}
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// commit is one bbolt write transaction: plan decides with live reads of
// the transaction (which, until the writes below, see the committed data),
// then everything is put and committed: bbolt writes the dirty pages,
// fdatasyncs, writes the meta page and fdatasyncs again.
func (s *boltStore) commit(_ func() *batchKeys, plan func(v commitView) (*batchWrites, error)) (st commitStats, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if h := s.halted.Load(); h != nil {
		return st, h
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		return st, mapClosed(err)
	}
	defer tx.Rollback() // a no-op after Commit
	// Planning and the puts do not block: one measured span.
	var w *batchWrites
	var refs []keyRef
	var pend *pendingPostings
	var log *opLog
	if s.js != nil {
		log = newOpLog(s.js.buf)
	}
	st.cpu = measuredCPU(func() {
		if w, err = plan(newBoltView(s, tx)); err == nil && w != nil {
			refs, pend, err = s.write(jtx{tx, log}, w)
		}
	})
	// With the journal, the plan read a state perhaps still syncing, and
	// its answers rest on it: a retry's existing entry, an append's own
	// fault (its ID already present), even when this commit writes nothing
	// or fails. They wait for that state (the batch's own, once committed).
	txid := uint64(tx.ID())
	if err != nil || w == nil {
		st.durable = s.durableAt(txid - 1)
		return st, err
	}
	undo := s.publishPending(pend)
	var jio time.Duration // the journal's write
	if s.js != nil {
		jio, err = s.journaledCommit(tx, log)
	} else {
		err = s.commitWrite(tx)
	}
	txs := tx.Stats()
	st.io, st.pages = txs.GetWriteTime()+jio, txs.GetWrite()
	if err != nil {
		undo()
		st.durable = s.durableAt(txid - 1)
		return st, err
	}
	st.durable = s.durableAt(txid)
	// Only now, committed, do the batch's keys become visible to lookups.
	s.keys.add(refs, w.head.frontier.size)
	s.cur.Store(&w.head)
	return st, nil
}

// durableAt is what answers resting on transaction tx wait for: its
// durability in the journal (nil without one: a commit is durable when it
// returns).
func (s *boltStore) durableAt(tx uint64) func() error {
	if s.js == nil {
		return nil
	}
	dur := s.js.dur
	return func() error { return dur.wait(tx) }
}

// write puts a batch's writes and returns the keys the batch adds to the
// in-memory index. bbolt keeps the key and value slices of a Put until the
// commit, so the small keys and values the batch makes are cut from one
// arena (no allocation per put).
//
// An entry's ID and claims go to its keys record, next to its blob: both
// buckets are keyed by index and only grow, so a batch dirties a page of
// each for many records, where the ids and claims B-trees (schema 2) took
// a randomly placed leaf page per key.
func (s *boltStore) write(tx jtx, w *batchWrites) ([]keyRef, *pendingPostings, error) {
	b := tx.bucket
	blobs, keys, hashes, cps := b(bucketBlobs), b(bucketKeys), b(bucketHashes), b(bucketCheckpoints)
	// Keys of these buckets only grow: split full pages full (the default,
	// half, leaves every page of an append-only bucket half empty).
	for _, bk := range []jbucket{blobs, keys, hashes, cps} {
		bk.FillPercent = 1.0
	}
	var a arena
	n := 8 * (len(w.entries) + len(w.hashes))
	for _, e := range w.entries {
		n += keysRecordSize(e.id, nil)
	}
	for _, p := range w.postings {
		n += len(p.id)
	}
	for _, c := range w.claims {
		n += keysRecordSize("", []claimWrite{c})
	}
	a.grow(n)
	refs := make([]keyRef, 0, len(w.entries)+len(w.claims))
	j := 0 // the claims of w.entries[i] are the next ones with its index
	for _, e := range w.entries {
		if e.index > maxIndexed {
			return nil, nil, fmt.Errorf("ledger: entry %d: beyond the %d entries the in-memory index holds", e.index, maxIndexed+1)
		}
		start := j
		for j < len(w.claims) && w.claims[j].index == e.index {
			j++
		}
		claims := w.claims[start:j]
		key := a.u64(e.index)
		rec := a.cut(keysRecordSize(e.id, claims), func(b []byte) []byte { return appendKeysRecord(b, e.id, claims) })
		if err := blobs.Put(key, e.blob); err != nil {
			return nil, nil, err
		}
		if err := keys.Put(key, rec); err != nil {
			return nil, nil, err
		}
		refs = append(refs, keyRef{s.keys.hashID(e.id), e.index})
		for _, c := range claims {
			refs = append(refs, keyRef{s.keys.hashClaim(c.space, c.key), e.index})
		}
	}
	if j != len(w.claims) {
		return nil, nil, fmt.Errorf("ledger: claim %q %q of index %d belongs to no entry of the batch", w.claims[j].space, w.claims[j].key, w.claims[j].index)
	}
	if len(w.entries) > 0 {
		base := tlog.StoredHashIndex(0, w.entries[0].index)
		for i := range w.hashes {
			if err := hashes.Put(a.u64(base+int64(i)), w.hashes[i][:]); err != nil {
				return nil, nil, err
			}
		}
	}
	next, err := s.writePostings(tx, s.pend.Load(), w.postings, &a)
	if err != nil {
		return nil, nil, err
	}
	fills := fillTracker{}
	sideBk := subBuckets{parent: b(bucketSide)}
	side := w.side
	if !w.sideUnique {
		side = lastWrites(side)
	}
	for _, p := range side {
		if p.Value == nil {
			if err := sidePut(sideBk.parent, p.Bucket, p.Key, nil, nil); err != nil {
				return nil, nil, err
			}
			continue
		}
		bk, err := sideBk.get(p.Bucket)
		if err != nil {
			return nil, nil, err
		}
		fills.put(bk.Bucket, p.Key)
		if err := bk.Put(p.Key, p.Value); err != nil {
			return nil, nil, err
		}
	}
	fills.apply()
	for name, n := range w.seqs {
		if err := b(bucketSequences).Put([]byte(name), u64(n)); err != nil {
			return nil, nil, err
		}
	}
	if d := w.dict; d != nil {
		if err := b(bucketDicts).Put(u64(int64(d.id)), dictValue(d.cutAt, d.content)); err != nil {
			return nil, nil, err
		}
	}
	// Last: the checkpoint, whose signature was made while the rest was put.
	if err := w.checkpoint(); err != nil {
		return nil, nil, err
	}
	cp := w.head.latest
	if err := cps.Put(u64(cp.Size), cp.Note); err != nil {
		return nil, nil, err
	}
	return refs, next, b(bucketMeta).Put(metaSize, u64(cp.Size))
}

// lastWrites keeps, of several writes of one side key in a batch, the last
// (the value the key ends with), in the order of those last writes.
func lastWrites(puts []Put) []Put {
	last := make(map[sideMapKey]int, len(puts))
	for i, p := range puts {
		last[sideMapKey{p.Bucket, string(p.Key)}] = i
	}
	if len(last) == len(puts) {
		return puts
	}
	out := make([]Put, 0, len(last))
	for i, p := range puts {
		if last[sideMapKey{p.Bucket, string(p.Key)}] == i {
			out = append(out, p)
		}
	}
	return out
}

// arena cuts small byte slices from one allocation; a slice it gave stays
// valid (a new block is allocated when one is full, the old one is kept).
type arena struct{ buf []byte }

func (a *arena) grow(n int) { a.buf = make([]byte, 0, max(n, 64)) }

func (a *arena) u64(n int64) []byte {
	return a.cut(8, func(b []byte) []byte { return binary.BigEndian.AppendUint64(b, uint64(n)) })
}

// clone copies b into the arena (nil stays nil, empty stays non-nil).
func (a *arena) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return a.cut(len(b), func(d []byte) []byte { return append(d, b...) })
}

func (a *arena) str(s string) []byte {
	return a.cut(len(s), func(b []byte) []byte { return append(b, s...) })
}

// cut appends n bytes with add and returns them.
func (a *arena) cut(n int, add func([]byte) []byte) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.grow(2*cap(a.buf) + n)
	}
	at := len(a.buf)
	a.buf = add(a.buf)
	return a.buf[at:len(a.buf):len(a.buf)]
}

// subBuckets creates and remembers the sub-buckets of a commit.
type subBuckets struct {
	parent jbucket
	last   string
	lastB  jbucket
	m      map[string]jbucket
}

func (s *subBuckets) get(name string) (jbucket, error) {
	if s.lastB.Bucket != nil && name == s.last {
		return s.lastB, nil
	}
	b, ok := s.m[name]
	if !ok {
		var err error
		if b, err = s.parent.createIfNotExists([]byte(name)); err != nil {
			return jbucket{}, err
		}
		if s.m == nil {
			s.m = map[string]jbucket{}
		}
		s.m[name] = b
	}
	s.last, s.lastB = name, b
	return b, nil
}

// fillTracker sets FillPercent 1.0 on caller buckets that a commit only
// appended to (every key written beyond the bucket's last key: outbox
// events keyed by index, postings keyed by account and time), and leaves
// the default on the others, where full pages would split on the next
// insert in their middle.
type fillTracker map[*bolt.Bucket]*fillState

type fillState struct {
	last     []byte
	appended bool
}

// put learns of a put of key into bk. The keys it keeps are not copied:
// bbolt keeps a Put's key until the commit anyway, and the committed last
// key stays valid while the transaction is open.
func (f fillTracker) put(bk *bolt.Bucket, key []byte) {
	st := f.state(bk)
	if st.last != nil && bytes.Compare(key, st.last) <= 0 {
		st.appended = false
	}
	st.last = key
}

// follows reports whether key follows every key of bk, those put before
// in the transaction included.
func (f fillTracker) follows(bk *bolt.Bucket, key []byte) bool {
	st := f.state(bk)
	return st.last == nil || bytes.Compare(key, st.last) > 0
}

// state returns what f knows of bk, starting from its committed last key.
func (f fillTracker) state(bk *bolt.Bucket) *fillState {
	st := f[bk]
	if st == nil {
		last, _ := bk.Cursor().Last()
		st = &fillState{last: last, appended: true}
		f[bk] = st
	}
	return st
}

func (f fillTracker) apply() {
	for bk, st := range f {
		if st.appended {
			bk.FillPercent = 1.0
		}
	}
}

// boltView is the commitView of a bbolt write transaction. Planning a
// batch looks many keys up in few buckets: the view opens each bucket once
// and keeps one cursor per bucket, whose Seek reuses its stack (every
// Bucket.Get makes a new cursor and grows a new stack). The values it
// returns point into the transaction's pages: planning only reads, so they
// stay valid until the writes (and are copied where they are kept).
type boltView struct {
	s        *boltStore
	tx       *bolt.Tx
	seqs     *bolt.Cursor
	children map[viewBucket]*bolt.Cursor // nil: the bucket does not exist
	key      []byte                      // scratch for a looked-up key
	kr       *keysReader
}

// bytes copies s into the view's key scratch (a seek does not keep it).
func (v *boltView) bytes(s string) []byte {
	v.key = append(v.key[:0], s...)
	return v.key
}

// viewBucket names a nested bucket: a claim space, a posting index or a
// side bucket (parent is the top-level bucket's name).
type viewBucket struct{ parent, name string }

func newBoltView(s *boltStore, tx *bolt.Tx) *boltView {
	return &boltView{s: s, tx: tx, children: make(map[viewBucket]*bolt.Cursor, 8)}
}

// top returns the cursor of a top-level bucket, opening it once.
func (v *boltView) top(c **bolt.Cursor, name []byte) *bolt.Cursor {
	if *c == nil {
		*c = v.tx.Bucket(name).Cursor()
	}
	return *c
}

// child returns the cursor of a nested bucket (nil when it does not exist),
// opening it once.
func (v *boltView) child(parent []byte, pname, name string) *bolt.Cursor {
	k := viewBucket{pname, name}
	c, ok := v.children[k]
	if !ok {
		if b := v.tx.Bucket(parent).Bucket([]byte(name)); b != nil {
			c = b.Cursor()
		}
		v.children[k] = c
	}
	return c
}

// seekGet is Bucket.Get with a reused cursor: the value of key (nil when
// absent or a nested bucket), told apart from an empty value.
func seekGet(c *bolt.Cursor, key []byte) ([]byte, bool) {
	if c == nil || len(key) == 0 {
		return nil, false
	}
	k, v := c.Seek(key)
	if !bytes.Equal(k, key) || v == nil {
		return nil, false
	}
	return v, true
}

// claim and hasID ask the in-memory index, which holds every committed
// key when the committer plans (it is updated after each commit): a key
// that is not held costs no B-tree read at all.
func (v *boltView) claim(space, key string) (int64, []byte, string, bool, error) {
	// fp is only compared by the planner, never kept.
	return v.keysReader().claim(space, key, v.s.head().frontier.size)
}

func (v *boltView) hasID(id string) (bool, error) {
	_, ok, err := v.keysReader().id(id, v.s.head().frontier.size)
	return ok, err
}

func (v *boltView) keysReader() *keysReader {
	if v.kr == nil {
		kr := newKeysReader(v.s, v.tx)
		v.kr = &kr
	}
	return v.kr
}

func (v *boltView) hasPosting(index string, key []byte) (bool, error) {
	if _, ok := v.s.pend.Load().get(index, key); ok {
		return true, nil
	}
	_, ok := seekGet(v.child(bucketPostings, "postings", index), key)
	return ok, nil
}

func (v *boltView) side(bucket string, key []byte) (val []byte, err error) {
	defer storeGuard() // read inside a Hook: damage, not the hook's fault
	if bucket == "" {
		return nil, nil
	}
	val, ok := seekGet(v.child(bucketSide, "side", bucket), key)
	if !ok {
		return nil, nil
	}
	return append([]byte{}, val...), nil
}

func (v *boltView) sequence(name string) (int64, error) {
	defer storeGuard() // read inside a Hook: damage, not the hook's fault
	val, ok := seekGet(v.top(&v.seqs, bucketSequences), v.bytes(name))
	if !ok {
		return 0, nil
	}
	n, err := parseU64(val)
	if err != nil {
		return 0, &CorruptError{Path: v.s.path, Index: -1, Reason: fmt.Sprintf("sequence %q: %v", name, err)}
	}
	return n, nil
}

func (v *boltView) entry(index int64) (rawEntry, error) {
	return boltReader{s: v.s, tx: v.tx}.entry(index)
}

// claimHolder looks one claim up in a read transaction of its own (no meta
// read, no closure: ClaimHolder runs before nearly every append).
func (s *boltStore) claimHolder(space, key string) (id string, fp []byte, held bool, err error) {
	if h := s.halted.Load(); h != nil {
		return "", nil, false, h
	}
	if x := s.keys; x != nil && !s.readOnly && !x.mayHold(x.hashClaim(space, key)) {
		// The writer's own index holds the claims of every append it
		// answered (commit adds a batch's keys before its appends are
		// answered), and no other process writes the file: a claim the
		// index lacks is free, but for one whose batch is between its
		// commit and that update at this very moment, an append this call
		// races with however it answers (a snapshot read a microsecond
		// earlier would not see it either); the committer decides every
		// claim in its transaction. No read transaction then: under load
		// the callers' transactions queued on bbolt's meta lock (70 µs a
		// settlement at 64 callers), which the committer holds while it
		// writes the meta page.
		return "", nil, false, nil
	}
	tx, err := s.db.Begin(false)
	if err != nil {
		return "", nil, false, mapClosed(err)
	}
	defer tx.Rollback()
	if err := s.durableSnapshot(tx); err != nil {
		return "", nil, false, err
	}
	// No size is read: the keys records after the in-memory index's last
	// update are read until the first one this snapshot does not hold.
	return sideTx{tx, s}.ClaimHolder(space, key)
}

// view runs fn in a bbolt read transaction (an MVCC snapshot).
func (s *boltStore) view(fn func(r storeReader) error) error {
	if h := s.halted.Load(); h != nil {
		return h
	}
	return mapClosed(s.db.View(func(tx *bolt.Tx) error {
		if err := s.durableSnapshot(tx); err != nil {
			return err
		}
		r := boltReader{s: s, tx: tx}
		n, err := parseU64(tx.Bucket(bucketMeta).Get(metaSize))
		if err != nil {
			return &CorruptError{Path: s.path, Index: -1, Reason: "meta size: " + err.Error()}
		}
		r.n = n
		return fn(r)
	}))
}

// durableSnapshot waits until the state a read transaction sees is
// durable (journal_sync.go): a commit is in force in bbolt before its
// journal record is synced, and what a reader returns (an entry, a claim's
// holder, a backup's checkpoint) must not be taken back by a crash.
func (s *boltStore) durableSnapshot(tx *bolt.Tx) error {
	if s.js == nil {
		return nil // bbolt synced every commit before it was in force
	}
	return s.js.dur.wait(uint64(tx.ID()))
}

// update runs a side-data write transaction.
func (s *boltStore) update(fn func(tx Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if h := s.halted.Load(); h != nil {
		return h
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op after Commit; also on a panic in fn
	if err := fn(sideTx{tx, s}); err != nil {
		return err
	}
	txid := uint64(tx.ID())
	if err := s.commitWrite(tx); err != nil {
		return err
	}
	if s.js != nil {
		// Side writes are not journaled: a checkpoint makes them durable.
		return s.syncCheckpoint(txid, false, true)
	}
	return nil
}

// commitWrite commits the write transaction tx (the caller holds wmu); a
// failed commit answers commitFailed's error.
func (s *boltStore) commitWrite(tx *bolt.Tx) error {
	txid := tx.ID() // -1 once the transaction is closed
	if err := s.commitTx(tx); err != nil {
		return s.commitFailed(txid, err)
	}
	return nil
}

// commitFailed is the error of a write transaction txid whose commit
// failed with err; the caller holds wmu. bbolt's commit writes the dirty
// pages, fdatasyncs, writes the meta page, fdatasyncs again; when any
// step fails it reloads its free pages from the newest meta page it can
// read, and begins every later transaction from that page. So a commit
// that failed before its meta page was written (a full disk, a failed
// first sync, a torn meta page, which fails its checksum) left bbolt as it
// was: err is returned, the batch's callers are answered ErrUnavailable,
// and writing goes on. But one whose meta page was written and whose
// second fdatasync failed is in force in bbolt although it may not be
// durable, and although the ledger, its callers told that it failed, did
// not take it into its head, key index and posting log: writing on would
// build on a commit that neither the callers nor perhaps the disk have.
// Nor would a later sync make it durable: Linux marks the pages whose
// write-back failed clean and reports the error once, so the next
// fdatasync can succeed without them, while the page cache may go on
// showing them until they are evicted. PostgreSQL has stopped (PANIC) on
// a failed flush of a data file for that reason since 2019 (release notes
// of 10.7 and 11.2, back-patched to 9.4: "panic instead of retrying after
// fsync() failure"; data_sync_retry, off by default:
// https://www.postgresql.org/docs/current/runtime-config-error-handling.html),
// and recovers from its WAL; this store has no redo log, so it halts:
// every later read and write (an append, a retry of one of the failed
// commit's appends, a lookup that would find it, side data, Check)
// answers the same *HaltedError. Reads stop too, because bbolt's
// snapshots include the failed commit: a retry would otherwise be
// answered "existing" from a record that may never reach the disk. What
// still answers is what the process holds in memory (Size, the latest
// checkpoint: the state before the commit) and writeTo, the copy of GET
// /v1/admin/backup, which reads the file as the page cache shows it: the
// failed commit included, or, where pages whose write-back failed were
// evicted since, older bytes, so the copy needs the full check like the
// file itself. Reopening in the same boot would read the page cache as
// well; the error tells the operator to drop it (reboot) and run the
// full check first. Which case it was is read from bbolt itself: a read
// transaction begun now, with no other writer in between (wmu), sees
// either the transaction before txid (bbolt as it was) or txid; anything
// else halts too.
func (s *boltStore) commitFailed(txid int, err error) error {
	seen, berr := s.lastTxid()
	if berr != nil {
		return err
	}
	if int(seen) == txid-1 {
		return err // bbolt as it was before the transaction
	}
	return s.halt(err)
}

// boltReader is the storeReader of a bbolt read transaction.
type boltReader struct {
	s  *boltStore
	tx *bolt.Tx
	n  int64
}

func (r boltReader) size() int64 { return r.n }

func (r boltReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	return hashReader{r.tx.Bucket(bucketHashes)}.ReadHashes(indexes)
}

func (r boltReader) entryIndex(id string) (int64, bool, error) {
	kr := newKeysReader(r.s, r.tx)
	return kr.id(id, r.n)
}

func (r boltReader) entryID(index int64) (string, error) {
	kr := newKeysReader(r.s, r.tx)
	return kr.entryID(index)
}

func (r boltReader) entry(index int64) (rawEntry, error) {
	key := u64(index)
	id, err := r.entryID(index)
	if err != nil {
		return rawEntry{}, err
	}
	e := rawEntry{id: id}
	if index >= r.s.v2from {
		e.blob = r.tx.Bucket(bucketBlobs).Get(key)
		return e, nil
	}
	e.leaf = r.tx.Bucket(bucketLeaves).Get(key)
	c := r.tx.Bucket(bucketDocs).Cursor()
	for k, v := c.Seek(key); k != nil && bytes.HasPrefix(k, key); k, v = c.Next() {
		e.docs = append(e.docs, namedDoc{string(k[docKeyPrefix:]), v})
	}
	return e, nil
}

func (r boltReader) checkpoint(size int64) ([]byte, bool, error) {
	v := r.tx.Bucket(bucketCheckpoints).Get(u64(size))
	return v, v != nil, nil
}

func (r boltReader) checkpointAbove(index int64) ([]byte, bool, error) {
	k, v := r.tx.Bucket(bucketCheckpoints).Cursor().Seek(u64(index + 1))
	return v, k != nil, nil
}

func (r boltReader) claim(space, key string) (int64, []byte, bool, error) {
	kr := newKeysReader(r.s, r.tx)
	index, fp, _, held, err := kr.claim(space, key, r.n)
	return index, fp, held, err
}

func (r boltReader) posting(index string, key []byte) (string, bool, error) {
	if len(key) == 0 {
		return "", false, nil
	}
	p, err := r.s.pendingFor(r.tx)
	if err != nil {
		return "", false, err
	}
	if id, ok := p.get(index, key); ok {
		return id, true, nil
	}
	b := r.tx.Bucket(bucketPostings).Bucket([]byte(index))
	if b == nil {
		return "", false, nil
	}
	v := b.Get(key)
	return string(v), v != nil, nil
}

func (r boltReader) scan(index string, prefix, after []byte, reverse bool, fn func(k []byte, id string) bool) error {
	p, err := r.s.pendingFor(r.tx)
	if err != nil {
		return err
	}
	scanPending(r.tx.Bucket(bucketPostings).Bucket([]byte(index)), p, index, prefix, after, reverse, fn)
	return nil
}

func (r boltReader) sideTx() Tx { return sideTx{r.tx, r.s} }

func (r boltReader) sequence(name string) (int64, error) {
	return (&boltView{s: r.s, tx: r.tx}).sequence(name)
}

// hashReader reads stored hashes from the hashes bucket of a transaction.
type hashReader struct{ b *bolt.Bucket }

func (r hashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		v := r.b.Get(u64(x))
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("ledger: stored hash %d: have %d bytes, want %d", x, len(v), tlog.HashSize)
		}
		copy(out[i][:], v)
	}
	return out, nil
}

// mapClosed turns bbolt's "database not open" into ErrClosed.
func mapClosed(err error) error {
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}
