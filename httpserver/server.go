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
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/webhooks"
)

// Options configures the handler. Every field documents its zero value.
type Options struct {
	// MaxBodyBytes limits request bodies; larger ones get 413. 0 means
	// fiscal.MaxRequestBytes.
	MaxBodyBytes int64
	// Logger receives one line per request. nil means slog.Default().
	Logger *slog.Logger
	// PublicURL is the absolute base URL clients reach the service at
	// (e.g. "https://fiscal.example.com"), used for the links in the
	// published documents. "" means the scheme and Host of each request.
	PublicURL string
	// Operator, OperatorURL and TermsURL name who runs this deployment in
	// the manifest and agent card. "" leaves them out.
	Operator, OperatorURL, TermsURL string
	// RateLimit is the sustained requests per second each account may make
	// to the endpoints that need X-Service-Key (429 RATE_LIMITED with
	// Retry-After beyond it). 0 means DefaultRateLimit; rate.Inf disables it.
	RateLimit rate.Limit
	// RateBurst is the bucket size of the rate limit. 0 means twice
	// RateLimit (DefaultRateBurst for the default limit).
	RateBurst int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed when telling clients apart for the sandbox quota. nil means
	// none: the connection's peer address is the client.
	TrustedProxies []netip.Prefix
}

// Services are the engine and the packages around it that the server
// serves. Engine and Keys are required; a nil accessory is made with its
// defaults (webhooks: public https endpoints; ingest: its queue running;
// catalog: catalog.DefaultPricing()).
type Services struct {
	Engine       *fiscal.Engine
	Keys         *Keys // the accounts' API keys
	Catalog      *catalog.Service
	Webhooks     *webhooks.Service
	Ingest       *ingest.Service
	FiscalEvents *fiscalevent.Service
	Sandbox      *sandbox.Sandbox
	// Rates is the refresh of the engine's ECB rates; nil: the rates are
	// a fixed table (GET /v1/fx/status says so).
	Rates *rates.Service
}

// withDefaults fills the nil accessories.
func (svc Services) withDefaults() (Services, error) {
	if svc.Engine == nil || svc.Keys == nil {
		return svc, errors.New("httpserver: Services.Engine and Services.Keys are required")
	}
	e := svc.Engine
	if svc.Catalog == nil {
		svc.Catalog = catalog.New(e, catalog.DefaultPricing())
	}
	if svc.Webhooks == nil {
		w, err := webhooks.New(e, webhooks.Options{})
		if err != nil {
			return svc, err
		}
		svc.Webhooks = w
	}
	if svc.Ingest == nil {
		svc.Ingest = ingest.New(e, ingest.Options{})
	}
	if svc.FiscalEvents == nil {
		svc.FiscalEvents = fiscalevent.New(e)
	}
	if svc.Sandbox == nil {
		svc.Sandbox = sandbox.New(e, sandbox.Options{})
	}
	return svc, nil
}

// Server is the HTTP face of one fiscal.Engine and its accessories. It
// holds no state of its own beyond its routes, caches and rate limits.
type Server struct {
	svc     Services
	engine  *fiscal.Engine
	opts    Options
	mux     *http.ServeMux
	methods *http.ServeMux // the same paths without methods: tells 405 from 404
	log     *slog.Logger
	docs    documentStore // published documents, built once per base URL (discovery.go)
	limits  *rateLimits   // per-account rate limit of the keyed endpoints
}

// New returns the handler serving the specification's endpoints over the
// services.
func New(svc Services, opts Options) (*Server, error) {
	svc, err := svc.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = fiscal.MaxRequestBytes
	}
	s := &Server{svc: svc, engine: svc.Engine, opts: opts, mux: http.NewServeMux(), methods: http.NewServeMux(), log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.limits = newRateLimits(opts.RateLimit, opts.RateBurst)
	paths := map[string]bool{}
	for _, r := range s.routes() {
		s.mux.Handle(r.method+" "+r.path, r.handler)
		if !paths[r.path] {
			paths[r.path] = true
			s.methods.Handle(r.path, http.NotFoundHandler())
		}
	}
	s.mux.HandleFunc("/", s.fallback)
	return s, nil
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
		{"POST", "/settlements/{id}/resolve", s.authed(s.postResolve), true},
		{"POST", "/v1/x402/settlements", s.authed(s.postX402Settlement), true},
		{"GET", "/v1/x402/settlements/{id}", s.authed(s.getX402Settlement), true},
		{"GET", "/v1/receipts/{id}", http.HandlerFunc(s.getReceipt), false},
		{"GET", "/.well-known/jwks.json", http.HandlerFunc(s.getJWKS), false},
		{"GET", "/.well-known/log-key", http.HandlerFunc(s.getLogKey), false},
		{"GET", "/verify", http.HandlerFunc(s.getVerifyPage), false},
		{"GET", "/v1/log/checkpoint", http.HandlerFunc(s.getCheckpoint), false},
		{"GET", "/v1/fx/status", http.HandlerFunc(s.getFXStatus), false},
		{"GET", "/v1/log/proof/inclusion", http.HandlerFunc(s.getInclusionProof), false},
		{"GET", "/v1/log/proof/consistency", http.HandlerFunc(s.getConsistencyProof), false},
		{"GET", "/v1/capabilities", http.HandlerFunc(s.getCapabilities), false},
		{"POST", "/v1/capabilities/check", http.HandlerFunc(s.postCapabilitiesCheck), false}, // key optional
		{"GET", "/v1/pricing", http.HandlerFunc(s.getPricing), false},
		{"GET", "/.well-known/service.json", http.HandlerFunc(s.getManifest), false},
		{"GET", "/.well-known/agent-card.json", http.HandlerFunc(s.getAgentCard), false},
		{"GET", "/v1/reliability", http.HandlerFunc(s.getReliability), false},
		{"GET", "/v1/discovery", http.HandlerFunc(s.getDiscovery), false},
		{"GET", "/v1/preference", http.HandlerFunc(s.getPreference), false},
		{"GET", "/v1/seller-value", http.HandlerFunc(s.getSellerValue), false},
		{"GET", "/discover", http.HandlerFunc(s.getDiscover), false},
		{"GET", "/openapi.json", http.HandlerFunc(s.getOpenAPI), false},
		{"GET", "/settlements", s.authed(s.listSettlements), true},
		{"POST", "/v1/fiscal-events", s.authed(s.postFiscalEvent), true},
		{"GET", "/v1/fiscal-events", s.authed(s.listFiscalEvents), true},
		{"GET", "/v1/fiscal-events/{id}", s.authed(s.getFiscalEvent), true},
		{"GET", "/v1/fiscal-events/{id}/ubl", s.authed(s.getFiscalEventUBL), true},
		{"POST", "/v1/compliance/evaluate", s.keyOptional(s.postEvaluate), false},
		{"POST", "/sandbox/v1/simulate", s.keyOptional(s.postSimulate), false},
		{"GET", "/sandbox/v1/settlements/{id}", http.HandlerFunc(s.getSandboxSettlement), false},
		{"GET", "/sandbox/v1/settlements/{id}/ubl", http.HandlerFunc(s.getSandboxUBL), false},
		{"GET", "/sandbox/v1/receipts/{id}", http.HandlerFunc(s.getSandboxReceipt), false},
		{"GET", "/sandbox/v1/jwks.json", http.HandlerFunc(s.getSandboxJWKS), false},
		{"GET", "/sandbox/v1/log-key", http.HandlerFunc(s.getSandboxLogKey), false},
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
		s.problem(w, r, &fiscal.Error{Code: codeMethodNotAllowed, Detail: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)})
		return
	}
	s.problem(w, r, &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "no such endpoint: " + r.URL.Path})
}

// The error codes of the HTTP layer (their statuses are in fiscal's one
// table).
const (
	codeMethodNotAllowed fiscal.Code = "METHOD_NOT_ALLOWED"     // the path exists, the method does not
	codePayloadTooLarge  fiscal.Code = "PAYLOAD_TOO_LARGE"      // body over the limit
	codeUnsupportedMedia fiscal.Code = "UNSUPPORTED_MEDIA_TYPE" // not application/json
	codeRateLimited      fiscal.Code = "RATE_LIMITED"           // over the per-account rate limit
)

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
		id, err := s.svc.Keys.Authenticate(r.Header.Get(HeaderServiceKey))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
			s.problem(w, r, err)
			return
		}
		if err := s.limits.allow(id, time.Now()); err != nil {
			s.problem(w, r, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), accountKey{}, id)))
	})
}

func accountID(r *http.Request) string { id, _ := r.Context().Value(accountKey{}).(string); return id }

// books returns the books of the request's authenticated account.
func (s *Server) books(r *http.Request) (*fiscal.Books, error) { return s.engine.Books(accountID(r)) }

// decodeJSON reads the request body (JSON content type, the body limit)
// and decodes it strictly into v (package internal/strictjson: exact
// member names, no unknown or repeated members, no lone surrogates,
// bounded nesting); a problem is BAD_REQUEST naming the field.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readJSONBody(w, r)
	if err != nil {
		return err
	}
	err = strictjson.Decode(body, v)
	var se *strictjson.Error
	if errors.As(err, &se) {
		detail := se.Detail
		if se.Field == "" {
			detail = strings.Replace(detail, "the body", "the request body", 1)
		}
		return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: se.Field, Detail: detail}
	}
	return err
}

// readJSONBody enforces the JSON content type and the body limit, and
// returns the raw body.
func (s *Server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, &fiscal.Error{Code: codeUnsupportedMedia, Field: "Content-Type", Detail: "the request body must be JSON sent with Content-Type: application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &fiscal.Error{Code: codePayloadTooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", s.opts.MaxBodyBytes)}
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
		ResetAt   string `json:"reset_at,omitempty"` // QUOTA_EXCEEDED: when the quota resets
	}{"about:blank", http.StatusText(status), status, fe.Detail, string(fe.Code), fe.Field, id, quotaReset(w, err)}
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
