package invoicing

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// A supply whose month's summary invoice cannot be issued. The summary
// refuses a month that mixes what one invoice cannot state
// (INVOICE_RULES_FAILED: two seller VAT numbers, Art. 226(3); another
// state's invoicing rules, Art. 219a; the buyer named otherwise, Art.
// 226(5)), and until the operator changes what it names no summary
// covers its supplies. A summary invoice is the seller's option (Art.
// 223 Directive 2006/112/EC: "Member States shall allow taxable persons to
// issue summary invoices", https://eur-lex.europa.eu/eli/dir/2006/112/oj);
// a supply may always be invoiced on its own (Art. 220, 221). IssueAlone
// does so for one supply of such a month: the same document and invoice a
// summary of that one supply would be (its law, the seller number and
// buyer its record states, its exact figures rounded once), numbered in
// the account's series, covering it (fiscal.BucketSummaryOf), so that the
// month's summary, once it can be issued, leaves it out (coveredRecords),
// and a correction of the supply (package refunds) has an issued invoice
// to amend (Art. 219).
//
// Its VAT is its taxable amount (the exact net rounded once) times the
// rate, rounded (EN 16931 BR-CO-17), as a summary's. The record and its
// receipt, signed when the supply was recorded, state the exact VAT
// rounded once (net = gross − VAT: the consideration paid), and stay as
// signed: for some micro amounts the two are a cent apart (exact net
// 0.026 EUR at 19 %: the receipt's VAT 0.00, the invoice's 0.01). The
// export states the invoice's figures for such a supply (returns.Export);
// a return adds the exact ones.

// Refusal is the reason the summary invoice that would cover the
// account's record r (r.Invoicing: its month, buyer and state) cannot be
// issued: the *fiscal.Error (INVOICE_RULES_FAILED) issuing it would answer
// now, nil when it can be issued or is. A month that has not ended is
// PERIOD_OPEN (its error). Nothing is written.
func Refusal(ctx context.Context, b *fiscal.Books, r *fiscal.Record) (*fiscal.Error, error) {
	q, first, last, err := monthOf(b, r)
	if err != nil {
		return nil, err
	}
	k := fiscal.SummaryKey{Account: b.Account().ID, Period: q.Period, Buyer: q.Buyer, TaxCountry: q.TaxCountry}
	if _, _, err := b.Engine().Ledger().ClaimHolder(fiscal.ClaimSummary, k.String()); err == nil {
		return nil, nil // issued
	}
	hits, err := b.Engine().Ledger().Scan(fiscal.IndexSummaryCover, []byte(k.String()+"\x00"), nil, false, 0)
	if err != nil {
		return nil, fiscal.StoreError(err)
	}
	recs, err := coveredRecords(ctx, b, hits, q, "")
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	_, _, err = summaryDraft(b, "sum-refusal", q, recs, first, last, b.Engine().Now().UTC(), "")
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == fiscal.CodeInvoiceRulesFailed {
		return fe, nil
	}
	return nil, err
}

// monthOf is the summary r's invoicing names and its period's bounds,
// PERIOD_OPEN while the month has not ended in every taxing territory.
func monthOf(b *fiscal.Books, r *fiscal.Record) (q SummaryRequest, first, last time.Time, err error) {
	inv := r.Invoicing
	if r.ReviewStatus != fiscal.StatusProcessed || inv == nil || inv.Invoice != CoveredBySummary {
		return q, first, last, &fiscal.Error{Code: fiscal.CodeBadRequest, Detail: "settlement " + r.ID + " is not a supply a summary invoice covers"}
	}
	q = SummaryRequest{Period: inv.Period, Buyer: inv.Buyer, TaxCountry: inv.TaxCountry}
	first, last, closes, err := periodBounds(q.Period)
	if err != nil {
		return q, first, last, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "settlement " + r.ID + " names no month of a summary", Err: err}
	}
	return q, first, last, periodOpen(q.Period, closes, b.Engine().Now().UTC())
}

// IssueAlone issues the invoice of the account's record r on its own,
// because (the refusal of its month's summary, Refusal) says why: a
// document like a summary invoice's (SummaryInvoice, its InvoicedAlone
// the reason) of that one supply, its period the day of supply. Issuing
// it again, or for a supply an invoice already covers, returns that
// invoice (Outcome Existing). It commits only while its month's summary
// is not issued, and counts itself among the summary's postings, so that
// a summary read before it is read again without the supply.
func IssueAlone(ctx context.Context, b *fiscal.Books, r *fiscal.Record, because string) (*SummaryResult, error) {
	q, _, _, err := monthOf(b, r)
	if err != nil {
		return nil, err
	}
	e := b.Engine()
	key := fiscal.SummaryKey{Account: b.Account().ID, Period: q.Period, Buyer: q.Buyer, TaxCountry: q.TaxCountry}.String()
	own := key + "\x00" + r.ID
	id := summaryIDPrefix + strings.TrimPrefix(e.RecordID("summary-alone", own), "x402-")
	day, err := time.Parse(time.DateOnly, r.Classification.SupplyDate)
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "settlement " + r.ID + " has no date of supply", Err: err}
	}
	for attempt := 0; ; attempt++ {
		by, err := SummaryCovering(b, r)
		if err != nil {
			return nil, err
		}
		if by != "" {
			return storedSummary(b, by, fiscal.Existing) // this invoice, or the month's summary issued meanwhile
		}
		cur, _, err := b.Record(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		if inv := cur.Invoicing; cur.ReviewStatus != fiscal.StatusProcessed || inv == nil || *inv != *r.Invoicing {
			return nil, &fiscal.Error{Code: fiscal.CodeRevisionConflict, Detail: "settlement " + r.ID + " was revised since it was read; read it again"}
		}
		d, doc, err := summaryDraft(b, id, q, []*fiscal.Record{cur}, day, day, e.Now().UTC(), because)
		if err != nil {
			return nil, err
		}
		d.Claims = []ledger.Claim{{Space: fiscal.ClaimSummary, Key: own, Fingerprint: []byte(id)}}
		d.Postings = append(d.Postings, ledger.Posting{Index: fiscal.IndexSummaryCover, Key: []byte(own), AppendIndex: true})
		d.OnCommit(aloneCheck(key))
		stored, res, err := e.Commit(ctx, d)
		if errors.Is(err, errStale) && attempt < maxStaleRetries {
			continue // the month's summary was issued meanwhile: it may cover the supply
		}
		if err != nil {
			return nil, err
		}
		return committed(b, id, stored, res, doc)
	}
}

// aloneCheck is the committer's check of a supply's own invoice
// (IssueAlone): its month's summary (key) must not be issued (errStale:
// read again, the summary may cover it), and the invoice counts itself
// among the summary's postings (its posting in fiscal.IndexSummaryCover
// beside it), so that a summary that read the postings before it fails
// its own check (summaryCheck) and reads them again, without the supply.
func aloneCheck(key string) ([]ledger.SideKey, func(h *ledger.Hook) error) {
	k := []byte(key)
	reads := []ledger.SideKey{{Bucket: fiscal.BucketSummaryIssued, Key: k}, {Bucket: fiscal.BucketSummaryPosted, Key: k}}
	return reads, func(h *ledger.Hook) error {
		v, err := h.Get(fiscal.BucketSummaryIssued, k)
		if err != nil {
			return err
		}
		if v != nil {
			return fmt.Errorf("the summary invoice %s was issued meanwhile: %w", v, errStale)
		}
		raw, err := h.Get(fiscal.BucketSummaryPosted, k)
		if err != nil {
			return err
		}
		var n uint64
		if len(raw) == 8 {
			n = binary.BigEndian.Uint64(raw)
		}
		return h.Put(fiscal.BucketSummaryPosted, k, binary.BigEndian.AppendUint64(nil, n+1))
	}
}
