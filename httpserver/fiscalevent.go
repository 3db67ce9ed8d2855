package httpserver

import (
	"net/http"

	"github.com/fiscal402/fiscal402/fiscal"

	"github.com/fiscal402/fiscal402/fiscalevent"
)

// postFiscalEvent: POST /v1/fiscal-events (README "Fiscal events (global
// ingest)"). 201 with the
// persisted event (201 with Idempotent-Replayed: true for a replay of the
// same Idempotency-Key and body; 200 with the existing event for a duplicate
// (network, txHash)).
func (s *Server) postFiscalEvent(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req fiscalevent.Request
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := s.svc.FiscalEvents.Record(r.Context(), accountID(r), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	noteIngested(r, res.Outcome, res.Event.Determination.Status)
	writeIngested(w, "/v1/fiscal-events/"+res.Event.ID, res.Outcome, res.JSON)
}

// postFiscalEventResolve: POST /v1/fiscal-events/{id}/resolve. 201 with the
// event at its new revision (Idempotent-Replayed: true for a replay).
func (s *Server) postFiscalEventResolve(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req fiscal.Resolution
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := s.svc.FiscalEvents.Resolve(r.Context(), accountID(r), r.PathValue("id"), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	noteIngested(r, res.Outcome, res.Event.Determination.Status)
	writeIngested(w, "/v1/fiscal-events/"+res.Event.ID, res.Outcome, res.JSON)
}

// getFiscalEvent: GET /v1/fiscal-events/{id}, the owning account's event.
func (s *Server) getFiscalEvent(w http.ResponseWriter, r *http.Request) {
	_, raw, err := s.svc.FiscalEvents.Get(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	writeJSON(w, http.StatusOK, raw)
}

// getFiscalEventUBL: GET /v1/fiscal-events/{id}/ubl, the stored UBL of an
// event that met the production invariants.
func (s *Server) getFiscalEventUBL(w http.ResponseWriter, r *http.Request) {
	raw, sum, err := s.svc.FiscalEvents.Invoice(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeUBL(w, r, sum, raw)
}
