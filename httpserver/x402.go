package httpserver

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/x402"
)

// postX402Settlement: POST /v1/x402/settlements, the HTTP form of
// fiscal.Engine.IngestX402 for resource servers and facilitators in any
// language. Answers: 201 with the new record (Location /settlements/{id});
// 201 with Idempotent-Replayed: true for a replay of the Idempotency-Key;
// 200 with the existing record for a payment already recorded; 202 with the
// queue entry (Location /v1/x402/settlements/{id}) when the payment is held
// ("settlement_pending") or, with "Prefer: respond-async" (RFC 7240 §4.1),
// durably queued without waiting for the chain (fiscal.Engine.EnqueueX402);
// 202 with Idempotent-Replayed: true for a replay of the Idempotency-Key of
// an entry still queued (ingest.Result.Replayed).
func (s *Server) postX402Settlement(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req X402IngestRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	record := s.svc.Ingest.RecordX402
	async := prefersAsync(r.Header.Values("Prefer"))
	if async {
		record = s.svc.Ingest.EnqueueX402
	}
	res, err := record(r.Context(), ingest.X402{
		Account:        accountID(r),
		Settlement:     x402.Settlement{SettleResponse: req.SettleResponse, PaymentRequirements: req.PaymentRequirements, PaymentPayload: req.PaymentPayload},
		Buyer:          req.Buyer,
		IdempotencyKey: key,
	})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if res.Outcome == fiscal.Queued {
		noteIngested(r, res.Outcome, "queued")
		raw, err := json.Marshal(res.Queued)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		if async {
			w.Header().Set("Preference-Applied", "respond-async")
		}
		if res.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		w.Header().Set("Location", "/v1/x402/settlements/"+res.Queued.ID)
		writeJSON(w, http.StatusAccepted, raw)
		return
	}
	noteIngested(r, res.Outcome, res.Record.ReviewStatus)
	writeIngested(w, "/settlements/"+res.Record.ID, res.Outcome, res.JSON)
}

// getX402Settlement: GET /v1/x402/settlements/{id}, the state of the
// account's queued x402 payment (queued, recorded with recordUrl, or failed
// with lastError).
func (s *Server) getX402Settlement(w http.ResponseWriter, r *http.Request) {
	st, err := s.svc.Ingest.Status(r.Context(), accountID(r), r.PathValue("id"))
	s.writeValue(w, r, http.StatusOK, "private, no-cache", st, err)
}

// X402IngestRequest is the body of POST /v1/x402/settlements: the three x402
// documents, each either the JSON object itself or a JSON string holding the
// base64 header value (PAYMENT-RESPONSE, PAYMENT-SIGNATURE / X-PAYMENT), and
// the merchant-attested buyer facts. paymentRequirements may be omitted
// when paymentPayload is x402 v2, paymentPayload when settleResponse names
// the payer. The envelope and buyer are decoded strictly; the x402
// documents are read by package x402, which ignores their unknown members
// but not their duplicates.
type X402IngestRequest struct {
	SettleResponse      json.RawMessage   `json:"settleResponse"`
	PaymentRequirements json.RawMessage   `json:"paymentRequirements,omitempty"`
	PaymentPayload      json.RawMessage   `json:"paymentPayload,omitempty"`
	Buyer               fiscal.BuyerFacts `json:"buyer"`
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
