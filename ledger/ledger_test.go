package ledger

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

func TestOpenCreatesFileWithEmptyCheckpoint(t *testing.T) {
	l, path, v := testLedger(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode %04o, want 0600", perm)
	}
	if l.Size() != 0 {
		t.Errorf("Size() = %d, want 0", l.Size())
	}
	cp, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseCheckpoint(cp.Note, v)
	if err != nil {
		t.Fatalf("ParseCheckpoint of the genesis checkpoint: %v", err)
	}
	if parsed.Size != 0 || parsed.Root != (&refTree{}).root(0) || parsed.Origin != testOrigin {
		t.Errorf("genesis checkpoint = %+v, want size 0, root SHA-256(\"\")", parsed)
	}
	wantText := testOrigin + "\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— " + testOrigin + " "
	if !strings.HasPrefix(string(cp.Note), wantText) {
		t.Errorf("genesis note:\n%s\nwant prefix:\n%s", cp.Note, wantText)
	}
	mustCheck(t, l)
}

func TestAppendAndRead(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, v := testLedger(t)
		ctx := context.Background()
		ref := &refTree{}
		for i, name := range []string{"a", "b", "c"} {
			got := mustAppend(t, l, name)
			if got.Index != int64(i) || got.ID != name || got.Existing {
				t.Fatalf("append %s = %+v, want index %d", name, got, i)
			}
			e, _ := simpleEntry(name)(int64(i))
			ref.add(e.Leaf)
		}
		if l.Size() != 3 {
			t.Fatalf("Size() = %d, want 3", l.Size())
		}

		e, err := l.Entry("b")
		if err != nil {
			t.Fatal(err)
		}
		if e.Index != 1 || string(e.Leaf) != "leaf b at 1" || string(e.Docs["ubl"]) != "<Invoice>b</Invoice>" || len(e.Docs) != 2 {
			t.Errorf("Entry(b) = %+v", e)
		}
		if i, err := l.IndexOf("c"); err != nil || i != 2 {
			t.Errorf("IndexOf(c) = %d, %v", i, err)
		}
		at, err := l.EntryAt(2)
		if err != nil || at.ID != "c" {
			t.Errorf("EntryAt(2) = %+v, %v", at, err)
		}
		doc, err := l.Doc("a", "record")
		if err != nil || string(doc) != `{"id":"a"}` {
			t.Errorf("Doc(a, record) = %q, %v", doc, err)
		}
		id, err := l.Lookup("by_name", []byte("c"))
		if err != nil || id != "c" {
			t.Errorf("Lookup = %q, %v", id, err)
		}
		holder, fp, err := l.ClaimHolder("payment", "a")
		if err != nil || holder != "a" || string(fp) != "fp:a" {
			t.Errorf("ClaimHolder = %q %q %v", holder, fp, err)
		}

		for _, tc := range []struct {
			name string
			err  error
		}{
			{"Entry", func() error { _, err := l.Entry("zz"); return err }()},
			{"IndexOf", func() error { _, err := l.IndexOf("zz"); return err }()},
			{"EntryAt", func() error { _, err := l.EntryAt(3); return err }()},
			{"EntryAt negative", func() error { _, err := l.EntryAt(-1); return err }()},
			{"Doc of missing entry", func() error { _, err := l.Doc("zz", "record"); return err }()},
			{"missing Doc", func() error { _, err := l.Doc("a", "pdf"); return err }()},
			{"Lookup", func() error { _, err := l.Lookup("by_name", []byte("zz")); return err }()},
			{"Lookup of unknown index", func() error { _, err := l.Lookup("nope", []byte("a")); return err }()},
			{"ClaimHolder", func() error { _, _, err := l.ClaimHolder("payment", "zz"); return err }()},
			{"CheckpointAt", func() error { _, err := l.CheckpointAt(4); return err }()},
			{"CoveringCheckpoint", func() error { _, err := l.CoveringCheckpoint(3); return err }()},
			{"InclusionProof beyond", func() error { _, err := l.InclusionProof(0, 4); return err }()},
			{"Get", func() error { _, err := l.Get("quota", []byte("x")); return err }()},
		} {
			if !errors.Is(tc.err, ErrNotFound) {
				t.Errorf("%s: err = %v, want ErrNotFound", tc.name, tc.err)
			}
		}

		// Each append was its own commit here, so checkpoints 1, 2, 3 exist
		// and each covers exactly the leaf appended in it.
		for i := int64(0); i < 3; i++ {
			cp, err := l.CoveringCheckpoint(i)
			if err != nil || cp.Size != i+1 {
				t.Fatalf("CoveringCheckpoint(%d) = size %d, %v", i, cp.Size, err)
			}
			parsed, err := ParseCheckpoint(cp.Note, v)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Root != ref.root(i+1) {
				t.Errorf("checkpoint %d root %s, reference MTH %s", i+1, parsed.Root, ref.root(i+1))
			}
			p, err := l.InclusionProof(i, cp.Size)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckRecord(p, cp.Size, parsed.Root, i, ref.leaves[i]); err != nil {
				t.Errorf("inclusion proof of %d in %d: %v", i, cp.Size, err)
			}
		}
		latest, _ := l.Checkpoint()
		if latest.Size != 3 || latest.Root != ref.root(3) {
			t.Errorf("latest checkpoint %d %s, want 3 %s", latest.Size, latest.Root, ref.root(3))
		}
		if h, err := l.TreeHash(2); err != nil || h != ref.root(2) {
			t.Errorf("TreeHash(2) = %s, %v; want %s", h, err, ref.root(2))
		}
		mustCheck(t, l)
		_ = ctx
	})
}

func TestClaimSemantics(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		ctx := context.Background()
		first := mustAppend(t, l, "pay1")

		built := false
		build := func(index int64) (Entry, error) {
			built = true
			return simpleEntry("other")(index)
		}
		tests := []struct {
			name     string
			claims   []Claim
			existing bool
			conflict bool
		}{
			{"same key same fingerprint", []Claim{{Space: "payment", Key: "pay1", Fingerprint: []byte("fp:pay1")}}, true, false},
			{"same key other fingerprint", []Claim{{Space: "payment", Key: "pay1", Fingerprint: []byte("fp:other")}}, false, true},
			{"first held claim decides: existing", []Claim{
				{Space: "idem", Key: "free-key"},
				{Space: "payment", Key: "pay1", Fingerprint: []byte("fp:pay1")},
				{Space: "payment", Key: "pay1", Fingerprint: []byte("different")},
			}, true, false},
			{"first held claim decides: conflict", []Claim{
				{Space: "payment", Key: "pay1", Fingerprint: []byte("different")},
				{Space: "payment", Key: "pay1", Fingerprint: []byte("fp:pay1")},
			}, false, true},
			{"same key in another space is free", nil, false, false},
		}
		for _, tc := range tests[:4] {
			t.Run(tc.name, func(t *testing.T) {
				built = false
				got, err := l.Append(ctx, Append{Claims: tc.claims, Build: build})
				if tc.existing {
					if err != nil || !got.Existing || got.Index != first.Index || got.ID != "pay1" {
						t.Fatalf("got %+v, %v; want Existing holder %+v", got, err, first)
					}
				}
				if tc.conflict {
					var ce *ClaimConflictError
					if !errors.As(err, &ce) || ce.HolderID != "pay1" || ce.Claim.Key != "pay1" {
						t.Fatalf("got %+v, %v; want *ClaimConflictError held by pay1", got, err)
					}
				}
				if built {
					t.Error("Build was called although a claim was held")
				}
				if l.Size() != 1 {
					t.Errorf("Size() = %d, want 1: nothing may be appended", l.Size())
				}
			})
		}
		// A free claim in another space: appended, and the free claims of an
		// append that is answered Existing were not taken.
		got, err := l.Append(ctx, Append{Claims: []Claim{{Space: "other-space", Key: "pay1"}}, Build: simpleEntry("n2")})
		if err != nil || got.Existing || got.Index != 1 {
			t.Fatalf("append in another space = %+v, %v", got, err)
		}
		if _, _, err := l.ClaimHolder("idem", "free-key"); !errors.Is(err, ErrNotFound) {
			t.Errorf("claim of an Existing answer was taken: %v", err)
		}
		mustCheck(t, l)
	})
}

func TestEntryValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		ctx := context.Background()
		mustAppend(t, l, "taken")
		long := strings.Repeat("k", maxKeySize+1)
		tests := []struct {
			name  string
			app   Append
			error error
		}{
			{"nil Build", Append{}, ErrInvalid},
			{"empty claim space", Append{Claims: []Claim{{Key: "k"}}, Build: simpleEntry("x")}, ErrInvalid},
			{"empty claim key", Append{Claims: []Claim{{Space: "s"}}, Build: simpleEntry("x")}, ErrInvalid},
			{"claim key too long", Append{Claims: []Claim{{Space: "s", Key: long}}, Build: simpleEntry("x")}, ErrInvalid},
			{"empty ID", Append{Build: func(int64) (Entry, error) { return Entry{Leaf: []byte("l")}, nil }}, ErrInvalid},
			{"empty leaf", Append{Build: func(int64) (Entry, error) { return Entry{ID: "x"}, nil }}, ErrInvalid},
			{"duplicate ID", Append{Build: simpleEntry("taken")}, ErrDuplicate},
			{"duplicate posting", Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "x", Leaf: []byte("l"), Postings: []Posting{{Index: "by_name", Key: []byte("taken")}}}, nil
			}}, ErrDuplicate},
			{"posting twice in one entry", Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "x", Leaf: []byte("l"), Postings: []Posting{{Index: "i", Key: []byte("k")}, {Index: "i", Key: []byte("k")}}}, nil
			}}, ErrDuplicate},
			{"empty posting key", Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "x", Leaf: []byte("l"), Postings: []Posting{{Index: "i"}}}, nil
			}}, ErrInvalid},
			{"empty doc name", Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "x", Leaf: []byte("l"), Docs: map[string][]byte{"": []byte("d")}}, nil
			}}, ErrInvalid},
			{"empty side bucket", Append{Build: func(int64) (Entry, error) {
				return Entry{ID: "x", Leaf: []byte("l"), Puts: []Put{{Key: []byte("k"), Value: []byte("v")}}}, nil
			}}, ErrInvalid},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := l.Append(ctx, tc.app)
				if !errors.Is(err, tc.error) {
					t.Fatalf("err = %v, want %v", err, tc.error)
				}
				if l.Size() != 1 {
					t.Fatalf("Size() = %d after a rejected append", l.Size())
				}
			})
		}
		mustCheck(t, l)
	})
}

func TestDocsPutsAndSideData(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		ctx := context.Background()
		if err := l.Update(func(tx Tx) error { return tx.Put("outbox", []byte("old"), []byte("x")) }); err != nil {
			t.Fatal(err)
		}
		_, err := l.Append(ctx, Append{Build: func(i int64) (Entry, error) {
			return Entry{
				ID:   "e1",
				Leaf: []byte("leaf"),
				Docs: map[string][]byte{"empty": {}, "nil": nil, "z": []byte("last")},
				Puts: []Put{
					{Bucket: "outbox", Key: u64(1), Value: []byte("event 1")},
					{Bucket: "outbox", Key: []byte("old"), Value: nil}, // delete
					{Bucket: "meta", Key: []byte("origin"), Value: []byte("not the ledger's meta")},
				},
			}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.Entry("e1")
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Docs) != 3 || e.Docs["empty"] == nil || len(e.Docs["empty"]) != 0 || string(e.Docs["z"]) != "last" {
			t.Errorf("docs = %q", e.Docs)
		}
		if d, err := l.Doc("e1", "empty"); err != nil || len(d) != 0 {
			t.Errorf("Doc(empty) = %q, %v; an empty document exists", d, err)
		}
		if v, err := l.Get("outbox", u64(1)); err != nil || string(v) != "event 1" {
			t.Errorf("Get(outbox, 1) = %q, %v", v, err)
		}
		if _, err := l.Get("outbox", []byte("old")); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleted side key: %v", err)
		}
		if v, err := l.Get("meta", []byte("origin")); err != nil || string(v) != "not the ledger's meta" {
			t.Errorf("side bucket named meta = %q, %v", v, err)
		}
		// The side bucket "meta" did not touch the ledger's own meta.
		mustCheck(t, l)
		if l.Origin() != testOrigin {
			t.Fatal("origin changed")
		}

		// Update: an error from fn rolls back and comes back unwrapped.
		sentinel := errors.New("quota exceeded")
		err = l.Update(func(tx Tx) error {
			if err := tx.Put("quota", []byte("acct"), []byte("1")); err != nil {
				return err
			}
			return sentinel
		})
		if err != sentinel {
			t.Errorf("Update error = %v, want the fn's error as is", err)
		}
		if _, err := l.Get("quota", []byte("acct")); !errors.Is(err, ErrNotFound) {
			t.Errorf("rolled-back Put is visible: %v", err)
		}
		err = l.View(func(tx Tx) error {
			if err := tx.Put("quota", []byte("k"), []byte("v")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Put in View: %v, want ErrReadOnly", err)
			}
			if err := tx.Delete("quota", []byte("k")); !errors.Is(err, ErrReadOnly) {
				t.Errorf("Delete in View: %v, want ErrReadOnly", err)
			}
			if tx.Get("nope", []byte("k")) != nil {
				t.Error("Get on a missing bucket is not nil")
			}
			return tx.Scan("nope", nil, nil, false, func(k, v []byte) bool { t.Error("scan of a missing bucket"); return true })
		})
		if err != nil {
			t.Fatal(err)
		}
		err = l.Update(func(tx Tx) error {
			if err := tx.Put("", []byte("k"), nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("Put to an empty bucket name: %v", err)
			}
			if err := tx.Put("b", nil, nil); !errors.Is(err, ErrInvalid) {
				t.Errorf("Put of an empty key: %v", err)
			}
			if err := tx.Put("b", []byte("empty"), nil); err != nil {
				return err
			}
			if v := tx.Get("b", []byte("empty")); v == nil || len(v) != 0 {
				t.Errorf("Get of an empty value in the same tx = %v, want empty non-nil", v)
			}
			return tx.Delete("never-created", []byte("k"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := l.Get("b", []byte("empty")); err != nil || v == nil || len(v) != 0 {
			t.Errorf("Get of an empty value = %v, %v", v, err)
		}
	})
}

func TestReopenContinues(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, path, v := testLedger(t)
		ref := &refTree{}
		for i := range 5 {
			name := string(rune('a' + i))
			mustAppend(t, l, name)
			e, _ := simpleEntry(name)(int64(i))
			ref.add(e.Leaf)
		}
		before, _ := l.Checkpoint()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := Check(path, v); err != nil {
			t.Fatalf("Check after close: %v", err)
		}
		l2 := reopen(t, path)
		if l2.Size() != 5 {
			t.Fatalf("reopened Size() = %d", l2.Size())
		}
		after, _ := l2.Checkpoint()
		if !bytes.Equal(before.Note, after.Note) {
			t.Errorf("latest checkpoint changed across reopen")
		}
		for i := 5; i < 9; i++ {
			name := string(rune('a' + i))
			if got := mustAppend(t, l2, name); got.Index != int64(i) {
				t.Fatalf("append after reopen got index %d, want %d", got.Index, i)
			}
			e, _ := simpleEntry(name)(int64(i))
			ref.add(e.Leaf)
		}
		// A duplicate claim from before the reopen is still held.
		if got := mustAppend(t, l2, "a"); !got.Existing || got.Index != 0 {
			t.Errorf("claim from before reopen: %+v", got)
		}
		latest, _ := l2.Checkpoint()
		if latest.Root != ref.root(9) {
			t.Errorf("root after reopen %s, reference %s", latest.Root, ref.root(9))
		}
		p, err := l2.ConsistencyProof(5, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckTree(p, 9, latest.Root, 5, before.Root); err != nil {
			t.Errorf("consistency 5→9 across reopen: %v", err)
		}
		mustCheck(t, l2)
	})
}

func TestOpenRefusals(t *testing.T) {
	l, path, v := testLedger(t)
	mustAppend(t, l, "a")
	s1, _, _ := testKey(t, testOrigin, "log key 1")

	// The file is locked while l is open: a second Open times out.
	start := time.Now()
	_, err := Open(path, Options{Origin: testOrigin, Signer: s1, OpenTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("second Open: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("second Open waited %v", d)
	}
	if err := Check(path, v); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Check on a locked file: %v, want ErrUnavailable", err)
	}
	l.Close()

	otherOrigin := "other.test/log"
	sOther, _, _ := testKey(t, otherOrigin, "log key 1")
	s2, v2, _ := testKey(t, testOrigin, "log key 2")
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"empty origin", Options{}, ErrInvalid},
		{"origin with a space", Options{Origin: "a b"}, ErrInvalid},
		{"origin with a plus", Options{Origin: "a+b"}, ErrInvalid},
		{"signer of another name", Options{Origin: testOrigin, Signer: sOther}, ErrOriginMismatch},
		{"file of another origin", Options{Origin: otherOrigin, Signer: sOther}, ErrOriginMismatch},
		{"another key", Options{Origin: testOrigin, Signer: s2}, ErrLogKeyMismatch},
		{"verifier of another key", Options{Origin: testOrigin, Signer: s1, Verifier: v2}, ErrLogKeyMismatch},
		{"read-only with another verifier", Options{Origin: testOrigin, Verifier: v2}, ErrLogKeyMismatch},
		{"negative MaxBatch", Options{Origin: testOrigin, Signer: s1, MaxBatch: -1}, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(path, tc.opts)
			if err == nil {
				l.Close()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{Origin: testOrigin}); !errors.Is(err, ErrNotFound) {
		t.Errorf("read-only Open of a missing file: %v, want ErrNotFound", err)
	}
	// A bbolt file that is not a ledger.
	foreign := filepath.Join(t.TempDir(), "foreign.db")
	writeForeignBolt(t, foreign)
	if _, err := Open(foreign, Options{Origin: testOrigin, Signer: s1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open of a foreign bbolt file: %v, want ErrInvalid", err)
	}
	// The right key still opens it, with or without its verifier.
	l2, err := Open(path, Options{Origin: testOrigin, Signer: s1, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, l2)
	l2.Close()
}

func TestReadOnly(t *testing.T) {
	l, path, v := testLedger(t)
	mustAppend(t, l, "a")
	l.Close()
	ro, err := Open(path, Options{Origin: testOrigin, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Append(context.Background(), Append{Build: simpleEntry("b")}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Append on read-only: %v", err)
	}
	if err := ro.Update(func(Tx) error { return nil }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Update on read-only: %v", err)
	}
	if e, err := ro.Entry("a"); err != nil || e.Index != 0 {
		t.Errorf("Entry on read-only: %+v, %v", e, err)
	}
	mustCheck(t, ro)
	// A read-only ledger without a verifier cannot check signatures and says so.
	ro.Close()
	ro2, err := Open(path, Options{Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close()
	if err := ro2.Check(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Check without a verifier: %v, want ErrInvalid", err)
	}
}

func TestClosed(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		mustAppend(t, l, "a")
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		ctx := context.Background()
		checks := map[string]error{
			"Append":     func() error { _, err := l.Append(ctx, Append{Build: simpleEntry("b")}); return err }(),
			"Entry":      func() error { _, err := l.Entry("a"); return err }(),
			"Checkpoint": func() error { _, err := l.Checkpoint(); return err }(),
			"Proof":      func() error { _, err := l.InclusionProof(0, 1); return err }(),
			"Update":     l.Update(func(Tx) error { return nil }),
			"View":       l.View(func(Tx) error { return nil }),
			"Get":        func() error { _, err := l.Get("b", []byte("k")); return err }(),
			"Check":      l.Check(),
		}
		for name, err := range checks {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close: %v, want ErrClosed", name, err)
			}
		}
	})
}

func TestProofArguments(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		for _, n := range []string{"a", "b", "c"} {
			mustAppend(t, l, n)
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"inclusion index = size", func() error { _, err := l.InclusionProof(3, 3); return err }(), ErrInvalid},
			{"inclusion negative", func() error { _, err := l.InclusionProof(-1, 3); return err }(), ErrInvalid},
			{"inclusion beyond log", func() error { _, err := l.InclusionProof(1, 4); return err }(), ErrNotFound},
			{"consistency from 0", func() error { _, err := l.ConsistencyProof(0, 3); return err }(), ErrInvalid},
			{"consistency from > to", func() error { _, err := l.ConsistencyProof(3, 2); return err }(), ErrInvalid},
			{"consistency beyond log", func() error { _, err := l.ConsistencyProof(1, 4); return err }(), ErrNotFound},
			{"covering negative", func() error { _, err := l.CoveringCheckpoint(-1); return err }(), ErrInvalid},
			{"tree hash beyond", func() error { _, err := l.TreeHash(4); return err }(), ErrNotFound},
			{"read hashes beyond", func() error { _, err := l.ReadHashes([]int64{tlog.StoredHashCount(3)}); return err }(), ErrNotFound},
		}
		for _, tc := range tests {
			if !errors.Is(tc.err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
			}
		}
		// from == to is the empty proof.
		p, err := l.ConsistencyProof(3, 3)
		if err != nil || len(p) != 0 {
			t.Errorf("ConsistencyProof(3, 3) = %v, %v", p, err)
		}
		// ReadHashes serves tiles: tlog.ReadTileData over the ledger.
		tile := tlog.TileForIndex(2, tlog.StoredHashIndex(0, 2))
		data, err := tlog.ReadTileData(tile, l)
		if err != nil || len(data) != tile.W*tlog.HashSize {
			t.Errorf("ReadTileData = %d bytes, %v", len(data), err)
		}
	})
}

// TestHeadNeverGoesBack: the cached size and checkpoint only move forward.
// On a shared log a refresh may store another replica's newer head between
// a commit and its finish; the finish of the older commit must then leave
// the newer head in place (a review of replicas found the window).
func TestHeadNeverGoesBack(t *testing.T) {
	l := reopen(t, filepath.Join(t.TempDir(), "ledger.db"))
	mustAppend(t, l, "e0")
	ahead, err := l.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	ahead.Size += 10 // as a refresh would store another replica's head
	l.storeHead(ahead)
	mustAppend(t, l, "e1") // its finish stores size 2
	if got := l.Size(); got != ahead.Size {
		t.Fatalf("after an older commit's finish the size is %d, want the newer head's %d", got, ahead.Size)
	}
	if cp, err := l.Checkpoint(); err != nil || cp.Size != ahead.Size {
		t.Fatalf("the latest checkpoint went back to size %d (%v), want %d", cp.Size, err, ahead.Size)
	}
}
