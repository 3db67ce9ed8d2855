package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
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
	// operation was acknowledged; retrying later is correct. The HTTP service
	// answers 503 DB_UNAVAILABLE.
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
}

// Ledger is an open ledger file. Its methods are safe for concurrent use.
type Ledger struct {
	db       *bolt.DB
	path     string
	origin   string
	signer   note.Signer   // nil when read-only
	verifier note.Verifier // nil when read-only without Options.Verifier
	maxBatch int

	reqs      chan *request // unbuffered: a send is the moment an append is taken
	closing   chan struct{} // closed by Close
	done      chan struct{} // closed when the committer has returned
	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool

	prof committerProfile

	size   atomic.Int64               // committed tree size
	latest atomic.Pointer[Checkpoint] // latest committed checkpoint
}

// Open opens the ledger file at path, creating it (mode 0600) on first use.
// A new file gets the schema version, the origin and a signed checkpoint of
// the empty tree (size 0), so the log's identity is fixed from the start.
// Open checks that meta, leaves and the latest checkpoint agree on the size
// and that the latest checkpoint is signed by the configured key; the full
// verification is Check.
func Open(path string, opts Options) (*Ledger, error) {
	return open(path, opts, nil)
}

// open is Open with a hook to adjust the bbolt options; tests use it to cap
// the file size and so make commits fail the way a full disk does.
func open(path string, opts Options, tune func(*bolt.Options)) (*Ledger, error) {
	if err := validOrigin(opts.Origin); err != nil {
		return nil, err
	}
	if opts.Signer != nil && opts.Signer.Name() != opts.Origin {
		return nil, fmt.Errorf("ledger: signer name %q is not the origin %q: %w", opts.Signer.Name(), opts.Origin, ErrOriginMismatch)
	}
	if opts.Verifier != nil && opts.Verifier.Name() != opts.Origin {
		return nil, fmt.Errorf("ledger: verifier name %q is not the origin %q: %w", opts.Verifier.Name(), opts.Origin, ErrOriginMismatch)
	}
	if opts.Signer != nil && opts.Verifier != nil {
		if err := checkKeyPair(opts.Signer, opts.Verifier); err != nil {
			return nil, err
		}
	}
	maxBatch := opts.MaxBatch
	switch {
	case maxBatch < 0:
		return nil, fmt.Errorf("ledger: MaxBatch %d: %w", maxBatch, ErrInvalid)
	case maxBatch == 0:
		maxBatch = DefaultMaxBatch
	}
	timeout := opts.OpenTimeout
	switch {
	case timeout < 0:
		return nil, fmt.Errorf("ledger: OpenTimeout %v: %w", timeout, ErrInvalid)
	case timeout == 0:
		timeout = DefaultOpenTimeout
	}

	readOnly := opts.Signer == nil
	_, statErr := os.Stat(path)
	creating := errors.Is(statErr, os.ErrNotExist)
	if readOnly && creating {
		return nil, fmt.Errorf("ledger: open %s read-only: %w", path, ErrNotFound)
	}
	boltOpts := &bolt.Options{Timeout: timeout, ReadOnly: readOnly}
	if tune != nil {
		tune(boltOpts)
	}
	db, err := bolt.Open(path, 0o600, boltOpts)
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("ledger: open %s: file locked by another process or open Ledger: %w: %w", path, ErrUnavailable, err)
		}
		return nil, fmt.Errorf("ledger: open %s: %w", path, err)
	}
	if creating {
		// bbolt fsyncs the file but not the directory entry that names it;
		// without this a crash could lose the whole file, acknowledged
		// appends included.
		if err := syncDir(filepath.Dir(path)); err != nil {
			db.Close()
			return nil, fmt.Errorf("ledger: open %s: %w: %w", path, ErrUnavailable, err)
		}
	}

	l := &Ledger{
		db:       db,
		path:     path,
		origin:   opts.Origin,
		signer:   opts.Signer,
		verifier: opts.Verifier,
		maxBatch: maxBatch,
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	if l.verifier == nil && l.signer != nil {
		l.verifier = signerVerifier{l.signer}
	}
	if !readOnly {
		if err := l.initialize(); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := l.loadHead(); err != nil {
		db.Close()
		return nil, err
	}
	if readOnly {
		close(l.done)
	} else {
		l.reqs = make(chan *request)
		go l.run()
	}
	return l, nil
}

// initialize creates the buckets, meta and genesis checkpoint of a new
// file; an existing file is left untouched.
func (l *Ledger) initialize() error {
	var exists bool
	if err := l.db.View(func(tx *bolt.Tx) error {
		exists = tx.Bucket(bucketMeta) != nil
		return nil
	}); err != nil {
		return fmt.Errorf("ledger: open %s: %w: %w", l.path, ErrUnavailable, err)
	}
	if exists {
		return nil // loadHead checks schema, origin and head without writing
	}
	err := l.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			if k, _ := tx.Cursor().First(); k != nil {
				return fmt.Errorf("ledger: %s is a bbolt file without ledger meta (first bucket %q): %w", l.path, k, ErrInvalid)
			}
			for _, name := range ownBuckets {
				if _, err := tx.CreateBucket(name); err != nil {
					return err
				}
			}
			meta = tx.Bucket(bucketMeta)
			for _, kv := range [][2][]byte{
				{metaSchema, []byte(schemaVersion)},
				{metaOrigin, []byte(l.origin)},
				{metaSize, u64(0)},
			} {
				if err := meta.Put(kv[0], kv[1]); err != nil {
					return err
				}
			}
			cp, err := signCheckpoint(l.signer, l.origin, 0, tlogEmptyRoot())
			if err != nil {
				return err
			}
			return tx.Bucket(bucketCheckpoints).Put(u64(0), cp.Note)
		}
		return checkMeta(meta, l.origin, l.path)
	})
	if err != nil {
		if errors.Is(err, ErrInvalid) || errors.Is(err, ErrOriginMismatch) || errors.Is(err, ErrUnavailable) {
			return err
		}
		return fmt.Errorf("ledger: initialize %s: %w: %w", l.path, ErrUnavailable, err)
	}
	return nil
}

// checkMeta verifies the schema version and origin recorded in meta.
func checkMeta(meta *bolt.Bucket, origin, path string) error {
	if v := meta.Get(metaSchema); string(v) != schemaVersion {
		return fmt.Errorf("ledger: %s has schema %q, this version reads %q: %w", path, v, schemaVersion, ErrInvalid)
	}
	if v := meta.Get(metaOrigin); string(v) != origin {
		return fmt.Errorf("ledger: %s belongs to origin %q, not %q: %w", path, v, origin, ErrOriginMismatch)
	}
	return nil
}

// loadHead reads the committed size and latest checkpoint, checks that they
// agree with each other and with the leaves, and that the configured key
// signed the checkpoint.
func (l *Ledger) loadHead() error {
	var cp Checkpoint
	err := l.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("ledger: %s has no meta bucket: %w", l.path, ErrInvalid)
		}
		if err := checkMeta(meta, l.origin, l.path); err != nil {
			return err
		}
		size, err := parseU64(meta.Get(metaSize))
		if err != nil {
			return &CheckError{Index: -1, What: "meta size: " + err.Error()}
		}
		var last int64 = -1
		if k, _ := tx.Bucket(bucketLeaves).Cursor().Last(); k != nil {
			if last, err = parseU64(k); err != nil {
				return &CheckError{Index: -1, What: "leaves: last key: " + err.Error()}
			}
		}
		if last+1 != size {
			return &CheckError{Index: last, What: fmt.Sprintf("meta size %d but the last leaf has index %d", size, last)}
		}
		k, v := tx.Bucket(bucketCheckpoints).Cursor().Last()
		if k == nil {
			return &CheckError{Index: -1, What: "no checkpoint stored"}
		}
		cp, err = parseStoredCheckpoint(v)
		if err != nil {
			return &CheckError{Index: size, What: "latest checkpoint: " + err.Error()}
		}
		if cp.Size != size {
			return &CheckError{Index: size, What: fmt.Sprintf("meta size %d but the latest checkpoint has size %d", size, cp.Size)}
		}
		return nil
	})
	if err != nil {
		var ce *CheckError
		if errors.As(err, &ce) {
			return fmt.Errorf("ledger: open %s: %w", l.path, err)
		}
		return err
	}
	if l.verifier != nil {
		if _, err := note.Open(cp.Note, note.VerifierList(l.verifier)); err != nil {
			return fmt.Errorf("ledger: open %s: latest checkpoint (size %d) is not signed by log key %s+%08x: %w: %w",
				l.path, cp.Size, l.verifier.Name(), l.verifier.KeyHash(), ErrLogKeyMismatch, err)
		}
	}
	l.size.Store(cp.Size)
	l.latest.Store(&cp)
	return nil
}

// Close stops accepting appends (they fail with ErrClosed), waits for the
// appends already taken into a batch to be committed and answered, then
// closes the file. Calling Close again returns the first call's result.
func (l *Ledger) Close() error {
	l.closeOnce.Do(func() {
		l.closed.Store(true)
		close(l.closing)
		<-l.done
		l.closeErr = l.db.Close()
	})
	return l.closeErr
}

// Path returns the file path the ledger was opened with.
func (l *Ledger) Path() string { return l.path }

// Origin returns the log origin.
func (l *Ledger) Origin() string { return l.origin }

// mapClosed turns bbolt's "database not open" into ErrClosed.
func mapClosed(err error) error {
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// validOrigin applies the note key-name rules (non-empty UTF-8, no spaces, no
// '+'; golang.org/x/mod/sumdb/note) to a checkpoint origin, which C2SP
// tlog-checkpoint says SHOULD equal the key name; fiscal402 makes it a MUST.
func validOrigin(origin string) error {
	if origin == "" || !utf8.ValidString(origin) || strings.IndexFunc(origin, unicode.IsSpace) >= 0 || strings.Contains(origin, "+") {
		return fmt.Errorf("ledger: origin %q: must be non-empty UTF-8 without spaces or '+': %w", origin, ErrInvalid)
	}
	return nil
}

// syncDir fsyncs a directory so that a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
	serial, io, commits, appended atomic.Int64
}
