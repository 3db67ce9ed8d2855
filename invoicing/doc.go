// Package invoicing issues an account's summary invoices and says which
// invoice covers a record: its one job is the invoicing of supplies that
// the account's invoicing mode (fiscal.Seller.Invoicing) did not invoice
// one by one.
//
// An account in mode summary_monthly records each consumer supply without
// an invoice of its own (fiscal.Record.Invoicing says which summary will
// cover it). Once a calendar month has ended in every taxing territory,
// Issue makes the summary invoice of one buyer or of every buyer of the
// month: one UBL invoice per buyer, invoicing state and month (Art. 223
// Directive 2006/112/EC), numbered in the account's series: per VAT rate
// the supplies' exact net summed and rounded once, and its VAT that
// taxable amount times the rate, rounded (EN 16931 BR-CO-17). Every
// supply is checked, not the latest alone: one seller VAT number, one
// state's invoicing rules (invoicelaw.SummaryRefusal) and one customer as
// each record states it (invoicelaw.BuyerFactsDiffer), and per VAT rate
// (one line) one member state's VAT; a month that mixes them is refused
// (INVOICE_RULES_FAILED) naming the first supply that differs. A supply of such a month may be invoiced on its own
// (IssueAlone; package refunds does so before crediting it): the same
// document of that one supply, its InvoicedAlone saying why, which the
// month's summary then leaves out.
// Issuing again returns the same invoices; Summary reads one back with its
// UBL, InvoicedBy names the summary covering a record. Covering
// tells, for one record, its own invoice, the summary that covers it, the
// summary still to come, or why no invoice is required (mode none_b2c).
//
// The engine keeps what the recording of one supply needs (the mode's
// decision, the posting to its summary, the committer's check that the
// summary is not issued yet: fiscal.SummaryKey); this package builds the
// summary's draft with the engine's blocks (fiscal.Books.InvoiceFrame,
// fiscal.Books.DocumentDraft, fiscal.Draft.OnCommit) and commits it with
// fiscal.Engine.Commit.
//
// The library call is Issue; the HTTP service exposes it as POST
// /v1/invoices/summaries, Summary as GET /v1/invoices/summaries/{id}
// (and /ubl), and Covering as GET /settlements/{id}/invoiced-by.
package invoicing
