package ubl

import "sync"

// Renderer is DraftInvoice and DraftCreditNote with a memory of the
// sellers it has seen: a seller's party is the same on every document an
// account issues, so the checks it passed (the first-pass checks of
// Invoice.Seller under a profile) and its rendered cac:Party block are
// kept, per seller value, and reused. The output is byte-identical to the
// package functions', and so are the errors: only checks that passed are
// remembered, and a remembered block is the bytes the renderer wrote for
// an equal party in the same position. A Renderer holds at most
// maxRememberedSellers sellers (it forgets them all when full). The zero
// value is ready to use; it is safe for concurrent use and must not be
// copied after first use.
type Renderer struct {
	mu      sync.RWMutex
	checked map[checkedSeller]struct{}
	blocks  map[sellerBlockKey][]byte
	// bufs holds the buffers of released drafts (*[]byte, empty): the
	// next draft renders into one instead of a new ~5 KB slice.
	bufs sync.Pool
}

// maxPooledBuffer is the largest buffer a released draft gives back; a
// larger one (a summary invoice of many lines) is left to the collector.
const maxPooledBuffer = 64 << 10

// buffer returns an empty buffer of at least size bytes for a document:
// one a released draft gave back (Draft.Release), or a new one (always
// for the package functions, whose r is nil).
func (r *Renderer) buffer(size int) *[]byte {
	if r != nil {
		if b, _ := r.bufs.Get().(*[]byte); b != nil {
			if cap(*b) >= size {
				return b
			}
			r.bufs.Put(b)
		}
	}
	b := make([]byte, 0, size)
	return &b
}

// release gives buf back (empty, at its full capacity).
func (r *Renderer) release(buf *[]byte) {
	if r == nil || buf == nil || cap(*buf) > maxPooledBuffer {
		return
	}
	r.bufs.Put(buf)
}

// maxRememberedSellers bounds a Renderer's memory (each entry is a Party
// and at most a few hundred bytes of XML).
const maxRememberedSellers = 4096

// checkedSeller is a seller that passed checkParty under a profile; the
// check reads nothing else.
type checkedSeller struct {
	profile Profile
	party   Party
}

// sellerBlockKey is everything the seller's cac:Party block depends on
// (prepared.party): the party, whether VAT identifiers are written, the
// Greek rules and the electronic address.
type sellerBlockKey struct {
	party       Party
	writeVAT    bool
	greekSeller bool
	endpoint    endpoint
	depth       int // the writer's indentation (always that of cac:AccountingSupplierParty's child)
}

// DraftInvoice is the package's DraftInvoice.
func (r *Renderer) DraftInvoice(inv Invoice) (*Draft, error) {
	return draftWith(r, &inv, nil)
}

// DraftCreditNote is the package's DraftCreditNote.
func (r *Renderer) DraftCreditNote(cn CreditNote) (*Draft, error) {
	return draftWith(r, &cn.Invoice, &cn)
}

// checkSeller runs checkParty on the seller unless r saw it pass under the
// profile.
func (r *Renderer) checkSeller(c *checker, prof Profile, pt Party) {
	if r == nil {
		checkParty(c, prof, "Seller", pt, sellerRules)
		return
	}
	k := checkedSeller{prof, pt}
	r.mu.RLock()
	_, ok := r.checked[k]
	r.mu.RUnlock()
	if ok {
		return
	}
	n := len(c.probs)
	checkParty(c, prof, "Seller", pt, sellerRules)
	if len(c.probs) > n {
		return
	}
	r.mu.Lock()
	if r.checked == nil || len(r.checked) >= maxRememberedSellers {
		r.checked = make(map[checkedSeller]struct{})
	}
	r.checked[k] = struct{}{}
	r.mu.Unlock()
}

// sellerParty writes the seller's cac:Party; with r, from the block r
// remembers for it, or remembering the one written.
func (r *Renderer) sellerParty(w *writer, p *prepared) {
	if r == nil {
		p.party(w, p.inv.Seller, p.seller)
		return
	}
	k := sellerBlockKey{p.inv.Seller, p.writeVAT, p.greekSeller, p.seller, w.depth}
	r.mu.RLock()
	block, ok := r.blocks[k]
	r.mu.RUnlock()
	if ok {
		w.b = append(w.b, block...)
		return
	}
	start := len(w.b)
	p.party(w, p.inv.Seller, p.seller)
	block = append([]byte(nil), w.b[start:]...)
	r.mu.Lock()
	if r.blocks == nil || len(r.blocks) >= maxRememberedSellers {
		r.blocks = make(map[sellerBlockKey][]byte)
	}
	r.blocks[k] = block
	r.mu.Unlock()
}
