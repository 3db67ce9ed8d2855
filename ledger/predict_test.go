package ledger

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func noNumbers() (int64, error) { return 0, nil }

func predictAt(t *testing.T, p *Predictor, size int64, final bool) *Prediction {
	t.Helper()
	g, err := p.Predict(size, "s", final, noNumbers)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func wantSlot(t *testing.T, g *Prediction, index, number int64) {
	t.Helper()
	if g.Index != index || g.Number != number {
		t.Fatalf("prediction %d/%d, want %d/%d", g.Index, g.Number, index, number)
	}
}

// A slot an append does not take (it failed, or filled a gap lower down)
// goes to the next prediction of its sequence instead of moving every
// later prediction up.
func TestPredictorGivesUnusedSlotsToTheNextPrediction(t *testing.T) {
	var p Predictor
	a, b, c := predictAt(t, &p, 0, false), predictAt(t, &p, 0, false), predictAt(t, &p, 0, false)
	wantSlot(t, a, 0, 1)
	wantSlot(t, b, 1, 2)
	wantSlot(t, c, 2, 3)
	b.Done() // failed before the committer drew anything
	d := predictAt(t, &p, 0, false)
	wantSlot(t, d, 1, 2)
	wantSlot(t, predictAt(t, &p, 0, false), 3, 4)
	if !a.Drew(0, 1) || !d.Drew(1, 2) {
		t.Fatal("drawn as predicted, reported missed")
	}
	// c is committed at 2 as predicted; then a late prediction fills the
	// gap below its own slot, which the next prediction takes.
	if !c.Drew(2, 3) {
		t.Fatal("c missed")
	}
	e := predictAt(t, &p, 3, false) // 4, 5
	wantSlot(t, e, 4, 5)
	// The append predicted at 3 never comes; e fills its place.
	if e.Drew(3, 4) {
		t.Fatal("e drawn at 3/4, reported as its prediction 4/5")
	}
	wantSlot(t, predictAt(t, &p, 4, false), 4, 5)
	if st := p.Stats(); st.Hits != 3 || st.Misses != 1 {
		t.Fatalf("stats %+v, want 3 hits and 1 miss", st)
	}
}

// A prediction the committer waits for that is still unsent after
// revokeAfter is revoked: Send says so, its slot goes to the next
// prediction, and the caller predicts again. A sent one is never revoked.
func TestPredictorRevokesAStalledPrediction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p Predictor
		a, b := predictAt(t, &p, 0, false), predictAt(t, &p, 0, false)
		if !b.Send() {
			t.Fatal("b revoked")
		}
		if !p.Pending(a.Index+1) || !a.Send() {
			t.Fatal("a young prediction is not pending, or revoked")
		}
		c := predictAt(t, &p, 0, false)
		time.Sleep(2 * revokeAfter)
		if !p.Pending(b.Index+1) || !b.Send() {
			t.Fatal("a sent prediction was revoked")
		}
		if !p.Pending(c.Index+1) || c.Send() {
			t.Fatal("a stalled unsent prediction was not revoked")
		}
		if !p.Pending(c.Index + 1) {
			t.Fatal("a revoked slot is not pending: the committer would not wait for its next owner")
		}
		again := predictAt(t, &p, 0, true)
		wantSlot(t, again, c.Index, c.Number)
		time.Sleep(2 * revokeAfter)
		if !p.Pending(again.Index+1) || !again.Send() {
			t.Fatal("a final prediction was revoked")
		}
		// An unsent prediction whose slot the committer gave to another
		// append is revoked too.
		d := predictAt(t, &p, 0, false)
		e := predictAt(t, &p, 0, false)
		if !e.Send() {
			t.Fatal("e revoked")
		}
		for _, g := range []*Prediction{a, b, again} {
			g.Drew(g.Index, g.Number)
		}
		e.Drew(d.Index, d.Number)
		if d.Send() {
			t.Fatal("a prediction whose slot was taken was not revoked")
		}
		if st := p.Stats(); st.Revoked != 2 {
			t.Fatalf("stats %+v, want 2 revoked", st)
		}
	})
}

// skewedAppends appends n entries from n callers, each predicting its
// index and its invoice number, stalling for stall(i) before sending,
// predicting again when revoked (sealing again only then), and comparing
// in the hook. It returns the entries' numbers by index, and how long each
// caller's Append took.
func skewedAppends(t *testing.T, l *Ledger, p *Predictor, n int, stall func(i int) (before, after time.Duration)) (numbers []int64, took []time.Duration) {
	t.Helper()
	numbers, took = make([]int64, n), make([]time.Duration, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		time.Sleep(50 * time.Microsecond)
		wg.Go(func() {
			before, after := stall(i)
			var g *Prediction
			for try := 0; ; try++ {
				var err error
				if g, err = p.Predict(l.Size(), "inv", try > 0, func() (int64, error) { return l.Sequence("inv") }); err != nil {
					t.Error(err)
					return
				}
				defer g.Done()
				time.Sleep(before) // sealing at the prediction
				if g.Send() {
					break
				}
			}
			time.Sleep(after)
			id := "e" + strconv.Itoa(i)
			leaf := fmt.Sprintf("%s at %d number %d", id, g.Index, g.Number)
			start := time.Now()
			defer func() { took[i] = time.Since(start) }()
			a, err := l.Append(context.Background(), Append{
				Entry: &Entry{ID: id, Leaf: []byte(leaf)}, Order: g.Index + 1, Pending: p.Pending, Sequences: []string{"inv"},
				Hook: func(h *Hook) error {
					num, err := h.Sequence("inv")
					if err != nil {
						return err
					}
					if !g.Drew(h.Index(), num) {
						return h.SetLeaf(fmt.Appendf(nil, "%s at %d number %d", id, h.Index(), num))
					}
					return nil
				},
			})
			if err != nil {
				t.Error(err)
				return
			}
			e, err := l.EntryAt(a.Index)
			if err != nil {
				t.Error(err)
				return
			}
			var gotIndex, gotNumber int64
			if _, err := fmt.Sscanf(string(e.Leaf), id+" at %d number %d", &gotIndex, &gotNumber); err != nil || gotIndex != a.Index {
				t.Errorf("entry %s at %d: leaf %q", id, a.Index, e.Leaf)
			}
			mu.Lock()
			numbers[a.Index] = gotNumber
			mu.Unlock()
		})
	}
	wg.Wait()
	return numbers, took
}

func wantGapFree(t *testing.T, numbers []int64) {
	t.Helper()
	for i, n := range numbers {
		if n != int64(i)+1 {
			t.Fatalf("numbers by index %v: not 1…%d in append order", numbers, len(numbers))
		}
	}
}

// Callers reaching the committer out of the order of their predictions,
// one of them stalled for longer than a batch before it sends: the
// committer holds the appends behind it (it is pending), revokes its
// prediction once stalled, and the next prediction takes its slot. Every
// number is gap-free in append order and no prediction is drawn wrong.
func TestSkewedArrivalsKeepTheirPredictions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		defer l.Close()
		var p Predictor
		numbers, _ := skewedAppends(t, l, &p, 40, func(i int) (time.Duration, time.Duration) {
			switch {
			case i == 7:
				return 3 * revokeAfter, 0 // stalled while sealing
			case i%3 == 0:
				return 400 * time.Microsecond, 0 // overtaken by the next two
			}
			return 100 * time.Microsecond, 0
		})
		wantGapFree(t, numbers)
		if st := p.Stats(); st.Misses != 0 || st.Hits != 40 || st.Revoked == 0 {
			t.Fatalf("stats %+v: want 40 hits, no miss, the stalled prediction revoked", st)
		}
		mustCheck(t, l)
	})
}

// A caller stalled after sending (it cannot be revoked) for longer than
// MaxHold: the appends behind it wait MaxHold, no longer, then the last of
// them fills its place (one miss, not one per append), and the stalled one
// goes where it arrives (a second miss).
func TestAStalledSentAppendHoldsOthersAtMostMaxHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _, _ := testLedger(t)
		defer l.Close()
		var p Predictor
		const n, stalled = 12, 3
		numbers, took := skewedAppends(t, l, &p, n, func(i int) (time.Duration, time.Duration) {
			if i == stalled {
				return 0, 4 * MaxHold
			}
			return 100 * time.Microsecond, 0
		})
		wantGapFree(t, numbers)
		if st := p.Stats(); st.Misses != 2 || st.Hits != n-2 {
			t.Fatalf("stats %+v: want 2 misses of %d", st, n)
		}
		for i, d := range took {
			if i != stalled && d > MaxHold {
				t.Errorf("append %d waited %v, more than MaxHold", i, d)
			}
		}
		if took[stalled+1] < MaxHold {
			t.Errorf("the append after the stalled one waited %v: not held", took[stalled+1])
		}
		mustCheck(t, l)
	})
}

// holdAhead with Append.Pending: it holds the appends behind a missing
// Order while it is pending (not one already taken), for MaxHold from the
// first hold at that position; then, or when nothing is pending, the last
// append fills the gap; appends whose index the log has passed go last.
func TestHoldAheadWithPending(t *testing.T) {
	pendingOrders := map[int64]bool{2: true}
	pending := func(o int64) bool { return pendingOrders[o] }
	req := func(order int64) *request { return &request{a: Append{Order: order, Pending: pending}} }
	orders := func(rs []*request) (os []int64) {
		for _, r := range rs {
			os = append(os, r.a.Order)
		}
		return os
	}
	t0 := time.Now()
	h := &holds{seen: map[int64]bool{}}
	now, wait := h.holdAhead([]*request{req(1), req(3), req(4)}, 0, t0)
	if got := fmt.Sprint(orders(now), orders(h.held), wait); got != fmt.Sprint([]int64{1}, []int64{3, 4}, MaxHold) {
		t.Fatalf("order 2 pending: now, held, wait %s", got)
	}
	h.held = nil
	now, wait = h.holdAhead([]*request{req(3), req(4)}, 1, t0.Add(MaxHold/2))
	if len(now) != 0 || len(h.held) != 2 || wait != MaxHold/2 {
		t.Fatalf("still pending at the same position: %v now, %d held, wait %v", orders(now), len(h.held), wait)
	}
	h.held = nil
	now, _ = h.holdAhead([]*request{req(3), req(4), req(6)}, 1, t0.Add(MaxHold))
	if got := fmt.Sprint(orders(now), len(h.held)); got != fmt.Sprint([]int64{6, 3, 4}, 0) {
		t.Fatalf("after MaxHold: now, held %s; want the last filling the gap, nothing held", got)
	}
	h = &holds{seen: map[int64]bool{2: true}}
	if now, _ = h.holdAhead([]*request{req(1), req(3), req(4)}, 0, t0); fmt.Sprint(orders(now)) != "[1 4 3]" {
		t.Fatalf("order 2 already taken: %v, want no hold and the last in the gap", orders(now))
	}
	h = &holds{seen: map[int64]bool{}}
	if now, _ = h.holdAhead([]*request{req(3), req(6), req(7)}, 5, t0); fmt.Sprint(orders(now)) != "[6 7 3]" || len(h.held) != 0 {
		t.Fatalf("stale order 3 at size 5: %v (%d held), want it last", orders(now), len(h.held))
	}
	h = &holds{seen: map[int64]bool{}}
	long := req(4)
	long.held, long.heldAt = true, t0.Add(-2*MaxHold)
	if now, _ = h.holdAhead([]*request{req(1), req(3), long}, 0, t0); len(now) != 3 {
		t.Fatalf("an append held 2×MaxHold already: %v committed, want all", orders(now))
	}
	h = &holds{seen: map[int64]bool{}, stopping: true}
	if now, _ = h.holdAhead([]*request{req(1), req(3), req(4)}, 0, t0); len(now) != 3 {
		t.Fatalf("closing: %v committed, want all", orders(now))
	}
}

// An append that filled a gap whose owner is already on its way (sent)
// leaves its own slot to that owner, not to the next prediction: the
// owner, arriving late, takes it, and nothing else moves.
func TestPredictorGivesAFillersSlotToTheGapsOwner(t *testing.T) {
	var p Predictor
	a, b, c := predictAt(t, &p, 0, false), predictAt(t, &p, 0, false), predictAt(t, &p, 0, false)
	for _, g := range []*Prediction{a, b, c} {
		g.Send()
	}
	a.Drew(0, 1)
	if c.Drew(1, 2) {
		t.Fatal("c drawn at b's slot, reported as predicted")
	}
	if !p.Pending(c.Index+1) || p.Pending(b.Index+1) {
		t.Fatal("c's slot is not awaited (b takes it), or b's is")
	}
	d := predictAt(t, &p, 2, false)
	wantSlot(t, d, 3, 4)
	if b.Drew(2, 3) {
		t.Fatal("b drawn late, reported as predicted")
	}
	if !d.Drew(3, 4) {
		t.Fatal("d, predicted after b was late, missed")
	}
	if st := p.Stats(); st.Hits != 2 || st.Misses != 2 || p.inFlight != 0 || len(p.live) != 0 || len(p.free) != 0 {
		t.Fatalf("stats %+v, %d in flight, %d live, %d free; want 2 hits, 2 misses, nothing left", st, p.inFlight, len(p.live), len(p.free))
	}
}
