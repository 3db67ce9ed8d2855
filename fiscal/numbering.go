package fiscal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Invoice numbers. Art. 226(2) Directive 2006/112/EC requires on every
// invoice "a sequential number, based on one or more series, which uniquely
// identifies the invoice". The engine numbers each account's invoices in one
// series per calendar year of issue: the account's prefix (Seller.
// InvoicePrefix, "F402-" by default), the year, a dash and six digits
// (F402-2026-000123). The number is drawn in the ledger's committer from a
// gap-free sequence (ledger.Hook.Sequence): it is used only if the entry
// that carries the invoice is written, so neither a failed append, nor a
// crash, nor concurrent settlements leave a gap or a repeat. A record that
// has no invoice (pending review) takes its number when it is invoiced (the
// revision that processes it). Credit notes have their own series; the
// account's prefix is such that the two never meet
// (invoicelaw.CheckInvoicePrefix).

// DefaultInvoicePrefix opens an invoice number when the account sets none.
const DefaultInvoicePrefix = "F402-"

// invoiceSeries is the ledger sequence of the account's invoices dated
// issueDate, and the text before the number.
func invoiceSeries(accountID string, seller Seller, issueDate string) (series, prefix string) {
	return documentSeries("invoice", "", accountID, seller, issueDate)
}

// documentSeries is the ledger sequence of the account's documents of one
// kind ("invoice", "credit-note") dated issueDate (YYYY-MM-DD, the
// document's date of issue, BT-2), and the text before the number: the
// account's prefix, the kind's mark ("CN-" for credit notes) and the year
// of that date, so that a document dated 1 January on the clock of its
// supply is numbered in the new year's series, each series gap-free on its
// own (Art. 226(2)).
func documentSeries(kind, mark, accountID string, seller Seller, issueDate string) (series, prefix string) {
	p := seller.InvoicePrefix
	if p == "" {
		p = DefaultInvoicePrefix
	}
	prefix = p + mark + issueDate[:4] + "-"
	return kind + "\x00" + accountID + "\x00" + prefix, prefix
}

// numberAs gives the draft's invoice the number n of its series: written
// into the rendered document (ubl.Draft.Take: the first number in the
// draft's own buffer, a later one in a copy), the record and the
// receipt claims. n is predicted before the committer and checked there
// against the series' gap-free sequence (ledger.Hook.Sequence), which
// decides (Commit).
func (e *Engine) numberAs(d *Draft, n int64) error {
	id := fmt.Sprintf("%s%06d", d.seriesPrefix, n)
	doc, err := d.ublDraft.Take(id)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(doc)
	d.ubl, d.Record.Invoice.ID = doc, id
	d.Record.Invoice.UBLSHA256 = hex.EncodeToString(sum[:])
	if d.claims != nil && d.claims.Invoice != nil {
		inv := *d.claims.Invoice
		inv.ID, inv.UBLSHA256 = id, d.Record.Invoice.UBLSHA256
		d.claims.Invoice = &inv
	}
	return nil
}
