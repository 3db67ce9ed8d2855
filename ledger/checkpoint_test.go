package ledger

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func TestParseCheckpoint(t *testing.T) {
	s, v, _ := testKey(t, testOrigin, "log key 1")
	_, otherV, _ := testKey(t, testOrigin, "other key")
	witness, _, _ := testKey(t, "witness.example/w1", "witness")
	root := tlog.RecordHash([]byte("root"))
	rootB64 := root.String()
	sign := func(text string, signers ...note.Signer) []byte {
		t.Helper()
		msg, err := note.Sign(&note.Note{Text: text}, signers...)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	good := testOrigin + "\n12\n" + rootB64 + "\n"

	t.Run("valid", func(t *testing.T) {
		for _, msg := range [][]byte{
			sign(good, s),
			sign(good, witness, s), // a cosignature by an unknown key is ignored
			sign(testOrigin+"\n12\n"+rootB64+"\nextension line\n", s), // extension lines are ignored
		} {
			cp, err := ParseCheckpoint(msg, v)
			if err != nil {
				t.Fatalf("%s: %v", msg, err)
			}
			if cp.Origin != testOrigin || cp.Size != 12 || cp.Root != root || !bytes.Equal(cp.Note, msg) {
				t.Errorf("parsed %+v", cp)
			}
		}
	})

	bad := []struct {
		name string
		msg  []byte
		sig  bool // the failure is the signature's
	}{
		{"signed by another key", sign(good, witness), true},
		{"tampered text", bytes.Replace(sign(good, s), []byte("\n12\n"), []byte("\n13\n"), 1), true},
		{"not a note", []byte(good), false},
		{"empty", nil, false},
		{"two lines", sign(testOrigin+"\n12\n", s), false},
		{"size with a sign", sign(testOrigin+"\n+12\n"+rootB64+"\n", s), false},
		{"size negative", sign(testOrigin+"\n-1\n"+rootB64+"\n", s), false},
		{"size with leading zero", sign(testOrigin+"\n012\n"+rootB64+"\n", s), false},
		{"size overflows", sign(testOrigin+"\n9223372036854775808\n"+rootB64+"\n", s), false},
		{"size not decimal", sign(testOrigin+"\n0x0c\n"+rootB64+"\n", s), false},
		{"root too short", sign(testOrigin+"\n12\nAAAA\n", s), false},
		{"root not base64", sign(testOrigin+"\n12\n"+strings.Repeat("!", 44)+"\n", s), false},
		{"root unpadded", sign(testOrigin+"\n12\n"+strings.TrimRight(rootB64, "=")+"\n", s), false},
		{"empty origin", sign("\n12\n"+rootB64+"\n", s), false},
		{"origin is not the key name", sign("other.example/log\n12\n"+rootB64+"\n", s), false},
		{"go.sum tree header", sign(string(tlog.FormatTree(tlog.Tree{N: 12, Hash: root})), s), false},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			cp, err := ParseCheckpoint(tc.msg, v)
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Fatalf("ParseCheckpoint = %+v, %v; want ErrBadCheckpoint", cp, err)
			}
			var ue *note.UnverifiedNoteError
			var ie *note.InvalidSignatureError
			if isSig := errors.As(err, &ue) || errors.As(err, &ie); isSig != tc.sig {
				t.Errorf("signature error = %v, want %v: %v", isSig, tc.sig, err)
			}
		})
	}
	t.Run("verifier of the same name but another key", func(t *testing.T) {
		if _, err := ParseCheckpoint(sign(good, s), otherV); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nil verifier", func(t *testing.T) {
		if _, err := ParseCheckpoint(sign(good, s), nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestCheckpointGolden pins the checkpoint bytes for a fixed key and fixed
// leaves: the wire format (C2SP tlog-checkpoint in a signed note) and the
// RFC 6962 root must not drift.
func TestCheckpointGolden(t *testing.T) {
	l, _, _ := testLedger(t)
	ref := &refTree{}
	for i, n := range []string{"a", "b", "c"} {
		mustAppend(t, l, n)
		e, _ := simpleEntry(n)(int64(i))
		ref.add(e.Leaf)
	}
	cp, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if cp.Root != ref.root(3) {
		t.Fatalf("root %s, reference %s", cp.Root, ref.root(3))
	}
	checkGolden(t, "checkpoint-3.txt", cp.Note)
}

func FuzzParseCheckpoint(f *testing.F) {
	s, v, _ := testKey(f, testOrigin, "log key 1")
	witness, _, _ := testKey(f, "witness.example/w1", "witness")
	root := tlog.RecordHash([]byte("root")).String()
	for _, text := range []string{
		testOrigin + "\n0\n" + root + "\n",
		testOrigin + "\n12\n" + root + "\n",
		testOrigin + "\n12\n" + root + "\next\n",
		testOrigin + "\n012\n" + root + "\n",
		"go.sum database tree\n12\n" + root + "\n",
	} {
		msg, _ := note.Sign(&note.Note{Text: text}, s)
		f.Add(msg)
		msg, _ = note.Sign(&note.Note{Text: text}, witness, s)
		f.Add(msg)
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		cp, err := ParseCheckpoint(msg, v)
		if err != nil {
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Fatalf("error without ErrBadCheckpoint: %v", err)
			}
			return
		}
		// Whatever is accepted is a verified, canonical checkpoint: its
		// first three lines re-format to exactly the signed text's start.
		n, err := note.Open(msg, note.VerifierList(v))
		if err != nil {
			t.Fatalf("accepted a note that does not open: %v", err)
		}
		if !strings.HasPrefix(n.Text, checkpointText(cp.Origin, cp.Size, cp.Root)) {
			t.Fatalf("accepted %q, re-formats as %q", n.Text, checkpointText(cp.Origin, cp.Size, cp.Root))
		}
		if cp.Origin != v.Name() || cp.Size < 0 || !bytes.Equal(cp.Note, msg) {
			t.Fatalf("accepted %+v", cp)
		}
	})
}

// FuzzParseCheckpointText signs the fuzzed text with the log key, so that
// every input reaches the checkpoint text parser past the signature check.
func FuzzParseCheckpointText(f *testing.F) {
	s, v, _ := testKey(f, testOrigin, "log key 1")
	root := tlog.RecordHash([]byte("root")).String()
	for _, text := range []string{
		testOrigin + "\n0\n" + root + "\n",
		testOrigin + "\n12\n" + root + "\next\n",
		testOrigin + "\n-0\n" + root + "\n",
		testOrigin + "\n12\n" + root + "\n\n",
		testOrigin + "\n12\n" + root,
	} {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		msg, err := note.Sign(&note.Note{Text: text}, s)
		if err != nil {
			return // not a valid note text (control characters, no final newline…)
		}
		cp, err := ParseCheckpoint(msg, v)
		if err != nil {
			if !errors.Is(err, ErrBadCheckpoint) {
				t.Fatalf("error without ErrBadCheckpoint: %v", err)
			}
			return
		}
		want := checkpointText(cp.Origin, cp.Size, cp.Root)
		if !strings.HasPrefix(text, want) || cp.Origin != testOrigin || cp.Size < 0 {
			t.Fatalf("accepted %q as %+v", text, cp)
		}
		for _, ext := range strings.SplitAfter(text[len(want):], "\n") {
			if ext == "\n" {
				t.Fatalf("accepted an empty extension line in %q", text)
			}
		}
	})
}
