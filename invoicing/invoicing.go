package invoicing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
)

// Issue issues the summary invoices q names: one buyer's (q.Buyer, and
// q.TaxCountry when its supplies follow several states' rules), or, with
// q.Buyer empty, every buyer's with supplies of q.Period waiting for one.
// Summaries issued before are returned as they are (Outcome Existing). A
// month that has not ended is PERIOD_OPEN; a month without such supplies
// is NOT_FOUND for one buyer and an empty list for all. In a run for all
// buyers, one buyer's failure does not stop the others: Issue returns the
// summaries issued and a *RunError listing each that was not. A run that
// issued none (and found none issued before) failed: its error is the
// first failure's *fiscal.Error, its detail naming every failure, with
// the *RunError inside (RunError).
func Issue(ctx context.Context, b *fiscal.Books, q SummaryRequest) ([]*SummaryResult, error) {
	if q.Buyer != "" {
		res, err := issueSummary(ctx, b, q, false)
		if err != nil {
			return nil, err
		}
		return []*SummaryResult{res}, nil
	}
	if q.TaxCountry != "" {
		return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/taxCountry", Detail: "taxCountry selects among one buyer's summaries; name the buyer too"}
	}
	if err := checkPeriodClosed(b, q.Period); err != nil {
		return nil, err
	}
	buyers, err := summaryBuyers(b, q.Period)
	if err != nil {
		return nil, err
	}
	return issueEach(ctx, buyers, func(one SummaryRequest) (*SummaryResult, error) { return issueSummary(ctx, b, one, true) })
}

// SummaryFailure is one summary of a month's run that could not be
// issued: its buyer and state (SummaryRequest), and the problem, as a
// request for that buyer alone would have answered it.
type SummaryFailure struct {
	Buyer      string      `json:"buyer"`
	TaxCountry string      `json:"taxCountry,omitempty"`
	Code       fiscal.Code `json:"code"`
	Field      string      `json:"field,omitempty"`
	Detail     string      `json:"detail"`
	Err        error       `json:"-"` // the cause, for logs
}

// RunError is Issue's error when some summaries of a month's run (no
// buyer named) could not be issued: every other one was, and is among
// Issue's results; Failures lists the others in the run's order. When
// none was issued (nor found issued before), the run failed: Issue's error
// is then a *fiscal.Error, the first failure's code, field and retry, with
// every failure in its detail, and the RunError inside it (errors.As).
type RunError struct {
	Failures []SummaryFailure
}

func (e *RunError) Error() string {
	f := e.Failures[0]
	return fmt.Sprintf("invoicing: %d summary invoice(s) not issued; the first, of %s (%s): %s: %s", len(e.Failures), f.Buyer, f.TaxCountry, f.Code, f.Detail)
}

// issueEach issues the summaries of a month's run, one buyer at a time.
// One buyer's failure (its customer's address missing, the account's
// profile changed since its supplies were recorded, a commit that kept
// meeting new supplies) does not keep the other buyers from their
// invoices: each is tried, and the failures are returned together as a
// *RunError beside the summaries issued. Only a cancelled context stops
// the run, with its error.
func issueEach(ctx context.Context, buyers []SummaryRequest, issue func(SummaryRequest) (*SummaryResult, error)) ([]*SummaryResult, error) {
	out := []*SummaryResult{}
	var failed []SummaryFailure
	for _, one := range buyers {
		res, err := issue(one)
		var fe *fiscal.Error
		if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound {
			continue // every supply posted to it was revised away
		}
		if err != nil && ctx.Err() != nil {
			return out, err
		}
		if err != nil {
			if !errors.As(fiscal.InputError(err), &fe) {
				fe = &fiscal.Error{Code: fiscal.CodeInternal, Detail: "internal error", Err: err}
			}
			failed = append(failed, SummaryFailure{Buyer: one.Buyer, TaxCountry: one.TaxCountry, Code: fe.Code, Field: fe.Field, Detail: fe.Detail, Err: err})
			continue
		}
		out = append(out, res)
	}
	switch {
	case len(failed) > 0 && len(out) == 0:
		return out, (&RunError{Failures: failed}).nothingIssued()
	case len(failed) > 0:
		return out, &RunError{Failures: failed}
	}
	return out, nil
}

// nothingIssued is the error of a run in which every summary failed: no
// success to report, so the run answers as a request for its first failing
// buyer alone would (that failure's code, field and retry; over HTTP its
// status), its detail naming every failure, and the *RunError inside
// (errors.As) for a caller that wants them one by one.
func (e *RunError) nothingIssued() *fiscal.Error {
	f := e.Failures[0]
	fe := &fiscal.Error{Code: f.Code, Field: f.Field, Err: e}
	var cause *fiscal.Error
	if errors.As(f.Err, &cause) {
		fe.RetryAfter = cause.RetryAfter
	}
	var d strings.Builder
	fmt.Fprintf(&d, "no summary invoice was issued: %d could not be", len(e.Failures))
	for i, f := range e.Failures {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&d, "%sthe buyer %s's", sep, f.Buyer)
		if f.TaxCountry != "" {
			fmt.Fprintf(&d, " (%s)", f.TaxCountry)
		}
		fmt.Fprintf(&d, ", %s: %s", f.Code, f.Detail)
	}
	fe.Detail = d.String()
	return fe
}

// What covers a record (Coverage.Invoice).
const (
	CoveredPerPayment = "per_payment" // its own invoice (also one issued after the record, IssueAlone: its document says invoicedAlone)
	CoveredBySummary  = "summary"     // a summary invoice, issued
	CoveredLater      = "summary_pending"
	CoveredNone       = "none" // no invoice is required
	CoveredUnknown    = "not_invoiced"
)

// Coverage says which invoice covers a record.
type Coverage struct {
	Object   string `json:"object"` // "invoice_coverage"
	RecordID string `json:"recordId"`
	// Invoice: per_payment, summary, summary_pending (the month's summary
	// is not issued yet), none (none required) or not_invoiced (the
	// record is pending review: no invoice without a tax determination).
	Invoice string `json:"invoice"`
	// InvoiceID is the invoice number (BT-1) of its own invoice or of the
	// summary; SummaryID the id of the summary's document (or of the
	// document of an invoice issued on its own, IssueAlone: GET
	// /v1/invoices/summaries/{id}); URL where the UBL is served.
	InvoiceID string `json:"invoiceId,omitempty"`
	SummaryID string `json:"summaryId,omitempty"`
	URL       string `json:"url,omitempty"`
	Period    string `json:"period,omitempty"`
	// Basis cites the rule relied on (fiscal.RecordInvoicing.Basis).
	Basis string `json:"basis,omitempty"`
}

// Covering says which invoice covers the account's record id.
func Covering(ctx context.Context, b *fiscal.Books, id string) (*Coverage, error) {
	r, _, err := b.Record(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &Coverage{Object: "invoice_coverage", RecordID: r.ID, Invoice: CoveredUnknown}
	if inv := r.Invoicing; inv != nil {
		c.Basis, c.Period = inv.Basis, inv.Period
	}
	switch {
	case r.Invoice != nil:
		c.Invoice, c.InvoiceID, c.URL = CoveredPerPayment, r.Invoice.ID, r.Invoice.URL
	case r.Invoicing != nil && r.Invoicing.Invoice == "none":
		c.Invoice = CoveredNone
	case r.Invoicing != nil && r.Invoicing.Invoice == "summary":
		c.Invoice = CoveredLater
		sum, err := SummaryCovering(b, r)
		if err != nil {
			return nil, err
		}
		if sum != "" {
			res, _, err := Summary(ctx, b, sum)
			if err != nil {
				return nil, err
			}
			c.Invoice, c.SummaryID, c.InvoiceID, c.URL = CoveredBySummary, sum, res.Summary.Invoice.ID, res.Summary.Invoice.URL
			if res.Summary.InvoicedAlone != "" {
				c.Invoice = CoveredPerPayment // the supply's own invoice (IssueAlone); SummaryID names its document
			}
		}
	}
	return c, nil
}

// RecordView returns the account's record id and its bytes as GET
// /settlements/{id} serves them, but for its refunds (package refunds adds
// those): the stored record, with a member "invoicedBy"
// (fiscal.RecordInvoicedBy: the summary's id and the invoice its document
// states) appended when a summary invoice covers it. A record no summary
// covers is served byte for byte as stored.
func RecordView(ctx context.Context, b *fiscal.Books, id string) (*fiscal.Record, []byte, error) {
	r, raw, err := b.Record(ctx, id)
	if err != nil || r.Invoicing == nil || r.Invoicing.Invoice != CoveredBySummary {
		return r, raw, err
	}
	sum, err := SummaryCovering(b, r)
	if err != nil {
		return nil, nil, err
	}
	if sum == "" {
		return r, raw, nil
	}
	doc, err := b.Engine().Document(sum)
	if err != nil {
		return nil, nil, err
	}
	var s struct {
		Account string            `json:"account"`
		Invoice fiscal.InvoiceRef `json:"invoice"`
	}
	if err := json.Unmarshal(doc, &s); err != nil || s.Account != b.Account().ID {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "summary invoice " + shown.Bare(sum) + " not found"}
	}
	by := fiscal.RecordInvoicedBy{SummaryID: sum, InvoiceID: s.Invoice.ID, URL: s.Invoice.URL}
	add, err := json.Marshal(by)
	if err != nil || len(raw) < 2 || raw[len(raw)-1] != '}' {
		return nil, nil, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "stored record is unreadable", Err: err}
	}
	out := make([]byte, 0, len(raw)+len(add)+16)
	out = append(out, raw[:len(raw)-1]...)
	out = append(out, `,"invoicedBy":`...)
	out = append(out, add...)
	out = append(out, '}')
	r.InvoicedBy = &by
	return r, out, nil
}
