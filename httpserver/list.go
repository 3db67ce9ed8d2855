package httpserver

import (
	"net/http"

	"github.com/fiscal402/fiscal402/listing"
)

// listSettlements: GET /settlements, the account's own records, newest
// first, a page at a time (listing.List).
func (s *Server) listSettlements(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r.URL.Query())
	if err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	page, err := listing.List(r.Context(), books, q)
	w.Header().Set("Cache-Control", "private, no-cache")
	s.writeResult(w, r, page, err)
}

// listFiscalEvents: GET /v1/fiscal-events, the account's fiscal events,
// newest first, a page at a time.
func (s *Server) listFiscalEvents(w http.ResponseWriter, r *http.Request) {
	q, err := parseListQuery(r.URL.Query())
	if err != nil {
		s.problem(w, r, err)
		return
	}
	page, err := s.svc.FiscalEvents.List(r.Context(), accountID(r), q)
	w.Header().Set("Cache-Control", "private, no-cache")
	s.writeResult(w, r, page, err)
}
