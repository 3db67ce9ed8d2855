package fiscal

import (
	"io"
	"sync"
	"sync/atomic"
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
	inFlight int64 // predictions not yet resolved
	series   map[string]*seriesGuess
	// hits and misses count appends written as sealed and those the
	// committer sealed again (the benchmarks report them).
	hits, misses atomic.Int64
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
	resolved      bool
}

// predict returns the prediction for the next append; size is the
// ledger's committed size, load reads a series' last number. done must be
// called when the append is over.
func (p *predictor) predict(size int64, series string, load func() (int64, error)) (*guess, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &guess{p: p}
	if series != "" {
		if p.series == nil {
			p.series = map[string]*seriesGuess{}
		}
		g := p.series[series]
		if g == nil {
			g = &seriesGuess{}
			p.series[series] = g
		}
		if !g.loaded {
			last, err := load()
			if err != nil {
				return nil, err
			}
			g.drawn, g.loaded = max(g.drawn, last), true
		}
		g.inFlight++
		t.g, t.number = g, g.drawn+g.inFlight
	}
	t.index = max(p.next, size) + p.inFlight
	p.inFlight++
	return t, nil
}

// drew records, in the committer, the index and number the append got.
func (t *guess) drew(index, number int64) {
	p := t.p
	p.mu.Lock()
	p.next = index + 1
	if t.g != nil {
		t.g.drawn = number
	}
	t.resolve()
	p.mu.Unlock()
}

// done ends a prediction.
func (t *guess) done() {
	t.p.mu.Lock()
	t.resolve()
	t.p.mu.Unlock()
}

func (t *guess) resolve() {
	if t.resolved {
		return
	}
	t.resolved = true
	if t.p.inFlight > 0 {
		t.p.inFlight--
	}
	if t.g != nil && t.g.inFlight > 0 {
		t.g.inFlight--
	}
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
