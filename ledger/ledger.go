package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrNotFound: the entry, document, posting, claim, side value or
	// checkpoint asked for does not exist (yet).
	ErrNotFound = errors.New("ledger: not found")
	// ErrClosed: the ledger was closed.
	ErrClosed = errors.New("ledger: closed")
	// ErrUnavailable: the store could not do its job (file locked by another
	// process, write or fsync failed, signing failed). Nothing of the failed
	// operation was acknowledged; retrying later is correct, but for a
	// *HaltedError, which lasts until an operator has acted. The HTTP
	// service answers 503 DB_UNAVAILABLE.
	ErrUnavailable = errors.New("ledger: unavailable")
	// ErrReadOnly: a write on a ledger opened without a Signer.
	ErrReadOnly = errors.New("ledger: read-only (opened without a signer)")
	// ErrInvalid: a malformed argument (empty ID, empty leaf, empty key,
	// key too large, index out of range, …). A caller bug, not a data state.
	ErrInvalid = errors.New("ledger: invalid argument")
	// ErrDuplicate: an entry ID or a posting key that is already present.
	// Claims are the way to deduplicate; this error means the caller derived
	// IDs or posting keys that are not unique.
	ErrDuplicate = errors.New("ledger: duplicate")
	// ErrReserved: Reserve's name is held by another user of this Ledger
	// (a background loop already runs over the side data it names).
	ErrReserved = errors.New("ledger: reserved by another user of this ledger")
	// ErrOriginMismatch: the file, key or signer belongs to another log origin.
	ErrOriginMismatch = errors.New("ledger: origin mismatch")
	// ErrLogKeyMismatch: the Signer (or Verifier) is not the key that signed
	// the file's latest checkpoint.
	ErrLogKeyMismatch = errors.New("ledger: log key mismatch")
	// ErrBadCheckpoint: a checkpoint note that does not verify or parse.
	ErrBadCheckpoint = errors.New("ledger: bad checkpoint")
)

// Default option values.
const (
	DefaultMaxBatch    = 256
	DefaultOpenTimeout = 2 * time.Second
)

// Options configure Open. The zero value of every field except Origin is
// usable; Signer is needed for writing.
type Options struct {
	// Origin is the C2SP checkpoint origin and the note key name, e.g.
	// "fiscal402.example/log". Required. It is recorded in the file when the
	// file is created; Open refuses a file recorded with another origin.
	Origin string
	// Signer is the Ed25519 log key that signs checkpoints (distinct from the
	// receipt key). Signer.Name() must equal Origin. Nil opens the file
	// read-only (shared lock; the file must exist; Append and Update fail
	// with ErrReadOnly). Open refuses a Signer whose key did not sign the
	// file's latest checkpoint (ErrLogKeyMismatch): a lost and regenerated
	// key would otherwise silently change the log's identity.
	Signer note.Signer
	// Verifier is the public half of the log key. Optional: when nil,
	// signatures are checked by re-signing with Signer (Ed25519 is
	// deterministic, RFC 8032 §5.1.6) and comparing. When set together with
	// Signer, Open checks that they are a pair. A read-only ledger needs it
	// for (*Ledger).Check.
	Verifier note.Verifier
	// MaxBatch is the most appends grouped into one commit; 0 means
	// DefaultMaxBatch (256).
	MaxBatch int
	// OpenTimeout bounds the wait for the bbolt file lock (bbolt waits
	// forever otherwise); 0 means DefaultOpenTimeout (2s). A timeout is
	// reported as ErrUnavailable.
	OpenTimeout time.Duration
	// Observer, optional, is told of each group commit: how many appends it
	// wrote and how long the store took to make them durable (for bbolt the
	// transaction's commit with its fsyncs). It runs on the committer: it
	// must be quick (a metrics update).
	Observer CommitObserver
	// FullCheck makes Open run Check on the whole file (every leaf, hash
	// and checkpoint; see # Opening in the package doc for its cost)
	// instead of the bounded check, and refuse the file with a
	// *CorruptError if it finds anything. A read-only ledger needs
	// Verifier for it.
	FullCheck bool
	// Cosigners, optional, returns the further signers of the next
	// checkpoint: each checkpoint the ledger writes carries, after the log
	// key's signature line, one C2SP signed-note signature line by each
	// (a cosignature, which verifiers that do not know the key ignore, so
	// ParseCheckpoint, Check and every reader of checkpoints are
	// unaffected). It is called once per checkpoint, on the goroutine that
	// signs it, so that a change (a rotated key) takes effect at the next
	// commit; it must be quick and safe for concurrent use. A cosigner
	// must not use the origin as its name. A cosigner that fails, or a
	// Cosigners that panics, fails the commit with ErrUnavailable, as a
	// failing Signer does. fiscal402's engine passes the active receipt
	// key, which signs tree heads instead of each receipt (receipt doc.go,
	// "# Version 4.0.0").
	Cosigners func() []note.Signer
	// Keys are public keys the writers of a shared log must agree on
	// (name → text, for example "receipt" → the receipt key's JWK
	// thumbprint): OpenPostgres records them at the first open and refuses
	// a later open that names one differently (ErrLogKeyMismatch). The log
	// key itself is always recorded. A bbolt file ignores them.
	Keys map[string]string
}

// Ledger is an open ledger file. Its methods are safe for concurrent use.
type Ledger struct {
	store    store
	observer CommitObserver
	codec    *codec
	path     string
	origin   string
	signer   note.Signer   // nil when read-only
	verifier note.Verifier // nil when read-only without Options.Verifier
	maxBatch int
	holder   string // who this Ledger is in the leases of a shared log

	reserveMu sync.Mutex
	reserved  map[string]bool // Reserve's names, held by one user each

	// cosigners is Options.Cosigners: asked once per checkpoint (signTree).
	cosigners func() []note.Signer

	reqs      chan *request // unbuffered: a send is the moment an append is taken
	free      sync.Pool     // answered requests and their answer channels, for reuse (this Ledger's)
	closing   chan struct{} // closed by Close
	done      chan struct{} // closed when the committer has returned
	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool

	// signAhead: the store waits for a batch's checkpoint signature only
	// before its last put (batchWrites.checkpoint), so plan has it signed
	// on another goroutine in the meantime (the bbolt store).
	signAhead bool
	// yieldAfterCommit: the committer yields its P once it has answered a
	// batch (Ledger.run), for a store whose commit keeps the P busy up to
	// its first fdatasync (the bbolt store). A SQL store's commit waits on
	// the network within a few µs, which frees the P for the answered
	// callers anyway; there the yield only delayed the next commit
	// (BenchmarkSettleBackends, PostgreSQL, 32 callers: -2 to -11 %).
	yieldAfterCommit bool

	prof              committerProfile
	onCommit          func(*batchWrites)           // tests: sees every committed batch
	integrityFailures atomic.Uint64                // reads that met bytes not matching their hash, or damage
	broken            atomic.Pointer[CorruptError] // set when a write met damage: writing stops

	size   atomic.Int64               // committed tree size
	latest atomic.Pointer[Checkpoint] // latest committed checkpoint
	// headMu orders the writers of size and latest (a commit's finish,
	// a shared log's refresh), which only move them forward (storeHead).
	headMu sync.Mutex
}

// Open opens the ledger file at path, creating it (mode 0600) on first use.
// A new file gets the schema version, the origin and a signed checkpoint of
// the empty tree (size 0), so the log's identity is fixed from the start; it
// is built under a temporary name and linked into place, so a crash never
// leaves an empty or half-made file at path.
//
// Opening an existing file runs a structural check first and refuses a
// damaged file with a *CorruptError (errors.Is ErrCorrupt) whose message is
// one line telling the operator to restore the backup. The check, in order
// (# Opening and damage in the package doc gives its cost):
//
//  1. the bbolt page structure: every page reachable from the current meta
//     page is bounds-checked (an ordinary leaf page only as far as its
//     element bounds), and the freelist is checked against them
//     (checkPages), before bbolt itself reads the file;
//  2. schema, origin, meta size against the last leaf; a schema-1 file
//     opened for writing is upgraded to schema 2 in place;
//  3. the latest checkpoint: signed by the configured key (another key is
//     ErrLogKeyMismatch, a damaged signature by it is corruption), its size
//     is the log size and its root the RFC 6962 tree hash of the stored
//     hashes;
//  4. the last OpenCheckLeaves leaves: each leaf's record hash and the
//     interior hashes it completed, recomputed, equal the stored ones.
//
// With Options.FullCheck, Open reads every page in step 1 and runs Check on
// the whole file instead of 3–4.
func Open(path string, opts Options) (*Ledger, error) {
	return open(path, opts, nil)
}

// OpenCheckLeaves is how many of the newest leaves Open re-hashes.
const OpenCheckLeaves = 64

// open is Open with a hook to adjust the bbolt options; tests use it to cap
// the file size and so make commits fail the way a full disk does.
func open(path string, opts Options, tune func(*bolt.Options)) (*Ledger, error) {
	return openWith(path, opts, tune, false)
}

// openWith is open; legacy opens a writable file without the journal, as on
// the platforms journalOn excludes (tests cover that path with it).
func openWith(path string, opts Options, tune func(*bolt.Options), legacy bool) (*Ledger, error) {
	l, timeout, err := newLedger(path, opts)
	if err != nil {
		return nil, err
	}
	st, lf, err := openBoltStore(boltOpen{
		path: path, origin: opts.Origin, readOnly: l.signer == nil, timeout: timeout, tune: tune, fullWalk: opts.FullCheck,
		genesis: l.genesis, legacy: legacy,
	})
	if err != nil {
		return nil, err
	}
	return l.start(st, lf, opts)
}

// newLedger checks the options of an Open and makes the Ledger without a
// store.
func newLedger(path string, opts Options) (*Ledger, time.Duration, error) {
	if err := validOrigin(opts.Origin); err != nil {
		return nil, 0, err
	}
	if opts.Signer != nil && opts.Signer.Name() != opts.Origin {
		return nil, 0, fmt.Errorf("ledger: signer name %q is not the origin %q: %w", opts.Signer.Name(), opts.Origin, ErrOriginMismatch)
	}
	if opts.Verifier != nil && opts.Verifier.Name() != opts.Origin {
		return nil, 0, fmt.Errorf("ledger: verifier name %q is not the origin %q: %w", opts.Verifier.Name(), opts.Origin, ErrOriginMismatch)
	}
	if opts.Signer != nil && opts.Verifier != nil {
		if err := checkKeyPair(opts.Signer, opts.Verifier); err != nil {
			return nil, 0, err
		}
	}
	maxBatch := opts.MaxBatch
	switch {
	case maxBatch < 0:
		return nil, 0, fmt.Errorf("ledger: MaxBatch %d: %w", maxBatch, ErrInvalid)
	case maxBatch == 0:
		maxBatch = DefaultMaxBatch
	}
	timeout := opts.OpenTimeout
	switch {
	case timeout < 0:
		return nil, 0, fmt.Errorf("ledger: OpenTimeout %v: %w", timeout, ErrInvalid)
	case timeout == 0:
		timeout = DefaultOpenTimeout
	}
	if opts.FullCheck && opts.Signer == nil && opts.Verifier == nil {
		return nil, 0, fmt.Errorf("ledger: open %s: the full check needs Options.Verifier on a read-only ledger: %w", path, ErrInvalid)
	}
	l := &Ledger{
		path:     path,
		origin:   opts.Origin,
		signer:   opts.Signer,
		verifier: opts.Verifier,
		maxBatch: maxBatch,
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	l.cosigners = opts.Cosigners
	if l.verifier == nil && l.signer != nil {
		l.verifier = signerVerifier{l.signer}
	}
	return l, timeout, nil
}

// genesis signs the checkpoint of the empty tree for a new log.
func (l *Ledger) genesis() (Checkpoint, error) {
	return l.signTree(0, tlogEmptyRoot())
}

// signTree signs the checkpoint of a tree with the log key and the
// cosigners Options.Cosigners names now (asked here, once per checkpoint).
// A panic in Cosigners fails the signature with ErrUnavailable.
func (l *Ledger) signTree(size int64, root tlog.Hash) (cp Checkpoint, err error) {
	var cosigners []note.Signer
	if l.cosigners != nil {
		defer func() {
			if r := recover(); r != nil {
				cp, err = Checkpoint{}, fmt.Errorf("ledger: sign checkpoint %d: Cosigners panicked: %v: %w", size, r, ErrUnavailable)
			}
		}()
		cosigners = l.cosigners()
	}
	return signCheckpoint(l.signer, cosigners, l.origin, size, root)
}

// start finishes an Open once the store is open: the codec, the check of
// Open, and the committer.
func (l *Ledger) start(st store, lf loadedFile, opts Options) (*Ledger, error) {
	var err error
	l.store, l.observer = st, opts.Observer
	_, bolt := st.(*boltStore)
	l.signAhead, l.yieldAfterCommit = bolt, bolt
	if l.codec, err = newCodec(lf.dicts); err != nil {
		st.close()
		return nil, fmt.Errorf("ledger: open %s: dictionaries: %w", l.path, err)
	}
	if ps, ok := st.(*pgStore); ok {
		l.codec.load = ps.dict
	}
	if err := l.checkOpen(lf.head, opts.FullCheck); err != nil {
		l.codec.close()
		st.close()
		return nil, err
	}
	cp := lf.head.latest
	l.size.Store(cp.Size)
	l.latest.Store(&cp)
	if l.signer == nil {
		close(l.done)
	} else {
		l.reqs = make(chan *request)
		// The label lets a CPU profile single out the committer's serial
		// work (go tool pprof -tagfocus ledger=committer).
		go pprof.Do(context.Background(), pprof.Labels("ledger", "committer"), func(context.Context) { l.run() })
	}
	return l, nil
}

// checkOpen is the check of Open after the store loaded the head: the
// latest checkpoint's signature and root, and the newest leaves (or the
// full Check).
func (l *Ledger) checkOpen(head storeHead, full bool) error {
	cp := head.latest
	if err := l.checkLatestSignature(cp); err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			return corrupt(l.path, ce)
		}
		return err
	}
	if full {
		if err := l.Check(); err != nil {
			var ce *CheckError
			if errors.As(err, &ce) {
				return corrupt(l.path, ce)
			}
			return err
		}
		return nil
	}
	if root := head.frontier.root(); root != cp.Root {
		return corrupt(l.path, &CheckError{Index: cp.Size, What: fmt.Sprintf("latest checkpoint: signed root %s is not the tree hash %s of the stored hashes", cp.Root, root)})
	}
	err := l.view(func(r storeReader) error {
		for i := max(0, cp.Size-OpenCheckLeaves); i < cp.Size; i++ {
			if err := l.checkStoredLeaf(r, i); err != nil {
				return err
			}
		}
		return nil
	})
	var ce *CheckError
	if errors.As(err, &ce) {
		return corrupt(l.path, ce)
	}
	return err
}

// checkStoredLeaf re-hashes leaf i and compares the hashes it completed
// with the stored ones (tlog.StoredHashes over the stored hashes).
func (l *Ledger) checkStoredLeaf(r storeReader, i int64) error {
	e, err := r.entry(i)
	if err != nil {
		return err
	}
	leaf, err := l.leafOf(e)
	if err != nil || len(leaf) == 0 {
		return &CheckError{Index: i, What: fmt.Sprintf("leaf %d is missing or unreadable: %v", i, err)}
	}
	hs, err := tlog.StoredHashes(i, leaf, r)
	if err != nil {
		return &CheckError{Index: i, What: fmt.Sprintf("leaf %d: hashes of earlier subtrees are unreadable: %v", i, err)}
	}
	base := tlog.StoredHashIndex(0, i)
	idx := make([]int64, len(hs))
	for j := range hs {
		idx[j] = base + int64(j)
	}
	stored, err := r.ReadHashes(idx)
	if err != nil {
		return &CheckError{Index: i, What: fmt.Sprintf("leaf %d: %v", i, err)}
	}
	for j, h := range hs {
		if stored[j] == h {
			continue
		}
		if j == 0 {
			return &CheckError{Index: i, What: fmt.Sprintf("leaf %d: its record hash SHA-256(0x00‖leaf) differs from stored hash %d (leaf or hash altered)", i, base)}
		}
		return &CheckError{Index: i, What: fmt.Sprintf("stored hash %d differs from the hash recomputed from the leaves", base+int64(j))}
	}
	return nil
}

// leafOf returns the leaf of a stored entry (decoded from its blob).
func (l *Ledger) leafOf(e rawEntry) ([]byte, error) {
	if e.blob != nil {
		return l.codec.decodeLeaf(e.blob)
	}
	return e.leaf, nil
}

// checkLatestSignature checks that the configured key signed the latest
// checkpoint. Signature lines of other keys only (or none) mean another key
// is configured: ErrLogKeyMismatch. A line of this key whose signature does
// not verify, or a note that is not a well-formed signed note at all (the
// ledger writes none such), means the note was damaged or edited: a
// *CheckError. (A damaged cosignature line, Options.Cosigners, is the
// latter: the ledger checks no cosignature, but it does check the form.)
func (l *Ledger) checkLatestSignature(cp Checkpoint) error {
	if l.verifier == nil {
		return nil
	}
	_, err := note.Open(cp.Note, note.VerifierList(l.verifier))
	var bad *note.InvalidSignatureError
	var unverified *note.UnverifiedNoteError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return &CheckError{Index: cp.Size, What: fmt.Sprintf("latest checkpoint: the signature by log key %s+%08x does not verify: %v", l.verifier.Name(), l.verifier.KeyHash(), err)}
	case !errors.As(err, &unverified):
		return &CheckError{Index: cp.Size, What: fmt.Sprintf("latest checkpoint: not a well-formed signed note: %v", err)}
	}
	return fmt.Errorf("ledger: open %s: latest checkpoint (size %d) is not signed by log key %s+%08x: %w: %w",
		l.path, cp.Size, l.verifier.Name(), l.verifier.KeyHash(), ErrLogKeyMismatch, err)
}

// Close stops accepting appends (they fail with ErrClosed), waits for the
// appends already taken into a batch to be committed and answered, then
// closes the file. Calling Close again returns the first call's result.
func (l *Ledger) Close() error {
	l.closeOnce.Do(func() {
		l.closed.Store(true)
		close(l.closing)
		<-l.done
		l.closeErr = l.store.close()
		l.codec.close()
	})
	return l.closeErr
}

// Path returns the file path the ledger was opened with.
func (l *Ledger) Path() string { return l.path }

// Origin returns the log origin.
func (l *Ledger) Origin() string { return l.origin }

// validOrigin applies the note key-name rules (non-empty UTF-8, no spaces, no
// '+'; golang.org/x/mod/sumdb/note) to a checkpoint origin, which C2SP
// tlog-checkpoint says SHOULD equal the key name; fiscal402 makes it a MUST.
func validOrigin(origin string) error {
	if origin == "" || !utf8.ValidString(origin) || strings.IndexFunc(origin, unicode.IsSpace) >= 0 || strings.Contains(origin, "+") {
		return fmt.Errorf("ledger: origin %q: must be non-empty UTF-8 without spaces or '+': %w", origin, ErrInvalid)
	}
	return nil
}

// signAsync hands the signature of the checkpoint cp (without its note)
// to another goroutine: the committer puts the batch's other writes
// meanwhile, and the store takes the note before it puts the checkpoint
// (batchWrites.checkpoint), so that Ed25519 is off the committer's serial
// path when the other CPU is free. If the goroutine has not started by
// then (every CPU busy), the committer signs itself, as it did before. A
// signer that fails or panics fails the commit with ErrUnavailable.
func (l *Ledger) signAsync(cp Checkpoint) *pendingSign {
	ps := &pendingSign{done: make(chan signedNote, 1)}
	ps.sign = func() (note []byte, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("ledger: sign checkpoint %d: the signer panicked: %v: %w", cp.Size, r, ErrUnavailable)
			}
		}()
		signed, err := l.signTree(cp.Size, cp.Root)
		return signed.Note, err
	}
	go func() {
		if ps.state.CompareAndSwap(signQueued, signByGoroutine) {
			var sn signedNote
			sn.note, sn.err = ps.sign()
			ps.done <- sn
		}
	}()
	return ps
}

// signerVerifier verifies note signatures of an Ed25519 signer by signing the
// same text again and comparing: Ed25519 signatures are deterministic
// (RFC 8032 §5.1.6), so equality proves the holder of the key produced it.
type signerVerifier struct{ s note.Signer }

func (v signerVerifier) Name() string    { return v.s.Name() }
func (v signerVerifier) KeyHash() uint32 { return v.s.KeyHash() }
func (v signerVerifier) Verify(msg, sig []byte) bool {
	want, err := v.s.Sign(msg)
	return err == nil && bytes.Equal(want, sig)
}

// checkKeyPair checks that verifier accepts what signer signs.
func checkKeyPair(s note.Signer, v note.Verifier) error {
	probe := []byte("fiscal402 ledger key pair probe\n")
	sig, err := s.Sign(probe)
	if err != nil {
		return fmt.Errorf("ledger: signer: %w: %w", ErrUnavailable, err)
	}
	if s.KeyHash() != v.KeyHash() || !v.Verify(probe, sig) {
		return fmt.Errorf("ledger: verifier %s+%08x is not the public half of signer %s+%08x: %w",
			v.Name(), v.KeyHash(), s.Name(), s.KeyHash(), ErrLogKeyMismatch)
	}
	return nil
}

// committerProfile measures the committer: serial is the time it spends
// per batch outside the file writes and fdatasyncs of the commit (io).
type committerProfile struct {
	serial, io, cpu, commits, appended, pages, trips atomic.Int64
}

// Stats are counters of an open ledger, for metrics.
type Stats struct {
	// IntegrityFailures counts reads that found bytes not matching their
	// hash (an *IntegrityError: an edited leaf, a document not matching its
	// digest, a checkpoint whose signature does not verify) or damage that
	// made bbolt panic (a *CorruptError). Each is also answered as an
	// error; none served the bytes.
	IntegrityFailures uint64
	// Commits and Appended count the batches committed and the entries
	// they appended since Open.
	Commits, Appended uint64
	// PagesWritten counts the pages commits wrote (data and meta pages).
	PagesWritten uint64
	// CommitterSerial is the committer's time outside the durable commit's
	// page writes and fdatasyncs (deciding claims, building and validating
	// entries, hashing, signing checkpoints, bbolt's page spill);
	// CommitterIO the time in those writes and fdatasyncs. With the
	// journal the committer writes the journal record and goes on: its
	// fdatasync, behind the committer, is in neither (# Durability).
	CommitterSerial, CommitterIO time.Duration
	// CommitterCPU is the CPU time, user and system, the committer's
	// thread spent planning batches and preparing their writes (bbolt's
	// puts, PostgreSQL's statements):
	// unlike CommitterSerial, not inflated by other goroutines or
	// processes waiting for the CPUs. The store's commit itself (bbolt's
	// spill, the page writes and fdatasyncs; PostgreSQL's round trips) is
	// not counted: across a blocking call the committer may continue on
	// another thread. Linux only (0 elsewhere).
	CommitterCPU time.Duration
	// RoundTrips counts the round trips commits made to the database
	// (PostgreSQL; 0 for bbolt): two per group commit, more only when a
	// Build-form append or a dictionary cut read beyond the loaded keys.
	RoundTrips uint64
}

// Stats returns the ledger's counters.
func (l *Ledger) Stats() Stats {
	return Stats{
		IntegrityFailures: l.integrityFailures.Load(),
		Commits:           uint64(l.prof.commits.Load()),
		Appended:          uint64(l.prof.appended.Load()),
		PagesWritten:      uint64(l.prof.pages.Load()),
		CommitterSerial:   time.Duration(l.prof.serial.Load()),
		CommitterIO:       time.Duration(l.prof.io.Load()),
		CommitterCPU:      time.Duration(l.prof.cpu.Load()),
		RoundTrips:        uint64(l.prof.trips.Load()),
	}
}

// WriteTo writes a consistent hot copy of the ledger file to w while
// appends go on: the file as of one committed transaction, which opens as
// a ledger of that size (its checkpoints, leaves and side data). It returns
// the bytes written. Restore by stopping the service and putting the copy
// in place of ledger.db (ledger.Check verifies it first). A slow w does
// not hold the file's read transaction where a spool beside the file fits
// (backup.go). A store that is not a bbolt file has backups of its own
// (ErrInvalid).
func (l *Ledger) WriteTo(w io.Writer) (int64, error) {
	if l.closed.Load() {
		return 0, ErrClosed
	}
	b, ok := l.store.(*boltStore)
	if !ok {
		return 0, fmt.Errorf("ledger: hot copy of a %T: use the database's own backups: %w", l.store, ErrInvalid)
	}
	return b.writeTo(w)
}

// CommitObserver receives the figures of each group commit (Options.Observer).
type CommitObserver interface {
	ObserveCommit(appends int, durable time.Duration)
}
