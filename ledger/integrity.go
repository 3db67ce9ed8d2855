package ledger

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// ErrCorrupt: the ledger file is damaged below the log (bbolt pages, meta,
// a checkpoint or hashes that do not agree with the leaves). Every error
// reporting it is a *CorruptError.
var ErrCorrupt = errors.New("ledger: file damaged")

// ErrIntegrity: bytes read from the file do not match the hash the log
// holds for them (an edited or damaged leaf, or a document that does not
// match the digest its leaf commits to). Every error reporting it is an
// *IntegrityError. The HTTP service answers 500 LEDGER_INTEGRITY.
var ErrIntegrity = errors.New("ledger: integrity failure")

// CorruptError reports a damaged ledger file: Open refuses to open it, and a
// read that meets damage (a bbolt page that does not parse, which makes
// bbolt panic) answers it instead of panicking. Error() is one line that
// tells the operator what to do. It wraps ErrCorrupt and, when a check found
// the problem, its *CheckError.
type CorruptError struct {
	Path string
	// Index is the log index the damage concerns (for a checkpoint: its
	// tree size), or -1 when it concerns the file as a whole.
	Index int64
	// Reason says what is damaged, on one line.
	Reason string
	// Err is the *CheckError that found it, or nil.
	Err error
}

func (e *CorruptError) Error() string {
	where := ""
	if e.Index >= 0 {
		where = fmt.Sprintf(" at index %d", e.Index)
	}
	return fmt.Sprintf("ledger: %s is damaged%s (%s): restore it from the latest backup and verify the copy with the full check before serving it", e.Path, where, e.Reason)
}

func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

// HaltedError is what every read and write of a bbolt ledger answers after
// a commit whose meta page was written and whose second fdatasync failed
// (ledger doc.go, "Durability"): bbolt had taken a commit that may not be
// on the disk, so the ledger stopped rather than build on it or answer
// from it. It wraps ErrUnavailable (nothing was acknowledged, and the
// service answers 503) and the failed sync's own error.
type HaltedError struct {
	Path string
	// Err is the error of the failed commit (the fdatasync's).
	Err error
}

func (e *HaltedError) Error() string {
	return fmt.Sprintf("ledger: %s: a commit failed once bbolt had put it in force (%v), so the disk may not hold what the file shows; "+
		"the ledger stopped reading and writing. Check the disk, reboot the host (or otherwise drop the file from the page cache, "+
		"which still shows the failed commit), then open the file with the full check (Options.FullCheck; the bundled server's -check full); "+
		"restore the latest backup only if that fails", e.Path, e.Err)
}

func (e *HaltedError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// ErrJournalMismatch: the bbolt file is older than the checkpoint of the
// journal beside it, so the journal is not this file's. Every error
// reporting it is a *JournalMismatchError.
var ErrJournalMismatch = errors.New("ledger: the journal belongs to a later state of the file")

// JournalMismatchError is what Open (writable or read-only) answers for a
// bbolt file whose newest transaction is older than its journal's
// checkpoint: another file was put in its place after the journal last
// wrote one (a backup restored over it, or a copy made by bbolt compact,
// which numbers its transactions anew), with the journal files left
// beside it. Nothing is written. The file itself need not be damaged,
// so this is not a *CorruptError: what to do depends on which of the two
// the operator means to serve. Replaying the journal onto it would point
// its meta page at pages it lacks (doc.go, "Durability" and "Opening and damage").
type JournalMismatchError struct {
	Path string
	// Journal names the journal files.
	Journal [2]string
	// FileTxid is the file's newest bbolt transaction, CheckpointTxid
	// the journal's newest checkpoint.
	FileTxid, CheckpointTxid uint64
	// Foreign: the file is as new as the checkpoint or newer, but does not
	// hold its state (FileBytes, smaller than the CheckpointBytes its
	// pages take, or another meta page at its transaction): the file is
	// damaged, or the journal is another ledger's.
	Foreign                    bool
	FileBytes, CheckpointBytes int64
}

func (e *JournalMismatchError) Error() string {
	if e.Foreign {
		return fmt.Sprintf("ledger: %s does not hold the state its journal's checkpoint describes (transaction %d in %d bytes; the file: newest transaction %d, %d bytes), "+
			"so the journal files %s and %s were not replayed into it and nothing was written: either the file is damaged (truncated), and then restore it from the latest backup "+
			"and verify the copy with the full check, or the journal files belong to another ledger file (a restore that mixed two data directories), "+
			"and then put back the file they belong to, or move them away (they are not read again) and verify this file with the full check",
			e.Path, e.CheckpointTxid, e.CheckpointBytes, e.FileTxid, e.FileBytes, e.Journal[0], e.Journal[1])
	}
	return fmt.Sprintf("ledger: %s is older than its journal (its newest transaction is %d, the journal's checkpoint %d): the journal files %s and %s "+
		"belong to a later state of this file, so another file was put in its place (a restored backup, or a bbolt compact copy). "+
		"If this file is the one to serve, move the journal files away (they are not read again) and verify the file with the full check; "+
		"if not, put back the file they belong to", e.Path, e.FileTxid, e.CheckpointTxid, e.Journal[0], e.Journal[1])
}

func (e *JournalMismatchError) Unwrap() error { return ErrJournalMismatch }

// NeedsOperator reports whether err lasts until an operator has acted: a
// *HaltedError, a damaged file (ErrCorrupt, ErrIntegrity), or a file
// whose journal is not its own (ErrJournalMismatch). A background loop
// that meets one need not try again every second: nothing it does can
// succeed before then.
func NeedsOperator(err error) bool {
	var h *HaltedError
	return errors.As(err, &h) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrIntegrity) || errors.Is(err, ErrJournalMismatch)
}

// corrupt builds a *CorruptError; a *CheckError is kept as its cause.
func corrupt(path string, err error) *CorruptError {
	var ce *CheckError
	if errors.As(err, &ce) {
		return &CorruptError{Path: path, Index: ce.Index, Reason: oneLine(ce.What), Err: ce}
	}
	return &CorruptError{Path: path, Index: -1, Reason: oneLine(err.Error()), Err: err}
}

// IntegrityError reports bytes that do not match their hash: the leaf at
// Index against its stored RFC 6962 record hash, or a document of the entry
// at Index against the digest the caller knows for it. The bytes are never
// returned with it. It wraps ErrIntegrity.
type IntegrityError struct {
	Index int64
	What  string
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("ledger: integrity: entry %d: %s", e.Index, e.What)
}

func (e *IntegrityError) Unwrap() error { return ErrIntegrity }

// oneLine folds a message onto one line (bbolt's panic messages may hold
// newlines) and bounds its length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// verifyLeaf checks a leaf against the stored record hash of its index,
// SHA-256(0x00‖leaf) (RFC 6962 §2.1): one SHA-256.
func verifyLeaf(index int64, leaf, stored []byte) error {
	if len(stored) != tlog.HashSize {
		return &IntegrityError{Index: index, What: fmt.Sprintf("its stored record hash has %d bytes", len(stored))}
	}
	if h := tlog.RecordHash(leaf); string(h[:]) != string(stored) {
		return &IntegrityError{Index: index, What: "its leaf does not match its stored record hash SHA-256(0x00‖leaf)"}
	}
	return nil
}

// verifyDoc checks a document against the SHA-256 digest its caller knows.
func verifyDoc(index int64, name string, doc []byte, want [sha256.Size]byte) error {
	if sha256.Sum256(doc) != want {
		return &IntegrityError{Index: index, What: fmt.Sprintf("document %q does not match the SHA-256 digest it is anchored by", name)}
	}
	return nil
}

// readGuard turns a panic or a memory fault raised while reading the file
// into a *CorruptError: bbolt trusts its pages and panics (or faults on its
// memory map) when a damaged one does not parse. Use as
//
//	defer l.readGuard(&err, debug.SetPanicOnFault(true))
//
// which enables panic-on-fault for the calling goroutine until the read
// returns (old is what SetPanicOnFault returned, restored here). Deferred
// directly, it costs no allocation, unlike a returned closure.
func (l *Ledger) readGuard(err *error, old bool) {
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		if up, ok := r.(userPanic); ok {
			panic(up.v) // the caller's own code panicked: not ours to hide
		}
		if sp, ok := r.(storePanic); ok {
			r = sp.v
		}
		l.integrityFailures.Add(1)
		*err = &CorruptError{Path: l.path, Index: -1, Reason: "reading the file failed: " + panicText(r)}
	}
}

// userPanic carries a panic raised by caller code (a View, Update, Build or
// Hook function) through the read guards, which re-raise it; storePanic
// carries one raised by bbolt while caller code was running (a damaged page
// met by a Tx method), which the guards report as damage.
type (
	userPanic  struct{ v any }
	storePanic struct{ v any }
)

// callUser runs caller code, marking a panic in it as the caller's unless
// it came from the store.
func callUser[T any](fn func() (T, error)) (T, error) {
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case userPanic, storePanic:
				panic(r)
			}
			panic(userPanic{r})
		}
	}()
	return fn()
}

// storeGuard marks a panic raised by the store as such; Tx methods, which
// run inside caller code, defer it.
func storeGuard() {
	if r := recover(); r != nil {
		switch r.(type) {
		case userPanic, storePanic:
			panic(r)
		}
		panic(storePanic{r})
	}
}

// panicText describes a recovered panic on one line.
func panicText(r any) string {
	switch v := r.(type) {
	case runtime.Error:
		return oneLine(v.Error())
	case error:
		return oneLine(v.Error())
	default:
		return oneLine(fmt.Sprint(v))
	}
}
