package fiscal

import (
	"encoding/binary"
	"fmt"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/vat"
)

// Invoicing modes (Seller.Invoicing, issue 15). An account chooses how its
// supplies are invoiced; the law of each supply decides whether the choice
// can apply to it. What a record got is in Record.Invoicing.
//
//   - per_payment (""): one invoice per payment, numbered when committed.
//   - summary_monthly: one summary invoice per buyer and calendar month
//     (Art. 223 Directive 2006/112/EC: "Member States shall allow taxable
//     persons to issue summary invoices which detail several separate
//     supplies ... provided that VAT on the supplies ... becomes chargeable
//     during the same calendar month";
//     https://datenbank.nwb.de/Dokument/452295_223). The record has no
//     invoice of its own; package invoicing issues the month's invoice
//     once the month is over. It applies to supplies subject to EU VAT
//     (not category O) whose invoicing state (Art. 219a) has a rule on
//     file (invoicelaw.SummaryRule) and uses the euro; elsewhere the
//     record gets its own invoice and Record.Invoicing says why.
//   - none_b2c: no invoice where none is required: a supply to a consumer
//     under the One-Stop Shop (regime OSS_B2C), whose invoicing rules are
//     those of the member state of identification (Art. 219a(2)(b)), when
//     that state requires no invoice to a private individual (Art. 220(1)
//     requires one for supplies to taxable persons and non-taxable legal
//     persons; Art. 221(1) lets a state require more): the states in
//     invoicelaw.NoInvoiceRule. Every other supply is invoiced per payment.
//
// A business customer (a buyer with a VAT number, treatment B2B) always
// gets an invoice (Art. 220(1)(1)), whatever the mode: its own under
// none_b2c, a summary invoice of its own (named by its VAT number, Peppol
// when both parties have Peppol addresses) under summary_monthly, where
// its supply's per-payment invoice is rendered and checked first so that
// what would stop it (the customer's address, Art. 226(5)) sends the
// record to review as it would per payment. A
// consumer without a VAT number is taken to be a private individual: an
// account that sells to non-taxable legal persons must not choose none_b2c.
const (
	InvoicingPerPayment     = "per_payment"
	InvoicingSummaryMonthly = invoicelaw.ModeSummaryMonthly
	InvoicingNoneB2C        = invoicelaw.ModeNoneB2C
)

// What a record's supply is invoiced by (RecordInvoicing.Invoice).
const (
	invoicedPerPayment = invoicelaw.ByOwnInvoice
	invoicedBySummary  = invoicelaw.BySummary
	invoicedNone       = invoicelaw.ByNone
)

// RecordInvoicing says how a record's supply is invoiced when the account
// chose a mode other than per_payment: by its own invoice (Record.Invoice),
// by the summary invoice of its buyer and month, or by none, with the rule
// relied on.
type RecordInvoicing struct {
	Mode    string `json:"mode"`    // the account's choice (Seller.Invoicing)
	Invoice string `json:"invoice"` // "per_payment" | "summary" | "none"
	// Period (YYYY-MM: the month of the local day of supply,
	// Classification.SupplyDate) and Buyer (the payer wallet) name the
	// summary invoice that covers the supply; TaxCountry is the state
	// whose invoicing rules apply (Art. 219a).
	Period     string `json:"period,omitempty"`
	Buyer      string `json:"buyer,omitempty"`
	TaxCountry string `json:"taxCountry,omitempty"`
	// Basis cites the rule relied on: the summary invoice's, why none is
	// required, or why the mode does not apply to this supply.
	Basis string `json:"basis"`
}

// Uninvoiced: the record's supply has no invoice at all, none being
// required (Invoice "none", the rule in Basis), so that a correction of it
// has no invoice to amend and needs no credit note (Art. 219 Directive
// 2006/112/EC treats as an invoice a document amending an initial
// invoice; Books.CreditNoteDraft). A supply a summary invoice covers is
// invoiced, by the summary.
func (inv *RecordInvoicing) Uninvoiced() bool { return inv != nil && inv.Invoice == invoicedNone }

// Codes of summary invoices (package invoicing issues them).
const (
	// CodePeriodOpen: the month has not ended yet in every taxing
	// territory; its summary invoice cannot be issued (409).
	CodePeriodOpen Code = "PERIOD_OPEN"
	// CodeInvoiceRulesFailed: the summary invoice would break rules of EN
	// 16931 or invoicing law; the detail names them (422).
	CodeInvoiceRulesFailed Code = "INVOICE_RULES_FAILED"
)

// SummaryKey names one summary invoice: the account, the month (YYYY-MM),
// the buyer and the state whose invoicing rules apply, as RecordInvoicing
// states them for the supplies it covers. The engine posts each supply it
// decides for a summary under its key; package invoicing issues the
// summary. What the two share in the ledger, so that no supply decided
// for a summary is ever left uncovered whatever the order of commits:
//
//   - IndexSummaryCover: key String() \x00 record id, then the log index
//     of the entry that posted it (a revision posts again);
//   - BucketSummaryPosted: String() → how many supplies were posted
//     (8 bytes, big-endian), counted by each supply in the committer
//     unless BucketSummaryIssued has the key, in which case the supply is
//     decided again (and invoiced per payment). A summary reads the
//     postings, then commits only if the count is the number it read;
//   - ClaimSummary (key String(), fingerprint the summary's id) and
//     BucketSummaryIssued (String() → the summary's id), written with the
//     summary;
//   - BucketSummaryOf: record id → the id of the summary covering it.
type SummaryKey struct{ Account, Period, Buyer, TaxCountry string }

// Ledger names of summary invoices (SummaryKey).
const (
	IndexSummaryCover   = "summary-cover"
	ClaimSummary        = "summary"
	BucketSummaryIssued = "summary-issued"
	BucketSummaryPosted = "summary-posted"
	BucketSummaryOf     = "summary-of"
)

// String is the summary's key: account \x00 period \x00 buyer \x00 tax
// country.
func (k SummaryKey) String() string {
	return k.Account + "\x00" + k.Period + "\x00" + k.Buyer + "\x00" + k.TaxCountry
}

// Rule cites the national rule allowing the summary invoice in its state
// (invoicelaw.SummaryRule), "" where none is on file.
func (k SummaryKey) Rule() string { return invoicelaw.SummaryRule(k.TaxCountry) }

// summaryIssued reports whether the summary invoice is issued.
func (e *Engine) summaryIssued(k SummaryKey) bool {
	_, _, err := e.ledger.ClaimHolder(ClaimSummary, k.String())
	return err == nil
}

// invoicingFor decides how a processed draft's supply is invoiced under
// the account's mode, before its invoice is rendered. It returns nil for
// per_payment (the record states nothing), else the decision; perPayment
// says the draft still gets its own invoice.
func (e *Engine) invoicingFor(d *Draft, s Seller) (inv *RecordInvoicing, perPayment bool) {
	r := &d.Record
	mode := s.Invoicing
	if mode == "" || mode == InvoicingPerPayment || r.Object != ObjectSettlement {
		return nil, true
	}
	det := r.Classification
	law := invoicelaw.For(det, s.ForInvoiceLaw())
	by, basis := invoicelaw.InvoicedBy(mode, det, law, r.Buyer.VATNumber != "")
	out := &RecordInvoicing{Mode: mode, Invoice: by, Basis: basis, TaxCountry: law.TaxCountry}
	switch by {
	case invoicedNone:
		return out, false
	case invoicedBySummary:
		k := SummaryKey{r.Account, det.SupplyDate[:7], summaryBuyer(r), law.TaxCountry}
		if e.summaryIssued(k) {
			out.Invoice, out.Basis = invoicedPerPayment, "the summary invoice of "+k.Period+" for this buyer was already issued when this supply was recorded; invoiced per payment"
			return out, true
		}
		out.Period, out.Buyer = k.Period, k.Buyer
		return out, false
	}
	return out, true
}

// coverBySummary posts the draft to the summary that will cover it.
func coverBySummary(d *Draft) {
	r, inv := &d.Record, d.Record.Invoicing
	k := SummaryKey{r.Account, inv.Period, inv.Buyer, inv.TaxCountry}
	d.Postings = append(d.Postings, ledger.Posting{Index: IndexSummaryCover, Key: []byte(k.String() + "\x00" + r.ID), AppendIndex: true})
}

// supplySummaryCheck is the committer's check of a supply invoiced by a
// summary (nil for any other draft): a supply whose summary was issued
// since it was decided fails with errStaleTotal (the caller decides it
// again), else it counts itself among the summary's postings.
func (d *Draft) supplySummaryCheck() *commitCheck {
	inv := d.Record.Invoicing
	if inv == nil || inv.Invoice != invoicedBySummary || d.Record.Object != ObjectSettlement {
		return nil
	}
	key := []byte(SummaryKey{d.Record.Account, inv.Period, inv.Buyer, inv.TaxCountry}.String())
	reads := []ledger.SideKey{{Bucket: BucketSummaryIssued, Key: key}, {Bucket: BucketSummaryPosted, Key: key}}
	return &commitCheck{reads: reads, fn: func(h *ledger.Hook) error {
		v, err := h.Get(BucketSummaryIssued, key)
		if err != nil {
			return err
		}
		if v != nil {
			return fmt.Errorf("the summary invoice %s was issued while this supply was decided: %w", v, errStaleTotal)
		}
		raw, err := h.Get(BucketSummaryPosted, key)
		if err != nil {
			return err
		}
		var n int64
		if len(raw) == 8 {
			n = int64(binary.BigEndian.Uint64(raw))
		}
		return h.Put(BucketSummaryPosted, key, be64(n+1))
	}}
}

// summaryBuyer is who a summary invoice is made out to: a business
// customer by its VAT number as its invoice states it (the registry's
// confirmed form, invoicelaw.CustomerVATNumber: one customer, one summary,
// however a payment spelled the number), a consumer by its payer wallet
// (lower case), the one identity every payment has.
func summaryBuyer(r *Record) string {
	if r.Classification.BuyerTreatment == vat.TreatmentB2B && r.Buyer.VATNumber != "" {
		return invoicelaw.CustomerVATNumber(r.Buyer.VATNumber, r.Buyer.Registry)
	}
	return r.Settlement.PayerWallet
}

// RecordInvoicedBy is the summary invoice that covers a record: added to
// the record invoicing.RecordView serves, never part of the stored record.
type RecordInvoicedBy struct {
	SummaryID string `json:"summaryId"` // "sum-<32 hex>"
	InvoiceID string `json:"invoiceId"` // the summary invoice's number (BT-1)
	URL       string `json:"url"`       // where its UBL is served
}
