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
	"sync"

	"github.com/fiscal402/fiscal402/catalog"
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

// serveDocument serves the JSON document build returns for the request's
// base URL, indented, with a strong ETag (the SHA-256 of the bytes) and
// conditional GET.
func (s *Server) serveDocument(w http.ResponseWriter, r *http.Request, build func(base string) any) {
	s.serveCached(w, r, "application/json", func(base string) ([]byte, error) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err := enc.Encode(build(base))
		return buf.Bytes(), err
	})
}

// serveCached serves a document that is a pure function of the server and
// the base URL: built once per (path, media type, base) and kept in a small
// cache, so that a document as large as the OpenAPI one costs a map lookup
// per request. The cache is bounded (documentCacheSize entries): requests
// with ever new Host headers get fresh documents, never unbounded memory.
func (s *Server) serveCached(w http.ResponseWriter, r *http.Request, contentType string, build func(base string) ([]byte, error)) {
	base := s.baseURL(r)
	key := r.URL.Path + "\x00" + contentType + "\x00" + base
	s.docs.Lock()
	d, ok := s.docs.m[key]
	s.docs.Unlock()
	if !ok {
		raw, err := build(base)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		sum := sha256.Sum256(raw)
		d = cachedDocument{raw: raw, etag: `"sha256-` + hex.EncodeToString(sum[:]) + `"`}
		s.docs.Lock()
		if s.docs.m == nil {
			s.docs.m = map[string]cachedDocument{}
		}
		if len(s.docs.m) < documentCacheSize {
			s.docs.m[key] = d
		}
		s.docs.Unlock()
	}
	writeImmutable(w, r, contentType, d.etag, documentCache, d.raw)
}

// documentCacheSize bounds the document cache: the documents times a few
// base URLs.
const documentCacheSize = 64

type cachedDocument struct {
	raw  []byte
	etag string
}

// documentStore is the server's cache of published documents.
type documentStore struct {
	sync.Mutex
	m map[string]cachedDocument
}

func (s *Server) getManifest(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.manifest(base) })
}

func (s *Server) getAgentCard(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.agentCard(base) })
}

func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.openAPI(base) })
}

func (s *Server) getReliability(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.reliability(base) })
}

func (s *Server) getDiscovery(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any {
		return Discovery{Service: catalog.ServiceName, APIVersion: catalog.APIVersion, Links: s.links(base)}
	})
}

func (s *Server) getPreference(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.preference(base) })
}

func (s *Server) getSellerValue(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(base string) any { return s.sellerValue(base) })
}

// getCapabilities: GET /v1/capabilities, the catalog of this engine.
func (s *Server) getCapabilities(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(string) any { return s.svc.Catalog.Catalog() })
}

// getPricing: GET /v1/pricing, the policy whose fee records accrue.
func (s *Server) getPricing(w http.ResponseWriter, r *http.Request) {
	s.serveDocument(w, r, func(string) any { return s.svc.Catalog.PricingPolicy() })
}

// getDiscover: GET /discover, JSON for agents, HTML for browsers.
func (s *Server) getDiscover(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Vary", "Accept")
	if !prefersHTML(r.Header.Get("Accept")) {
		s.serveDocument(w, r, func(base string) any { return s.discover(base) })
		return
	}
	s.serveCached(w, r, "text/html; charset=utf-8", func(base string) ([]byte, error) {
		return []byte(discoverHTML(s.discover(base))), nil
	})
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
	var req catalog.CapabilityCheckRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.svc.Catalog.CheckCapabilities(r.Context(), account, req)
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
	if _, sent := r.Header[http.CanonicalHeaderKey(HeaderServiceKey)]; !sent {
		return "", nil
	}
	id, err := s.keys.Load().Authenticate(r.Header.Get(HeaderServiceKey))
	if err == nil {
		requestInfoOf(r).account = id
	}
	return id, err
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
