package httpserver

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/fiscal402/fiscal402/fiscal"
)

// getCheckpoint: GET /v1/log/checkpoint, the latest signed checkpoint
// (C2SP tlog-checkpoint signed note), as text.
func (s *Server) getCheckpoint(w http.ResponseWriter, r *http.Request) {
	cp, err := s.engine.Ledger().Checkpoint()
	if err != nil {
		s.problem(w, r, fiscal.StoreError(err))
		return
	}
	note := cp.Note
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(note)
}

// getLogKey: GET /.well-known/log-key, the note verifier key of the log
// ("origin+hash+base64"), beside jwks.json: a JWK set cannot carry it.
func (s *Server) getLogKey(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(s.engine.LogVerifierKey() + "\n"))
}

// getInclusionProof: GET /v1/log/proof/inclusion?index=&size=.
// A misspelt parameter (?sise=) is a 400, not a proof against another
// tree size than the one meant.
func (s *Server) getInclusionProof(w http.ResponseWriter, r *http.Request) {
	index, err1 := queryInt(r, "index", -1)
	size, err2 := queryInt(r, "size", 0)
	if err := firstErr(onlyParams(r.URL.Query(), "index", "size"), err1, err2, explicitZero(r, "size", size)); err != nil {
		s.problem(w, r, err)
		return
	}
	p, err := inclusionProof(s.engine.Ledger(), index, size)
	s.writeResult(w, r, p, err)
}

// getConsistencyProof: GET /v1/log/proof/consistency?from=&to=.
func (s *Server) getConsistencyProof(w http.ResponseWriter, r *http.Request) {
	from, err1 := queryInt(r, "from", -1)
	to, err2 := queryInt(r, "to", 0)
	if err := firstErr(onlyParams(r.URL.Query(), "from", "to"), err1, err2, explicitZero(r, "to", to)); err != nil {
		s.problem(w, r, err)
		return
	}
	p, err := consistencyProof(s.engine.Ledger(), from, to)
	s.writeResult(w, r, p, err)
}

func (s *Server) writeResult(w http.ResponseWriter, r *http.Request, v any, err error) {
	s.writeValue(w, r, http.StatusOK, "", v, err)
}

// writeValue answers v as JSON with status and, when cache is not "", that
// Cache-Control; or err, or an error marshalling v, as a problem (which
// carries no Cache-Control of v's).
func (s *Server) writeValue(w http.ResponseWriter, r *http.Request, status int, cache string, v any, err error) {
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if cache != "" {
		w.Header().Set("Cache-Control", cache)
	}
	writeJSON(w, status, raw)
}

// queryInt reads a non-negative integer query parameter; absent means def
// (a negative def makes the parameter required).
func queryInt(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		if def < 0 {
			return 0, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: name, Detail: "query parameter " + name + " is required"}
		}
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || !canonicalUint(v) {
		return 0, &fiscal.Error{Code: fiscal.CodeBadRequest, Field: name, Detail: "query parameter " + name + " must be a non-negative integer"}
	}
	return n, nil
}

// explicitZero refuses a tree size sent as 0 (or empty): only an absent
// parameter means the current size. The empty tree holds no leaf to prove
// and extends nothing, so a 0 is a mistake to name, not a request for
// another tree than the one the client sent.
func explicitZero(r *http.Request, name string, v int64) error {
	if v == 0 && r.URL.Query().Has(name) {
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: name, Detail: "query parameter " + name + " must be at least 1; leave it out for the current size"}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
