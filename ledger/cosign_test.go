package ledger

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// sigNames returns the key names of a signed note's signature lines, in
// order.
func sigNames(t testing.TB, msg []byte) []string {
	t.Helper()
	i := bytes.LastIndex(msg, []byte("\n\n"))
	if i < 0 {
		t.Fatalf("not a signed note: %q", msg)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(string(msg[i+2:]), "\n"), "\n") {
		body, ok := strings.CutPrefix(line, "— ")
		if !ok {
			t.Fatalf("signature line %q", line)
		}
		name, _, _ := strings.Cut(body, " ")
		names = append(names, name)
	}
	return names
}

// TestCosigners: with Options.Cosigners every checkpoint the ledger writes
// (the empty tree's and each commit's) carries the log key's signature
// line and then one line per cosigner, each verifying with its key; the
// ledger's own readers (ParseCheckpoint, Check, a reopen without
// cosigners) ignore the extra lines; the function is asked per
// checkpoint, so a new cosigner (a rotated key) signs from the next commit
// on.
func TestCosigners(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		a, av, _ := testKey(t, "cosigner-a", "cosigner a")
		b, bv, _ := testKey(t, "cosigner-b", "cosigner b")
		var current atomic.Pointer[[]note.Signer]
		current.Store(&[]note.Signer{a})
		var asked atomic.Int64
		l, path, v := testLedger(t, func(o *Options) {
			o.Cosigners = func() []note.Signer { asked.Add(1); return *current.Load() }
		})
		genesis, err := l.CheckpointAt(0)
		if err != nil {
			t.Fatal(err)
		}
		if got := sigNames(t, genesis.Note); strings.Join(got, " ") != testOrigin+" cosigner-a" {
			t.Fatalf("empty tree's checkpoint signed by %v", got)
		}
		mustAppend(t, l, "one")
		first, _ := l.Checkpoint()
		current.Store(&[]note.Signer{b, a})
		mustAppend(t, l, "two")
		second, _ := l.Checkpoint()
		for _, tc := range []struct {
			cp        Checkpoint
			names     string
			verifiers []note.Verifier
		}{
			{first, testOrigin + " cosigner-a", []note.Verifier{av}},
			{second, testOrigin + " cosigner-b cosigner-a", []note.Verifier{bv, av}},
		} {
			if got := strings.Join(sigNames(t, tc.cp.Note), " "); got != tc.names {
				t.Errorf("checkpoint %d signed by %s, want %s", tc.cp.Size, got, tc.names)
			}
			for _, cv := range tc.verifiers {
				n, err := note.Open(tc.cp.Note, note.VerifierList(cv))
				if err != nil || len(n.Sigs) != 1 {
					t.Errorf("checkpoint %d: cosignature by %s: %v", tc.cp.Size, cv.Name(), err)
				}
			}
			if cp, err := ParseCheckpoint(tc.cp.Note, v); err != nil || cp.Size != tc.cp.Size {
				t.Errorf("ParseCheckpoint with the log key: %+v, %v", cp, err)
			}
		}
		if stored, err := l.CheckpointAt(2); err != nil || !bytes.Equal(stored.Note, second.Note) {
			t.Errorf("stored checkpoint of 2: %v, or differs from the latest", err)
		}
		if n := asked.Load(); n != 3 {
			t.Errorf("Cosigners asked %d times, want once per checkpoint (3)", n)
		}
		mustCheck(t, l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// A reopen without cosigners reads the cosigned checkpoints and
		// signs its own with the log key alone.
		l = reopen(t, path)
		mustAppend(t, l, "three")
		third, _ := l.Checkpoint()
		if got := sigNames(t, third.Note); len(got) != 1 || got[0] != testOrigin {
			t.Errorf("checkpoint without cosigners signed by %v", got)
		}
		mustCheck(t, l)
	})
}

// TestCosignerFailureIsUnavailable: a cosigner that fails or panics, a
// Cosigners function that panics, and a cosigner named like the log key
// each fail the commit with ErrUnavailable and leave nothing of it; the
// next commit goes on from the same size.
func TestCosignerFailureIsUnavailable(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		key, _, _ := testKey(t, "cosigner-a", "cosigner a")
		s := &failingSigner{Signer: key}
		logKey, _, _ := testKey(t, testOrigin, "another log key")
		var mode atomic.Int32 // 0 good, 1 Cosigners panics, 2 cosigner named like the log
		l, _, _ := testLedger(t, func(o *Options) {
			o.Cosigners = func() []note.Signer {
				switch mode.Load() {
				case 1:
					panic("no cosigners today")
				case 2:
					return []note.Signer{logKey}
				}
				return []note.Signer{s}
			}
		})
		mustAppend(t, l, "before")
		before, _ := l.Checkpoint()
		for _, tc := range []struct {
			name         string
			mode, signer int32
		}{{"cosigner fails", 0, 1}, {"cosigner panics", 0, 2}, {"Cosigners panics", 1, 0}, {"cosigner named like the log", 2, 0}} {
			mode.Store(tc.mode)
			s.mode.Store(tc.signer)
			_, err := l.Append(context.Background(), Append{Claims: []Claim{{Space: "payment", Key: tc.name}}, Build: simpleEntry(tc.name)})
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("%s: append = %v, want ErrUnavailable", tc.name, err)
			}
			if _, err := l.Entry(tc.name); !errors.Is(err, ErrNotFound) || l.Size() != 1 {
				t.Errorf("%s: entry visible (%v) or size %d", tc.name, err, l.Size())
			}
			if after, _ := l.Checkpoint(); !bytes.Equal(after.Note, before.Note) {
				t.Errorf("%s: the latest checkpoint moved", tc.name)
			}
		}
		mode.Store(0)
		s.mode.Store(0)
		if got := mustAppend(t, l, "after"); got.Index != 1 {
			t.Fatalf("append once the cosigner is back: index %d, want 1", got.Index)
		}
		mustCheck(t, l)
	})
}

// TestDamagedCheckpointNoteAtOpen: a latest checkpoint whose note is no
// longer a well-formed signed note (a byte of a signature line, the
// cosignature's or the log key's, turned into one base64 does not have)
// is damage, refused with a *CorruptError like a signature that does not
// verify, never taken for another log key (ErrLogKeyMismatch). A
// cosignature still well formed but changed is not the ledger's to check
// (the receipt verifier checks it): Open accepts it.
func TestDamagedCheckpointNoteAtOpen(t *testing.T) {
	a, _, _ := testKey(t, "cosigner-a", "cosigner a")
	l, path, _ := testLedger(t, func(o *Options) { o.Cosigners = func() []note.Signer { return []note.Signer{a} } })
	for i := range 3 {
		mustAppend(t, l, "e"+itoa(i))
	}
	l.Close()
	line := func(n []byte, k int) int { // the start of the base64 of signature line k
		start := bytes.LastIndex(n, []byte("\n\n")) + 2
		for range k {
			start += bytes.IndexByte(n[start:], '\n') + 1
		}
		return start + bytes.LastIndexByte(n[start:start+bytes.IndexByte(n[start:], '\n')], ' ') + 1
	}
	set := func(k, off int, c byte) func([]byte) []byte {
		return func(n []byte) []byte { n[line(n, k)+off] = c; return n }
	}
	for _, tc := range []struct {
		name    string
		edit    func([]byte) []byte
		corrupt bool
	}{
		{"cosignature not base64", set(1, 20, '~'), true},
		{"log signature not base64", set(0, 20, '~'), true},
		{"cosignature changed, still base64", set(1, 20, '0'), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := copyFile(t, path)
			tamper(t, p, editNote(3, tc.edit))
			s, _, _ := testKey(t, testOrigin, "log key 1")
			l, err := Open(p, Options{Origin: testOrigin, Signer: s})
			var co *CorruptError
			switch {
			case tc.corrupt && (!errors.As(err, &co) || co.Index != 3 || errors.Is(err, ErrLogKeyMismatch)):
				t.Fatalf("Open = %v, want *CorruptError at index 3", err)
			case !tc.corrupt && err != nil:
				t.Fatalf("Open = %v", err)
			}
			if l != nil {
				l.Close()
			}
		})
	}
}

func itoa(i int) string { return string(rune('0' + i)) }
