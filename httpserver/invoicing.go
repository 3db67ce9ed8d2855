package httpserver

import (
	"errors"
	"net/http"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/invoicing"
)

// SummaryList is the body of POST /v1/invoices/summaries: the summary
// invoices issued (or issued before) by the call and, in a run for every
// buyer, those that could not be issued, each with its problem.
type SummaryList struct {
	Object string                      `json:"object"` // "list"
	Data   []*invoicing.SummaryInvoice `json:"data"`
	// Failures (a run for every buyer) are the summaries that could not be
	// issued, beside those in Data; absent when none failed. A run with
	// failures and nothing in Data is not a list: it answers the problem of
	// its first failure.
	Failures []invoicing.SummaryFailure `json:"failures,omitempty"`
}

// postSummaries: POST /v1/invoices/summaries, invoicing.Issue.
func (s *Server) postSummaries(w http.ResponseWriter, r *http.Request) {
	body, err := s.readJSONBody(w, r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req invoicing.SummaryRequest
	if err := decodeJSONBody(body, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	// Only a request without buyer is the run for every buyer of the
	// month; an empty or null buyer names none (" " is refused by
	// invoicing already).
	if err := emptyMember(body, "buyer", "give the buyer (payer wallet or VAT number), or leave buyer out to issue the summaries of every buyer of the month"); err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := invoicing.Issue(r.Context(), books, req)
	var run *invoicing.RunError
	if errors.As(err, &run) {
		// Not the buyer: a consumer's payer wallet or a business
		// customer's VAT number, which no log line carries (README
		// "Logs"); the account reads it in the answer's failures. The
		// cause is logged only for the service's own failures (5xx), as
		// problem does: a refusal's cause is its detail, in the answer.
		for i, f := range run.Failures {
			attrs := []any{"request_id", requestInfoOf(r).id, "period", req.Period, "failure", i, "tax_country", f.TaxCountry, "code", f.Code}
			if httpStatus(f.Code) >= 500 {
				attrs = append(attrs, "err", f.Err)
			}
			s.log.Warn("summary invoice not issued", attrs...)
		}
	}
	var fe *fiscal.Error
	if err != nil && (run == nil || errors.As(err, &fe)) {
		// A run that issued nothing is the error of its first failure
		// (invoicing.RunError), not a success.
		s.problem(w, r, err)
		return
	}
	list := SummaryList{Object: "list", Data: []*invoicing.SummaryInvoice{}}
	if run != nil {
		list.Failures = run.Failures
	}
	status := http.StatusOK
	for _, one := range res {
		list.Data = append(list.Data, one.Summary)
		if one.Outcome == fiscal.Created {
			status = http.StatusCreated
		}
	}
	s.writeValue(w, r, status, "no-store", list, nil)
}

// getSummary: GET /v1/invoices/summaries/{id}, the stored document
// (invoicing.Summary).
func (s *Server) getSummary(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, _, err := invoicing.Summary(r.Context(), books, r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	writeJSON(w, http.StatusOK, res.JSON)
}

// getSummaryUBL: GET /v1/invoices/summaries/{id}/ubl, the exact stored UBL.
func (s *Server) getSummaryUBL(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, raw, err := invoicing.Summary(r.Context(), books, r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeUBL(w, r, res.Summary.Invoice.UBLSHA256, raw)
}

// getInvoicedBy: GET /settlements/{id}/invoiced-by, invoicing.Covering.
func (s *Server) getInvoicedBy(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := invoicing.Covering(r.Context(), books, r.PathValue("id"))
	s.writeValue(w, r, http.StatusOK, "private, no-cache", c, err)
}
