package httpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/refunds"
)

// postSettlement: POST /settlements. 201 with the new record;
// 201 with Idempotent-Replayed: true for a replay of the same
// Idempotency-Key and body; 200 with the existing record for a duplicate
// (network, txHash).
func (s *Server) postSettlement(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req fiscal.SettlementRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := books.Settle(r.Context(), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	noteIngested(r, res.Outcome, res.Record.ReviewStatus)
	writeIngested(w, "/settlements/"+res.Record.ID, res.Outcome, res.JSON)
}

// noteIngested tells the request log and the metrics what an ingest did.
func noteIngested(r *http.Request, o fiscal.Outcome, status string) {
	info := requestInfoOf(r)
	info.outcome, info.status = o.String(), status
}

// writeIngested answers an ingest call the same way on every endpoint: 201
// with Location for a new record; 201 with Idempotent-Replayed: true for a
// replay of the Idempotency-Key and body; 200 for a payment already recorded.
func writeIngested(w http.ResponseWriter, location string, o fiscal.Outcome, raw []byte) {
	w.Header().Set("Location", location)
	status := http.StatusCreated
	switch o {
	case fiscal.Replayed:
		w.Header().Set("Idempotent-Replayed", "true")
	case fiscal.Existing:
		status = http.StatusOK
	}
	writeJSON(w, status, raw)
}

// postResolve: POST /settlements/{id}/resolve. 201 with the record at its
// new revision (Idempotent-Replayed: true for a replay of the key).
func (s *Server) postResolve(w http.ResponseWriter, r *http.Request) {
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
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := books.Resolve(r.Context(), r.PathValue("id"), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	noteIngested(r, res.Outcome, res.Record.ReviewStatus)
	writeIngested(w, "/settlements/"+res.Record.ID, res.Outcome, res.JSON)
}

// getSettlement: GET /settlements/{id}, the owning account's record.
func (s *Server) getSettlement(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	rec, raw, err := refunds.RecordView(r.Context(), books, r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if by := rec.InvoicedBy; by != nil {
		// The summary invoice that covers it, issued after the record, is
		// also a link.
		w.Header().Set("Link", "</v1/invoices/summaries/"+by.SummaryID+`>; rel="invoiced-by"`)
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	writeJSON(w, http.StatusOK, raw)
}

// postRefund: POST /settlements/{id}/refunds. 201 with the new refund
// (Idempotent-Replayed: true for a replay of the key); 200 with the
// refund a refund transfer already backs.
func (s *Server) postRefund(w http.ResponseWriter, r *http.Request) {
	key, err := idempotencyKey(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	body, err := s.readJSONBody(w, r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req refunds.Request
	if err := decodeJSONBody(body, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	if err := emptyRefundAmount(body); err != nil {
		s.problem(w, r, err)
		return
	}
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	res, err := refunds.Create(r.Context(), books, r.PathValue("id"), req, key)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	noteIngested(r, res.Outcome, fiscal.StatusProcessed)
	writeIngested(w, "/settlements/"+res.Refund.SettlementID+"/refunds/"+res.Refund.ID, res.Outcome, res.JSON)
}

// emptyRefundAmount refuses a refund body, decoded already, whose
// amountUsdc is given as an empty string or as JSON null: refunds.Request
// reads both as the absent member, everything that remains, while the
// schema's amountUsdc is a string its pattern refuses empty; an amount
// that came out empty or null is no request for the whole sale.
func emptyRefundAmount(body []byte) error {
	return emptyMember(body, "amountUsdc", "give the USDC to refund as a decimal string such as \"1.50\", or leave amountUsdc out to refund everything that remains")
}

// emptyMember refuses a body, decoded already, whose top-level member name
// is given as an empty string or as JSON null where the request type reads
// both as the member left out, and leaving it out asks for more than any
// value would (everything that remains, every buyer): a value that came
// out empty is no such request. how says what to send instead.
func emptyMember(body []byte, name, how string) error {
	var given map[string]json.RawMessage
	if err := json.Unmarshal(body, &given); err != nil {
		return nil // decodeJSONBody has read the body: a member it accepted
	}
	v, ok := given[name]
	if !ok {
		return nil
	}
	switch string(v) {
	case `""`:
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/" + name, Detail: "is empty: " + how}
	case "null":
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/" + name, Detail: "is null: " + how}
	}
	return nil
}

// nullMember refuses a body, decoded already, whose member at path (object
// members from the top) is JSON null where the request type reads null as
// the member left out, and leaving it out asks for more than any value
// would (README "Errors"). how says what to send instead.
func nullMember(body []byte, how string, path ...string) error {
	raw := json.RawMessage(body)
	for _, name := range path {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil // not an object (null included): the member is absent
		}
		v, ok := obj[name]
		if !ok {
			return nil
		}
		raw = v
	}
	if string(raw) == "null" {
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: "/" + strings.Join(path, "/"), Detail: "is null: " + how}
	}
	return nil
}

// getRefund: GET /settlements/{id}/refunds/{rid}, one refund as stored.
func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := refunds.Document(r.Context(), books, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-cache")
	writeJSON(w, http.StatusOK, raw)
}

// getRefundUBL: GET /settlements/{id}/refunds/{rid}/ubl, the credit note's
// exact stored bytes.
func (s *Server) getRefundUBL(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, sum, err := refunds.CreditNote(r.Context(), books, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeUBL(w, r, sum, raw)
}

// getSettlementUBL: GET /settlements/{id}/ubl, the exact stored UBL bytes.
func (s *Server) getSettlementUBL(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, sum, err := books.Invoice(r.Context(), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeUBL(w, r, sum, raw)
}

// getReceipt: GET /v1/receipts/{id}, public: fetching a receipt needs no key.
func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request) {
	s.serveReceipt(w, r, s.engine.Receipt)
}

// serveReceipt serves a receipt document with its SHA-256 as a strong
// ETag. A receipt id (rcpt_<entry id>) names one ledger entry, whose
// receipt never changes (its proof is against the checkpoint of the commit
// that appended it): cacheable forever. A record id names the record's
// current receipt, which a revision replaces: caches revalidate it
// (RFC 9111 §5.2.2.4 no-cache; RFC 8246 immutable only for what never
// changes).
func (s *Server) serveReceipt(w http.ResponseWriter, r *http.Request, fetch func(context.Context, string) ([]byte, error)) {
	id := r.PathValue("id")
	raw, err := fetch(r.Context(), id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	cache := "public, max-age=31536000, immutable"
	if !strings.HasPrefix(id, "rcpt_") {
		cache = "public, no-cache"
	}
	sum := sha256.Sum256(raw)
	writeImmutable(w, r, "application/json", `"sha256-`+hex.EncodeToString(sum[:])+`"`, cache, raw)
}

// getJWKS: GET /.well-known/jwks.json, every receipt key ever used.
func (s *Server) getJWKS(w http.ResponseWriter, r *http.Request) {
	s.serveJWKS(w, r, s.engine.JWKS)
}

// serveJWKS serves a JWK set; short caching, because keys are added.
func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request, fetch func() ([]byte, error)) {
	raw, err := fetch()
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(raw, '\n'))
}

// getFXStatus: GET /v1/fx/status, the newest ECB rate and the refresh's
// state; never cached.
func (s *Server) getFXStatus(w http.ResponseWriter, r *http.Request) {
	rep := rates.StaticReport(s.engine)
	if s.svc.Rates != nil {
		rep = s.svc.Rates.Report()
	}
	s.writeValue(w, r, http.StatusOK, "no-store", rep, nil)
}

// getAccountTotals: GET /v1/account/totals, the account's Art. 59c running
// totals per calendar year.
func (s *Server) getAccountTotals(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	totals, err := books.Totals(r.Context())
	years := make([]YearTotal, len(totals))
	first := 0 // the first year over the limit: refunds are read only from it on
	for i, t := range totals {
		years[i].YearTotal = t
		if t.Exceeded && first == 0 {
			first = t.Year
		}
	}
	if err == nil && first != 0 {
		var reduced map[int]decimal.Decimal
		if reduced, err = refunds.ThresholdReduction(r.Context(), books, first); err == nil {
			for i, t := range totals {
				total, perr := decimal.NewFromString(t.CrossBorderEUR)
				if red, ok := reduced[t.Year]; ok && t.Exceeded && perr == nil {
					years[i].RefundsReductionEUR, years[i].NetOfRefundsEUR = red.String(), total.Sub(red).String()
				}
			}
		}
	}
	s.writeValue(w, r, http.StatusOK, "no-store", AccountTotals{Object: "account_totals", Account: books.Account().ID, Years: years}, err)
}

// AccountTotals is the body of GET /v1/account/totals.
type AccountTotals struct {
	Object  string      `json:"object"` // "account_totals"
	Account string      `json:"account"`
	Years   []YearTotal `json:"years"`
}

// YearTotal is a year of GET /v1/account/totals: the running total
// (fiscal.YearTotal) and, for a year over the limit, what refunds of its
// counted supplies reduce it by (refunds.ThresholdReduction).
type YearTotal struct {
	fiscal.YearTotal
	RefundsReductionEUR string `json:"refundsReductionEur,omitempty"`
	NetOfRefundsEUR     string `json:"netOfRefundsEur,omitempty"`
}

// getReceiptOpenings: GET /v1/receipts/{id}/openings, the openings of a
// 3.0.0 receipt's committed personal fields; only the owning account.
func (s *Server) getReceiptOpenings(w http.ResponseWriter, r *http.Request) {
	books, err := s.books(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := books.Openings(r.Context(), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, raw)
}
