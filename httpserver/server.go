package httpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
)

// Options configures the handler. Every field documents its zero value.
type Options struct {
	// MaxBodyBytes limits request bodies; larger ones get 413. 0 means
	// fiscal.MaxRequestBytes.
	MaxBodyBytes int64
	// Logger receives one line per request. nil means slog.Default().
	Logger *slog.Logger
}

// Server is the HTTP face of one fiscal.Engine. It holds no state of its
// own beyond its routes.
type Server struct {
	engine  *fiscal.Engine
	opts    Options
	mux     *http.ServeMux
	methods *http.ServeMux // the same paths without methods: tells 405 from 404
	log     *slog.Logger
}

// New returns the handler serving the specification's endpoints over e.
func New(e *fiscal.Engine, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = fiscal.MaxRequestBytes
	}
	s := &Server{engine: e, opts: opts, mux: http.NewServeMux(), methods: http.NewServeMux(), log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	paths := map[string]bool{}
	for _, r := range s.routes() {
		s.mux.Handle(r.method+" "+r.path, r.handler)
		if !paths[r.path] {
			paths[r.path] = true
			s.methods.Handle(r.path, http.NotFoundHandler())
		}
	}
	s.mux.HandleFunc("/", s.fallback)
	return s
}

type route struct {
	method, path string
	handler      http.Handler
	auth         bool // documents that the route needs X-Service-Key
}

// routes is the table of every endpoint the server mounts. Its paths are
// checked against the OpenAPI document by a test.
func (s *Server) routes() []route {
	return []route{
		{"POST", "/settlements", s.authed(s.postSettlement), true},
		{"GET", "/settlements/{id}", s.authed(s.getSettlement), true},
		{"GET", "/settlements/{id}/ubl", s.authed(s.getSettlementUBL), true},
		{"GET", "/v1/receipts/{id}", http.HandlerFunc(s.getReceipt), false},
		{"GET", "/.well-known/jwks.json", http.HandlerFunc(s.getJWKS), false},
		{"GET", "/.well-known/log-key", http.HandlerFunc(s.getLogKey), false},
		{"GET", "/v1/log/checkpoint", http.HandlerFunc(s.getCheckpoint), false},
		{"GET", "/v1/log/proof/inclusion", http.HandlerFunc(s.getInclusionProof), false},
		{"GET", "/v1/log/proof/consistency", http.HandlerFunc(s.getConsistencyProof), false},
		{"GET", "/v1/webhook-endpoints", s.authed(s.listWebhookEndpoints), true},
		{"POST", "/v1/webhook-endpoints", s.authed(s.postWebhookEndpoint), true},
		{"GET", "/v1/webhook-endpoints/{id}", s.authed(s.getWebhookEndpoint), true},
		{"DELETE", "/v1/webhook-endpoints/{id}", s.authed(s.deleteWebhookEndpoint), true},
		{"POST", "/v1/webhook-endpoints/{id}/secrets", s.authed(s.postWebhookSecret), true},
		{"DELETE", "/v1/webhook-endpoints/{id}/secrets/{secretId}", s.authed(s.deleteWebhookSecret), true},
		{"POST", "/v1/webhook-endpoints/{id}/enable", s.authed(s.postWebhookEnable), true},
		{"GET", "/v1/events", s.authed(s.listEvents), true},
		{"GET", "/v1/events/{id}", s.authed(s.getEvent), true},
		{"POST", "/v1/events/{id}/redeliver", s.authed(s.postRedeliver), true},
	}
}

// ServeHTTP gives every request an id (X-Request-Id on every response),
// turns panics into a 500 problem and logs one line per request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r.Header.Get("X-Request-Id"))
	w.Header().Set("X-Request-Id", id)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
			if !rec.wrote {
				s.problem(rec, r, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "internal error"})
			}
		}
		s.log.Info("request", "request_id", id, "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
	}()
	s.mux.ServeHTTP(rec, r)
}

// fallback answers paths no route matches: 405 when the path exists with
// another method, 404 otherwise, both as problem documents.
func (s *Server) fallback(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.methods.Handler(r); pattern != "" {
		s.problem(w, r, &fiscal.Error{Code: fiscal.CodeMethodNotAllowed, Detail: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)})
		return
	}
	s.problem(w, r, &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "no such endpoint: " + r.URL.Path})
}

type requestIDKey struct{}
type accountKey struct{}

var inboundRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// requestID accepts a well-formed inbound X-Request-Id (so that a caller's
// trace continues) and otherwise makes a new one.
func requestID(inbound string) string {
	if inboundRequestID.MatchString(inbound) {
		return inbound
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "req_unavailable"
	}
	return "req_" + hex.EncodeToString(b[:])
}

// authed requires a valid X-Service-Key and puts the account id in the
// request context.
func (s *Server) authed(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acc, err := s.engine.Accounts().Authenticate(r.Header.Get("X-Service-Key"))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
			s.problem(w, r, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), accountKey{}, acc.ID)))
	})
}

func accountID(r *http.Request) string { id, _ := r.Context().Value(accountKey{}).(string); return id }

// readJSONBody enforces the JSON content type and the body limit, and
// returns the raw body.
func (s *Server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &fiscal.Error{Code: fiscal.CodeUnsupportedMedia, Field: "Content-Type", Detail: "the request body must be JSON sent with Content-Type: application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &fiscal.Error{Code: fiscal.CodePayloadTooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", s.opts.MaxBodyBytes)}
	}
	if err != nil {
		return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Detail: "the request body could not be read", Err: err}
	}
	return body, nil
}

// problem writes err as an RFC 9457 problem document with the members code,
// request_id and, for input errors, field (a JSON pointer).
func (s *Server) problem(w http.ResponseWriter, r *http.Request, err error) {
	var fe *fiscal.Error
	if !errors.As(err, &fe) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			fe = &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "the request was cancelled before it completed", Err: err}
		} else {
			fe = &fiscal.Error{Code: fiscal.CodeInternal, Detail: "internal error", Err: err}
		}
	}
	status := fe.Code.HTTPStatus()
	id, _ := r.Context().Value(requestIDKey{}).(string)
	if status >= 500 {
		s.log.Error("request failed", "request_id", id, "code", fe.Code, "err", fe)
	}
	if fe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((fe.RetryAfter+time.Second-1)/time.Second)))
	}
	body := struct {
		Type      string `json:"type"`
		Title     string `json:"title"`
		Status    int    `json:"status"`
		Detail    string `json:"detail,omitempty"`
		Code      string `json:"code"`
		Field     string `json:"field,omitempty"`
		RequestID string `json:"request_id"`
	}{"about:blank", http.StatusText(status), status, fe.Detail, string(fe.Code), fe.Field, id}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// writeJSON writes raw JSON bytes (already encoded, e.g. a stored record).
func writeJSON(w http.ResponseWriter, status int, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
	if len(raw) == 0 || raw[len(raw)-1] != '\n' {
		_, _ = w.Write([]byte("\n"))
	}
}

// writeImmutable serves bytes that never change for their URL, with a strong
// ETag from their SHA-256 and conditional GET support.
func writeImmutable(w http.ResponseWriter, r *http.Request, contentType, etag string, cache string, raw []byte) {
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", cache)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(raw)
	}
}

func etagMatches(header, etag string) bool {
	for _, part := range bytes.Split([]byte(header), []byte(",")) {
		p := string(bytes.TrimSpace(part))
		if p == "*" || p == etag || p == "W/"+etag {
			return true
		}
	}
	return false
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
