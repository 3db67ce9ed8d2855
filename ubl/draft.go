package ubl

import (
	"bytes"
	"errors"
)

// Draft is a validated, rendered document still waiting for its number
// (BT-1). Invoice numbers are sequential per account and series (Art.
// 226(2)) and are assigned when the record is committed, after the
// document was built: the engine renders a Draft outside its commit lock
// and calls Finish with the number inside it. Finish copies the document
// once and writes the escaped number into cbc:ID; it is about 20 times
// cheaper than rendering again (BenchmarkDraftFinish against
// BenchmarkRenderInvoice).
//
// Finish may be called concurrently and repeatedly. Take, which writes
// the first number into the draft's own buffer, may not run concurrently
// with another call on the draft.
type Draft struct {
	xml    []byte
	at     int // offset of the number's placeholder in xml
	tail   int // offset of what follows the number in xml: after a Take, its number's end
	taken  bool
	totals Totals

	// The renderer that drafted it and the buffer xml was rendered into,
	// given back by Release (nil for the package functions). A released
	// draft has no xml.
	renderer *Renderer
	buf      *[]byte

	// For the checks that depend on the number.
	greek     bool
	kind      docKind
	sellerVAT string
	issueDate string
}

// idPlaceholder is the content of cbc:ID in a draft: a character sequence
// no valid number contains (it is not an XML name character, so nothing
// else the renderer writes can look like it, and Finish finds it at a
// recorded offset in any case).
const idPlaceholder = "\x00ID\x00"

// DraftInvoice validates inv, whose ID must be empty, exactly as
// RenderInvoice does (except the rules on the number) and renders it.
func DraftInvoice(inv Invoice) (*Draft, error) {
	return draftWith(nil, &inv, nil)
}

// DraftCreditNote is DraftInvoice for a credit note.
func DraftCreditNote(cn CreditNote) (*Draft, error) {
	return draftWith(nil, &cn.Invoice, &cn)
}

// draftWith drafts with r's memory of sellers (none when r is nil).
func draftWith(r *Renderer, inv *Invoice, cn *CreditNote) (*Draft, error) {
	p, err := prepareDoc(r, inv, cn, true)
	if err != nil {
		return nil, err
	}
	inv.ID = idPlaceholder
	out, _ := p.render()
	at := bytes.Index(out, []byte("<cbc:ID>"+idPlaceholder+"</cbc:ID>"))
	if at < 0 {
		panic("ubl: draft placeholder not written") // the renderer writes cbc:ID first
	}
	at += len("<cbc:ID>")
	*p.buf = out[:0] // the buffer at its full capacity (render's appends may have grown it), for Release
	return &Draft{
		xml: out, at: at, tail: at + len(idPlaceholder), totals: p.totals, renderer: r, buf: p.buf,
		greek: p.greekSeller && inv.Profile == ProfilePeppol, kind: p.kind, sellerVAT: inv.Seller.VATNumber, issueDate: inv.IssueDate,
	}, nil
}

// ErrReleased is the error of Finish and Take on a released draft.
var ErrReleased = errors.New("ubl: the draft was released")

// Release gives the draft's buffer back to the Renderer that drafted it,
// for a later draft to render into: a settlement's invoice is about 5 KB,
// which each settlement otherwise allocates, and at Go's default GOGC
// every allocated byte brings the next collection closer (fiscal's
// BenchmarkSettle). After Release the draft's Finish and Take return
// ErrReleased, and the document its Take returned must no longer be used:
// a later draft overwrites it. Documents Finish returned are copies and
// stay valid. A draft of the package functions has nothing to give back;
// Release of a released draft does nothing. Release may not run
// concurrently with another call on the draft.
func (d *Draft) Release() {
	if d.xml == nil {
		return
	}
	d.renderer.release(d.buf)
	d.xml, d.buf = nil, nil
}

// Totals returns the VAT breakdown and totals of the document.
func (d *Draft) Totals() Totals { return d.totals }

// Finish returns the document with id as its number (BT-1). id is checked
// as RenderInvoice checks Invoice.ID (BR-02, and GR-R-001 for a Greek
// seller under Peppol); on a problem it returns a *ValidationError and no
// XML. The result is byte-identical to RenderInvoice with ID = id.
func (d *Draft) Finish(id string) ([]byte, error) {
	if d.xml == nil {
		return nil, ErrReleased
	}
	if err := d.checkID(id); err != nil {
		return nil, err
	}
	w := writer{b: make([]byte, 0, d.at+len(d.xml)-d.tail+len(id)+16)}
	w.b = append(w.b, d.xml[:d.at]...)
	w.text(id)
	w.b = append(w.b, d.xml[d.tail:]...)
	return w.b, nil
}

// Take is Finish without its copy, for the number a draft will most
// likely keep: the first Take writes id into the draft's own buffer (the
// renderer leaves room for a number) and returns it, so that the document
// costs no second allocation. The draft stays usable: a later Finish or
// Take copies, as Finish does, and never writes into a document returned
// before. Take may not run concurrently with another Take or Finish of the
// same draft.
//
// Why: a settlement's invoice is numbered once in all but rare cases (a
// stale prediction, fiscal's predict.go), and the copy Finish makes was
// 4 KB of the ~47 KB a settlement allocated (fiscal's BenchmarkSettle).
// Saving it saves the copy; it hardly changes how often the collector
// runs, which the settlements in flight set more than their bytes (the
// README's "Throughput benchmarks").
func (d *Draft) Take(id string) ([]byte, error) {
	if d.xml == nil {
		return nil, ErrReleased
	}
	if d.taken {
		return d.Finish(id)
	}
	if err := d.checkID(id); err != nil {
		return nil, err
	}
	w := writer{b: make([]byte, 0, 64)} // the escaped number, on the stack when short
	w.text(id)
	end := len(d.xml) - (d.tail - d.at) + len(w.b)
	if end > cap(d.xml) {
		return d.Finish(id)
	}
	old := len(d.xml)
	d.xml = d.xml[:max(end, old)]
	copy(d.xml[d.at+len(w.b):], d.xml[d.tail:old])
	copy(d.xml[d.at:], w.b)
	d.xml = d.xml[:end:end]
	d.tail, d.taken = d.at+len(w.b), true
	return d.xml, nil
}

// checkID checks a number as RenderInvoice checks Invoice.ID (BR-02, and
// GR-R-001 for a Greek seller under Peppol).
func (d *Draft) checkID(id string) error {
	c := &checker{}
	if c.identifier("ID", "BR-02", id) && d.greek {
		checkGreekID(c, "ID", id, d.sellerVAT, d.issueDate, d.kind)
	}
	return c.err()
}
