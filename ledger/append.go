package ledger

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"time"

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

// Append is one entry to append, with the claims it must take first. The
// entry is either prebuilt (Entry) or built in the committer (Build).
type Append struct {
	// Claims are checked in the order given; the first one already held
	// decides: an equal fingerprint answers Existing, a different one
	// *ClaimConflictError. All free claims are taken by the new entry.
	Claims []Claim
	// Entry is the prebuilt entry: everything that does not depend on the
	// log position. Append validates it, hashes its leaf and encodes and
	// compresses it in the caller's goroutine, so that the committer only
	// assigns the index, runs Hook, writes and hashes. Its slices must not
	// change until Append returns.
	Entry *Entry
	// Hook, optional, runs in the committer once the claims were found
	// free, with the entry's index and a small transactional view: gap-free
	// sequences, declared side values, side writes and byte splices into
	// the prebuilt documents (see Hook). It runs while every other append
	// waits, so it must be cheap (a comparison, a splice); it must not call
	// Append or Update (deadlock). An error fails only this append; nothing
	// of it is written and its sequence numbers are not used.
	Hook func(h *Hook) error
	// Reads are the side values Hook may Get, and Sequences the sequences
	// it may draw from: declared up front so that a SQL store loads them in
	// the commit's first round trip. Anything else is ErrInvalid.
	Reads     []SideKey
	Sequences []string
	// Taken, optional, is called once in the caller's goroutine as soon as
	// the committer has taken the append, before its commit: appends
	// without Order are decided in the order they are taken. A caller that assigns numbers
	// optimistically (Hook.Sequence) lets the next append of the same
	// series go only once Taken was called for this one, so that the
	// committer sees them in number order and the hook's comparison holds.
	// It is not called when Append returns before that (invalid append,
	// ctx done, ledger closed).
	Taken func()
	// Order, optional (> 0), orders the appends of one batch: those that
	// set it are planned in ascending Order, in the positions of the batch
	// such appends hold (the others keep theirs). A caller that predicts
	// the number its Hook will draw from a sequence sets Order to the
	// prediction, so that appends racing each other to the committer draw
	// their numbers in the predicted order whenever they share a batch.
	// Order-1 is taken as the log index the append expects: one that
	// arrives while an append of a lower Order is still on its way (it
	// would take that one's index) waits for the next batch, once; or,
	// with Pending, as long as Pending says a predecessor is coming, up
	// to MaxHold.
	Order int64
	// Pending, optional with Order, reports whether the caller still has
	// an append of the given Order on its way to the ledger (ordered, not
	// yet handed over, not abandoned). The committer asks about the Orders
	// missing before an append (Order-1 beyond the index it would get),
	// except those it has already taken, and holds the append while one of
	// them is pending, at most MaxHold for one missing position: then the
	// appends behind it go without it. Holding changes when an append is
	// planned, never how: it is about keeping predictions right, not
	// about what is written. Pending runs in the committer: it must be
	// quick and must not call the ledger.
	Pending func(order int64) bool
	// Prepared, instead of Entry: the entry Ledger.Prepare made ready
	// ahead of the append, for a caller that decides only then whether to
	// append it.
	Prepared *Prepared
	// Build, the older form (used when Entry is nil), builds the entry
	// inside the committer with the index it will get, after every claim
	// was found free (in the committed data and among the earlier appends
	// of the batch). Everything it does is serial time of the committer:
	// prefer Entry and Hook. It must be quick, must not call Append or
	// Update (deadlock) and must be deterministic for a given index. An
	// error (or a panic) from Build fails only this append. The slices of
	// the returned Entry must not change until Append returns.
	Build func(index int64) (Entry, error)
}

// SideKey names a side value: a key in a caller bucket.
type SideKey struct {
	Bucket string
	Key    []byte
}

// Entry is an entry: the leaf for the Merkle log and what is stored with it
// in the same transaction.
type Entry struct {
	ID       string            // unique entry id; ErrDuplicate if already present
	Leaf     []byte            // the exact bytes appended to the Merkle log; non-empty
	Docs     map[string][]byte // named documents stored with the entry
	Postings []Posting         // secondary index entries → this entry's ID
	Puts     []Put             // other writes in the same transaction (outbox events, state pointers…)
}

// Posting is a secondary index entry: Key in index Index maps to the entry's
// ID. Keys are unique within an index (ErrDuplicate otherwise).
type Posting struct {
	Index string
	Key   []byte
	// AppendIndex appends the entry's log index (8 bytes, big-endian) to
	// Key when the entry is written, so that a prebuilt entry can post a
	// key that orders by log position (an account's events).
	AppendIndex bool
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
	a      Append
	prep   *prepared // the prebuilt entry, ready to write; nil for Build
	done   chan result
	held   bool      // held over from an earlier batch (holdAhead)
	heldAt time.Time // when first held
}

// MaxHold bounds how long the committer holds appends for a missing
// predecessor that Append.Pending says is coming: a slow caller delays the
// appends ordered after it by at most this much, then they go without it.
const MaxHold = 10 * time.Millisecond

type result struct {
	appended Appended
	err      error
	// ownFault: the error is the append's own (Build or Hook failed, invalid
	// entry) and stays true whatever happens to the batch's commit.
	ownFault bool
}

// prepared is an entry validated, hashed and encoded: what the committer
// writes.
type prepared struct {
	id       string
	leaf     []byte
	leafHash tlog.Hash
	docs     map[string][]byte
	enc      encodedEntry
	postings []Posting
	puts     []Put
}

// Append appends one entry to the log, or answers from the claims.
//
// The append is handed to the committer goroutine, which groups everything
// queued (up to Options.MaxBatch) into one write transaction with one new
// signed checkpoint, and answers each caller only after that transaction
// was committed and fsynced. Errors: *ClaimConflictError; ErrClosed;
// ErrReadOnly; ErrInvalid (malformed Append or Entry); ErrDuplicate; Build's
// or Hook's own error (wrapped); ErrUnavailable when the commit, the fsync
// or the checkpoint signature failed (nothing of the batch was written,
// but for a *HaltedError among them: a sync that failed after bbolt had
// taken the batch, which stops the ledger);
// *CorruptError when the file turned out damaged (writing stops). If ctx
// ends before the committer took the append, Append returns ctx.Err() and
// nothing is written; once taken, Append waits for the commit and returns
// its true outcome, so ctx.Err() always means "not written".
func (l *Ledger) Append(ctx context.Context, a Append) (Appended, error) {
	if l.reqs == nil {
		return Appended{}, ErrReadOnly
	}
	if err := validateAppend(a); err != nil {
		return Appended{}, err
	}
	if a.Prepared != nil && a.Prepared.l != l {
		return Appended{}, fmt.Errorf("ledger: append of an entry prepared by another ledger: %w", ErrInvalid)
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
	var prep *prepared
	if a.Prepared != nil {
		prep = a.Prepared.p
	} else if a.Entry != nil {
		// Everything position-independent happens here, in the caller's
		// goroutine, in parallel with other callers and the committer.
		p, err := l.prepare(*a.Entry)
		if err != nil {
			return Appended{}, err
		}
		prep = p
	}
	r, _ := l.free.Get().(*request)
	if r == nil {
		r = &request{done: make(chan result, 1)}
	}
	r.a, r.prep = a, prep
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		l.release(r)
		return Appended{}, ctx.Err()
	case <-l.closing:
		l.release(r)
		return Appended{}, ErrClosed
	}
	if a.Taken != nil {
		a.Taken()
	}
	res := <-r.done
	// The committer is done with r once it answered (it keeps no
	// reference to an answered request).
	l.release(r)
	return res.appended, res.err
}

// release returns an answered (or never sent) request to the pool.
func (l *Ledger) release(r *request) {
	*r = request{done: r.done}
	l.free.Put(r)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Prepared is an entry made ready ahead of its Append (Ledger.Prepare).
type Prepared struct {
	l *Ledger
	p *prepared
	v prepared // what p points to (one allocation for both)
}

// Prepare does ahead what Append does first with Append.Entry, in the
// caller's goroutine: it validates the entry, hashes its leaf, encodes and
// compresses it. A caller whose entry may go stale while it is being built
// prepares it, checks, then appends it with Append.Prepared (of the same
// ledger). The entry's slices must not change until that Append returns.
func (l *Ledger) Prepare(e Entry) (*Prepared, error) {
	pr := &Prepared{l: l}
	if err := l.prepareInto(&pr.v, e); err != nil {
		return nil, err
	}
	pr.p = &pr.v
	return pr, nil
}

// validateAppend checks what can be checked before the append is queued.
func validateAppend(a Append) error {
	if n := btoi(a.Build != nil) + btoi(a.Entry != nil) + btoi(a.Prepared != nil); n != 1 {
		return fmt.Errorf("ledger: append needs exactly one of Entry, Prepared and Build: %w", ErrInvalid)
	}
	for _, c := range a.Claims {
		if c.Space == "" || c.Key == "" {
			return fmt.Errorf("ledger: claim %q %q: space and key must be non-empty: %w", c.Space, c.Key, ErrInvalid)
		}
		if len(c.Space) > maxKeySize || len(c.Key) > maxKeySize || len(c.Fingerprint) > maxValueSize-8 {
			return fmt.Errorf("ledger: claim %q: too large: %w", c.Space, ErrInvalid)
		}
	}
	for _, k := range a.Reads {
		if err := validSideKey(k.Bucket, k.Key); err != nil {
			return err
		}
	}
	for _, s := range a.Sequences {
		if s == "" || len(s) > maxKeySize {
			return fmt.Errorf("ledger: sequence name %q: must be non-empty and fit a bbolt key: %w", s, ErrInvalid)
		}
	}
	return nil
}

// prepare validates an entry, hashes its leaf (RFC 6962 §2.1
// SHA-256(0x00‖leaf)) and encodes it with the newest dictionary.
func (l *Ledger) prepare(e Entry) (*prepared, error) {
	p := new(prepared)
	if err := l.prepareInto(p, e); err != nil {
		return nil, err
	}
	return p, nil
}

func (l *Ledger) prepareInto(p *prepared, e Entry) error {
	if err := validateEntry(e); err != nil {
		return fmt.Errorf("ledger: entry %q: %w", e.ID, err)
	}
	*p = prepared{
		id:       e.ID,
		leaf:     e.Leaf,
		leafHash: tlog.RecordHash(e.Leaf),
		docs:     e.Docs,
		enc:      l.codec.encode(e.Leaf, e.Docs),
		postings: e.Postings,
		puts:     e.Puts,
	}
	return nil
}

// validateEntry checks everything about e that does not need the store, so
// that a write fails only on storage errors.
func validateEntry(e Entry) error {
	switch {
	case e.ID == "":
		return fmt.Errorf("empty entry ID: %w", ErrInvalid)
	case len(e.ID) > maxKeySize:
		return fmt.Errorf("entry ID of %d bytes: %w", len(e.ID), ErrInvalid)
	case len(e.Leaf) == 0:
		return fmt.Errorf("empty leaf: %w", ErrInvalid)
	}
	total := len(e.Leaf)
	for name, doc := range e.Docs {
		if name == "" || docKeyPrefix+len(name) > maxKeySize {
			return fmt.Errorf("document %q: empty or too large name: %w", name, ErrInvalid)
		}
		total += len(name) + len(doc)
	}
	if total > maxEntryBytes {
		return fmt.Errorf("leaf and documents of %d bytes, more than %d: %w", total, maxEntryBytes, ErrInvalid)
	}
	for _, p := range e.Postings {
		n := len(p.Key)
		if p.AppendIndex {
			n += 8
		}
		if p.Index == "" || len(p.Index) > maxKeySize || n == 0 || n > maxKeySize {
			return fmt.Errorf("posting %q %q: index and key must be non-empty and fit a bbolt key: %w", p.Index, p.Key, ErrInvalid)
		}
	}
	if p, dup := duplicatePosting(e.Postings); dup {
		return fmt.Errorf("posting %q %q given twice: %w", p.Index, p.Key, ErrDuplicate)
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

// duplicatePosting finds a posting given twice (with AppendIndex, the
// final keys are compared in the committer). An entry has a few postings:
// they are compared pairwise, without a map, unless there are many.
func duplicatePosting(ps []Posting) (Posting, bool) {
	same := func(a, b Posting) bool {
		return a.Index == b.Index && a.AppendIndex == b.AppendIndex && string(a.Key) == string(b.Key)
	}
	if len(ps) <= 16 {
		for i, p := range ps {
			if slices.ContainsFunc(ps[:i], func(o Posting) bool { return same(o, p) }) {
				return p, true
			}
		}
		return Posting{}, false
	}
	type posting struct {
		index, key  string
		appendIndex bool
	}
	seen := make(map[posting]bool, len(ps))
	for _, p := range ps {
		k := posting{p.Index, string(p.Key), p.AppendIndex}
		if seen[k] {
			return p, true
		}
		seen[k] = true
	}
	return Posting{}, false
}

// run is the committer: it takes one append (waiting), then everything else
// already waiting, without any artificial delay. While one batch is being
// fsynced the callers of the next one queue up on the unbuffered channel,
// which is what makes batches grow with load (natural group commit).
// Appends that arrived ahead of their Order are held for a later batch
// (holdAhead); when every append taken waits, the committer waits for the
// next one or the end of the hold. Once Close was called nothing is held.
func (l *Ledger) run() {
	// Batches committed and not yet durable go to answerDurable, which
	// answers them in order once they are: the committer goes on with the
	// next batch meanwhile (journal_sync.go), one batch ahead at most.
	ans := &answerer{in: make(chan *syncing), done: make(chan struct{}), freed: make(chan struct{}, 1)}
	go pprof.Do(context.Background(), pprof.Labels("ledger", "answer"), func(context.Context) { l.answerDurable(ans) })
	defer func() {
		close(ans.in)
		<-ans.done
		close(l.done)
	}()
	prev := 0 // appends in the batch committed last
	// Not locked to a thread (runtime.LockOSThread), although that would
	// let threadCPU measure whole commits: a locked goroutine that gives up
	// its P (to wait for the next append, to yield after answering, or
	// when sysmon takes the P during an fdatasync) comes back only through
	// a handoff to its own thread, a wake-up and a sleep of two threads
	// each time. Unlocked, any thread with a P runs it. Measured in
	// alternated pairs on 2 CPUs (issue 22, stop 36), Engine.Settle at 64
	// callers: with one P (GOMAXPROCS=1) faster in all 7 pairs, by 3-28 %
	// (median 26 %; less CPU per settlement in the 5 that recorded it); at
	// Go's default of two Ps faster in 23 of 30 pairs, median pair +8.6 %
	// (medians 6,187 -> 6,908/s), on a VM whose pairs ranged from -11 to
	// +34 %; the server at 32 HTTP clients (three Ps) unchanged (7 pairs,
	// median pair +1 %). Stats.CommitterCPU now counts the spans that
	// cannot block (measuredCPU).
	batch := make([]*request, 0, l.maxBatch)
	h := &holds{seen: map[int64]bool{}}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		batch = append(batch[:0], h.held...)
		clear(h.held)
		h.held = h.held[:0]
		if len(batch) == 0 {
			select {
			case r := <-l.reqs:
				batch = h.take(batch, r)
			case <-l.closing:
				return
			}
		}
	drain:
		for len(batch) < l.maxBatch {
			select {
			case r := <-l.reqs:
				batch = h.take(batch, r)
				continue
			default:
			}
			// Nothing more is waiting. While the batch before is still
			// syncing, a batch smaller than it waits for more appends or
			// for that sync, whichever comes first: committed at once, it
			// would split the callers between ever smaller batches, each
			// paying a commit's fixed cost (its checkpoint signature,
			// bbolt's freelist and meta page, a journal record). Measured
			// on 2 CPUs (issue 22, stop 49), committing at once took the
			// server at 32 HTTP clients from ~12 appends a commit to ~8.7
			// and 7 % fewer settlements/s.
			if len(batch) >= prev || ans.pending.Load() == 0 {
				break drain
			}
			select {
			case r := <-l.reqs:
				batch = h.take(batch, r)
			case <-ans.freed:
			case <-l.closing:
				break drain
			}
		}
		orderBatch(batch)
		size := l.store.head().frontier.size
		now, wait := h.holdAhead(batch, size, time.Now())
		if len(now) == 0 {
			timer.Reset(wait)
			select {
			case r := <-l.reqs:
				h.held = h.take(h.held, r)
			case <-timer.C:
			case <-l.closing:
				h.stopping = true
			}
			timer.Stop()
			continue
		}
		prev = len(now)
		results, pending := l.commit(now)
		if pending != nil {
			ans.pending.Add(1)
			ans.in <- pending
		} else {
			for i, r := range now {
				r.done <- results[i]
			}
		}
		// The answered callers are readied on this goroutine's P. Kept,
		// with the bbolt store that P would go on with the next batch's
		// serial section (its puts, spill and page writes, up to the
		// first fdatasync) while they wait: a trace of the server at 32
		// HTTP clients showed ~0.8 ms of scheduler latency per answered
		// caller, time in which none of them can send its next append.
		// Yielding lets them run first; the committer continues once the
		// scheduler comes back to it (from the global run queue), by when
		// more appends are waiting, so batches grow. Measured on 2 CPUs
		// in alternated pairs (issue 22, stop 35): the server at 32 HTTP
		// clients 5,830-5,996 -> 6,178-6,387 settlements/s (records per
		// commit 9.6 -> 13.6, CPU per settlement 232 -> 216 µs);
		// Engine.Settle at 64 callers +1-5 %, records per commit 18 -> 31
		// (the cycle grows too: the committer waits ~0.9 ms for a P while
		// the callers draft), the committer's serial time 32 -> 26 µs per
		// record. With one P (GOMAXPROCS=1, a container's single CPU) it
		// is what makes group commit work at all: without the yield the
		// committer went back to its channel before any answered caller
		// ran, and the first one to send again was committed alone
		// (Engine.Settle at 64 callers 1,091-1,140/s with 1.0 records per
		// commit, against 8,837-8,930/s with 44-46; the server at 32 HTTP
		// clients 1,104-1,332/s with 1.2-1.5, against 3,951-4,214/s with
		// 10).
		if l.yieldAfterCommit {
			runtime.Gosched()
		}
		clear(batch)
		h.prune(l.store.head().frontier.size)
	}
}

// holds is the committer's record of the appends it holds back for a
// missing predecessor.
type holds struct {
	held []*request
	// seen are the Orders taken whose expected index the log has not
	// reached: they are not waited for, even when their caller still
	// counts them pending (its answer is on its way).
	seen map[int64]bool
	// gapAt is the log position the held appends wait to see filled, and
	// since when (zero: not waiting).
	gapAt    int64
	since    time.Time
	stopping bool // Close was called: nothing is held any more
}

func (h *holds) take(to []*request, r *request) []*request {
	if r.a.Order > 0 {
		h.seen[r.a.Order] = true
	}
	return append(to, r)
}

// prune forgets the Orders the log has passed.
func (h *holds) prune(size int64) {
	maps.DeleteFunc(h.seen, func(o int64, _ bool) bool { return o-1 < size })
}

// holdAhead splits an ordered batch into the appends to commit now and
// those to hold (h.held): an append whose Order says it expects a log index
// beyond the one it would get (size plus the appends planned before it)
// while an append expected before it is still on its way. Committed now, it
// would take its predecessor's index and both would have to be built
// again in the committer (Hook). With Append.Pending, the append and those
// ordered after it are held as long as a missing predecessor is pending,
// up to MaxHold for one missing position (wait is what is left of it).
// Without, an append is held at most once, and only when some append of
// the batch is committed now, so that no append waits for one that never
// comes. The guess of the index ignores appends that will find their claim
// held or fail: holding is about speed, never about what is written.
func (h *holds) holdAhead(batch []*request, size int64, now time.Time) (commit []*request, wait time.Duration) {
	// An append whose expected index the log has passed misses wherever
	// it goes: last, where it takes no other's place (or fills a gap).
	slices.SortStableFunc(batch, func(a, b *request) int { return cmp.Compare(btoi(a.stale(size)), btoi(b.stale(size))) })
	next, cut := size, -1
	for i, r := range batch {
		if o := r.a.Order; o > 0 && o-1 > next && !h.stopping {
			if r.a.Pending == nil && !r.held {
				if i > 0 {
					cut = i
				}
				break
			}
			if r.a.Pending != nil && !batch[len(batch)-1].stale(size) && h.pending(r, next) {
				if h.since.IsZero() || h.gapAt != next {
					h.gapAt, h.since = next, now
				}
				if wait = MaxHold - now.Sub(h.since); wait > 0 && !heldLong(batch[i:], now) {
					cut = i
					break
				}
			}
			if r.a.Pending != nil {
				// Nobody comes for the gap, or a stale append is at
				// hand: the last append of the batch fills it rather
				// than every one moving up.
				j := len(batch) - 1
				for batch[j].a.Pending == nil {
					j--
				}
				last := batch[j]
				copy(batch[i+1:j+1], batch[i:j])
				batch[i] = last
			}
		}
		next++
	}
	if cut < 0 {
		h.since = time.Time{}
		return batch, 0
	}
	commit = batch[:cut]
	for _, r := range batch[cut:] {
		if r.a.Order == 0 || (r.a.Pending == nil && r.held) {
			commit = append(commit, r) // keeps its place after the cut
			continue
		}
		if !r.held {
			r.held, r.heldAt = true, now
		}
		h.held = append(h.held, r)
	}
	return commit, wait
}

// heldLong says whether one of the appends has been held for 2×MaxHold
// already (for several missing positions in turn): they all go now.
func heldLong(rs []*request, now time.Time) bool {
	return slices.ContainsFunc(rs, func(r *request) bool { return r.held && now.Sub(r.heldAt) >= 2*MaxHold })
}

func (r *request) stale(size int64) bool {
	return r.a.Pending != nil && r.a.Order > 0 && r.a.Order-1 < size
}

// pending says whether an Order missing before r, which would be planned
// at next, is still on its way (not taken, and pending for its caller).
func (h *holds) pending(r *request, next int64) bool {
	for o := next + 1; o < r.a.Order && o <= next+maxHoldGap; o++ {
		if !h.seen[o] && r.a.Pending(o) {
			return true
		}
	}
	return false
}

// maxHoldGap bounds the missing Orders asked about: a prediction further
// off is not corrected by waiting.
const maxHoldGap = 64

// orderBatch sorts the appends of a batch that set Append.Order among the
// positions they hold.
func orderBatch(batch []*request) {
	var slots []int
	for i, r := range batch {
		if r.a.Order > 0 {
			slots = append(slots, i)
		}
	}
	if len(slots) < 2 {
		return
	}
	ordered := make([]*request, len(slots))
	for j, i := range slots {
		ordered[j] = batch[i]
	}
	slices.SortStableFunc(ordered, func(a, b *request) int { return cmp.Compare(a.a.Order, b.a.Order) })
	for j, i := range slots {
		batch[i] = ordered[j]
	}
}

// commit plans and commits a batch. If the store cannot commit, every
// append that did not fail on its own gets an error wrapping
// ErrUnavailable (or the *CorruptError, which also stops writing). A batch
// whose answers wait for durability (a journaled store: its commit's, or
// that of the state its plan read) comes back as a *syncing (results nil),
// answered once durable (finishDurable).
func (l *Ledger) commit(batch []*request) ([]result, *syncing) {
	results := make([]result, len(batch))
	start := time.Now()
	var w *batchWrites
	st, err := l.storeCommit(batch, func(v commitView) (*batchWrites, error) {
		var err error
		w, err = l.plan(batch, results, v)
		return w, err
	})
	l.prof.serial.Add(int64(time.Since(start) - st.io))
	l.prof.cpu.Add(int64(st.cpu))
	l.prof.io.Add(int64(st.io))
	l.prof.pages.Add(st.pages)
	l.prof.trips.Add(st.trips)
	if st.durable != nil {
		return nil, &syncing{batch: slices.Clone(batch), results: results, w: w, err: err, io: st.io, durable: st.durable, at: time.Now()}
	}
	return l.finish(len(batch), results, w, st.io, err, false), nil
}

// syncing is a batch whose answers wait for durability (journal_sync.go):
// its commit's (err nil) or, when it wrote nothing or failed (err), that of
// the state its plan read (finishDurable).
type syncing struct {
	batch   []*request
	results []result
	w       *batchWrites
	err     error
	io      time.Duration
	durable func() error
	at      time.Time
}

// finish finishes a batch once its commit is durable (err nil) or failed:
// the ledger's size and checkpoint move, or every append that did not fail
// on its own gets the error; every append when all (the state the batch
// read did not become durable: its own faults may rest on it).
func (l *Ledger) finish(n int, results []result, w *batchWrites, io time.Duration, err error, all bool) []result {
	var co *CorruptError
	if errors.As(err, &co) {
		l.broken.CompareAndSwap(nil, co)
	}
	if err != nil {
		if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrClosed) || co != nil {
			err = fmt.Errorf("ledger: commit of %d appends: %w", n, err)
		} else {
			err = fmt.Errorf("ledger: commit of %d appends: %w: %w", n, ErrUnavailable, err)
		}
		for i := range results {
			if all || !results[i].ownFault {
				results[i] = result{err: err}
			}
		}
		return results
	}
	if w != nil {
		if l.onCommit != nil {
			l.onCommit(w)
		}
		l.prof.commits.Add(1)
		l.prof.appended.Add(int64(len(w.entries)))
		if l.observer != nil {
			l.observer.ObserveCommit(len(w.entries), io)
		}
		l.storeHead(w.head.latest)
		if d := w.dict; d != nil {
			// The dictionary is durable: new entries may use it. A failure
			// here only keeps the older dictionary in use.
			_ = l.codec.addDict(d.id, d.content)
		}
	}
	return results
}

// answerer is the goroutine answering durable batches (answerDurable).
type answerer struct {
	in      chan *syncing // unbuffered: the committer runs one batch ahead at most
	done    chan struct{} // closed when it returned
	pending atomic.Int32  // batches handed to it and not yet answered
	freed   chan struct{} // a batch was answered (one pending signal)
}

// answerDurable answers the batches the committer hands it, in commit
// order, each once it is durable.
func (l *Ledger) answerDurable(a *answerer) {
	defer close(a.done)
	for b := range a.in {
		results := l.finishDurable(b)
		for i, r := range b.batch {
			r.done <- results[i]
		}
		a.pending.Add(-1)
		select {
		case a.freed <- struct{}{}:
		default:
		}
	}
}

// finishDurable waits until the batch's state is durable and finishes it:
// with the store's error if that state never became durable (for every
// append), else with its commit's outcome. The observed time of a commit
// is the committer's I/O and the wait for the journal's fdatasync.
func (l *Ledger) finishDurable(b *syncing) []result {
	err, all := b.err, false
	if derr := b.durable(); derr != nil {
		err, all = derr, true
	}
	return l.finish(len(b.batch), b.results, b.w, b.io+time.Since(b.at), err, all)
}

// storeCommit runs store.commit with the read guard: a panic inside the
// store (damaged pages) fails the batch with a *CorruptError.
func (l *Ledger) storeCommit(batch []*request, plan func(v commitView) (*batchWrites, error)) (st commitStats, err error) {
	defer l.readGuard(&err, debug.SetPanicOnFault(true))
	return l.store.commit(func() *batchKeys { return batchKeysOf(batch) }, plan)
}

// batchKeysOf lists the keys a batch reads that are known before it is
// planned (a SQL store loads them in its first round trip).
func batchKeysOf(batch []*request) *batchKeys {
	k := &batchKeys{}
	for _, r := range batch {
		for _, c := range r.a.Claims {
			k.claims = append(k.claims, claimKey{c.Space, c.Key})
		}
		k.side = append(k.side, r.a.Reads...)
		k.sequences = append(k.sequences, r.a.Sequences...)
		if p := r.prep; p != nil {
			k.ids = append(k.ids, p.id)
			for _, po := range p.postings {
				if po.AppendIndex {
					k.indexed = append(k.indexed, postingKey{po.Index, string(po.Key)})
				} else {
					k.postings = append(k.postings, postingKey{po.Index, string(po.Key)})
				}
			}
		}
	}
	return k
}

// batchState is what the appends planned so far in a batch wrote: later
// appends of the batch see it exactly like committed data.
type batchState struct {
	w      *batchWrites
	claims map[claimKey]claimHolder
	ids    map[string]bool
	// postings finds the batch's postings (w.postings), side the last
	// write of a side key (w.side): keyed by hash, not by a string made
	// of every key.
	postings keyIndex
	side     keyIndex
	seqs     map[string]int64
	// read caches the side values read from the committed data (Value nil:
	// absent): they do not change during the batch (side shadows them once
	// written), and an engine reads the same ones for many appends of a
	// batch.
	read    []Put
	readIdx keyIndex
	// arena holds the small slices the batch makes (posting keys with the
	// index, Hook.Put's and Hook.Get's copies): one allocation for many.
	arena arena
	hook  Hook // reused by every append of the batch
}

// keyIndex finds an item of a batch's list by a bucket (or index) name
// and a key without making a string of every key: a map from their hash to
// the position of the last item with them, checked against the item itself
// (a collision, which only costs time, falls back to a scan).
type keyIndex struct {
	seed maphash.Seed
	pos  map[uint64]int32
}

func newKeyIndex(seed maphash.Seed, n int) keyIndex {
	return keyIndex{seed: seed, pos: make(map[uint64]int32, n)}
}

func (x *keyIndex) hash(name string, key []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(x.seed)
	h.WriteString(name)
	h.WriteByte(0)
	h.Write(key)
	return h.Sum64()
}

// find returns the position of the last of the n items that match (is),
// or -1.
func (x *keyIndex) find(name string, key []byte, n int, is func(i int) bool) int {
	i, ok := x.pos[x.hash(name, key)]
	if !ok {
		return -1
	}
	if int(i) < n && is(int(i)) {
		return int(i)
	}
	for j := n - 1; j >= 0; j-- {
		if is(j) {
			return j
		}
	}
	return -1
}

// add records that item i has name and key (the last such item so far).
func (x *keyIndex) add(name string, key []byte, i int) {
	x.pos[x.hash(name, key)] = int32(i)
}

// findPut finds the last Put of (bucket, key) among puts indexed by x.
func (x *keyIndex) findPut(puts []Put, bucket string, key []byte) int {
	return x.find(bucket, key, len(puts), func(i int) bool {
		return puts[i].Bucket == bucket && string(puts[i].Key) == string(key)
	})
}

type claimHolder struct {
	index       int64
	fingerprint []byte
	id          string
}

type sideMapKey struct{ bucket, key string }

type sideValue struct {
	value   []byte
	deleted bool
}

// plan decides every append of a batch against the committed data (v) and
// the batch's own earlier appends, and returns the writes: entries, stored
// hashes from the right frontier, claims, postings, side writes, sequences,
// a new dictionary when one is due, and the checkpoint of the new size,
// signed with the log key. It returns nil when nothing is appended.
func (l *Ledger) plan(batch []*request, results []result, v commitView) (*batchWrites, error) {
	head := l.store.head()
	fr := head.frontier
	n := len(batch)
	w := &batchWrites{
		hashes:     make([]tlog.Hash, 0, 2*n),
		seqs:       map[string]int64{},
		entries:    make([]entryWrite, 0, n),
		claims:     make([]claimWrite, 0, 2*n),
		postings:   make([]postingWrite, 0, 2*n),
		side:       make([]Put, 0, 2*n),
		sideUnique: true,
	}
	seed := maphash.MakeSeed()
	st := &batchState{
		w:        w,
		claims:   make(map[claimKey]claimHolder, 2*n),
		ids:      make(map[string]bool, n),
		postings: newKeyIndex(seed, 2*n),
		side:     newKeyIndex(seed, 2*n),
		seqs:     map[string]int64{},
		readIdx:  newKeyIndex(seed, 4),
	}
	st.arena.grow(256 * n)
	var written []*prepared // this batch's entries, for a dictionary cut
	for i, r := range batch {
		var err error
		var p *prepared
		results[i], p, err = l.planOne(r, v, st, &fr, w)
		if err != nil {
			return nil, err
		}
		if p != nil {
			written = append(written, p)
		}
	}
	if len(w.entries) == 0 {
		return nil, nil
	}
	maps.Copy(w.seqs, st.seqs)
	if !w.sideUnique {
		// A key written more than once: only its last write is put.
		last := w.side[:0:0]
		for i, pt := range w.side {
			if st.side.findPut(w.side, pt.Bucket, pt.Key) == i {
				last = append(last, pt)
			}
		}
		w.side, w.sideUnique = last, true
	}
	if err := l.planDict(head, fr.size, written, v, w); err != nil {
		return nil, err
	}
	cp := Checkpoint{Origin: l.origin, Size: fr.size, Root: fr.root()}
	if l.signAhead {
		w.signed = l.signAsync(cp) // the store waits for it before its last put
	} else {
		signed, err := l.signTree(cp.Size, cp.Root)
		if err != nil {
			return nil, err
		}
		cp = signed
	}
	w.head = storeHead{frontier: fr, latest: cp, dictID: head.dictID, dictCut: head.dictCut}
	if w.dict != nil {
		w.head.dictID, w.head.dictCut = w.dict.id, w.dict.cutAt
	}
	return w, nil
}

// planOne decides one append. Decisions that concern only this append
// (claim held, Build or Hook error, invalid entry) come back in the result
// with a nil error, before anything of the append is recorded. A non-nil
// error is a storage failure that dooms the whole batch.
func (l *Ledger) planOne(r *request, v commitView, st *batchState, fr *frontier, w *batchWrites) (result, *prepared, error) {
	a := &r.a
	for _, c := range a.Claims {
		h, held := st.claims[claimKey{c.Space, c.Key}]
		if !held {
			var err error
			h.index, h.fingerprint, h.id, held, err = v.claim(c.Space, c.Key)
			if err != nil {
				return result{}, nil, err
			}
		}
		if !held {
			continue
		}
		if string(h.fingerprint) == string(c.Fingerprint) {
			return result{appended: Appended{Index: h.index, ID: h.id, Existing: true}}, nil, nil
		}
		c.Fingerprint = clone(c.Fingerprint)
		return result{err: &ClaimConflictError{Claim: c, HolderID: h.id}}, nil, nil
	}
	index := fr.size
	fail := func(err error) (result, *prepared, error) { return ownFault(index, err) }
	p := r.prep
	if p == nil {
		e, err := build(a.Build, index)
		if err != nil {
			return result{err: fmt.Errorf("ledger: build entry %d: %w", index, err), ownFault: true}, nil, nil
		}
		if p, err = l.prepare(e); err != nil {
			return fail(err)
		}
	}
	if st.ids[p.id] {
		return fail(fmt.Errorf("entry ID %q already present: %w", p.id, ErrDuplicate))
	}
	if dup, err := v.hasID(p.id); err != nil {
		return result{}, nil, err
	} else if dup {
		return fail(fmt.Errorf("entry ID %q already present: %w", p.id, ErrDuplicate))
	}
	// This append's postings go to w.postings at once (the batch's ones
	// are indexed in st.postings) and are cut off again if it fails.
	pstart := len(w.postings)
	fail = func(err error) (result, *prepared, error) {
		w.postings = w.postings[:pstart]
		return ownFault(index, err)
	}
	for _, po := range p.postings {
		key := po.Key
		if po.AppendIndex {
			key = st.arena.cut(len(po.Key)+8, func(b []byte) []byte {
				return binary.BigEndian.AppendUint64(append(b, po.Key...), uint64(index))
			})
		}
		is := func(i int) bool { return w.postings[i].index == po.Index && string(w.postings[i].key) == string(key) }
		dup := st.postings.find(po.Index, key, pstart, is) >= 0 || slices.ContainsFunc(w.postings[pstart:], func(o postingWrite) bool {
			return o.index == po.Index && string(o.key) == string(key)
		})
		if !dup {
			var err error
			if dup, err = v.hasPosting(po.Index, key); err != nil {
				return result{}, nil, err
			}
		}
		if dup {
			return fail(fmt.Errorf("posting %q %q already present: %w", po.Index, key, ErrDuplicate))
		}
		w.postings = append(w.postings, postingWrite{index: po.Index, key: key, id: p.id, at: index})
	}
	var h *Hook
	if a.Hook != nil {
		h = &st.hook
		*h = Hook{index: index, a: a, p: p, st: st, v: v, extra: h.extra[:0], seqs: h.seqs[:0]}
		if err := callHook(a.Hook, h); err != nil {
			return fail(err)
		}
		if h.storeErr != nil {
			return result{}, nil, h.storeErr
		}
		var err error
		if p, err = h.finish(l); err != nil {
			return fail(err)
		}
	}
	// Decided: record the append.
	st.ids[p.id] = true
	for _, c := range a.Claims {
		st.claims[claimKey{c.Space, c.Key}] = claimHolder{index, c.Fingerprint, p.id}
		w.claims = append(w.claims, claimWrite{c.Space, c.Key, index, c.Fingerprint})
	}
	for i := pstart; i < len(w.postings); i++ {
		st.postings.add(w.postings[i].index, w.postings[i].key, i)
	}
	sstart := len(w.side)
	w.side = append(w.side, p.puts...)
	if h != nil {
		w.side = append(w.side, h.extra...)
		for _, s := range h.seqs {
			st.seqs[s.name] = s.n
		}
	}
	for i := sstart; i < len(w.side); i++ {
		pt := w.side[i]
		if w.sideUnique && st.side.findPut(w.side[:i], pt.Bucket, pt.Key) >= 0 {
			w.sideUnique = false
		}
		st.side.add(pt.Bucket, pt.Key, i)
	}
	w.entries = append(w.entries, entryWrite{index: index, id: p.id, blob: p.enc.blob})
	w.hashes = fr.append(p.leafHash, w.hashes)
	return result{appended: Appended{Index: index, ID: p.id}}, p, nil
}

// ownFault is the result of an append that failed on its own.
func ownFault(index int64, err error) (result, *prepared, error) {
	return result{err: fmt.Errorf("ledger: entry %d: %w", index, err), ownFault: true}, nil, nil
}

// planDict cuts a new dictionary when the log reaches the size the next one
// is due at: the raw bodies of the newest dictEntries entries (read back
// from the store for those not in this batch, which only happens after a
// restart or when batches are small).
func (l *Ledger) planDict(head storeHead, size int64, written []*prepared, v commitView, w *batchWrites) error {
	id, due := head.dictID+1, nextDictCut(head.dictCut)
	if size < due {
		return nil
	}
	var all [][]byte
	for i := max(0, size-dictEntries); i < size-int64(len(written)); i++ {
		e, err := v.entry(i)
		if err != nil {
			return err
		}
		b, err := l.rawBody(i, e)
		if err != nil {
			return nil // a damaged older entry: no new dictionary this time
		}
		all = append(all, b)
	}
	for _, p := range written[max(0, len(written)-dictEntries):] {
		b, err := l.codec.rawBody(p.enc.blob)
		if err != nil {
			return nil // cannot happen to a blob made here; no new dictionary then
		}
		all = append(all, b)
	}
	w.dict = &dictWrite{id: id, cutAt: size, content: makeDict(all)}
	return nil
}

// rawBody is the raw (uncompressed) body of a stored entry.
func (l *Ledger) rawBody(index int64, e rawEntry) ([]byte, error) {
	if e.blob != nil {
		return l.codec.rawBody(e.blob)
	}
	docs := map[string][]byte{}
	for _, d := range e.docs {
		docs[d.name] = d.doc
	}
	names := slices.Sorted(maps.Keys(docs))
	body, _ := appendRawBody(nil, e.leaf, names, docs, new([]byte))
	return body, nil
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

// callHook calls a Hook function; a panic in it fails only its append, but
// a panic the store raised while the hook read through it is damage.
func callHook(fn func(*Hook) error, h *Hook) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if sp, ok := r.(storePanic); ok {
				panic(sp)
			}
			err = fmt.Errorf("ledger: Hook panicked: %v", r)
		}
	}()
	return fn(h)
}

// Hook is the committer's view of one append, given to Append.Hook: the
// entry's log index, gap-free sequences, declared side values, side writes
// and changes to the prebuilt entry. Reads see the committed data and the
// earlier appends of the same batch; writes become part of the append and
// are discarded when the hook (or the append) fails. A Hook is valid only
// during the call.
type Hook struct {
	index int64
	a     *Append
	p     *prepared
	st    *batchState
	v     commitView

	seqs     []seqValue // Sequence calls
	extra    []Put      // Put calls, after the entry's own Puts
	splices  []splice
	leaf     []byte            // SetLeaf
	docs     map[string][]byte // SetDoc
	storeErr error
}

type seqValue struct {
	name string
	n    int64
}

type splice struct {
	doc    string
	offset int
	data   []byte
}

// Index returns the log index the entry gets.
func (h *Hook) Index() int64 { return h.index }

// Sequence returns the next number of the named gap-free sequence (1 for
// its first use), one more than the last number any written entry drew
// from it. The number is used only if this append is written: an append
// that fails leaves no gap. The name must be in Append.Sequences.
func (h *Hook) Sequence(name string) (int64, error) {
	if !slices.Contains(h.a.Sequences, name) {
		return 0, fmt.Errorf("ledger: hook: sequence %q not declared in Append.Sequences: %w", name, ErrInvalid)
	}
	at := slices.IndexFunc(h.seqs, func(s seqValue) bool { return s.name == name })
	var n int64
	if at >= 0 {
		n = h.seqs[at].n
	} else {
		var ok bool
		if n, ok = h.st.seqs[name]; !ok {
			var err error
			if n, err = h.v.sequence(name); err != nil {
				h.storeErr = err
				return 0, err
			}
		}
		at = len(h.seqs)
		h.seqs = append(h.seqs, seqValue{name: name})
	}
	n++
	h.seqs[at].n = n
	return n, nil
}

// Get returns a copy of a side value (nil when absent) as of the committed
// data, the earlier appends of the batch and this append's writes. The key
// must be in Append.Reads.
func (h *Hook) Get(bucket string, key []byte) ([]byte, error) {
	if !slices.ContainsFunc(h.a.Reads, func(k SideKey) bool { return k.Bucket == bucket && string(k.Key) == string(key) }) {
		return nil, fmt.Errorf("ledger: hook: side value %q %q not declared in Append.Reads: %w", bucket, key, ErrInvalid)
	}
	for _, puts := range [][]Put{h.extra, h.p.puts} {
		for i := len(puts) - 1; i >= 0; i-- {
			if p := puts[i]; p.Bucket == bucket && string(p.Key) == string(key) {
				return h.st.arena.clone(p.Value), nil
			}
		}
	}
	st := h.st
	if i := st.side.findPut(st.w.side, bucket, key); i >= 0 {
		return st.arena.clone(st.w.side[i].Value), nil
	}
	if i := st.readIdx.findPut(st.read, bucket, key); i >= 0 {
		return st.arena.clone(st.read[i].Value), nil
	}
	v, err := h.v.side(bucket, key)
	if err != nil {
		h.storeErr = err
		return nil, err
	}
	// v is the view's own copy (nil: absent).
	st.read = append(st.read, Put{Bucket: bucket, Key: clone(key), Value: v})
	st.readIdx.add(bucket, key, len(st.read)-1)
	return st.arena.clone(v), nil
}

// Put writes a side value with the entry (nil deletes the key), after the
// entry's own Puts.
func (h *Hook) Put(bucket string, key, value []byte) error {
	if err := validSideKey(bucket, key); err != nil {
		return err
	}
	if len(value) > maxValueSize {
		return fmt.Errorf("ledger: side %q: value of %d bytes: %w", bucket, len(value), ErrInvalid)
	}
	h.extra = append(h.extra, Put{Bucket: bucket, Key: h.st.arena.clone(key), Value: h.st.arena.clone(value)})
	return nil
}

// Splice overwrites len(b) bytes of the prebuilt document doc at offset
// (for example a fixed-width invoice number rendered as a placeholder). The
// bytes are stored beside the compressed document and applied when it is
// read, so a splice costs no compression. A splice changes the document's
// digest: a leaf that commits to the digest must be built with the final
// bytes, so splice only what the leaf does not commit to.
func (h *Hook) Splice(doc string, offset int, b []byte) error {
	d, ok := h.p.docs[doc]
	if nd, set := h.docs[doc]; set {
		d, ok = nd, true
	}
	if !ok {
		return fmt.Errorf("ledger: hook: splice into document %q, which the entry does not have: %w", doc, ErrInvalid)
	}
	if offset < 0 || len(b) == 0 || offset > len(d) || len(b) > len(d)-offset {
		return fmt.Errorf("ledger: hook: splice of %d bytes at %d into document %q of %d bytes: %w", len(b), offset, doc, len(d), ErrInvalid)
	}
	h.splices = append(h.splices, splice{doc, offset, h.st.arena.clone(b)})
	return nil
}

// SetDoc replaces (or adds) a document. The entry is encoded again in the
// committer: the recompute path for an optimistic decision that went
// stale, not for every append.
func (h *Hook) SetDoc(name string, doc []byte) error {
	if name == "" || docKeyPrefix+len(name) > maxKeySize {
		return fmt.Errorf("ledger: hook: document %q: empty or too large name: %w", name, ErrInvalid)
	}
	if h.docs == nil {
		h.docs = map[string][]byte{}
	}
	h.docs[name] = clone(doc)
	return nil
}

// SetLeaf replaces the leaf (one SHA-256 and an encoding in the
// committer): the recompute path, like SetDoc.
func (h *Hook) SetLeaf(leaf []byte) error {
	if len(leaf) == 0 {
		return fmt.Errorf("ledger: hook: empty leaf: %w", ErrInvalid)
	}
	h.leaf = clone(leaf)
	return nil
}

// finish applies the hook's changes to the prepared entry: splices become
// patches of the blob; SetDoc and SetLeaf encode the entry again.
func (h *Hook) finish(l *Ledger) (*prepared, error) {
	if h.leaf == nil && h.docs == nil && len(h.splices) == 0 {
		return h.p, nil
	}
	p := *h.p
	if h.leaf != nil || h.docs != nil {
		docs := maps.Clone(p.docs)
		if docs == nil {
			docs = map[string][]byte{}
		}
		for name, d := range h.docs {
			docs[name] = d
		}
		for _, s := range h.splices { // applied to the new bytes directly
			d := clone(docs[s.doc])
			copy(d[s.offset:], s.data)
			docs[s.doc] = d
		}
		if h.leaf != nil {
			p.leaf = h.leaf
		}
		e := Entry{ID: p.id, Leaf: p.leaf, Docs: docs, Postings: p.postings, Puts: p.puts}
		if err := validateEntry(e); err != nil {
			return nil, err
		}
		p.leafHash = tlog.RecordHash(p.leaf)
		p.docs = docs
		p.enc = l.codec.encode(p.leaf, docs)
		return &p, nil
	}
	names := slices.Sorted(maps.Keys(p.docs)) // the doc numbers of the blob
	ps := make([]patch, len(h.splices))
	for i, s := range h.splices {
		ps[i] = patch{doc: slices.Index(names, s.doc), offset: s.offset, data: s.data}
	}
	blob, err := withPatches(p.enc.blob, ps)
	if err != nil {
		return nil, err
	}
	p.enc.blob = blob
	return &p, nil
}
