package ledger

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// journalOn reports whether a writable store keeps a journal: where bbolt
// can map the file far beyond its size (64-bit, and not Windows, which
// grows the file to the mapping) and its lock is flock (flockLocks).
// Elsewhere bbolt syncs every commit itself, twice, as before the journal.
func journalOn() bool { return strconv.IntSize == 64 && runtime.GOOS != "windows" && flockLocks }

// journalMapSize is the initial mapping of a journaled file: a held read
// transaction (journal.go) blocks a commit that must remap the file, so
// the file is mapped far ahead (address space only; bbolt neither grows
// the file to it nor touches it). A commit that would reach it anyway
// first makes a checkpoint and lets go of every held transaction
// (journaledCommit). 64 GiB: a ledger of a million records is ~4 GB,
// and kernels with 39-bit addresses (512 GiB for a process, some arm64
// builds) map it where they would refuse a terabyte.
const journalMapSize = 1 << 36

// checkpointEvery is the least time between two checkpoints the commits
// start. Until a checkpoint is durable its read transaction keeps every
// page the commits since free from reuse, and bbolt sorts all of them into
// the freelist it writes with each commit: with a checkpoint only at each
// switch of journal files (32 MB), that sorting took the committer from
// ~22 to ~70 µs a record; every 20-100 ms it is back to ~40 (bench/HISTORY.md,
// stop 48). A checkpoint's fdatasync runs beside the commits.
const checkpointEvery = 50 * time.Millisecond

// remapMargin is what a commit is taken to grow the file by beyond four
// times its journal record (its pages, branch pages, the freelist).
const remapMargin = 64 << 20

// mapSizeFor is a lower bound of the mapping bbolt makes for a file of n
// bytes (its mmapSize: powers of two from 32 KB to 1 GB, then whole GBs).
func mapSizeFor(n int64) int64 {
	for i := uint(15); i <= 30; i++ {
		if n <= 1<<i {
			return 1 << i
		}
	}
	const gb = 1 << 30
	return (n + gb - 1) / gb * gb
}

// jstate is the journal side of a writable boltStore, used under wmu.
type jstate struct {
	jr       *journal
	metaF    *os.File // reads meta pages back (bbolt keeps its handle to itself)
	pageSize int
	// held are read transactions keeping checkpointed states' pages from
	// reuse, oldest first; the last is at the newest checkpoint.
	held []*bolt.Tx
	// running is the background checkpoint's answer (nil: none runs);
	// runTx and runMeta are its transaction and meta page.
	running chan error
	runTx   uint64
	runMeta []byte
	// queued is the txid of a checkpoint record queued for the next
	// journal write (0: none), queuedMeta its meta page.
	queued     uint64
	queuedMeta []byte
	mapEst     int64 // a lower bound of bbolt's mapping
	buf        []byte
	// every is the least time between the starts of two checkpoints
	// after commits (a switch of files starts one at once); lastStart is
	// the last start.
	every     time.Duration
	lastStart time.Time
	// sent are checkpoint records written with a batch not yet durable,
	// oldest first (settleSent).
	sent []sentCheckpoint
	// lastBatch is the newest batch written to the journal.
	lastBatch uint64
	y         *jsyncer
	dur       *durability
}

// sentCheckpoint is a checkpoint record written with the batch of
// transaction with: durable once that batch is.
type sentCheckpoint struct {
	txid, with uint64
	meta       []byte
}

// openJournaled opens a writable, existing (or just created) file with a
// journal: it puts the newest checkpoint's meta page back (a power cut may
// have left later, half-written commits in the file), opens bbolt, replays
// the journal's batches after the checkpoint, and runs load. Then it syncs
// the file and starts a new turn of the journal with a checkpoint of the
// result.
//
// All of it happens under one exclusive lock: the journal is read, the meta
// page put back and the pages checked on a descriptor locked first, and
// bbolt is handed that descriptor (Options.OpenFile), whose flock it then
// takes again without waiting. A writer that closed the file in between
// would otherwise leave a journal read before its last commits, and an
// older checkpoint's meta page written over them.
func openJournaled(o boltOpen, bo *bolt.Options) (*boltStore, loadedFile, error) {
	var lf loadedFile
	f, err := lockForOpen(o.path, true, o.timeout)
	if err != nil {
		return nil, lf, err
	}
	handed := false
	defer func() {
		if !handed {
			f.Close()
		}
	}()
	st, err := readJournal(o.path)
	if err != nil {
		return nil, lf, err
	}
	if st.found {
		if err := restoreMeta(f, o.path, st.ckptMeta, st.clean); err != nil {
			return nil, lf, err
		}
	}
	if err := checkStructureOf(f, o.path, !o.lenient && !o.fullWalk); err != nil {
		return nil, lf, err
	}
	bo.NoSync, bo.NoGrowSync = true, true
	if bo.InitialMmapSize == 0 {
		ahead := int64(journalMapSize) // journalOn: int is 64 bits
		bo.InitialMmapSize = int(ahead)
	}
	bo.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if name != o.path || handed {
			return os.OpenFile(name, flag, perm)
		}
		handed = true
		return f, nil
	}
	db, err := openBoltDB(o.path, bo)
	if err != nil {
		return nil, lf, err
	}
	s := &boltStore{db: db, path: o.path, flushAt: postLogFlush, commitTx: (*bolt.Tx).Commit}
	s.pend.Store(&pendingPostings{})
	fail := func(err error) (*boltStore, loadedFile, error) {
		s.js.release(0)
		if s.js.metaF != nil {
			s.js.metaF.Close()
		}
		db.Close()
		return nil, lf, err
	}
	s.js = &jstate{pageSize: db.Info().PageSize, every: checkpointEvery, lastStart: time.Now()}
	if s.js.metaF, err = os.Open(o.path); err != nil {
		return fail(fmt.Errorf("ledger: open %s: %w", o.path, err))
	}
	fi, err := s.js.metaF.Stat()
	if err != nil {
		return fail(fmt.Errorf("ledger: open %s: %w", o.path, err))
	}
	s.js.mapEst = mapSizeFor(max(fi.Size(), int64(bo.InitialMmapSize)))
	// Hold the checkpointed state until the new turn is durable: replay
	// and load commit on top of it, and a power cut before the turn puts
	// it back.
	rtx, err := db.Begin(false)
	if err != nil {
		return fail(fmt.Errorf("ledger: open %s: %w", o.path, err))
	}
	s.js.held = append(s.js.held, rtx)
	if st.found && !st.clean && uint64(rtx.ID()) != st.ckpt.txid {
		return fail(journalCorrupt(o.path, "the file is at transaction %d after restoring checkpoint %d", rtx.ID(), st.ckpt.txid))
	}
	if err := s.replay(st.batches); err != nil {
		return fail(err)
	}
	if lf, err = s.load(o); err != nil {
		return fail(err)
	}
	txid, err := s.lastTxid()
	if err != nil {
		return fail(err)
	}
	if err := db.Sync(); err != nil {
		return fail(fmt.Errorf("ledger: open %s: %w: %w", o.path, ErrUnavailable, err))
	}
	m, err := readMeta(s.js.metaF, s.js.pageSize, txid)
	if err != nil {
		return fail(journalCorrupt(o.path, "%v", err))
	}
	if s.js.jr, err = openJournal(o.path, st, txid, m); err != nil {
		return fail(err)
	}
	if err := s.js.hold(db, txid); err != nil {
		s.js.jr.close()
		return fail(err)
	}
	s.js.release(txid)
	s.js.dur = newDurability(txid)
	jr := s.js.jr
	s.js.y = startSyncer(jr.syncFile, s.js.dur, func(f *os.File, err error) { s.halt(fmt.Errorf("ledger: journal %s: %w", f.Name(), err)) })
	return s, lf, nil
}

// replay commits the journal's batches, each as the transaction it was,
// reading each one's operations only when it is its turn (journalReader),
// in one buffer: bbolt keeps the slices a Put is given until its
// transaction commits, and the next batch is read after that.
func (s *boltStore) replay(batches []jrecord) error {
	jr := &journalReader{path: s.path}
	defer jr.close()
	for _, r := range batches {
		ops, err := jr.payload(r)
		if err != nil {
			return err
		}
		tx, err := s.db.Begin(true)
		if err != nil {
			return fmt.Errorf("ledger: open %s: replaying the journal: %w", s.path, err)
		}
		if uint64(tx.ID()) != r.txid {
			tx.Rollback()
			return journalCorrupt(s.path, "batch %d replays as transaction %d", r.txid, tx.ID())
		}
		if err := replayOps(tx, ops); err != nil {
			tx.Rollback()
			return journalCorrupt(s.path, "batch %d: %v", r.txid, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("ledger: open %s: replaying the journal: %w: %w", s.path, ErrUnavailable, err)
		}
	}
	return nil
}

// lastTxid is the transaction the file is at.
func (s *boltStore) lastTxid() (uint64, error) {
	rtx, err := s.db.Begin(false)
	if err != nil {
		return 0, mapClosed(err)
	}
	id := rtx.ID()
	_ = rtx.Rollback()
	return uint64(id), nil
}

// hold begins a read transaction at txid (no writer may run: the caller
// holds wmu or is Open).
func (js *jstate) hold(db *bolt.DB, txid uint64) error {
	rtx, err := db.Begin(false)
	if err != nil {
		return mapClosed(err)
	}
	if uint64(rtx.ID()) != txid {
		rtx.Rollback()
		return fmt.Errorf("ledger: a checkpoint of transaction %d began at %d", txid, rtx.ID())
	}
	js.held = append(js.held, rtx)
	return nil
}

// release ends the held transactions before txid (all of them for 0).
func (js *jstate) release(txid uint64) {
	keep := js.held[:0]
	for _, rtx := range js.held {
		if txid != 0 && uint64(rtx.ID()) >= txid {
			keep = append(keep, rtx)
			continue
		}
		_ = rtx.Rollback()
	}
	clear(js.held[len(keep):])
	js.held = keep
}

// halt stops the store for err, a failed sync or write of a commit in
// force in bbolt (the caller holds wmu).
func (s *boltStore) halt(err error) error {
	s.halted.CompareAndSwap(nil, &HaltedError{Path: s.path, Err: err})
	h := s.halted.Load()
	if s.js != nil && s.js.dur != nil {
		s.js.dur.fail(h)
	}
	return h
}

// startCheckpoint syncs the bbolt file in the background after the commit
// of txid, holding that state until a later checkpoint is durable.
func (s *boltStore) startCheckpoint(txid uint64) error {
	js := s.js
	m, err := readMeta(js.metaF, js.pageSize, txid)
	if err != nil {
		return s.halt(err)
	}
	if err := js.hold(s.db, txid); err != nil {
		return s.halt(err)
	}
	ch := make(chan error, 1)
	db := s.db
	go func() { ch <- db.Sync() }()
	js.running, js.runTx, js.runMeta = ch, txid, m
	js.lastStart = time.Now()
	return nil
}

// collect takes the background checkpoint's answer (waiting for it when
// wait) and queues its record for the next journal write.
func (s *boltStore) collect(wait bool) error {
	js := s.js
	if js.running == nil {
		return nil
	}
	var err error
	if wait {
		err = <-js.running
	} else {
		select {
		case err = <-js.running:
		default:
			return nil
		}
	}
	js.running = nil
	if err != nil {
		return s.halt(fmt.Errorf("checkpoint of transaction %d: %w", js.runTx, err))
	}
	js.jr.queueCheckpoint(js.runTx, js.runMeta, false)
	js.queued, js.queuedMeta = js.runTx, js.runMeta
	return nil
}

// settleSent notes the checkpoints sent with batches now durable: the
// newest of them is the journal's durable checkpoint, and the states
// before it are free.
func (js *jstate) settleSent() {
	d := js.dur.tx.Load()
	n := 0
	for n < len(js.sent) && js.sent[n].with <= d {
		n++
	}
	if n == 0 {
		return
	}
	c := js.sent[n-1]
	js.jr.durable(c.txid, c.meta)
	js.release(c.txid)
	js.sent = append(js.sent[:0], js.sent[n:]...)
}

// flushed is called after the journal's queued records were written and
// the active file synced: every batch written is durable, and so are the
// checkpoints sent and the one queued, of txid (meta; 0: none), the
// newest; the states before it are free. A checkpoint made synchronously
// is of the newest transaction, perhaps a side write's.
func (js *jstate) flushed(txid uint64, meta []byte) {
	js.dur.advance(max(txid, js.lastBatch))
	js.settleSent()
	if txid != 0 {
		js.jr.durable(txid, meta)
		js.release(txid)
	}
}

// syncJournal makes every batch written durable now (before the active
// file gives its turn to the other: the syncer syncs only the newest
// file), with any checkpoint record queued.
func (s *boltStore) syncJournal() error {
	js := s.js
	txid, m := js.queued, js.queuedMeta
	if err := js.jr.flush(); err != nil {
		return s.halt(err)
	}
	js.queued, js.queuedMeta = 0, nil
	js.flushed(txid, m)
	return nil
}

// syncCheckpoint makes the state txid (committed, nothing after it) a
// durable checkpoint now: it syncs the file, then writes the checkpoint's
// record to the journal and syncs it; hold keeps a read transaction at it.
func (s *boltStore) syncCheckpoint(txid uint64, clean, hold bool) error {
	js := s.js
	if err := s.collect(true); err != nil {
		return err
	}
	m, err := readMeta(js.metaF, js.pageSize, txid)
	if err != nil {
		return s.halt(err)
	}
	if err := s.db.Sync(); err != nil {
		return s.halt(fmt.Errorf("checkpoint of transaction %d: %w", txid, err))
	}
	js.jr.queueCheckpoint(txid, m, clean)
	js.queued, js.queuedMeta = 0, nil
	if err := js.jr.flush(); err != nil {
		return s.halt(err)
	}
	js.flushed(txid, m)
	if hold {
		if err := js.hold(s.db, txid); err != nil {
			return s.halt(err)
		}
		js.release(txid)
	} else {
		js.release(0)
	}
	return nil
}

// journaledCommit commits tx (its writes recorded in log) with one
// fdatasync, of the journal, and returns the time the journal's write and
// sync took; the caller holds wmu. A failure before the
// commit is in force in bbolt (the journal cannot grow, bbolt's own
// commit fails before its meta page) changes nothing and is returned; one
// after it (the journal's write or sync) halts the store: the commit is
// in bbolt's pages, perhaps in the journal, and not acknowledged.
func (s *boltStore) journaledCommit(tx *bolt.Tx, log *opLog) (jio time.Duration, err error) {
	js := s.js
	txid := uint64(tx.ID())
	n := len(log.b)
	js.settleSent()
	if err := s.collect(false); err != nil {
		return jio, err
	}
	switched := false
	if js.jr.full(n) {
		// The syncer syncs the newest file only: what this one holds is
		// made durable before the other takes its turn (with a
		// checkpoint that finished meanwhile).
		if err := s.syncJournal(); err != nil {
			return jio, err
		}
		if !js.jr.otherFree() {
			// A checkpoint covering every batch of the other file must
			// be durable before it is written over: the one started at
			// the last switch, or, should it not cover them (that
			// switch's commit failed), one made now.
			if err := s.collect(true); err != nil {
				return jio, err
			}
			if js.queued != 0 {
				if err := s.syncJournal(); err != nil {
					return jio, err
				}
			}
			if !js.jr.otherFree() {
				if err := s.syncCheckpoint(txid-1, false, true); err != nil {
					return jio, err
				}
			}
		}
		js.jr.switchFiles()
		switched = true
	}
	remap := tx.Size()+4*int64(n)+remapMargin >= js.mapEst
	if remap {
		// This commit may have to map the file anew, which waits for
		// every read transaction: checkpoint the state before it and
		// hold nothing across it.
		if err := s.syncCheckpoint(txid-1, false, false); err != nil {
			return jio, err
		}
	}
	if err := js.jr.ensure(n); err != nil {
		return jio, err
	}
	if err := s.commitWrite(tx); err != nil {
		return jio, err
	}
	start := time.Now()
	err = js.jr.appendBatch(txid, log.b)
	jio = time.Since(start)
	if err != nil {
		return jio, s.halt(err)
	}
	if js.queued != 0 {
		js.sent = append(js.sent, sentCheckpoint{js.queued, txid, js.queuedMeta})
		js.queued, js.queuedMeta = 0, nil
	}
	js.lastBatch = txid
	js.y.wrote(js.jr.f[js.jr.act], txid)
	js.buf = log.b[:0]
	if remap {
		rtx, err := s.db.Begin(false)
		if err != nil {
			return jio, s.halt(err)
		}
		js.mapEst = max(js.mapEst, mapSizeFor(rtx.Size()+int64(js.pageSize)))
		_ = rtx.Rollback()
	}
	if switched || remap || len(js.held) == 0 || (js.running == nil && time.Since(js.lastStart) >= js.every) {
		if err := s.collect(true); err != nil {
			return jio, err
		}
		return jio, s.startCheckpoint(txid)
	}
	return jio, nil
}

// closeJournal makes the last commit a clean checkpoint and closes the
// journal (the caller holds wmu).
func (s *boltStore) closeJournal() error {
	js := s.js
	var err error
	if s.halted.Load() == nil {
		var txid uint64
		if txid, err = s.lastTxid(); err == nil {
			err = s.syncCheckpoint(txid, true, false) // it waits for a running checkpoint
		}
	}
	if js.running != nil { // halted, or no clean checkpoint: the sync must not run into db.Close
		<-js.running
		js.running = nil
	}
	js.y.stop()
	js.release(0)
	if cerr := js.jr.close(); err == nil {
		err = cerr
	}
	if cerr := js.metaF.Close(); err == nil {
		err = cerr
	}
	return err
}
