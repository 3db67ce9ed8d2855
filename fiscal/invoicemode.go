package fiscal

import (
	"cmp"
	"encoding/binary"
	"fmt"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/ubl"
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
//     invoice of its own; Books.IssueSummary issues the month's invoice
//     once the month is over. It applies to supplies whose invoicing state
//     (Art. 219a) is in summaryRules and uses the euro; elsewhere the
//     record gets its own invoice and Record.Invoicing says why.
//   - none_b2c: no invoice where none is required: a supply to a consumer
//     under the One-Stop Shop (regime OSS_B2C), whose invoicing rules are
//     those of the member state of identification (Art. 219a(2)(b)), when
//     that state requires no invoice to a private individual (Art. 220(1)
//     requires one for supplies to taxable persons and non-taxable legal
//     persons; Art. 221(1) lets a state require more): the states in
//     noInvoiceRules. Every other supply is invoiced per payment.
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
	InvoicingSummaryMonthly = "summary_monthly"
	InvoicingNoneB2C        = "none_b2c"
)

// What a record's supply is invoiced by (RecordInvoicing.Invoice).
const (
	invoicedPerPayment = "per_payment"
	invoicedBySummary  = "summary"
	invoicedNone       = "none"
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

// summaryRules cites, per member state whose invoicing rules may apply,
// its national rule allowing a summary invoice for the supplies of a
// calendar month. A state missing here is not assumed: its supplies are
// invoiced per payment (Art. 223 obliges every state to allow monthly
// summaries, but the national conditions are unverified here).
var summaryRules = map[string]string{
	"IE": "Art. 223 " + invoicelaw.Directive + "; Value-Added Tax Consolidation Act 2010 s. 66(1)(c) (https://revisedacts.lawreform.ie/eli/2010/act/31/section/66): a summary invoice detailing the supplies of a calendar month",
	"DE": "Art. 223 " + invoicelaw.Directive + "; § 31(4) UStDV: the calendar month may be stated as the time of supply (BMF-Schreiben of 26.09.2005, IV A 5 - S 7280 a - 82/05)",
}

// noInvoiceRules cites, per member state of identification, the national
// rule under which a supply to a private individual needs no invoice. A
// state missing here is taken to require one.
var noInvoiceRules = map[string]string{
	"IE": "Art. 219a(2)(b), 220(1) " + invoicelaw.Directive + "; Value-Added Tax Consolidation Act 2010 s. 66(1)(a) requires an invoice to accountable persons, public bodies, persons carrying on exempt activities and persons other than individuals, not to a private individual (https://www.revenue.ie/en/vat/vat-records-invoices-credit-notes/invoices/who-must-issue-vat-invoice.aspx)",
	"DE": "Art. 219a(2)(b), 220(1) " + invoicelaw.Directive + "; § 14(2) UStG requires an invoice to another entrepreneur for its business or to a legal person, and for work related to land, not to a private individual",
}

// indexSummaryCover holds the supplies waiting for their summary invoice:
// account \x00 period \x00 buyer \x00 tax country \x00 record id, then the
// entry's log index (revisions post again). Books.IssueSummary scans it.
const indexSummaryCover = "summary-cover"

func summaryCoverPrefix(accountID, period, buyer, taxCountry string) []byte {
	return []byte(accountID + "\x00" + period + "\x00" + buyer + "\x00" + taxCountry + "\x00")
}

// invoicingFor decides how a processed draft's supply is invoiced under
// the account's mode, before its invoice is rendered. It returns nil for
// per_payment (the record states nothing), else the decision; perPayment
// says the draft still gets its own invoice.
func (e *Engine) invoicingFor(d *Draft, s Seller) (inv *RecordInvoicing, perPayment bool) {
	r := &d.Record
	mode := s.Invoicing
	if mode == "" || mode == InvoicingPerPayment || r.Object != ObjectSettlement || e.cfg.Environment == receipt.EnvSandbox {
		return nil, true
	}
	det := r.Classification
	law := invoicelaw.For(det, s.ForInvoiceLaw())
	out := &RecordInvoicing{Mode: mode, Invoice: invoicedPerPayment, TaxCountry: law.TaxCountry}
	b2b := det.BuyerTreatment == vat.TreatmentB2B
	switch {
	case b2b && mode == InvoicingNoneB2C:
		out.Basis = "Art. 220(1)(1) " + invoicelaw.Directive + ": a supply to a business customer is invoiced; none_b2c leaves it its own invoice"
		return out, true
	case b2b && r.Buyer.VATNumber == "":
		out.Basis = "a business customer without a VAT number cannot be named on a summary invoice; invoiced per payment"
		return out, true
	}
	switch mode {
	case InvoicingNoneB2C:
		rule, ok := noInvoiceRules[law.TaxCountry]
		switch {
		case det.Regime != vat.RegimeOSSB2C:
			out.Basis = "none_b2c covers supplies to consumers under the One-Stop Shop (Art. 219a(2)(b)); this supply is " + det.Regime + ", invoiced per payment"
		case !ok:
			out.Basis = "the invoicing rules of " + law.TaxCountry + " (Art. 219a(2)(b)) may require an invoice to a consumer (Art. 221(1)) and are not on file; invoiced per payment"
		default:
			out.Invoice, out.Basis = invoicedNone, rule
			return out, false
		}
	case InvoicingSummaryMonthly:
		rule, ok := summaryRules[law.TaxCountry]
		cur, _ := ubl.NationalCurrency(law.TaxCountry)
		switch {
		case !ok:
			out.Basis = "no national rule on summary invoices (Art. 223) is on file for " + cmp.Or(law.TaxCountry, "this supply's invoicing state") + "; invoiced per payment"
		case cur != "EUR":
			out.Basis = "a summary invoice in a state outside the euro area must state its VAT in the national currency (Art. 230), which summaries do not yet do; invoiced per payment"
		case len(det.SupplyDate) < len("2006-01"):
			out.Basis = "the supply has no date of supply; invoiced per payment"
		case e.summaryIssued(r.Account, det.SupplyDate[:7], summaryBuyer(r), law.TaxCountry):
			out.Basis = "the summary invoice of " + det.SupplyDate[:7] + " for this buyer was already issued when this supply was recorded; invoiced per payment"
		default:
			out.Invoice, out.Basis = invoicedBySummary, rule
			out.Period, out.Buyer = det.SupplyDate[:7], summaryBuyer(r)
			if b2b {
				out.Basis += "; Art. 220(1)(1): the business customer is invoiced by the summary invoice"
			}
			return out, false
		}
	}
	return out, true
}

// coverBySummary posts the draft to the summary that will cover it.
func coverBySummary(d *Draft) {
	r, inv := &d.Record, d.Record.Invoicing
	d.Postings = append(d.Postings, ledger.Posting{Index: indexSummaryCover,
		Key: append(summaryCoverPrefix(r.Account, inv.Period, inv.Buyer, inv.TaxCountry), r.ID...), AppendIndex: true})
}

// Summary bookkeeping in the committer, so that no supply decided for a
// summary is ever left uncovered, whatever the order of commits:
// bucketSummaryIssued marks the summaries issued (summary key → its id),
// written with the summary; bucketSummaryPosted counts, per summary key,
// the supplies posted to it. A supply decided for a summary reads the
// first and adds one to the second when committed; one committed after
// its summary was issued is decided again (and invoiced per payment). A
// summary is committed only if the count is the number of postings it
// read; otherwise it reads them again.
const (
	bucketSummaryIssued = "summary-issued"
	bucketSummaryPosted = "summary-posted"
)

// supplySummaryCheck is the committer's check of a supply invoiced by a
// summary (nil for any other draft): its summary must not be issued yet.
func (d *Draft) supplySummaryCheck() *commitCheck {
	inv := d.Record.Invoicing
	if inv == nil || inv.Invoice != invoicedBySummary || d.Record.Object != ObjectSettlement {
		return nil
	}
	reads, fn := summaryCheck(summaryKey(d.Record.Account, inv.Period, inv.Buyer, inv.TaxCountry), -1)
	return &commitCheck{reads: reads, fn: fn}
}

// summaryCheck is the committer's check of a summary's key: a supply
// (posted < 0) whose summary was issued since it was decided fails with
// errStaleTotal (the caller decides it again), else counts itself; a
// summary whose supplies changed since it read them (posted of them) fails
// with errStaleTotal (IssueSummary reads them again).
func summaryCheck(key string, posted int64) ([]ledger.SideKey, func(h *ledger.Hook) error) {
	reads := []ledger.SideKey{{Bucket: bucketSummaryIssued, Key: []byte(key)}, {Bucket: bucketSummaryPosted, Key: []byte(key)}}
	return reads, func(h *ledger.Hook) error {
		raw, err := h.Get(bucketSummaryPosted, []byte(key))
		if err != nil {
			return err
		}
		var n int64
		if len(raw) == 8 {
			n = int64(binary.BigEndian.Uint64(raw))
		}
		if posted >= 0 {
			if n != posted {
				return fmt.Errorf("%d supplies were posted to this summary, %d read: %w", n, posted, errStaleTotal)
			}
			return nil
		}
		v, err := h.Get(bucketSummaryIssued, []byte(key))
		if err != nil {
			return err
		}
		if v != nil {
			return fmt.Errorf("the summary invoice %s was issued while this supply was decided: %w", v, errStaleTotal)
		}
		return h.Put(bucketSummaryPosted, []byte(key), be64(n+1))
	}
}

// summaryBuyer is who a summary invoice is made out to: a business
// customer by its VAT number (its attested identity, confirmed by the
// registry), a consumer by its payer wallet (lower case), the one identity
// every payment has.
func summaryBuyer(r *Record) string {
	if r.Classification.BuyerTreatment == vat.TreatmentB2B && r.Buyer.VATNumber != "" {
		return r.Buyer.VATNumber
	}
	return r.Settlement.PayerWallet
}
