package httpserver

import (
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
)

// Test-only access to the route and operation tables, so that the tests
// (package httpserver_test) can compare them with the OpenAPI document.

// RouteKeys returns "METHOD path" of every route the server mounts, in
// table order.
func RouteKeys(s *Server) []string {
	var keys []string
	for _, r := range s.routes() {
		keys = append(keys, r.method+" "+r.path)
	}
	return keys
}

// RouteAuth reports, per "METHOD path", whether the route requires the key.
func RouteAuth(s *Server) map[string]bool {
	out := map[string]bool{}
	for _, r := range s.routes() {
		out[r.method+" "+r.path] = r.auth
	}
	return out
}

// OperationKeys returns the keys of the operation table.
func OperationKeys() []string {
	var keys []string
	for k := range operations() {
		keys = append(keys, k)
	}
	return keys
}

// CodeDoc is the OpenAPI sentence for an error code.
func CodeDoc(c fiscal.Code) string { return codeDocs[c] }

// PrefersHTML exposes the Accept negotiation of GET /discover.
var PrefersHTML = prefersHTML

// DocumentCacheLen is the number of cached documents.
func DocumentCacheLen(s *Server) int {
	return s.docs.len()
}

// ResetReadiness forgets the cached readiness answer, so that the next
// GET /readyz runs the checks again at once.
func ResetReadiness(s *Server) {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	s.ready.at = time.Time{}
}

// RefreshState makes the next scrape read the queue and rate state again
// instead of reusing the answer of the last few seconds.
func RefreshState(s *Server) { s.metrics.SetState(s.state, stateTTL) }

// DocumentCached reports whether the JSON document at path for the base
// URL is in the document cache.
func DocumentCached(s *Server, path, base string) bool {
	_, ok := s.docs.get(path + "\x00application/json\x00" + base)
	return ok
}
