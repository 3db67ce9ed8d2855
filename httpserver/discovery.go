package httpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/fiscal402/fiscal402/fiscal"
)

// Handlers of the documents the service publishes about itself and of the
// capability check. The documents are public, need no key, and are served
// with a strong ETag and a five-minute public cache lifetime: they change
// only with the deployment (configuration, routes, rulesets).

const documentCache = "public, max-age=300"

// baseURL is the absolute URL the published links start with:
// Options.PublicURL, else the request's scheme and Host.
func (s *Server) baseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = "localhost"
	}
	return scheme + "://" + host
}

// serveDocument writes v as indented JSON with a strong ETag (the SHA-256
// of the bytes) and conditional GET.
func (s *Server) serveDocument(w http.ResponseWriter, r *http.Request, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		s.problem(w, r, err)
		return
	}
	raw := buf.Bytes()
	sum := sha256.Sum256(raw)
	writeImmutable(w, r, "application/json", `"sha256-`+hex.EncodeToString(sum[:])+`"`, documentCache, raw)
}

func (s *Server) getManifest(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.manifest(s.baseURL(r)))
}

func (s *Server) getAgentCard(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.agentCard(s.baseURL(r)))
}

func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.openAPI(s.baseURL(r)))
}

func (s *Server) getReliability(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.reliability(s.baseURL(r)))
}

func (s *Server) getDiscovery(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, Discovery{Service: fiscal.ServiceName, APIVersion: fiscal.APIVersion, Links: s.links(s.baseURL(r))})
}

func (s *Server) getPreference(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.preference(s.baseURL(r)))
}

func (s *Server) getSellerValue(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.sellerValue(s.baseURL(r)))
}

// getCapabilities: GET /v1/capabilities, the catalog of this engine.
func (s *Server) getCapabilities(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.engine.Catalog())
}

// getPricing: GET /v1/pricing, the policy whose fee records accrue.
func (s *Server) getPricing(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, s.engine.PricingPolicy())
}

// getDiscover: GET /discover, JSON for agents, HTML for browsers.
func (s *Server) getDiscover(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept")
	d := s.discover(s.baseURL(r))
	if !prefersHTML(r.Header.Get("Accept")) {
		s.serveDocument(w, r, d)
		return
	}
	raw := []byte(discoverHTML(d))
	sum := sha256.Sum256(raw)
	writeImmutable(w, r, "text/html; charset=utf-8", `"sha256-`+hex.EncodeToString(sum[:])+`"`, documentCache, raw)
}

// postCapabilitiesCheck: POST /v1/capabilities/check (spec §2.4). The key
// is optional; a key that is sent must be valid.
func (s *Server) postCapabilitiesCheck(w http.ResponseWriter, r *http.Request) {
	account, err := s.optionalAccount(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
		s.problem(w, r, err)
		return
	}
	body, err := s.readJSONBody(w, r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	req, err := fiscal.DecodeCapabilityCheckRequest(bytes.NewReader(body))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.engine.CheckCapabilities(r.Context(), account, req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	raw, err := json.Marshal(c)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, raw)
}

// optionalAccount authenticates X-Service-Key when it is sent: "" when it
// is absent, an AUTHENTICATION_FAILED error when it is wrong. A wrong key
// is never silently treated as anonymous: the caller meant to be someone.
func (s *Server) optionalAccount(r *http.Request) (string, error) {
	if _, sent := r.Header[http.CanonicalHeaderKey(fiscal.HeaderServiceKey)]; !sent {
		return "", nil
	}
	acc, err := s.engine.Accounts().Authenticate(r.Header.Get(fiscal.HeaderServiceKey))
	if err != nil {
		return "", err
	}
	return acc.ID, nil
}

// prefersHTML reports whether an Accept header asks for HTML before JSON:
// text/html (or text/*) named with a higher q than anything that admits
// application/json. A browser's "text/html,...,*/*;q=0.8" prefers HTML;
// curl's "*/*" and an absent header get JSON.
func prefersHTML(accept string) bool {
	qHTML, qJSON := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case "text/html", "text/*":
			qHTML = max(qHTML, q)
		case "application/json", "application/*", "*/*":
			qJSON = max(qJSON, q)
		}
	}
	return qHTML > 0 && qHTML > qJSON
}
