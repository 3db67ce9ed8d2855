package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// prebuiltEntry is simpleEntry's entry for index-independent use.
func prebuiltEntry(name string) *Entry {
	return &Entry{
		ID:   name,
		Leaf: []byte("leaf " + name),
		Docs: map[string][]byte{
			"record": []byte(`{"id":"` + name + `"}`),
			"ubl":    []byte("<Invoice><ID>INV-000000</ID>" + name + "</Invoice>"),
		},
		Postings: []Posting{{Index: "by_name", Key: []byte(name)}},
	}
}

// TestPrebuiltMatchesBuild: the same entries appended prebuilt or built in
// the committer give byte-identical logs (checkpoints) and the same reads.
func TestPrebuiltMatchesBuild(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		build, _, _ := testLedger(t)
		pre, _, _ := testLedger(t)
		for i := range 40 {
			name := fmt.Sprintf("e%02d", i)
			e := *prebuiltEntry(name)
			claims := []Claim{{Space: "payment", Key: name, Fingerprint: []byte("fp")}}
			a1, err := build.Append(context.Background(), Append{Claims: claims, Build: func(int64) (Entry, error) { return e, nil }})
			if err != nil {
				t.Fatal(err)
			}
			a2, err := pre.Append(context.Background(), Append{Claims: claims, Entry: &e})
			if err != nil {
				t.Fatal(err)
			}
			if a1 != a2 {
				t.Fatalf("Build appended %+v, Entry %+v", a1, a2)
			}
		}
		for size := int64(0); size <= 40; size++ {
			c1, err1 := build.CheckpointAt(size)
			c2, err2 := pre.CheckpointAt(size)
			if err1 != nil || err2 != nil || !bytes.Equal(c1.Note, c2.Note) {
				t.Fatalf("checkpoint %d differs: %v %v", size, err1, err2)
			}
		}
		for i := int64(0); i < 40; i++ {
			e1, _ := build.EntryAt(i)
			e2, err := pre.EntryAt(i)
			if err != nil || e1.ID != e2.ID || !bytes.Equal(e1.Leaf, e2.Leaf) || !bytes.Equal(e1.Docs["ubl"], e2.Docs["ubl"]) {
				t.Fatalf("entry %d differs: %+v\n%+v (%v)", i, e1, e2, err)
			}
		}
		mustCheck(t, pre)
	})
}

func TestPrebuiltValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		ctx := context.Background()
		for name, a := range map[string]Append{
			"neither Entry nor Build": {},
			"both Entry and Build":    {Entry: prebuiltEntry("a"), Build: simpleEntry("a")},
			"empty ID":                {Entry: &Entry{Leaf: []byte("x")}},
			"empty leaf":              {Entry: &Entry{ID: "x"}},
			"empty read key":          {Entry: prebuiltEntry("a"), Reads: []SideKey{{Bucket: "b"}}},
			"empty sequence name":     {Entry: prebuiltEntry("a"), Sequences: []string{""}},
			"posting twice":           {Entry: &Entry{ID: "x", Leaf: []byte("x"), Postings: []Posting{{Index: "i", Key: []byte("k")}, {Index: "i", Key: []byte("k")}}}},
		} {
			if _, err := l.Append(ctx, a); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrDuplicate) {
				t.Errorf("%s: %v, want ErrInvalid or ErrDuplicate", name, err)
			}
		}
		if l.Size() != 0 {
			t.Errorf("invalid appends wrote %d entries", l.Size())
		}
		// An AppendIndex posting that ends up equal to a plain one of the same
		// entry is a duplicate once the index is known.
		e := &Entry{ID: "x", Leaf: []byte("x"), Postings: []Posting{
			{Index: "i", Key: append([]byte("k"), u64(0)...)}, {Index: "i", Key: []byte("k"), AppendIndex: true},
		}}
		if _, err := l.Append(ctx, Append{Entry: e}); !errors.Is(err, ErrDuplicate) {
			t.Errorf("colliding AppendIndex posting: %v, want ErrDuplicate", err)
		}
	})
}

// TestHookSequenceGapFree: 64 concurrent callers draw invoice numbers from
// one sequence in their Hook and splice them into the prebuilt invoice;
// some hooks fail after drawing. The written entries hold exactly 1…n, in
// log order, with no gap, and the sequence continues after a reopen.
func TestHookSequenceGapFree(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, path, _ := testLedger(t)
		const callers, per = 16, 12
		placeholder := []byte("INV-000000")
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := 0
		for g := range callers {
			wg.Go(func() {
				for i := range per {
					name := fmt.Sprintf("g%02d-%02d", g, i)
					e := prebuiltEntry(name)
					off := bytes.Index(e.Docs["ubl"], placeholder) + 4
					fails := (g+i)%5 == 0
					_, err := l.Append(context.Background(), Append{
						Entry:     e,
						Sequences: []string{"inv/acct"},
						Hook: func(h *Hook) error {
							n, err := h.Sequence("inv/acct")
							if err != nil {
								return err
							}
							if fails {
								return errors.New("stale decision")
							}
							if err := h.Put("numbers", u64(h.Index()), []byte(strconv.FormatInt(n, 10))); err != nil {
								return err
							}
							return h.Splice("ubl", off, fmt.Appendf(nil, "%06d", n))
						},
					})
					mu.Lock()
					if fails {
						failed++
						if err == nil || !strings.Contains(err.Error(), "stale decision") {
							t.Errorf("%s: failing hook answered %v", name, err)
						}
					} else if err != nil {
						t.Errorf("%s: %v", name, err)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		written := int64(callers*per - failed)
		if l.Size() != written {
			t.Fatalf("size %d, want %d", l.Size(), written)
		}
		for i := int64(0); i < written; i++ {
			e, err := l.EntryAt(i)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("INV-%06d", i+1)
			if !bytes.Contains(e.Docs["ubl"], []byte(want)) {
				t.Fatalf("entry %d has invoice %q, want number %s (log order, no gap)", i, e.Docs["ubl"], want)
			}
			if v, _ := l.Get("numbers", u64(i)); string(v) != strconv.FormatInt(i+1, 10) {
				t.Fatalf("entry %d: hook's side write %q", i, v)
			}
		}
		if n, err := l.Sequence("inv/acct"); err != nil || n != written {
			t.Fatalf("Sequence = %d, %v; want %d", n, err, written)
		}
		mustCheck(t, l)
		l.Close()
		l = reopen(t, path)
		_, err := l.Append(context.Background(), Append{Entry: prebuiltEntry("after"), Sequences: []string{"inv/acct"}, Hook: func(h *Hook) error {
			if n, _ := h.Sequence("inv/acct"); n != written+1 {
				return fmt.Errorf("after reopen the sequence gave %d, want %d", n, written+1)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestHookRunningTotal: a running total in a side bucket is read, compared
// and updated in the committer: concurrent appends never exceed the
// threshold, and the stored total is the sum of the written amounts.
func TestHookRunningTotal(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		const threshold = 1000
		total := SideKey{Bucket: "totals", Key: []byte("seller-1")}
		var wg sync.WaitGroup
		var mu sync.Mutex
		sum, refused := 0, 0
		for g := range 32 {
			wg.Go(func() {
				for i := range 6 {
					amount := 7 + (g*6+i)%11
					_, err := l.Append(context.Background(), Append{
						Entry: prebuiltEntry(fmt.Sprintf("t%02d-%d", g, i)),
						Reads: []SideKey{total},
						Hook: func(h *Hook) error {
							v, err := h.Get(total.Bucket, total.Key)
							if err != nil {
								return err
							}
							cur := 0
							if v != nil {
								cur = int(binary.BigEndian.Uint64(v))
							}
							if cur+amount > threshold {
								return errors.New("over the threshold")
							}
							return h.Put(total.Bucket, total.Key, binary.BigEndian.AppendUint64(nil, uint64(cur+amount)))
						},
					})
					mu.Lock()
					if err == nil {
						sum += amount
					} else {
						refused++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		v, err := l.Get(total.Bucket, total.Key)
		if err != nil || int(binary.BigEndian.Uint64(v)) != sum || sum > threshold {
			t.Fatalf("stored total %v (%v), written sum %d, threshold %d", v, err, sum, threshold)
		}
		if refused == 0 {
			t.Error("the threshold was never reached; the test proves nothing")
		}
	})
}

// TestHookFailureWritesNothing: a hook that wrote, drew a number and then
// failed leaves no trace: no entry, claim, posting, side value or number.
func TestHookFailureWritesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		boom := errors.New("boom")
		_, err := l.Append(context.Background(), Append{
			Claims:    []Claim{{Space: "payment", Key: "p1"}},
			Entry:     prebuiltEntry("x"),
			Sequences: []string{"s"},
			Hook: func(h *Hook) error {
				h.Sequence("s")
				h.Put("side", []byte("k"), []byte("v"))
				return boom
			},
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Append = %v, want the hook's error", err)
		}
		if _, err := l.Entry("x"); !errors.Is(err, ErrNotFound) {
			t.Error("entry written")
		}
		if _, _, err := l.ClaimHolder("payment", "p1"); !errors.Is(err, ErrNotFound) {
			t.Error("claim taken")
		}
		if _, err := l.Lookup("by_name", []byte("x")); !errors.Is(err, ErrNotFound) {
			t.Error("posting written")
		}
		if _, err := l.Get("side", []byte("k")); !errors.Is(err, ErrNotFound) {
			t.Error("side value written")
		}
		if n, _ := l.Sequence("s"); n != 0 {
			t.Errorf("sequence at %d", n)
		}
		// The same entry appends fine afterwards, at index 0.
		if a, err := l.Append(context.Background(), Append{Claims: []Claim{{Space: "payment", Key: "p1"}}, Entry: prebuiltEntry("x")}); err != nil || a.Index != 0 {
			t.Fatalf("retry: %+v, %v", a, err)
		}
	})
}

func TestHookUndeclared(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		for name, hook := range map[string]func(*Hook) error{
			"read":     func(h *Hook) error { _, err := h.Get("b", []byte("k")); return err },
			"sequence": func(h *Hook) error { _, err := h.Sequence("s"); return err },
			"splice":   func(h *Hook) error { return h.Splice("ubl", 1<<20, []byte("x")) },
			"no doc":   func(h *Hook) error { return h.Splice("missing", 0, []byte("x")) },
			"leaf":     func(h *Hook) error { return h.SetLeaf(nil) },
		} {
			_, err := l.Append(context.Background(), Append{Entry: prebuiltEntry(name), Hook: hook})
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		_, err := l.Append(context.Background(), Append{Entry: prebuiltEntry("panics"), Hook: func(*Hook) error { panic("hook bug") }})
		if err == nil || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "hook bug") {
			t.Errorf("panicking hook: %v", err)
		}
		if l.Size() != 0 || l.Stats().IntegrityFailures != 0 {
			t.Errorf("size %d, integrity failures %d", l.Size(), l.Stats().IntegrityFailures)
		}
	})
}

// TestHookRecompute: the stale-decision path replaces the leaf and a
// document in the committer; the log commits to the new leaf.
func TestHookRecompute(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		mustAppend(t, l, "first")
		a, err := l.Append(context.Background(), Append{Entry: prebuiltEntry("x"), Hook: func(h *Hook) error {
			if err := h.SetLeaf([]byte("leaf x at " + strconv.FormatInt(h.Index(), 10))); err != nil {
				return err
			}
			if err := h.SetDoc("ubl", []byte("<Invoice>re-rendered</Invoice>")); err != nil {
				return err
			}
			if err := h.SetDoc("extra", []byte("added")); err != nil {
				return err
			}
			return h.Splice("ubl", 9, []byte("R"))
		}})
		if err != nil {
			t.Fatal(err)
		}
		e, err := l.Entry("x")
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Leaf) != "leaf x at 1" || string(e.Docs["ubl"]) != "<Invoice>Re-rendered</Invoice>" || string(e.Docs["extra"]) != "added" || string(e.Docs["record"]) != `{"id":"x"}` {
			t.Fatalf("entry %q %q", e.Leaf, e.Docs)
		}
		cp, _ := l.Checkpoint()
		p, err := l.InclusionProof(a.Index, cp.Size)
		if err != nil || tlog.CheckRecord(p, cp.Size, cp.Root, a.Index, tlog.RecordHash(e.Leaf)) != nil {
			t.Fatalf("the new leaf is not the one in the log: %v", err)
		}
		mustCheck(t, l)
	})
}

// TestAppendIndexPosting: a prebuilt posting keyed by log index.
func TestAppendIndexPosting(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		mustAppend(t, l, "first")
		e := prebuiltEntry("x")
		e.Postings = append(e.Postings, Posting{Index: "events", Key: []byte("acct\x00"), AppendIndex: true})
		if _, err := l.Append(context.Background(), Append{Entry: e}); err != nil {
			t.Fatal(err)
		}
		hits, err := l.Scan("events", []byte("acct\x00"), nil, false, 0)
		if err != nil || len(hits) != 1 || !bytes.Equal(hits[0].Key, append([]byte("acct\x00"), u64(1)...)) || hits[0].ID != "x" {
			t.Fatalf("Scan = %+v, %v", hits, err)
		}
	})
}

// TestOptimisticNumbers is the pattern for invoice numbers that a prebuilt
// (signed) document must already carry: callers take numbers in order under
// a short lock, render their entries in parallel, and hand them to the
// committer in number order (each waits for its predecessor's Taken); the
// hook only compares. No decision goes stale, and the numbers follow the log
// order without a gap.
func TestOptimisticNumbers(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		var mu sync.Mutex
		next := int64(1)                                        // the next number to hand out
		turn := map[int64]chan struct{}{1: make(chan struct{})} // closed when number n may be handed over
		close(turn[1])
		ticket := func() (int64, <-chan struct{}, func()) {
			mu.Lock()
			defer mu.Unlock()
			n := next
			next++
			turn[n+1] = make(chan struct{})
			wait, done := turn[n], turn[n+1]
			return n, wait, func() { close(done) }
		}
		var stale atomic.Int64
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 10 {
					n, wait, taken := ticket()
					e := prebuiltEntry(fmt.Sprintf("g%02d-%d", g, i))
					e.Docs["ubl"] = fmt.Appendf(nil, "<Invoice><ID>INV-%06d</ID></Invoice>", n) // rendered (and signed) up front
					<-wait
					_, err := l.Append(context.Background(), Append{
						Entry:     e,
						Sequences: []string{"inv"},
						Taken:     taken,
						Hook: func(h *Hook) error {
							got, err := h.Sequence("inv")
							if err != nil {
								return err
							}
							if got != n {
								stale.Add(1)
								return fmt.Errorf("number %d went stale: the sequence is at %d", n, got)
							}
							return nil
						},
					})
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if stale.Load() != 0 {
			t.Fatalf("%d decisions went stale", stale.Load())
		}
		for i := int64(0); i < l.Size(); i++ {
			e, err := l.EntryAt(i)
			if err != nil || !bytes.Contains(e.Docs["ubl"], fmt.Appendf(nil, "INV-%06d", i+1)) {
				t.Fatalf("entry %d: %q, %v", i, e.Docs["ubl"], err)
			}
		}
	})
}
