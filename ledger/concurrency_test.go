package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// outcome is what one Append returned.
type outcome struct {
	a   Appended
	err error
}

// holdCommitter appends an entry whose Build blocks until release is called,
// so that appends started meanwhile queue up and are committed together in
// the next batch. Run inside a synctest bubble: synctest.Wait then returns
// exactly when every queued append is blocked on the committer's channel.
func holdCommitter(t *testing.T, l *Ledger, name string) (release func() outcome) {
	t.Helper()
	entered := make(chan struct{})
	gate := make(chan struct{})
	done := make(chan outcome, 1)
	go func() {
		a, err := l.Append(context.Background(), Append{Build: func(i int64) (Entry, error) {
			close(entered)
			<-gate
			return simpleEntry(name)(i)
		}})
		done <- outcome{a, err}
	}()
	<-entered
	return func() outcome {
		close(gate)
		return <-done
	}
}

// startAppends starts one goroutine per Append and returns their outcomes in
// order once all have returned.
func startAppends(ctx context.Context, l *Ledger, apps []Append) func() []outcome {
	outs := make([]outcome, len(apps))
	var wg sync.WaitGroup
	for i, a := range apps {
		wg.Go(func() {
			got, err := l.Append(ctx, a)
			outs[i] = outcome{got, err}
		})
	}
	return func() []outcome { wg.Wait(); return outs }
}

func TestBuildErrorIsolatesOneAppendInABatch(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			defer l.Close()
			release := holdCommitter(t, l, "first")
			boom := errors.New("boom")
			wait := startAppends(context.Background(), l, []Append{
				{Build: simpleEntry("good1")},
				{Build: func(int64) (Entry, error) { return Entry{}, boom }},
				{Build: func(i int64) (Entry, error) { return simpleEntry("first")(i) }}, // ID taken earlier in the batch's log
				{Build: simpleEntry("good2")},
			})
			synctest.Wait() // all four are queued behind the held commit
			if first := release(); first.err != nil || first.a.Index != 0 {
				t.Fatalf("held append: %+v", first)
			}
			outs := wait()

			ok := map[string]int64{}
			var fails []error
			for _, o := range outs {
				if o.err != nil {
					fails = append(fails, o.err)
				} else {
					ok[o.a.ID] = o.a.Index
				}
			}
			if len(ok) != 2 || ok["good1"] == ok["good2"] || ok["good1"] < 1 || ok["good2"] < 1 {
				t.Errorf("appended %v, want good1 and good2 at indexes 1 and 2", ok)
			}
			if len(fails) != 2 || !errors.Is(fails[0], boom) && !errors.Is(fails[1], boom) {
				t.Errorf("failures %v, want the Build error and ErrDuplicate", fails)
			}
			if !errors.Is(fails[0], ErrDuplicate) && !errors.Is(fails[1], ErrDuplicate) {
				t.Errorf("failures %v, want ErrDuplicate among them", fails)
			}
			// One batch: checkpoints 0 (genesis), 1 (held) and 3, no 2.
			if _, err := l.CheckpointAt(2); !errors.Is(err, ErrNotFound) {
				t.Errorf("checkpoint 2 exists (%v): the queued appends were not one batch", err)
			}
			if cp, err := l.CoveringCheckpoint(1); err != nil || cp.Size != 3 {
				t.Errorf("CoveringCheckpoint(1) = %d, %v; want 3", cp.Size, err)
			}
			mustCheck(t, l)
		})
	})
}

func TestContendedClaimInOneBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			defer l.Close()
			release := holdCommitter(t, l, "first")
			var apps []Append
			for i := range 8 {
				fp := "same"
				if i%2 == 1 {
					fp = "different"
				}
				apps = append(apps, Append{
					Claims: []Claim{{Space: "payment", Key: "tx1", Fingerprint: []byte(fp)}},
					Build:  simpleEntry(fmt.Sprintf("try%d", i)),
				})
			}
			wait := startAppends(context.Background(), l, apps)
			synctest.Wait()
			release()
			outs := wait()
			var winner outcome
			winners := 0
			for _, o := range outs {
				if o.err == nil && !o.a.Existing {
					winner = o
					winners++
				}
			}
			if winners != 1 {
				t.Fatalf("%d appends won the claim, want exactly 1: %+v", winners, outs)
			}
			_, winnerFP, _ := l.ClaimHolder("payment", "tx1")
			for _, o := range outs {
				if o == winner {
					continue
				}
				var ce *ClaimConflictError
				switch {
				case o.err == nil && o.a.Existing:
					if o.a.Index != winner.a.Index || o.a.ID != winner.a.ID {
						t.Errorf("Existing answer %+v, winner %+v", o.a, winner.a)
					}
				case errors.As(o.err, &ce):
					if ce.HolderID != winner.a.ID || string(ce.Claim.Fingerprint) == string(winnerFP) {
						t.Errorf("conflict %+v, winner %+v with fingerprint %q", ce, winner.a, winnerFP)
					}
				default:
					t.Errorf("unexpected outcome %+v", o)
				}
			}
			if l.Size() != 2 {
				t.Errorf("Size() = %d, want 2", l.Size())
			}
			mustCheck(t, l)
		})
	})
}

func TestCancelledBeforeTakenWritesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			defer l.Close()
			release := holdCommitter(t, l, "first")
			ctx, cancel := context.WithCancel(context.Background())
			built := false
			wait := startAppends(ctx, l, []Append{{Build: func(i int64) (Entry, error) {
				built = true
				return simpleEntry("cancelled")(i)
			}}})
			synctest.Wait()
			cancel()
			outs := wait()
			if !errors.Is(outs[0].err, context.Canceled) {
				t.Fatalf("cancelled append: %+v, want context.Canceled", outs[0])
			}
			release()
			if built {
				t.Error("Build of a cancelled append ran")
			}
			if _, err := l.Entry("cancelled"); !errors.Is(err, ErrNotFound) {
				t.Errorf("cancelled append was written: %v", err)
			}
			// Already cancelled: refused without queueing.
			if _, err := l.Append(ctx, Append{Build: simpleEntry("late")}); !errors.Is(err, context.Canceled) {
				t.Errorf("append with a cancelled context: %v", err)
			}
			if l.Size() != 1 {
				t.Errorf("Size() = %d, want 1", l.Size())
			}
		})
	})
}

func TestTakenAppendCompletesDespiteCancel(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			defer l.Close()
			ctx, cancel := context.WithCancel(context.Background())
			entered := make(chan struct{})
			gate := make(chan struct{})
			wait := startAppends(ctx, l, []Append{{Build: func(i int64) (Entry, error) {
				close(entered)
				<-gate
				return simpleEntry("taken")(i)
			}}})
			<-entered
			cancel() // the append is inside its batch: it completes anyway
			close(gate)
			out := wait()[0]
			if out.err != nil || out.a.ID != "taken" {
				t.Fatalf("taken append: %+v, want success after cancel", out)
			}
			if _, err := l.Entry("taken"); err != nil {
				t.Error(err)
			}
		})
	})
}

func TestCloseWaitsForTakenAppends(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			release := holdCommitter(t, l, "first")
			closed := make(chan error)
			go func() { closed <- l.Close() }()
			synctest.Wait() // Close is waiting for the committer
			select {
			case <-closed:
				t.Fatal("Close returned while an append was inside its batch")
			default:
			}
			if out := release(); out.err != nil {
				t.Fatalf("append taken before Close failed: %v", out.err)
			}
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(context.Background(), Append{Build: simpleEntry("x")}); !errors.Is(err, ErrClosed) {
				t.Errorf("Append after Close: %v", err)
			}
		})
	})
}

func TestConcurrentAppendersDurable(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		l, path, v := testLedger(t)
		const n = 64
		const per = 8
		var wg sync.WaitGroup
		got := make([][]Appended, n)
		for g := range n {
			wg.Go(func() {
				for i := range per {
					name := fmt.Sprintf("g%02d-%d", g, i)
					a, err := l.Append(context.Background(), Append{
						Claims: []Claim{{Space: "payment", Key: name}},
						Build:  simpleEntry(name),
					})
					if err != nil {
						t.Errorf("%s: %v", name, err)
						return
					}
					got[g] = append(got[g], a)
				}
			})
		}
		wg.Wait()
		seen := map[int64]string{}
		for _, as := range got {
			for _, a := range as {
				if prev, dup := seen[a.Index]; dup {
					t.Fatalf("index %d given to %s and %s", a.Index, prev, a.ID)
				}
				seen[a.Index] = a.ID
			}
		}
		if len(seen) != n*per || l.Size() != n*per {
			t.Fatalf("%d distinct indexes, Size() %d, want %d", len(seen), l.Size(), n*per)
		}
		cps := 0
		for s := int64(1); s <= l.Size(); s++ {
			if _, err := l.CheckpointAt(s); err == nil {
				cps++
			}
		}
		t.Logf("%d appends in %d commits", n*per, cps)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := Check(path, v); err != nil {
			t.Fatal(err)
		}
		l2 := reopen(t, path)
		for idx, id := range seen {
			e, err := l2.EntryAt(idx)
			if err != nil || e.ID != id {
				t.Fatalf("after reopen EntryAt(%d) = %q, %v; want %q", idx, e.ID, err, id)
			}
		}
	})
}

// An append that reaches the committer ahead of its Order (its predecessor
// is still on its way) waits for the next batch, where the predecessor
// joins it: every append gets the index it expected.
func TestAppendAheadOfItsOrderWaitsOneBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _, _ := testLedger(t)
			defer l.Close()
			release := holdCommitter(t, l, "a") // index 0
			ordered := func(name string, index int64) Append {
				e, _ := simpleEntry(name)(index)
				return Append{Entry: &e, Order: index + 1}
			}
			var late func() []outcome
			b := ordered("b", 1)
			b.Hook = func(*Hook) error {
				// c (expected at 2) arrives while b's batch commits.
				late = startAppends(context.Background(), l, []Append{ordered("c", 2)})
				time.Sleep(time.Millisecond) // c is queued when the bubble idles
				return nil
			}
			wait := startAppends(context.Background(), l, []Append{b, ordered("d", 3), ordered("e", 4)})
			synctest.Wait()
			if out := release(); out.err != nil || out.a.Index != 0 {
				t.Fatalf("held append: %+v", out)
			}
			outs := append(wait(), late()...)
			for i, want := range []int64{1, 3, 4, 2} {
				if o := outs[i]; o.err != nil || o.a.Index != want {
					t.Errorf("append %d: %+v, want index %d", i, o, want)
				}
			}
			// b alone (checkpoint 2), then c, d and e together (5).
			for size, want := range map[int64]bool{2: true, 3: false, 4: false, 5: true} {
				if _, err := l.CheckpointAt(size); (err == nil) != want {
					t.Errorf("checkpoint %d: %v, want present %v", size, err, want)
				}
			}
			mustCheck(t, l)
		})
	})
}

func TestHoldAheadOnceAndNeverAll(t *testing.T) {
	req := func(order int64, held bool) *request { return &request{a: Append{Order: order}, held: held} }
	for _, tc := range []struct {
		name      string
		batch     []*request
		now, held int
	}{
		{"in order", []*request{req(1, false), req(2, false), req(0, false), req(4, false)}, 4, 0},
		{"gap", []*request{req(1, false), req(3, false), req(4, false)}, 1, 2},
		{"gap, unordered after it keeps its place", []*request{req(1, false), req(0, false), req(4, false), req(0, false)}, 3, 1},
		{"already held once", []*request{req(1, false), req(3, true), req(4, false)}, 2, 1},
		{"first one ahead: nothing held", []*request{req(2, false), req(3, false)}, 2, 0},
	} {
		h := &holds{seen: map[int64]bool{}}
		now, _ := h.holdAhead(tc.batch, 0, time.Now())
		held := h.held
		if len(now) != tc.now || len(held) != tc.held {
			t.Errorf("%s: %d now, %d held; want %d, %d", tc.name, len(now), len(held), tc.now, tc.held)
		}
		for _, r := range held {
			if !r.held {
				t.Errorf("%s: a held append is not marked", tc.name)
			}
		}
	}
}
