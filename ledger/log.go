package ledger

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Checkpoint is a signed C2SP tlog-checkpoint: the log's origin, the tree
// size and the RFC 6962 root hash of the first Size leaves. Note is the signed
// note verbatim (text, blank line, signature lines), which is what clients
// store, compare and hand to witnesses.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	Note   []byte
}

// checkpointText formats the body of a C2SP tlog-checkpoint
// (c2sp.org/tlog-checkpoint): origin, decimal tree size, base64 root, each on
// its own line. No extension lines (the spec calls them NOT RECOMMENDED).
// tlog.FormatTree is not used: its first line is the fixed go.sum one.
func checkpointText(origin string, size int64, root tlog.Hash) string {
	return origin + "\n" + strconv.FormatInt(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
}

// signCheckpoint signs the checkpoint of a tree as a C2SP signed note: the
// log key's signature line first, then one line per cosigner, in order.
func signCheckpoint(s note.Signer, cosigners []note.Signer, origin string, size int64, root tlog.Hash) (Checkpoint, error) {
	signers := append(make([]note.Signer, 0, 1+len(cosigners)), s)
	for _, c := range cosigners {
		if c == nil || c.Name() == origin {
			return Checkpoint{}, fmt.Errorf("ledger: sign checkpoint %d: a cosigner is nil or named like the log key: %w", size, ErrUnavailable)
		}
		signers = append(signers, c)
	}
	msg, err := note.Sign(&note.Note{Text: checkpointText(origin, size, root)}, signers...)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: sign checkpoint %d: %w: %w", size, ErrUnavailable, err)
	}
	return Checkpoint{Origin: origin, Size: size, Root: root, Note: msg}, nil
}

// tlogEmptyRoot is the RFC 6962 §2.1 hash of the empty tree, SHA-256 of the
// empty string, which tlog.TreeHash returns for n = 0.
func tlogEmptyRoot() tlog.Hash {
	h, _ := tlog.TreeHash(0, nil)
	return h
}

// ParseCheckpoint verifies a signed C2SP tlog-checkpoint note with the log
// key v and parses it. The note must carry a valid signature by v; signatures
// by other keys (witness cosignatures) are ignored, as C2SP signed-note
// requires. The origin line must equal v's key name (fiscal402 logs name their
// key after their origin), the size must be a canonical non-negative decimal
// and the root a canonical base64 SHA-256 hash. Extension lines after the
// root are accepted and ignored (c2sp.org/tlog-checkpoint). Errors wrap
// ErrBadCheckpoint, and the note package's *note.InvalidSignatureError or
// *note.UnverifiedNoteError when the signature is the problem.
func ParseCheckpoint(noteText []byte, v note.Verifier) (Checkpoint, error) {
	if v == nil {
		return Checkpoint{}, fmt.Errorf("ledger: parse checkpoint: nil verifier: %w", ErrInvalid)
	}
	n, err := note.Open(noteText, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint: %w: %w", ErrBadCheckpoint, err)
	}
	cp, err := parseCheckpointText(n.Text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint: %w: %w", ErrBadCheckpoint, err)
	}
	if cp.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint: origin %q is not the key name %q: %w", cp.Origin, v.Name(), ErrBadCheckpoint)
	}
	cp.Note = clone(noteText)
	return cp, nil
}

// parseCheckpointText parses the text of a C2SP tlog-checkpoint.
func parseCheckpointText(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	// SplitAfter leaves a final "" after the terminating newline.
	if len(lines) < 4 || lines[len(lines)-1] != "" {
		return Checkpoint{}, errors.New("checkpoint text must have at least three newline-terminated lines")
	}
	origin := strings.TrimSuffix(lines[0], "\n")
	sizeText := strings.TrimSuffix(lines[1], "\n")
	rootText := strings.TrimSuffix(lines[2], "\n")
	if origin == "" {
		return Checkpoint{}, errors.New("empty origin line")
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != sizeText {
		return Checkpoint{}, fmt.Errorf("tree size %q is not a canonical non-negative decimal", sizeText)
	}
	raw, err := base64.StdEncoding.DecodeString(rootText)
	if err != nil || len(raw) != tlog.HashSize || base64.StdEncoding.EncodeToString(raw) != rootText {
		return Checkpoint{}, fmt.Errorf("root %q is not a canonical base64 %d-byte hash", rootText, tlog.HashSize)
	}
	for _, ext := range lines[3 : len(lines)-1] {
		if ext == "\n" {
			return Checkpoint{}, errors.New("empty extension line")
		}
	}
	var root tlog.Hash
	copy(root[:], raw)
	return Checkpoint{Origin: origin, Size: size, Root: root}, nil
}

// parseStoredCheckpoint parses a checkpoint note read from the file without
// verifying its signature (Check and Open do that).
func parseStoredCheckpoint(msg []byte) (Checkpoint, error) {
	i := bytes.Index(msg, []byte("\n\n"))
	if i < 0 {
		return Checkpoint{}, errors.New("not a signed note")
	}
	cp, err := parseCheckpointText(string(msg[:i+1]))
	if err != nil {
		return Checkpoint{}, err
	}
	cp.Note = clone(msg)
	return cp, nil
}

// Size returns the committed tree size: the number of leaves in the log.
// On a log shared with other writers it is read from the store.
func (l *Ledger) Size() int64 {
	_ = l.refresh()
	return l.size.Load()
}

// Checkpoint returns the latest committed checkpoint. A new ledger has the
// signed checkpoint of the empty tree (size 0). On a shared log it is read
// from the store: one that cannot be reached is ErrUnavailable, never the
// older head this process saw last.
func (l *Ledger) Checkpoint() (Checkpoint, error) {
	if l.closed.Load() {
		return Checkpoint{}, ErrClosed
	}
	if err := l.refresh(); err != nil {
		return Checkpoint{}, err
	}
	cp := *l.latest.Load()
	cp.Note = clone(cp.Note)
	return cp, nil
}

// CheckpointAt returns the stored checkpoint of tree size size. Every commit
// stores one, so the sizes that exist are the sizes after each commit (plus
// 0); any other size is ErrNotFound.
func (l *Ledger) CheckpointAt(size int64) (Checkpoint, error) {
	var cp Checkpoint
	err := l.view(func(r storeReader) error {
		if size < 0 {
			return fmt.Errorf("ledger: checkpoint of size %d: %w", size, ErrNotFound)
		}
		v, ok, err := r.checkpoint(size)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ledger: checkpoint of size %d: %w", size, ErrNotFound)
		}
		cp, err = l.storedCheckpoint(v)
		return err
	})
	return cp, err
}

// storedCheckpoint parses a checkpoint read from the file and, when the
// ledger has a verifier, checks its signature: a note that does not verify
// is never served (an *IntegrityError naming its size).
func (l *Ledger) storedCheckpoint(v []byte) (Checkpoint, error) {
	cp, err := parseStoredCheckpoint(v)
	if err != nil {
		l.integrityFailures.Add(1)
		return Checkpoint{}, &IntegrityError{Index: -1, What: "stored checkpoint does not parse: " + err.Error()}
	}
	if l.verifier != nil {
		if _, err := note.Open(cp.Note, note.VerifierList(l.verifier)); err != nil {
			l.integrityFailures.Add(1)
			return Checkpoint{}, &IntegrityError{Index: cp.Size, What: "checkpoint of size " + strconv.FormatInt(cp.Size, 10) + ": signature by the log key does not verify"}
		}
	}
	return cp, nil
}

// CoveringCheckpoint returns the checkpoint of the commit that appended the
// leaf at index: the stored checkpoint with the smallest size greater than
// index. A receipt issued for that leaf proves its inclusion against it.
func (l *Ledger) CoveringCheckpoint(index int64) (Checkpoint, error) {
	if index < 0 {
		return Checkpoint{}, fmt.Errorf("ledger: covering checkpoint of index %d: %w", index, ErrInvalid)
	}
	var cp Checkpoint
	err := l.view(func(r storeReader) error {
		v, ok, err := r.checkpointAbove(index)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ledger: covering checkpoint of index %d: %w", index, ErrNotFound)
		}
		cp, err = l.storedCheckpoint(v)
		return err
	})
	return cp, err
}

// InclusionProof returns the RFC 6962 §2.1.1 audit path proving that the
// tree of size size contains the leaf at index; verify it with
// tlog.CheckRecord(p, size, root, index, tlog.RecordHash(leaf)). Any size up
// to the current one may be asked for, not only checkpointed sizes.
func (l *Ledger) InclusionProof(index, size int64) (tlog.RecordProof, error) {
	if index < 0 || index >= size {
		return nil, fmt.Errorf("ledger: inclusion proof of index %d in size %d: %w", index, size, ErrInvalid)
	}
	var p tlog.RecordProof
	err := l.view(func(r storeReader) error {
		if err := needSize(r, size); err != nil {
			return err
		}
		var err error
		p, err = tlog.ProveRecord(size, index, r)
		return err
	})
	return p, err
}

// ConsistencyProof returns the RFC 6962 §2.1.2 proof that the tree of size to
// contains the tree of size from as a prefix (1 ≤ from ≤ to ≤ Size()); verify
// it with tlog.CheckTree(p, to, rootTo, from, rootFrom).
func (l *Ledger) ConsistencyProof(from, to int64) (tlog.TreeProof, error) {
	if from < 1 || from > to {
		return nil, fmt.Errorf("ledger: consistency proof from %d to %d: %w", from, to, ErrInvalid)
	}
	var p tlog.TreeProof
	err := l.view(func(r storeReader) error {
		if err := needSize(r, to); err != nil {
			return err
		}
		var err error
		p, err = tlog.ProveTree(to, from, r)
		return err
	})
	return p, err
}

// TreeHash returns the RFC 6962 root hash of the first size leaves
// (0 ≤ size ≤ Size()), for sizes that have no stored checkpoint.
func (l *Ledger) TreeHash(size int64) (tlog.Hash, error) {
	if size < 0 {
		return tlog.Hash{}, fmt.Errorf("ledger: tree hash of size %d: %w", size, ErrInvalid)
	}
	var h tlog.Hash
	err := l.view(func(r storeReader) error {
		if err := needSize(r, size); err != nil {
			return err
		}
		var err error
		h, err = tlog.TreeHash(size, r)
		return err
	})
	return h, err
}

// ReadHashes reads stored hashes by tlog stored-hash index, which makes a
// Ledger a tlog.HashReader (for tlog.ReadTileData when serving tiles, or
// tlog.TreeHash). Indexes at or beyond tlog.StoredHashCount(Size()) are
// ErrNotFound.
func (l *Ledger) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	var hs []tlog.Hash
	err := l.view(func(r storeReader) error {
		size := r.size()
		limit := tlog.StoredHashCount(size)
		for _, i := range indexes {
			if i < 0 || i >= limit {
				return fmt.Errorf("ledger: stored hash %d (tree size %d): %w", i, size, ErrNotFound)
			}
		}
		var err error
		hs, err = r.ReadHashes(indexes)
		return err
	})
	return hs, err
}

// needSize fails with ErrNotFound when the log is smaller than size.
func needSize(r storeReader, size int64) error {
	if have := r.size(); size > have {
		return fmt.Errorf("ledger: tree size %d beyond the log's size %d: %w", size, have, ErrNotFound)
	}
	return nil
}

// view runs fn over a consistent snapshot, mapping a closed store to
// ErrClosed and a panic or memory fault inside the store (a damaged page)
// to a *CorruptError.
func (l *Ledger) view(fn func(r storeReader) error) (err error) {
	if l.closed.Load() {
		return ErrClosed
	}
	defer l.readGuard(&err, debug.SetPanicOnFault(true))
	return l.store.view(fn)
}
