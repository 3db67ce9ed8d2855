package fiscal

import (
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Sealing off the committer (issue 22). An entry is sealed in the caller's
// goroutine, before the ledger's single committer sees it: the invoice with
// its number, the record document with its log index, the receipt's
// commitments and its Ed25519 signature. The two things that depend on
// the order of appends are predicted, and the committer compares:
//
//   - the log index (the record states it, and the receipt commits to the
//     record's SHA-256): predicted as the last index the committer gave plus
//     the predictions still in flight;
//   - the invoice number (in the UBL, the record and the signed claims):
//     predicted the same way per series.
//
// Equal, the entry is written as sealed; otherwise the committer seals it
// again with the true index and number (the old path), replaying the random
// bytes the first seal drew, so the result is exactly what sealing once at
// that position gives. Numbering stays gap-free and in append order, and
// the index stays the committer's, whatever the prediction. The Art. 59c
// running total is checked there as before (totals.go).
//
// Predictions are right when appends reach the committer in the order they
// were predicted in; the ledger plans the appends of a batch in predicted
// order (ledger.Append.Order) and holds one that came ahead of a missing
// predecessor for the next batch, so only those that overtook each other
// by more than a batch miss, besides an append that fails or finds its claim
// held (a retry, a duplicate) and something else appending to the ledger
// in between. Each miss costs one seal in the committer and corrects the
// next predictions. (A chain that let each append go to the ledger only
// after its predecessor was measured too: no fewer misses, and one slow
// caller held up all later ones.)

// predictor hands out predictions of log indexes and invoice numbers.
type predictor struct {
	mu       sync.Mutex
	next     int64 // one past the last index the committer gave
	inFlight int64 // predictions not yet resolved, and free slots
	series   map[string]*seriesGuess
	live     map[int64]*guess // unresolved predictions by index
	free     []*guess         // slots given up, for the next prediction of their series
	// hits and misses count appends written as sealed and those the
	// committer sealed again (the benchmarks report them).
	hits, misses atomic.Int64
	revoked      atomic.Int64 // predictions revoked (made again by their caller)
}

type seriesGuess struct {
	drawn    int64 // the last number the committer drew (as far as known)
	inFlight int64
	loaded   bool
}

// guess is one prediction: the index, and the invoice number when the
// entry carries an invoice (number 0 otherwise).
type guess struct {
	index, number int64
	p             *predictor
	g             *seriesGuess // nil: no invoice
	at            time.Time    // when predicted
	resolved      bool         // drawn, or its slot freed
	sent          bool         // handed to the ledger: never revoked
}

// revokeAfter is how long a prediction the committer waits for may stay
// unsent before its slot goes to the next prediction (awaited).
const revokeAfter = time.Millisecond

// predict returns the prediction for the next append: the lowest slot
// given up in its series, else the end; size is the ledger's committed
// size, load reads a series' last number; a final prediction is never
// revoked. done must be called when the append is over.
func (p *predictor) predict(size int64, series string, final bool, load func() (int64, error)) (*guess, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live == nil {
		p.series, p.live = map[string]*seriesGuess{}, map[int64]*guess{}
	}
	t := &guess{p: p, at: time.Now(), sent: final}
	if series != "" {
		if t.g = p.series[series]; t.g == nil {
			t.g = &seriesGuess{}
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
	if i := slices.IndexFunc(p.free, func(f *guess) bool { return f.g == t.g }); i >= 0 {
		t.index, t.number = p.free[i].index, p.free[i].number
		p.free = slices.Delete(p.free, i, i+1)
	} else {
		t.index = max(p.next, size) + p.inFlight
		if p.inFlight++; t.g != nil {
			t.g.inFlight++
			t.number = t.g.drawn + t.g.inFlight
		}
	}
	p.live[t.index] = t
	return t, nil
}

// prune drops the free slots below index base, which the log has passed.
func (p *predictor) prune(base int64) {
	p.free = slices.DeleteFunc(p.free, func(f *guess) bool {
		if f.index >= base {
			return false
		}
		p.drop(f)
		return true
	})
}

// drop takes a slot out of the counts.
func (p *predictor) drop(t *guess) {
	p.inFlight--
	if t.g != nil {
		t.g.inFlight--
	}
}

// drew records, in the committer, the index and number the append got.
func (t *guess) drew(index, number int64) {
	p := t.p
	p.mu.Lock()
	p.next = index + 1
	if t.g != nil {
		t.g.drawn = number
	}
	switch {
	case t.resolved:
	case index < t.index: // it filled a gap: its own slot is free
		t.resolve()
		p.free = append(p.free, t)
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
	p.mu.Unlock()
}

// done ends a prediction: one never drawn frees its slot.
func (t *guess) done() {
	t.p.mu.Lock()
	if !t.resolved {
		t.resolve()
		t.p.free = append(t.p.free, t)
	}
	t.p.mu.Unlock()
}

func (t *guess) resolve() {
	t.resolved = true
	if t.p.live[t.index] == t {
		delete(t.p.live, t.index)
	}
}

// send marks the prediction handed to the ledger, unless it was revoked.
func (t *guess) send() bool {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.sent = !t.resolved
	return t.sent
}

// awaited (ledger.Append.Pending) says whether an append ordered order
// (index+1) is still to come: predicted and unresolved, or a free slot
// the next prediction takes. A prediction the committer has been waiting
// for that is still unsent after revokeAfter is revoked: its slot becomes
// free, and its caller predicts again before sending.
func (p *predictor) awaited(order int64) bool {
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
	return slices.ContainsFunc(p.free, func(f *guess) bool { return f.index == order-1 })
}

// replay records the random bytes a seal draws and serves them again to a
// second seal of the same draft, so that sealing again in the committer
// gives the same salts.
type replay struct {
	src     io.Reader
	log     []byte
	pos     int
	playing bool
}

func (r *replay) Read(b []byte) (int, error) {
	if r.playing && r.pos < len(r.log) {
		n := copy(b, r.log[r.pos:])
		r.pos += n
		return n, nil
	}
	n, err := io.ReadFull(r.src, b)
	if !r.playing {
		r.log = append(r.log, b[:n]...)
	}
	return n, err
}
