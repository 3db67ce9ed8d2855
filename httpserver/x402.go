package httpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
)

// postX402Settlement: POST /v1/x402/settlements, the HTTP form of
// fiscal.Engine.IngestX402 for resource servers and facilitators in any
// language. Answers: 201 with the new record (Location /settlements/{id});
// 201 with Idempotent-Replayed: true for a replay of the Idempotency-Key;
// 200 with the existing record for a payment already recorded; 202 with the
// queue entry (Location /v1/x402/settlements/{id}) when the payment is held
// ("settlement_pending") or, with "Prefer: respond-async" (RFC 7240 §4.1),
// durably queued without waiting for the chain (fiscal.Engine.EnqueueX402).
func (s *Server) postX402Settlement(w http.ResponseWriter, r *http.Request) {
	body, err := s.readJSONBody(w, r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	req, err := fiscal.DecodeX402IngestRequest(bytes.NewReader(body))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ingest := s.engine.IngestX402
	async := prefersAsync(r.Header.Values("Prefer"))
	if async {
		ingest = s.engine.EnqueueX402
	}
	res, err := ingest(r.Context(), accountID(r), req.SettleResponse, req.PaymentRequirements, req.PaymentPayload, req.Buyer, r.Header.Get("Idempotency-Key"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if res.Outcome == fiscal.Queued {
		raw, err := json.Marshal(res.Queued)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		if async {
			w.Header().Set("Preference-Applied", "respond-async")
		}
		w.Header().Set("Location", "/v1/x402/settlements/"+res.Queued.ID)
		writeJSON(w, http.StatusAccepted, raw)
		return
	}
	writeIngested(w, "/settlements/"+res.Record.ID, res.Outcome, res.JSON)
}

// getX402Settlement: GET /v1/x402/settlements/{id}, the state of the
// account's queued x402 payment (queued, recorded with recordUrl, or failed
// with lastError).
func (s *Server) getX402Settlement(w http.ResponseWriter, r *http.Request) {
	st, err := s.engine.IngestStatus(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := json.Marshal(st)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	writeJSON(w, http.StatusOK, raw)
}

// prefersAsync reports whether the Prefer header fields (RFC 7240 §2: a
// comma-separated list of preferences, each a token with optional
// parameters) include respond-async (§4.1).
func prefersAsync(fields []string) bool {
	for _, field := range fields {
		for _, pref := range strings.Split(field, ",") {
			token, _, _ := strings.Cut(pref, ";")
			token, _, _ = strings.Cut(token, "=")
			if strings.EqualFold(strings.TrimSpace(token), "respond-async") {
				return true
			}
		}
	}
	return false
}
