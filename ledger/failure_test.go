package ledger

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
)

// TestCommitFailureIsUnavailable makes commits fail the way a full disk
// does (bbolt MaxSize reached while growing the file) and checks that the
// appends of the failed batch get ErrUnavailable, that nothing of them is
// visible or durable, and that the log carries on once space is back.
func TestCommitFailureIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, v, _ := testKey(t, testOrigin, "log key 1")
	l, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "before")
	l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	capped, err := open(path, Options{Origin: testOrigin, Signer: s}, func(o *bolt.Options) { o.MaxSize = int(fi.Size()) })
	if err != nil {
		t.Fatal(err)
	}
	before, _ := capped.Checkpoint()
	// Random bytes: compression must not shrink the document under the cap.
	big := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(big)
	_, err = capped.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: "big"}},
		Build: func(int64) (Entry, error) {
			return Entry{ID: "big", Leaf: []byte("leaf"), Docs: map[string][]byte{"ubl": big}}, nil
		},
	})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("append on a full file: %v, want ErrUnavailable", err)
	}
	var ce *ClaimConflictError
	if errors.As(err, &ce) || errors.Is(err, ErrNotFound) {
		t.Fatalf("unavailable reported as a data state: %v", err)
	}
	if capped.Size() != 1 {
		t.Errorf("Size() = %d after a failed commit", capped.Size())
	}
	if after, _ := capped.Checkpoint(); !bytes.Equal(after.Note, before.Note) {
		t.Error("latest checkpoint moved although the commit failed")
	}
	if _, err := capped.Entry("big"); !errors.Is(err, ErrNotFound) {
		t.Errorf("failed append visible: %v", err)
	}
	if _, _, err := capped.ClaimHolder("payment", "big"); !errors.Is(err, ErrNotFound) {
		t.Errorf("claim of a failed append held: %v", err)
	}
	err = capped.Update(func(tx Tx) error { return tx.Put("side", []byte("k"), big) })
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Update on a full file: %v, want ErrUnavailable", err)
	}
	mustCheck(t, capped)
	if err := capped.Close(); err != nil {
		t.Fatal(err)
	}

	// Space is back: the same append succeeds at the index the failed one
	// would have had, and the file checks.
	l = reopen(t, path)
	got, err := l.Append(context.Background(), Append{
		Claims: []Claim{{Space: "payment", Key: "big"}},
		Build: func(int64) (Entry, error) {
			return Entry{ID: "big", Leaf: []byte("leaf"), Docs: map[string][]byte{"ubl": big}}, nil
		},
	})
	if err != nil || got.Index != 1 {
		t.Fatalf("append after space returned: %+v, %v", got, err)
	}
	l.Close()
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
}

// failingSigner is a log key whose signer can be made to fail or panic,
// like a remote signer that is offline.
type failingSigner struct {
	note.Signer
	mode atomic.Int32 // 0 signs, 1 fails, 2 panics
}

func (s *failingSigner) Sign(msg []byte) ([]byte, error) {
	switch s.mode.Load() {
	case 1:
		return nil, errors.New("signer offline")
	case 2:
		panic("signer exploded")
	}
	return s.Signer.Sign(msg)
}

// TestSignFailureIsUnavailable: the checkpoint of a batch is signed while
// the batch is written (signAhead); a signature that fails or panics fails
// the commit with ErrUnavailable, leaves nothing of the batch, does not
// stop the ledger, and the next commit goes on from the same size.
func TestSignFailureIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	key, v, _ := testKey(t, testOrigin, "log key 1")
	s := &failingSigner{Signer: key}
	l, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mustAppend(t, l, "before")
	before, _ := l.Checkpoint()
	for mode, name := range map[int32]string{1: "fails", 2: "panics"} {
		s.mode.Store(mode)
		_, err := l.Append(context.Background(), Append{Claims: []Claim{{Space: "payment", Key: name}}, Build: simpleEntry(name)})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("append while the signer %s: %v, want ErrUnavailable", name, err)
		}
		if _, err := l.Entry(name); !errors.Is(err, ErrNotFound) || l.Size() != 1 {
			t.Errorf("signer %s: entry visible (%v) or size %d", name, err, l.Size())
		}
		if after, _ := l.Checkpoint(); !bytes.Equal(after.Note, before.Note) {
			t.Errorf("signer %s: the latest checkpoint moved", name)
		}
	}
	s.mode.Store(0)
	if got := mustAppend(t, l, "after"); got.Index != 1 {
		t.Fatalf("append once the signer is back: index %d, want 1", got.Index)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, v); err != nil {
		t.Fatal(err)
	}
}

// TestPendingSignWhoSigns: the committer takes a signature the goroutine
// has not started (and signs it itself, once), and waits for one the
// goroutine started; either way the note lands in the head, and an error
// fails the commit.
func TestPendingSignWhoSigns(t *testing.T) {
	calls := 0
	sign := func() ([]byte, error) { calls++; return []byte("note"), nil }
	w := &batchWrites{signed: &pendingSign{sign: sign, done: make(chan signedNote, 1)}}
	if err := w.checkpoint(); err != nil || string(w.head.latest.Note) != "note" || calls != 1 || w.signed != nil {
		t.Fatalf("queued: %v, note %q, %d calls", err, w.head.latest.Note, calls)
	}
	if err := w.checkpoint(); err != nil || calls != 1 {
		t.Fatalf("second checkpoint: %v, %d calls", err, calls)
	}

	ps := &pendingSign{sign: sign, done: make(chan signedNote, 1)}
	ps.state.Store(signByGoroutine)
	ps.done <- signedNote{note: []byte("by goroutine")}
	w = &batchWrites{signed: ps}
	if err := w.checkpoint(); err != nil || string(w.head.latest.Note) != "by goroutine" || calls != 1 {
		t.Fatalf("started: %v, note %q, %d calls", err, w.head.latest.Note, calls)
	}

	ps = &pendingSign{done: make(chan signedNote, 1)}
	ps.state.Store(signByGoroutine)
	ps.done <- signedNote{err: ErrUnavailable}
	if err := (&batchWrites{signed: ps}).checkpoint(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("failed signature: %v", err)
	}
}
