package fiscal

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Sealing off the committer (issue 22). Everything a settlement's entry
// holds is computed in the caller's goroutine, before the ledger's single
// committer sees it: the invoice with its number, the record document, the
// receipt's commitments and its signature. What depends on the order of
// appends is decided optimistically and checked in the committer by a
// comparison:
//
//   - The log index. A record states its own position (ledger.index, and
//     the current revision's history[].ledgerIndex). Its receipt commits to
//     it (/record_sha256), so that digest is taken over the record with its
//     own position written as -1, the "unplaced" form, which does not
//     depend on where the entry lands; the stored and served record carries
//     the real index, which the log itself binds (the inclusion proof). The
//     document is rendered with a guessed index of the right width and the
//     committer splices the true digits in (ledger.Hook.Splice), or
//     re-places the bytes when the width changed. Records stored before
//     this change committed to their placed bytes; both are checked
//     (integrity.go).
//   - The invoice number. It is in the UBL, the record and the signed
//     claims, so it is predicted (numbering below), and the committer
//     compares the prediction with the sequence's next number: equal, the
//     entry is written as sealed; otherwise it is sealed again there with
//     the true number (the rare recompute path).
//   - The Art. 59c running total: checked in the committer (totals.go).

// unplacedIndex is the index a record carries in its unplaced form.
const unplacedIndex = -1

// placement is where a record document states its own log index: the
// offsets of the digits of ledger.index and of the current revision's
// history[].ledgerIndex in the unplaced document.
type placement struct {
	unplaced []byte
	offsets  []int // each the offset of a "-1"
}

// placeRecord finds the record's own index in its unplaced document. The
// patterns cannot occur inside a JSON string (their quotes would be
// escaped), and each occurs at most once (other revisions' indexes are ≥ 0).
func placeRecord(unplaced []byte, origin string) (placement, error) {
	p := placement{unplaced: unplaced}
	o, err := json.Marshal(origin)
	if err != nil {
		return p, err
	}
	for _, pat := range [][]byte{
		[]byte(`"ledger":{"origin":` + string(o) + `,"index":-1}`),
		[]byte(`"ledgerIndex":-1`),
	} {
		i := bytes.Index(unplaced, pat)
		if i < 0 {
			continue
		}
		if bytes.LastIndex(unplaced, pat) != i {
			return p, fmt.Errorf("fiscal: record states its own position twice (%s)", pat)
		}
		off := i + bytes.LastIndex(pat, []byte("-1"))
		p.offsets = append(p.offsets, off)
	}
	if len(p.offsets) == 0 {
		return p, fmt.Errorf("fiscal: record does not state its ledger position")
	}
	return p, nil
}

// at returns the document with its own index written as index.
func (p placement) at(index int64) []byte {
	digits := strconv.AppendInt(nil, index, 10)
	out := make([]byte, 0, len(p.unplaced)+len(p.offsets)*(len(digits)-2))
	last := 0
	for _, off := range p.offsets {
		out = append(out, p.unplaced[last:off]...)
		out = append(out, digits...)
		last = off + 2
	}
	return append(out, p.unplaced[last:]...)
}

// splices are the (offset, digits) pairs that turn p.at(guess) into
// p.at(index), when both have the same width.
func (p placement) splices(guess, index int64) ([]int, []byte, bool) {
	g, digits := strconv.AppendInt(nil, guess, 10), strconv.AppendInt(nil, index, 10)
	if len(g) != len(digits) {
		return nil, nil, false
	}
	offs := make([]int, len(p.offsets))
	for i, off := range p.offsets {
		offs[i] = off + i*(len(digits)-2) // earlier placements shifted the bytes
	}
	return offs, digits, true
}

// unplaceRecord returns a stored record with its own index (index) written
// as -1: the bytes a 3.0.0 receipt issued off the committer commits to.
func unplaceRecord(doc []byte, origin string, index int64) []byte {
	o, err := json.Marshal(origin)
	if err != nil {
		return nil
	}
	n := strconv.FormatInt(index, 10)
	out := bytes.Replace(doc, []byte(`"ledger":{"origin":`+string(o)+`,"index":`+n+`}`), []byte(`"ledger":{"origin":`+string(o)+`,"index":-1}`), 1)
	for _, end := range []string{",", "}"} {
		out = bytes.Replace(out, []byte(`"ledgerIndex":`+n+end), []byte(`"ledgerIndex":-1`+end), 1)
	}
	return out
}

// unplacedDigest is the SHA-256 of a stored record's unplaced form.
func unplacedDigest(doc []byte, origin string, index int64) [sha256.Size]byte {
	return sha256.Sum256(unplaceRecord(doc, origin, index))
}

// numbering predicts invoice numbers: per series, the last number the
// committer drew plus the predictions still in flight. A prediction that
// turns out wrong (appends reached the committer in another order, or one
// failed) costs a recompute in the committer, never a gap or a repeat: the
// committer's sequence is the authority.
type numbering struct {
	mu     sync.Mutex
	series map[string]*seriesGuess
	// hits and misses count predictions the committer confirmed and
	// those it had to seal again (benchmarks report them).
	hits, misses atomic.Int64
}

type seriesGuess struct {
	drawn    int64 // the last number the committer drew (as far as known)
	inFlight int64
	loaded   bool
	last     chan struct{} // closed when the newest prediction went to the ledger
}

// predict returns the number the next append of series will probably get
// and the prediction's token; done(token) must be called when that append
// is over.
func (n *numbering) predict(series string, load func() (int64, error)) (int64, *guessToken, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.series == nil {
		n.series = map[string]*seriesGuess{}
	}
	g := n.series[series]
	if g == nil {
		g = &seriesGuess{}
		n.series[series] = g
	}
	if !g.loaded {
		last, err := load()
		if err != nil {
			return 0, nil, err
		}
		g.drawn, g.loaded = max(g.drawn, last), true
	}
	g.inFlight++
	t := &guessToken{g: g, prev: g.last, mine: make(chan struct{})}
	g.last = t.mine
	return g.drawn + g.inFlight, t, nil
}

// turn waits until the previous prediction of the series went to the
// ledger (or ended), so that appends reach the committer in the order of
// their predictions; go must be called right before this one's Append.
func (t *guessToken) turn() {
	if t.prev != nil {
		<-t.prev
	}
}

// pass lets the next prediction go; it is idempotent.
func (t *guessToken) pass() {
	t.once.Do(func() { close(t.mine) })
}

// guessToken is one prediction, in flight until the committer drew its
// number or the append ended without.
type guessToken struct {
	g          *seriesGuess
	resolved   bool
	prev, mine chan struct{}
	once       sync.Once
}

// drew records, in the committer, the number the append of t drew.
func (n *numbering) drew(t *guessToken, number int64) {
	n.mu.Lock()
	t.g.drawn = number
	n.resolve(t)
	n.mu.Unlock()
}

// done ends a prediction.
func (n *numbering) done(t *guessToken) {
	t.pass()
	n.mu.Lock()
	n.resolve(t)
	n.mu.Unlock()
}

func (n *numbering) resolve(t *guessToken) {
	if !t.resolved && t.g.inFlight > 0 {
		t.g.inFlight--
	}
	t.resolved = true
}
