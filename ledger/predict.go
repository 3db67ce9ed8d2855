package ledger

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Predictor predicts, before an append reaches the committer, the log
// index it will get and the next number of one sequence (Hook.Sequence),
// so that a caller can build position-dependent bytes (a record stating its
// index, a signed receipt, an invoice number) in its own goroutine and the
// committer only compares (Append.Order, Append.Pending). The zero value
// is ready; one Predictor serves the appends of one ledger.
//
// A prediction is a slot: the end of the slots in flight, or a slot given
// up by an earlier prediction of the same sequence (its append failed,
// found its claim held, was revoked, or filled a gap lower down), so that
// one append that does not take its slot leaves a hole the next prediction
// fills instead of moving every later one. The slot of an append that
// filled a gap whose owner was already sent goes to that owner: arriving
// late, it goes last in its batch (Append.Order), into that slot. The committer holds an append
// while a slot before it is still to come (Pending), and Pending revokes
// a prediction the committer waits for that is still unsent after
// revokeAfter: its slot goes to the next prediction and its caller, told
// by Send, predicts again. Predictions are about speed: whatever they
// say, the committer gives indexes and numbers in append order.
type Predictor struct {
	mu       sync.Mutex
	next     int64 // one past the last index drawn
	inFlight int64 // slots predicted and not drawn: unresolved and free
	series   map[string]*seriesSlots
	live     map[int64]*Prediction // unresolved predictions by index
	free     []*Prediction         // slots given up, for the next prediction of their sequence

	hits, misses, revoked atomic.Int64
}

type seriesSlots struct {
	drawn    int64 // the last number drawn (as far as known)
	inFlight int64
	loaded   bool
}

// Prediction is one slot: the log index and, when the append draws from a
// sequence, the number (0 otherwise).
type Prediction struct {
	Index, Number int64
	p             *Predictor
	g             *seriesSlots
	// slot is the index and number it accounts for: its own, or the slot
	// of an append that took its place while it was on its way.
	slot     [2]int64
	at       time.Time // when predicted
	resolved bool      // drawn, or its slot freed
	sent     bool      // handed to the ledger: never revoked
}

// revokeAfter is how long a prediction the committer waits for may stay
// unsent before its slot goes to the next prediction.
const revokeAfter = time.Millisecond

// PredictorStats counts what became of the predictions.
type PredictorStats struct {
	Hits, Misses int64 // drawn as predicted, or not (Prediction.Drew)
	Revoked      int64 // revoked before they were sent (predicted again)
}

// Stats returns the counts so far.
func (p *Predictor) Stats() PredictorStats {
	return PredictorStats{p.hits.Load(), p.misses.Load(), p.revoked.Load()}
}

// Predict returns the prediction for the next append: the lowest slot
// given up in its sequence, else the end. size is the ledger's committed
// size, series the sequence the append draws from ("" for none) and load
// reads its last number (called once per sequence); a final prediction is
// never revoked. Done must be called when the append is over.
func (p *Predictor) Predict(size int64, series string, final bool, load func() (int64, error)) (*Prediction, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil {
		p.series, p.live = map[string]*seriesSlots{}, map[int64]*Prediction{}
	}
	t := &Prediction{p: p, at: time.Now(), sent: final}
	if series != "" {
		if t.g = p.series[series]; t.g == nil {
			t.g = &seriesSlots{}
			p.series[series] = t.g
		}
		if !t.g.loaded {
			last, err := load()
			if err != nil {
				return nil, err
			}
			t.g.drawn, t.g.loaded = max(t.g.drawn, last), true
		}
	}
	p.prune(max(p.next, size))
	if i := slices.IndexFunc(p.free, func(f *Prediction) bool { return f.g == t.g }); i >= 0 {
		t.Index, t.Number = p.free[i].slot[0], p.free[i].slot[1]
		p.free = slices.Delete(p.free, i, i+1)
	} else {
		t.Index = max(p.next, size) + p.inFlight
		if p.inFlight++; t.g != nil {
			t.g.inFlight++
			t.Number = t.g.drawn + t.g.inFlight
		}
	}
	t.slot = [2]int64{t.Index, t.Number}
	p.live[t.Index] = t
	return t, nil
}

// prune drops the free slots below index base, which the log has passed.
func (p *Predictor) prune(base int64) {
	p.free = slices.DeleteFunc(p.free, func(f *Prediction) bool {
		if f.slot[0] >= base {
			return false
		}
		p.drop(f)
		return true
	})
}

// drop takes a slot out of the counts.
func (p *Predictor) drop(t *Prediction) {
	p.inFlight--
	if t.g != nil {
		t.g.inFlight--
	}
}

// Drew records, in the committer (Append.Hook), the index and number the
// append got, and reports whether they are the predicted ones.
func (t *Prediction) Drew(index, number int64) bool {
	p := t.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = index + 1
	if t.g != nil {
		t.g.drawn = number
	}
	switch {
	case t.resolved:
	case index < t.Index: // it filled a gap
		t.resolve()
		if f := p.live[index]; f != nil && f.sent {
			// The gap's owner is on its way: it takes this slot.
			delete(p.live, index)
			f.slot = t.slot
			p.live[f.slot[0]] = f
			p.drop(t)
		} else {
			p.free = append(p.free, t) // for the next prediction
		}
	default:
		t.resolve()
		p.drop(t)
	}
	if f := p.live[index]; f != nil && !f.sent {
		// Its slot is taken: revoked, it predicts again before sending.
		f.resolve()
		p.drop(f)
		p.revoked.Add(1)
	}
	p.prune(index + 1)
	hit := index == t.Index && number == t.Number
	if hit {
		p.hits.Add(1)
	} else {
		p.misses.Add(1)
	}
	return hit
}

// Done ends a prediction: one never drawn frees its slot.
func (t *Prediction) Done() {
	t.p.mu.Lock()
	if !t.resolved {
		t.resolve()
		t.p.free = append(t.p.free, t)
	}
	t.p.mu.Unlock()
}

func (t *Prediction) resolve() {
	t.resolved = true
	if t.p.live[t.slot[0]] == t {
		delete(t.p.live, t.slot[0])
	}
}

// Send marks the prediction handed to the ledger, unless it was revoked:
// then the caller predicts again (Done is not needed for this one).
func (t *Prediction) Send() bool {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.sent = !t.resolved
	return t.sent
}

// Pending is Append.Pending for appends ordered by their prediction (Order
// is Index+1): whether the slot is still to come, predicted and unresolved
// or free for the next prediction. A prediction still unsent after
// revokeAfter is revoked: its slot becomes free.
func (p *Predictor) Pending(order int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.live[order-1]; t != nil {
		if !t.sent && time.Since(t.at) > revokeAfter {
			t.resolve()
			p.free = append(p.free, t)
			p.revoked.Add(1)
		}
		return true
	}
	return slices.ContainsFunc(p.free, func(f *Prediction) bool { return f.slot[0] == order-1 })
}
