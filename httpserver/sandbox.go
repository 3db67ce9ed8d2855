package httpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/fiscal402/fiscal402/sandbox"
)

// postEvaluate: POST /v1/compliance/evaluate, the classification preview
// (key optional; counts against the sandbox quota).
func (s *Server) postEvaluate(w http.ResponseWriter, r *http.Request) {
	var req sandbox.EvaluateRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	ev, err := s.svc.Sandbox.Evaluate(r.Context(), accountID(r), s.agent(r), req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeQuota(w, ev.Quota)
	w.Header().Set("Cache-Control", "no-store")
	s.writeResult(w, r, ev, nil)
}

// postSimulate: POST /sandbox/v1/simulate, a watermarked sandbox record,
// UBL and receipt (key optional; counts against the sandbox quota).
func (s *Server) postSimulate(w http.ResponseWriter, r *http.Request) {
	body, err := s.readJSONBody(w, r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var req sandbox.SimulateRequest
	if err := decodeJSONBody(body, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	// A seller without registrations is taken to be registered wherever
	// its sales are taxed (not checked); any list is checked. null, read
	// as left out, would ask for more than any list.
	if err := nullMember(body, "leave registrations out for a seller whose registrations are not stated (not checked), or list them ([] for none)", "seller", "registrations"); err != nil {
		s.problem(w, r, err)
		return
	}
	sim, err := s.svc.Sandbox.Simulate(r.Context(), accountID(r), s.agent(r), req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var rec struct{ ID string }
	if json.Unmarshal(sim.Record, &rec) == nil {
		w.Header().Set("Location", "/sandbox/v1/settlements/"+rec.ID)
	}
	writeQuota(w, sim.Quota)
	w.Header().Set("Cache-Control", "no-store")
	// The UBL is XML: keep its <, > and & readable rather than \u003c-escaped.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(sim); err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, buf.Bytes())
}

// getSandboxSettlement: GET /sandbox/v1/settlements/{id}, public: a sandbox
// id is 128 random bits.
func (s *Server) getSandboxSettlement(w http.ResponseWriter, r *http.Request) {
	raw, err := s.svc.Sandbox.Record(r.Context(), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	sum := sha256.Sum256(raw)
	writeImmutable(w, r, "application/json", `"sha256-`+hex.EncodeToString(sum[:])+`"`, "public, max-age=31536000, immutable", raw)
}

// getSandboxUBL: GET /sandbox/v1/settlements/{id}/ubl, the watermarked UBL.
func (s *Server) getSandboxUBL(w http.ResponseWriter, r *http.Request) {
	raw, sum, err := s.svc.Sandbox.Invoice(r.Context(), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeImmutable(w, r, "application/xml", `"sha256-`+sum+`"`, "public, max-age=31536000, immutable", raw)
}

// getSandboxReceipt: GET /sandbox/v1/receipts/{id}, a sandbox receipt; it
// verifies only with the sandbox JWKS and the sandbox log key.
func (s *Server) getSandboxReceipt(w http.ResponseWriter, r *http.Request) {
	s.serveReceipt(w, r, s.svc.Sandbox.Receipt)
}

// getSandboxJWKS: GET /sandbox/v1/jwks.json, the sandbox receipt keys,
// which are never in /.well-known/jwks.json.
func (s *Server) getSandboxJWKS(w http.ResponseWriter, r *http.Request) {
	s.serveJWKS(w, r, s.svc.Sandbox.JWKS)
}

// getSandboxLogKey: GET /sandbox/v1/log-key, the sandbox log's note
// verifier key.
func (s *Server) getSandboxLogKey(w http.ResponseWriter, r *http.Request) {
	key, err := s.svc.Sandbox.LogVerifierKey()
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(key + "\n"))
}
