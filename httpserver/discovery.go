package httpserver

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
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
	s.serveCached(w, r, "application/json", func(base string) ([]byte, error) { return indentedJSON(build(base)) })
}

// indentedJSON encodes a published document: indented, HTML characters
// kept as they are.
func indentedJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// serveCached serves a document that is a pure function of the server and
// the base URL: built once per (path, media type, base) and kept in a
// bounded LRU cache, so that a document as large as the OpenAPI one costs a
// map lookup per request. Without Options.PublicURL the base comes from the
// request's Host, which anyone can make up: only the hosts the operator
// allows (Options.DocumentHosts; loopback names by default) are cached, and
// any other host gets a document built for it and not kept, so made-up
// hosts can neither fill the cache nor push the real host out of it.
func (s *Server) serveCached(w http.ResponseWriter, r *http.Request, contentType string, build func(base string) ([]byte, error)) {
	base := s.baseURL(r)
	key := r.URL.Path + "\x00" + contentType + "\x00" + base
	d, ok := s.docs.get(key)
	if !ok {
		raw, err := build(base)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		sum := sha256.Sum256(raw)
		d = &cachedDocument{key: key, raw: raw, etag: `"sha256-` + hex.EncodeToString(sum[:]) + `"`}
		if s.opts.PublicURL != "" || s.documentHostAllowed(r.Host) {
			s.docs.put(d)
		}
	}
	writeImmutable(w, r, contentType, d.etag, documentCache, d.raw)
}

// documentHostAllowed: whether documents built for this Host header are
// cached (Options.DocumentHosts, or a loopback name when it is empty).
func (s *Server) documentHostAllowed(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	if len(s.opts.DocumentHosts) == 0 {
		if name == "localhost" {
			return true
		}
		a, err := netip.ParseAddr(name)
		return err == nil && a.IsLoopback()
	}
	for _, h := range s.opts.DocumentHosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// documentCacheSize bounds the document cache: the documents times a few
// base URLs. The least recently used entry goes first.
const documentCacheSize = 64

type cachedDocument struct {
	key  string
	raw  []byte
	etag string
	elem *list.Element
}

// documentStore is the server's LRU cache of published documents.
type documentStore struct {
	mu  sync.Mutex
	m   map[string]*cachedDocument
	lru list.List // front: most recently used; values are *cachedDocument
}

func (c *documentStore) get(key string) (*cachedDocument, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[key]
	if ok {
		c.lru.MoveToFront(d.elem)
	}
	return d, ok
}

func (c *documentStore) put(d *cachedDocument) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*cachedDocument{}
	}
	if old, ok := c.m[d.key]; ok {
		c.lru.MoveToFront(old.elem)
		return
	}
	d.elem = c.lru.PushFront(d)
	c.m[d.key] = d
	for c.lru.Len() > documentCacheSize {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*cachedDocument).key)
	}
}

// len is the number of cached documents.
func (c *documentStore) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
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

// getCapabilities: GET /v1/capabilities, the catalog of this engine. Built
// for each request, not kept: its ECB coverage moves with every publication
// the rates service merges.
func (s *Server) getCapabilities(w http.ResponseWriter, r *http.Request) {
	raw, err := indentedJSON(s.svc.Catalog.Catalog())
	if err != nil {
		s.problem(w, r, err)
		return
	}
	sum := sha256.Sum256(raw)
	writeImmutable(w, r, "application/json", `"sha256-`+hex.EncodeToString(sum[:])+`"`, documentCache, raw)
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

// postCapabilitiesCheck: POST /v1/capabilities/check (README "Checking a
// corridor before ingest"). The key
// is optional; a key that is sent must be valid (keyOptional, under the
// failure limit of the client's address like every other key).
func (s *Server) postCapabilitiesCheck(w http.ResponseWriter, r *http.Request) {
	var req catalog.CapabilityCheckRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.svc.Catalog.CheckCapabilities(r.Context(), accountID(r), req)
	s.writeValue(w, r, http.StatusOK, "no-store", c, err)
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
