package ledger

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

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

// fail returns a *CheckError.
func fail(index int64, format string, args ...any) error {
	return &CheckError{Index: index, What: fmt.Sprintf(format, args...)}
}

// Check opens the ledger file at path (or the PostgreSQL log a postgres://
// URL names) read-only (waiting at most
// DefaultOpenTimeout for the file lock; a running writer holds it, which is
// ErrUnavailable) and re-verifies everything in it against the log key
// logKey. It returns nil when all is well and *CheckError for the first
// inconsistency, in the order given in the package doc (# Invariants).
func Check(path string, logKey note.Verifier) error {
	if logKey == nil {
		return fmt.Errorf("ledger: check %s: nil log key: %w", path, ErrInvalid)
	}
	if isPostgresURL(path) {
		return checkPostgres(path, logKey)
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("ledger: check %s: %w", path, ErrNotFound)
		}
		return fmt.Errorf("ledger: check %s: %w", path, err)
	}
	if fi.IsDir() { // the wrong argument, not a damaged file
		return fmt.Errorf("ledger: check %s: a directory, not a ledger file: %w", path, ErrInvalid)
	}
	st, lf, err := openBoltStore(boltOpen{path: path, origin: logKey.Name(), readOnly: true, timeout: DefaultOpenTimeout, lenient: true})
	if err != nil {
		var ce *CheckError
		var co *CorruptError
		switch {
		case errors.As(err, &ce):
			return ce
		case errors.Is(err, ErrUnavailable):
			return fmt.Errorf("ledger: check %s: file locked by a writer: %w", path, err)
		case errors.As(err, &co):
			return &CheckError{Index: co.Index, What: co.Reason}
		}
		return err
	}
	defer st.close()
	cd, err := newCodec(lf.dicts)
	if err != nil {
		return &CheckError{Index: -1, What: "dictionaries: " + err.Error()}
	}
	defer cd.close()
	l := &Ledger{store: st, codec: cd, path: path, verifier: logKey}
	return l.check("")
}

// Check runs the checks of the package-level Check on the open ledger, in one
// read transaction (a consistent snapshot; appends continue meanwhile).
// Signatures are verified with Options.Verifier, or with the Signer.
func (l *Ledger) Check() error {
	if l.verifier == nil {
		return fmt.Errorf("ledger: check: read-only ledger opened without Options.Verifier: %w", ErrInvalid)
	}
	if l.closed.Load() {
		return ErrClosed
	}
	return l.check(l.origin)
}

// check runs the store's check with the read guard: damage that makes the
// store panic is an inconsistency Check reports.
func (l *Ledger) check(origin string) (err error) {
	c := newLogChecker(l, origin)
	defer c.stop()
	defer func() {
		var co *CorruptError
		if errors.As(err, &co) && co.Err == nil {
			err = &CheckError{Index: co.Index, What: "the file structure is damaged: " + co.Reason}
		}
	}()
	defer l.readGuard(&err, debug.SetPanicOnFault(true))
	return mapClosed(l.store.check(c))
}

// logChecker verifies the log part of Check, whatever the store: it takes
// the entries in index order with the stored hashes each one completed and
// the stored checkpoints at the tree size they name, and checks, streaming
// with bounded memory, that every leaf's record hash and every interior
// hash the right frontier computes equal the stored ones, that every
// checkpoint is signed by the log key and carries the root of the leaves
// before it (so all checkpoints are consistent with each other), and that
// each entry's ID maps back to its index. Decoding, hashing and signature
// checks run on GOMAXPROCS workers in chunks; results are compared in
// order, so the error returned is the first of the stream.
type logChecker struct {
	l      *Ledger
	key    note.Verifier
	origin string // the ledger's origin, or "" for the file's
	size   int64  // the size the store says the log has

	fr       frontier
	pending  []checkEvent
	leaves   int                   // leaf events pending
	inflight chan chan *checkChunk // chunks in dispatch order
	work     chan *checkChunk
	wg       sync.WaitGroup
	err      error
	lastCP   int64 // size of the last checkpoint compared, -1 before any
	spare    []checkEvent

	// lookupIDs, set by the store before the first leaf, gives a worker its
	// own reader of the ids index (a snapshot that holds every entry of the
	// checked one: entries are never changed once written), so that the
	// random lookups run in parallel with the walk.
	lookupIDs func() (get func(id []byte) (index []byte, err error), done func())
}

// checkEvent is one step of the stream: a leaf (with what the store holds
// for it) or a checkpoint.
type checkEvent struct {
	index  int64
	entry  rawEntry
	stored []tlog.Hash // the stored hashes from StoredHashIndex(0, index) on, as many as the leaf completes
	missed string      // why a stored hash is missing, if one is
	id     []byte      // the entry's ID as stored (nil: none)
	idBack []byte      // what the ids index holds for the entry's ID (looked up by a worker)
	keyed  bool        // the ID is a keys record's (schema 3): its key is the index, no lookup
	note   []byte      // a checkpoint's note
	cp     bool

	hash tlog.Hash  // computed by a worker: the leaf's record hash
	ckpt Checkpoint // or the checkpoint, verified
	err  error
}

type checkChunk struct {
	events []checkEvent
	done   chan *checkChunk
}

// checkChunkLeaves is how many leaves a chunk holds; with two chunks per
// worker in flight it bounds the memory of a check (the events' slices
// point into the store's snapshot, a leaf is decoded one at a time).
const checkChunkLeaves = 512

func newLogChecker(l *Ledger, origin string) *logChecker {
	c := &logChecker{l: l, key: l.verifier, origin: origin, lastCP: -1}
	n := runtime.GOMAXPROCS(0)
	c.work = make(chan *checkChunk)
	c.inflight = make(chan chan *checkChunk, 2*n)
	for range n {
		c.wg.Go(c.worker)
	}
	return c
}

// stop ends the workers; the chunks still in flight are drained.
func (c *logChecker) stop() {
	for len(c.inflight) > 0 {
		<-<-c.inflight
	}
	close(c.work)
	c.wg.Wait()
}

// worker decodes and hashes leaves, looks their IDs up and verifies
// checkpoint signatures.
func (c *logChecker) worker() {
	w := &checkWorker{c: c}
	defer w.close()
	for ch := range c.work {
		w.chunk(ch)
		ch.done <- ch
	}
}

type checkWorker struct {
	c     *logChecker
	lh    leafHasher
	getID func([]byte) ([]byte, error)
	done  func()
}

func (w *checkWorker) close() {
	if w.done != nil {
		w.done()
	}
}

// chunk works through one chunk. A panic or memory fault (a damaged file
// read through the store's memory map) fails the event being worked on;
// the comparer reports it in order.
func (w *checkWorker) chunk(ch *checkChunk) {
	i := 0
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil && i < len(ch.events) {
			ev := &ch.events[i]
			ev.err = fail(ev.index, "the file structure is damaged: %s", panicText(r))
		}
	}()
	c := w.c
	if w.getID == nil && c.lookupIDs != nil {
		w.getID, w.done = c.lookupIDs()
	}
	for ; i < len(ch.events); i++ {
		ev := &ch.events[i]
		if ev.err != nil {
			continue // a problem the store's walk found
		}
		if ev.cp {
			ev.ckpt, ev.err = c.verifyCheckpoint(ev.index, ev.note)
			continue
		}
		if w.getID != nil && len(ev.id) > 0 && !ev.keyed {
			var err error
			if ev.idBack, err = w.getID(ev.id); err != nil {
				ev.err = err
				continue
			}
		}
		if ev.entry.blob == nil {
			if len(ev.entry.leaf) == 0 {
				ev.err = fail(ev.index, "leaf %d is empty", ev.index)
			} else {
				ev.hash = tlog.RecordHash(ev.entry.leaf)
			}
			continue
		}
		h, err := c.l.codec.recordHash(&w.lh, ev.entry.blob)
		if err != nil {
			ev.err = fail(ev.index, "leaf %d does not decode: %v", ev.index, err)
			continue
		}
		ev.hash = h
	}
}

// verifyCheckpoint checks a stored checkpoint's signature, origin and size.
func (c *logChecker) verifyCheckpoint(size int64, msg []byte) (Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(c.key))
	if err != nil {
		return Checkpoint{}, fail(size, "checkpoint %d: signature by log key %s+%08x does not verify: %v", size, c.key.Name(), c.key.KeyHash(), err)
	}
	cp, err := parseCheckpointText(n.Text)
	if err != nil {
		return Checkpoint{}, fail(size, "checkpoint %d: %v", size, err)
	}
	if cp.Origin != c.key.Name() {
		return Checkpoint{}, fail(size, "checkpoint %d: origin %q is not the log's %q", size, cp.Origin, c.key.Name())
	}
	if cp.Size != size {
		return Checkpoint{}, fail(size, "checkpoint stored under size %d says size %d", size, cp.Size)
	}
	return cp, nil
}

// leaf adds entry ev.index to the stream. The store calls it for 0, 1, …,
// with the checkpoint of size s (if stored) before leaf s.
func (c *logChecker) leaf(ev checkEvent) error {
	c.pending = append(c.pending, ev)
	if c.leaves++; c.leaves >= checkChunkLeaves {
		return c.flush()
	}
	return c.err
}

// checkpoint adds the stored checkpoint of size size to the stream.
func (c *logChecker) checkpoint(size int64, msg []byte) error {
	c.pending = append(c.pending, checkEvent{index: size, note: msg, cp: true})
	return c.err
}

// flush dispatches the pending events as a chunk, comparing the oldest
// chunk in flight first when the pipeline is full.
func (c *logChecker) flush() error {
	if len(c.pending) == 0 || c.err != nil {
		return c.err
	}
	if len(c.inflight) == cap(c.inflight) {
		c.compare(<-<-c.inflight)
	}
	ch := &checkChunk{events: c.pending, done: make(chan *checkChunk, 1)}
	c.pending, c.leaves = c.spare, 0
	c.spare = nil
	if c.pending == nil {
		c.pending = make([]checkEvent, 0, checkChunkLeaves+8)
	}
	c.work <- ch
	c.inflight <- ch.done
	return c.err
}

// finish compares everything still in flight and returns the first error
// of the stream.
func (c *logChecker) finish() error {
	if err := c.flush(); err != nil {
		return err
	}
	for len(c.inflight) > 0 {
		c.compare(<-<-c.inflight)
	}
	if c.err != nil {
		return c.err
	}
	switch {
	case c.lastCP < 0:
		return fail(-1, "no checkpoint stored")
	case c.lastCP != c.size:
		return fail(c.size, "latest checkpoint has size %d, meta size is %d", c.lastCP, c.size)
	}
	return nil
}

// compare checks a chunk's results in order, keeping the first error; its
// events slice is then reused.
func (c *logChecker) compare(ch *checkChunk) {
	defer func() {
		clear(ch.events)
		c.spare = ch.events[:0]
	}()
	var out [64]tlog.Hash
	for i := range ch.events {
		if c.err != nil {
			return
		}
		ev := &ch.events[i]
		if ev.err != nil {
			c.err = ev.err
			return
		}
		if ev.cp {
			c.err = c.compareCheckpoint(ev)
			continue
		}
		i := ev.index
		want := c.fr.append(ev.hash, out[:0])
		base := tlog.StoredHashIndex(0, i)
		for j, h := range want {
			s := base + int64(j)
			if j >= len(ev.stored) {
				c.err = fail(i, "stored hash %d is missing: %s", s, ev.missed)
				return
			}
			if ev.stored[j] == h {
				continue
			}
			if j == 0 {
				c.err = fail(i, "leaf %d: its record hash SHA-256(0x00‖leaf) differs from stored hash %d (leaf or hash altered)", i, s)
				return
			}
			level, n := tlog.SplitStoredHashIndex(s)
			c.err = fail(i, "stored hash %d (level %d, node %d, over leaves %d–%d) differs from the hash recomputed from the leaves",
				s, level, n, n<<level, (n+1)<<level-1)
			return
		}
		switch id := ev.id; {
		case len(id) == 0:
			c.err = fail(i, "entry %d has no ID", i)
		case ev.keyed:
		case ev.idBack == nil:
			c.err = fail(i, "entry %d: ID %q is missing from the ids index", i, id)
		case string(ev.idBack) != string(u64(i)):
			at, _ := parseU64(ev.idBack)
			c.err = fail(i, "entry %d: ids index maps its ID %q to %d", i, id, at)
		}
	}
}

// compareCheckpoint checks a verified checkpoint against the tree of the
// leaves before it.
func (c *logChecker) compareCheckpoint(ev *checkEvent) error {
	size := ev.index
	if size > c.size {
		return fail(size, "checkpoint %d is beyond meta size %d", size, c.size)
	}
	if size != c.fr.size {
		return fail(size, "checkpoint %d reached with %d leaves", size, c.fr.size)
	}
	if root := c.fr.root(); root != ev.ckpt.Root {
		return fail(size, "checkpoint %d: signed root %s is not the tree hash %s of the stored leaves", size, ev.ckpt.Root, root)
	}
	c.lastCP = size
	return nil
}
