package httpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/httpconn"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/strictjson"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/webhooks"
)

// Options configures the handler. Every field documents its zero value.
type Options struct {
	// MaxBodyBytes limits request bodies; larger ones get 413. 0 means
	// fiscal.MaxRequestBytes.
	MaxBodyBytes int64
	// Logger receives one line per request (request_id, method, route
	// pattern, status, duration_ms, and when known the account id and the
	// problem code; never a key, a body, a query or a path's ids). nil
	// means slog.Default().
	Logger *slog.Logger
	// PublicURL is the absolute base URL clients reach the service at
	// (e.g. "https://fiscal.example.com"), used for the links in the
	// published documents. "" means the scheme and Host of each request.
	PublicURL string
	// DocumentHosts are the Host header values (with or without the port)
	// whose published documents (OpenAPI, manifest, agent card, ...) are
	// cached when PublicURL is "": documents for any other Host are built
	// for each request and never kept, so made-up Host headers cannot fill
	// the cache. nil means the loopback names (localhost, 127.0.0.1, ::1).
	// Ignored with PublicURL, where every request shares one base.
	DocumentHosts []string
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
	// AuthFailureRate is the sustained rate of failed authentications
	// (wrong account or operator keys) a client address may make; past
	// AuthFailureBurst the address is blocked, 429 RATE_LIMITED with
	// Retry-After, for 1 s, then twice as long at each further failure, up
	// to AuthFailureMaxBackoff. A blocked address is refused whatever key
	// it sends; other addresses and the accounts' buckets are not touched.
	// 0 means DefaultAuthFailureRate (Burst: DefaultAuthFailureBurst,
	// MaxBackoff: DefaultAuthFailureMaxBackoff); rate.Inf disables it.
	AuthFailureRate       rate.Limit
	AuthFailureBurst      int
	AuthFailureMaxBackoff time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed when telling clients apart for the sandbox quota. nil means
	// none: the connection's peer address is the client.
	TrustedProxies []netip.Prefix
	// Metrics are the Prometheus metrics the server reports to and GET
	// /metrics serves. nil means metrics of the server's own (metrics.New).
	Metrics *metrics.Metrics
	// MetricsPublic serves GET /metrics without the operator key (a scraper
	// on a private network). false requires the key.
	MetricsPublic bool
	// OperatorKey is the key of the operator endpoints (GET /metrics
	// unless MetricsPublic, GET /v1/admin/backup), sent as "Authorization:
	// Bearer <key>". It must not be an account's key (New refuses it) and
	// should be a long random string (NewAPIKey). "" disables those
	// endpoints (401).
	OperatorKey string
	// ReadyChecks are readiness checks of the host's, run by GET /readyz
	// after the server's own (ledger, fx, workers).
	ReadyChecks []ReadyCheck
	// FXMaxAge is how old the newest ECB rate may be while the service is
	// ready. 0 means DefaultFXMaxAge; a negative value turns the check off.
	FXMaxAge time.Duration
	// Backup is the source of GET /v1/admin/backup. nil means the engine's
	// ledger, when it implements LedgerBackup.
	Backup LedgerBackup
	// BackupStall is how long a backup download may go without the client
	// taking any bytes before the server cuts it, ending the copy (the
	// ledger's spool, or its read transaction where no spool could be
	// taken: ledger/backup.go). 0 means DefaultBackupStall.
	BackupStall time.Duration
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
	// The loops made here run until the engine closes: none may start
	// unless all can. The dispatcher is made while the queue runner is
	// held (webhooks.New undoes itself when refused), so that a queue
	// already running refuses New before the dispatcher starts.
	release := func() {}
	if svc.Ingest == nil {
		var err error
		if release, err = ingest.Reserve(e); err != nil {
			return svc, err
		}
	}
	if svc.Webhooks == nil {
		w, err := webhooks.New(e, webhooks.Options{})
		if err != nil {
			release()
			return svc, err
		}
		svc.Webhooks = w
	}
	release()
	if svc.Ingest == nil {
		in, err := ingest.Open(e, ingest.Options{})
		if err != nil {
			return svc, err
		}
		svc.Ingest = in
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
	svc       Services
	engine    *fiscal.Engine
	opts      Options
	mux       *http.ServeMux
	methods   *http.ServeMux      // the same paths without methods: tells 405 from 404
	allowed   map[string][]string // path pattern → its methods (the Allow header of a 405)
	log       *slog.Logger
	docs      documentStore // published documents, built once per base URL (discovery.go)
	limits    *rateLimits   // per-account rate limit of the keyed endpoints
	authFails *authFailures // per-address limit of failed authentication
	keys      atomic.Pointer[Keys]
	metrics   *metrics.Metrics
	ready     readiness
	// operatorHash is the SHA-256 of Options.OperatorKey; nil without one.
	operatorHash []byte
	logPC        atomic.Uint64 // requestLogPC's answer, once found
}

// New returns the handler serving the API's endpoints over the
// services. The nil accessories it makes include a webhook dispatcher and
// an ingest queue runner: an engine runs one of each (webhooks.New,
// ingest.Open), so a second server on the same engine is given the first's
// Webhooks and Ingest (or services opened with NoDispatcher and NoQueue),
// else New refuses it.
func New(svc Services, opts Options) (*Server, error) {
	if svc.Engine == nil || svc.Keys == nil {
		return nil, errors.New("httpserver: Services.Engine and Services.Keys are required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = fiscal.MaxRequestBytes
	}
	s := &Server{svc: svc, engine: svc.Engine, opts: opts, mux: http.NewServeMux(), methods: http.NewServeMux(), log: opts.Logger, metrics: opts.Metrics}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	if opts.OperatorKey != "" {
		h := sha256.Sum256([]byte(opts.OperatorKey))
		s.operatorHash = h[:]
	}
	if err := s.SetKeys(svc.Keys); err != nil {
		return nil, err
	}
	var err error
	// The accessories last: a refused New starts no background loop (and
	// holds none of the engine's: one dispatcher and one queue per engine).
	if s.svc, err = svc.withDefaults(); err != nil {
		return nil, err
	}
	s.limits = newRateLimits(opts.RateLimit, opts.RateBurst)
	s.authFails = newAuthFailures(opts.AuthFailureRate, opts.AuthFailureBurst, opts.AuthFailureMaxBackoff)
	s.allowed = map[string][]string{}
	for _, r := range append(s.routes(), s.opsRoutes()...) {
		s.mux.Handle(r.method+" "+r.path, r.handler)
		if s.allowed[r.path] == nil {
			s.methods.Handle(r.path, http.NotFoundHandler())
		}
		s.allowed[r.path] = append(s.allowed[r.path], r.method)
		if r.method == http.MethodGet {
			// The mux answers HEAD with a GET route (RFC 9110 section
			// 9.3.2): a 405's Allow lists it too (section 10.2.1).
			s.allowed[r.path] = append(s.allowed[r.path], http.MethodHead)
		}
	}
	s.mux.HandleFunc("/", s.fallback)
	// Last: a refused New leaves the caller's Metrics reading no state of
	// a server that does not exist.
	s.metrics.SetState(s.state, stateTTL)
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
		{"POST", "/settlements", s.authed(s.noParams(s.postSettlement)), true},
		{"GET", "/settlements/{id}", s.authed(s.noParams(s.getSettlement)), true},
		{"GET", "/settlements/{id}/ubl", s.authed(s.noParams(s.getSettlementUBL)), true},
		{"POST", "/settlements/{id}/resolve", s.authed(s.noParams(s.postResolve)), true},
		{"POST", "/settlements/{id}/refunds", s.authed(s.noParams(s.postRefund)), true},
		{"GET", "/settlements/{id}/refunds/{rid}", s.authed(s.noParams(s.getRefund)), true},
		{"GET", "/settlements/{id}/refunds/{rid}/ubl", s.authed(s.noParams(s.getRefundUBL)), true},
		{"GET", "/v1/account/totals", s.authed(s.noParams(s.getAccountTotals)), true},
		{"GET", "/v1/returns/oss", s.authed(s.getOSSReturn), true},
		{"GET", "/v1/returns/oss/records", s.authed(s.getOSSRecords), true},
		{"GET", "/settlements/export", s.authed(s.exportSettlements), true},
		{"GET", "/settlements/{id}/invoiced-by", s.authed(s.noParams(s.getInvoicedBy)), true},
		{"POST", "/v1/invoices/summaries", s.authed(s.noParams(s.postSummaries)), true},
		{"GET", "/v1/invoices/summaries/{id}", s.authed(s.noParams(s.getSummary)), true},
		{"GET", "/v1/invoices/summaries/{id}/ubl", s.authed(s.noParams(s.getSummaryUBL)), true},
		{"POST", "/v1/x402/settlements", s.authed(s.noParams(s.postX402Settlement)), true},
		{"GET", "/v1/x402/settlements/{id}", s.authed(s.noParams(s.getX402Settlement)), true},
		{"GET", "/v1/receipts/{id}", s.noParams(s.getReceipt), false},
		{"GET", "/v1/receipts/{id}/openings", s.authed(s.noParams(s.getReceiptOpenings)), true},
		{"GET", "/.well-known/jwks.json", s.noParams(s.getJWKS), false},
		{"GET", "/.well-known/log-key", s.noParams(s.getLogKey), false},
		{"GET", "/verify", http.HandlerFunc(s.getVerifyPage), false},
		{"GET", "/v1/log/checkpoint", s.noParams(s.getCheckpoint), false},
		{"GET", "/v1/fx/status", s.noParams(s.getFXStatus), false},
		{"GET", "/v1/log/proof/inclusion", http.HandlerFunc(s.getInclusionProof), false},
		{"GET", "/v1/log/proof/consistency", http.HandlerFunc(s.getConsistencyProof), false},
		{"GET", "/v1/capabilities", s.noParams(s.getCapabilities), false},
		{"POST", "/v1/capabilities/check", s.keyOptional(s.noParams(s.postCapabilitiesCheck)), false},
		{"GET", "/v1/pricing", s.noParams(s.getPricing), false},
		{"GET", "/.well-known/service.json", s.noParams(s.getManifest), false},
		{"GET", "/.well-known/agent-card.json", s.noParams(s.getAgentCard), false},
		{"GET", "/v1/reliability", s.noParams(s.getReliability), false},
		{"GET", "/v1/discovery", s.noParams(s.getDiscovery), false},
		{"GET", "/v1/preference", s.noParams(s.getPreference), false},
		{"GET", "/v1/seller-value", s.noParams(s.getSellerValue), false},
		{"GET", "/discover", s.noParams(s.getDiscover), false},
		{"GET", "/openapi.json", s.noParams(s.getOpenAPI), false},
		{"GET", "/settlements", s.authed(s.listSettlements), true},
		{"POST", "/v1/fiscal-events", s.authed(s.noParams(s.postFiscalEvent)), true},
		{"GET", "/v1/fiscal-events", s.authed(s.listFiscalEvents), true},
		{"GET", "/v1/fiscal-events/{id}", s.authed(s.noParams(s.getFiscalEvent)), true},
		{"GET", "/v1/fiscal-events/{id}/ubl", s.authed(s.noParams(s.getFiscalEventUBL)), true},
		{"POST", "/v1/fiscal-events/{id}/resolve", s.authed(s.noParams(s.postFiscalEventResolve)), true},
		{"POST", "/v1/compliance/evaluate", s.keyOptional(s.noParams(s.postEvaluate)), false},
		{"POST", "/sandbox/v1/simulate", s.keyOptional(s.noParams(s.postSimulate)), false},
		{"GET", "/sandbox/v1/settlements/{id}", s.noParams(s.getSandboxSettlement), false},
		{"GET", "/sandbox/v1/settlements/{id}/ubl", s.noParams(s.getSandboxUBL), false},
		{"GET", "/sandbox/v1/receipts/{id}", s.noParams(s.getSandboxReceipt), false},
		{"GET", "/sandbox/v1/jwks.json", s.noParams(s.getSandboxJWKS), false},
		{"GET", "/sandbox/v1/log-key", s.noParams(s.getSandboxLogKey), false},
		{"GET", "/v1/webhook-endpoints", s.authed(s.noParams(s.listWebhookEndpoints)), true},
		{"POST", "/v1/webhook-endpoints", s.authed(s.noParams(s.postWebhookEndpoint)), true},
		{"GET", "/v1/webhook-endpoints/{id}", s.authed(s.noParams(s.getWebhookEndpoint)), true},
		{"DELETE", "/v1/webhook-endpoints/{id}", s.authed(s.noParams(s.noBody(s.deleteWebhookEndpoint))), true},
		{"POST", "/v1/webhook-endpoints/{id}/secrets", s.authed(s.noParams(s.noBody(s.postWebhookSecret))), true},
		{"DELETE", "/v1/webhook-endpoints/{id}/secrets/{secretId}", s.authed(s.noParams(s.noBody(s.deleteWebhookSecret))), true},
		{"POST", "/v1/webhook-endpoints/{id}/enable", s.authed(s.noParams(s.noBody(s.postWebhookEnable))), true},
		{"GET", "/v1/events", s.authed(s.listEvents), true},
		{"GET", "/v1/events/{id}", s.authed(s.noParams(s.getEvent)), true},
		{"POST", "/v1/events/{id}/redeliver", s.authed(s.noBody(s.postRedeliver)), true},
	}
}

// SetKeys replaces the accounts' API keys, for a host that reloads its
// accounts file while serving: requests that start afterwards authenticate
// with the new set. It refuses a set in which the operator key is an
// account's key.
func (s *Server) SetKeys(k *Keys) error {
	if k == nil {
		return errors.New("httpserver: SetKeys(nil)")
	}
	if s.opts.OperatorKey != "" {
		if id, err := k.Authenticate(s.opts.OperatorKey); err == nil {
			return fmt.Errorf("httpserver: the operator key is also the key of account %q: give the operator a key of its own", id)
		}
	}
	s.keys.Store(k)
	return nil
}

// Metrics returns the metrics the server reports to (Options.Metrics, or
// its own).
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// requestInfo is what the handlers of one request tell the request log
// and the metrics: set through the context, read when the answer is done.
// It is the request's one context value: its id and the account it acts
// for ride in it too, so that a request costs one context and one copy of
// the http.Request, not one per value.
type requestInfo struct {
	id      string
	account string // the authenticated account id ("operator" for the operator key)
	code    string // the problem document's code, when the answer is one
	outcome string // an ingest's outcome: created, replayed, existing, queued
	status  string // the ingested record's status (reviewStatus, determination status, "queued")
	// caller is the account the handler acts for: set by authed and
	// keyOptional on a valid X-Service-Key (accountID), "" otherwise.
	caller string
}

type requestInfoKey struct{}

// requestInfoOf returns the request's info (a throwaway one outside
// ServeHTTP, e.g. a handler called directly by a test).
func requestInfoOf(r *http.Request) *requestInfo {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// ingestSources are the routes whose answers count in
// fiscal402_settlements_total and fiscal402_settlements_refused_total,
// with their source label.
var ingestSources = map[string]string{
	"POST /settlements":                   "settlements",
	"POST /v1/x402/settlements":           "x402",
	"POST /v1/fiscal-events":              "fiscal_events",
	"POST /settlements/{id}/resolve":      "resolve",
	"POST /v1/fiscal-events/{id}/resolve": "resolve",
}

// ServeHTTP gives every request an id (X-Request-Id on every response),
// turns panics into a 500 problem, and when the answer is done logs one
// line and counts it in the metrics (by route pattern, never the raw path).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := requestID(r.Header.Get("X-Request-Id"))
	w.Header().Set("X-Request-Id", id)
	st := &served{rec: statusRecorder{ResponseWriter: w, status: http.StatusOK, ctx: r.Context()}, info: requestInfo{id: id}}
	rec, info := &st.rec, &st.info
	r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
	defer func() {
		p := recover()
		if p != nil && p != http.ErrAbortHandler {
			s.log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
			if !rec.wrote {
				s.problem(rec, r, &fiscal.Error{Code: fiscal.CodeInternal, Detail: "internal error"})
			}
		}
		s.finish(r, rec.status, info, time.Since(start))
		if p == http.ErrAbortHandler {
			panic(p) // net/http aborts the connection: a cut stream must not look whole
		}
	}()
	if fe := s.preflight(rec, r); fe != nil {
		if fe.Code != codePathNotCanonical {
			// The refusal is of the route the request names: count and log
			// it under that route's pattern (an ingest route's as a refused
			// payment), not as "unmatched", which is for unknown paths.
			if _, pattern := s.mux.Handler(r); pattern != "" {
				r.Pattern = pattern
			}
		}
		s.problem(rec, r, fe)
		return
	}
	s.mux.ServeHTTP(rec, r)
}

// preflight answers, as problem documents, what net/http's ServeMux would
// otherwise answer in plain text or HTML before any handler, and the rules
// that hold for every endpoint alike (issue 19 items 9 and 16):
//   - a path that is not clean ("//", "/./", "/../") is a 307
//     PATH_NOT_CANONICAL to the cleaned path (Location), the query kept;
//   - a body whose Content-Length is over the limit is a 413, whatever the
//     endpoint (one that reads no body included);
//   - a repeated or unreadable query parameter is a 400 BAD_REQUEST naming
//     it, on every endpoint: never "the first one wins".
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) *fiscal.Error {
	if r.Method != http.MethodConnect {
		if p := r.URL.EscapedPath(); p != "" {
			if c := cleanPath(p); c != p {
				loc := c
				if r.URL.RawQuery != "" {
					loc += "?" + r.URL.RawQuery
				}
				w.Header().Set("Location", loc)
				return &fiscal.Error{Code: codePathNotCanonical, Detail: "the path is not in its canonical form (repeated slashes or dot segments); repeat the request at the Location " + shown.Bare(loc)}
			}
		}
	}
	if r.ContentLength > s.opts.MaxBodyBytes {
		return &fiscal.Error{Code: codePayloadTooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", s.opts.MaxBodyBytes)}
	}
	return checkQuery(r.URL.RawQuery)
}

// checkQuery is the one rule for query strings: every parameter at most
// once, each well-formed.
func checkQuery(raw string) *fiscal.Error {
	if raw == "" {
		return nil
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return badRequestf("query", "the query string is not well-formed: %v", err)
	}
	names := make([]string, 0, len(v))
	for name, vals := range v {
		if len(vals) > 1 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names) // the same error for the same query
	field := shown.Bare(names[0])
	if field == "" {
		field = "query"
	}
	return badRequestf(field, "query parameter %s is repeated; give each parameter once", shown.Quote(names[0]))
}

// cleanPath is net/http's: path.Clean, a leading slash, and a trailing slash
// kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		if len(p) == len(np)+1 && strings.HasPrefix(p, np) {
			np = p
		} else {
			np += "/"
		}
	}
	return np
}

// finish logs the request line and counts the request in the metrics.
func (s *Server) finish(r *http.Request, status int, info *requestInfo, d time.Duration) {
	route := r.Pattern
	if route == "" || route == "/" {
		route = "unmatched"
	}
	s.metrics.ObserveRequest(route, status, d)
	if source := ingestSources[route]; source != "" {
		switch {
		case info.outcome != "":
			s.metrics.ObserveSettlement(source, info.outcome, info.status)
		case info.code != "":
			s.metrics.ObserveRefused(source, info.code)
		}
	}
	s.logRequest(r, route, status, info, d)
}

// logRequest writes the request line.
func (s *Server) logRequest(r *http.Request, route string, status int, info *requestInfo, d time.Duration) {
	ctx := r.Context()
	h := s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var buf [9]slog.Attr // every attribute below: no allocation for the slice
	attrs := append(buf[:0],
		slog.String("request_id", info.id), slog.String("method", r.Method), slog.String("route", route),
		slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	)
	if info.account != "" {
		attrs = append(attrs, slog.String("account", info.account))
	}
	if info.code != "" {
		attrs = append(attrs, slog.String("code", info.code))
	}
	if info.outcome != "" {
		attrs = append(attrs, slog.String("outcome", info.outcome), slog.String("record_status", info.status))
	}
	// What s.log.LogAttrs does, with the source's program counter found
	// once per Server instead of by runtime.Callers on every request (~2 µs
	// of the server's CPU per request): the same record for the handler.
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", s.requestLogPC())
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// requestLogPC is the program counter the request line names as its source
// (a handler with AddSource prints it): a line of logRequest, the same on
// every request.
func (s *Server) requestLogPC() uintptr {
	if pc := s.logPC.Load(); pc != 0 {
		return uintptr(pc)
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // runtime.Callers, requestLogPC, logRequest
	s.logPC.Store(uint64(pcs[0]))
	return pcs[0]
}

// fallback answers paths no route matches: 405 when the path exists with
// another method, 404 otherwise, both as problem documents.
func (s *Server) fallback(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.methods.Handler(r); pattern != "" {
		w.Header().Set("Allow", strings.Join(s.allowed[pattern], ", "))
		s.problem(w, r, &fiscal.Error{Code: codeMethodNotAllowed, Detail: fmt.Sprintf("%s is not allowed on %s", shown.Bare(r.Method), shown.Bare(r.URL.Path))})
		return
	}
	s.problem(w, r, &fiscal.Error{Code: fiscal.CodeNotFound, Detail: "no such endpoint: " + shown.Bare(r.URL.Path)})
}

// The error codes of the HTTP layer (their statuses are in fiscal's one
// table).
const (
	codeMethodNotAllowed fiscal.Code = "METHOD_NOT_ALLOWED"     // the path exists, the method does not
	codePayloadTooLarge  fiscal.Code = "PAYLOAD_TOO_LARGE"      // body over the limit
	codeUnsupportedMedia fiscal.Code = "UNSUPPORTED_MEDIA_TYPE" // not application/json
	codeRateLimited      fiscal.Code = "RATE_LIMITED"           // over the per-account rate limit
	codeNotImplemented   fiscal.Code = "NOT_IMPLEMENTED"        // an operator endpoint this build cannot serve
	codePathNotCanonical fiscal.Code = "PATH_NOT_CANONICAL"     // 307 to the cleaned path (Location)
	codeClientClosed     fiscal.Code = "CLIENT_CLOSED"          // the client went away before the answer (logged, 499)
)

// httpStatus is the status of a code: fiscal's table, and the codes of the
// operator endpoints that fiscal does not know.
func httpStatus(c fiscal.Code) int {
	if c == codeNotImplemented {
		return http.StatusNotImplemented
	}
	return c.HTTPStatus()
}

// served is what ServeHTTP keeps of one request, in one allocation.
type served struct {
	rec  statusRecorder
	info requestInfo
}

// requestID accepts a well-formed inbound X-Request-Id (so that a caller's
// trace continues) and otherwise makes a new one.
func requestID(inbound string) string {
	if wellFormedRequestID(inbound) {
		return inbound
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "req_unavailable"
	}
	var out [4 + 2*len(b)]byte
	copy(out[:], "req_")
	hex.Encode(out[4:], b[:])
	return string(out[:])
}

// wellFormedRequestID reports whether an inbound X-Request-Id is 1 to 128
// of the characters A-Z a-z 0-9 . _ -.
func wellFormedRequestID(v string) bool {
	if len(v) < 1 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// authed requires a valid X-Service-Key and puts the account id in the
// request context.
func (s *Server) authed(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := s.authenticate(r, r.Header.Get(HeaderServiceKey))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `X-Service-Key realm="fiscal402"`)
			s.problem(w, r, err)
			return
		}
		requestInfoOf(r).account = id
		if err := s.limits.allow(id, time.Now()); err != nil {
			s.problem(w, r, err)
			return
		}
		h(w, actingFor(r, id))
	})
}

// actingFor records that the request acts for account id (accountID):
// in the request's info, without a copy of the request when ServeHTTP
// made one.
func actingFor(r *http.Request, id string) *http.Request {
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.caller = id
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, &requestInfo{caller: id}))
}

// accountID is the account the request acts for: "" without a valid
// X-Service-Key (or outside authed and keyOptional).
func accountID(r *http.Request) string { return requestInfoOf(r).caller }

// books returns the books of the request's authenticated account.
func (s *Server) books(r *http.Request) (*fiscal.Books, error) { return s.engine.Books(accountID(r)) }

// idempotencyKey reads the Idempotency-Key header: "" when it is absent.
// Sent empty or more than once it is a BAD_REQUEST naming the header: an
// empty key must not turn the request into one without a key (its retry
// would be recorded twice), and of two keys neither may silently win. The
// key's form is checked by the engine (1 to 255 visible ASCII characters).
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values(catalog.HeaderIdempotencyKey)
	switch {
	case len(vs) > 1:
		return "", badRequestf(catalog.HeaderIdempotencyKey, "is sent %d times; send it once", len(vs))
	case len(vs) == 1 && vs[0] == "":
		return "", badRequestf(catalog.HeaderIdempotencyKey, "is empty; send 1 to %d visible ASCII characters, or no header", catalog.Limits().IdempotencyKeyMaxLen)
	case len(vs) == 1:
		return vs[0], nil
	}
	return "", nil
}

// decodeJSON reads the request body (JSON content type, the body limit)
// and decodes it strictly into v (package internal/strictjson: exact
// member names, no unknown or repeated members, no lone surrogates,
// bounded nesting); a problem is BAD_REQUEST naming the field.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := s.readJSONBody(w, r)
	if err != nil {
		return err
	}
	return decodeJSONBody(body, v)
}

// decodeJSONBody decodes a JSON request body read by readJSONBody into v
// as decodeJSON does.
func decodeJSONBody(body []byte, v any) error {
	err := strictjson.Decode(body, v)
	if err == nil {
		return nil
	}
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
	if n := len(r.Header.Values("Content-Type")); n > 1 {
		// A singleton field (RFC 9110 section 8.3) sent n times: the lines
		// combined are no media type, and neither may silently win.
		return nil, &fiscal.Error{Code: codeUnsupportedMedia, Field: "Content-Type", Detail: fmt.Sprintf("Content-Type is sent %d times; send it once, as application/json", n)}
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !isJSONMediaType(ct) {
		return nil, &fiscal.Error{Code: codeUnsupportedMedia, Field: "Content-Type", Detail: "the request body must be JSON sent with Content-Type: application/json"}
	} else if cs := jsonCharset(ct); cs != "" {
		return nil, &fiscal.Error{Code: codeUnsupportedMedia, Field: "Content-Type", Detail: fmt.Sprintf("the declared charset %s is not supported: JSON exchanged between systems is UTF-8 (RFC 8259 section 8.1); declare charset=utf-8 or none", shown.Quote(cs))}
	}
	if coding := contentCoding(r); coding != "" {
		// The server decodes no content coding: read as they stand, the
		// bytes would not be what the client sent (RFC 9110 section 8.4).
		return nil, &fiscal.Error{Code: codeUnsupportedMedia, Field: "Content-Encoding", Detail: fmt.Sprintf("the content coding %s is not supported: send the JSON body as it is, without Content-Encoding", shown.Quote(coding))}
	}
	return s.readBody(w, r)
}

// readBody reads the request body within the body limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err == nil {
		return body, nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &fiscal.Error{Code: codePayloadTooLarge, Detail: fmt.Sprintf("the request body is larger than %d bytes", s.opts.MaxBodyBytes)}
	}
	return nil, &fiscal.Error{Code: fiscal.CodeBadRequest, Detail: "the request body could not be read", Err: err}
}

// contentCoding is the first content coding of the request other than
// identity, "" when the body is sent as it is.
func contentCoding(r *http.Request) string {
	for _, v := range r.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return c
			}
		}
	}
	return ""
}

// isJSONMediaType reports whether a Content-Type is application/json, in
// any case and with any parameters (mime.ParseMediaType); the exact value
// "application/json", which nearly every client sends, needs no parsing.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// jsonCharset is the charset parameter of an application/json Content-Type
// when it names anything but UTF-8 (in any case), "" when the parameter is
// absent or utf-8. RFC 8259 section 8.1: JSON text exchanged between
// systems that are not part of a closed ecosystem MUST be encoded using
// UTF-8; a body declared in another charset would be read as bytes it does
// not claim to be.
func jsonCharset(ct string) string {
	if ct == "application/json" {
		return ""
	}
	_, params, err := mime.ParseMediaType(ct)
	if cs, ok := params["charset"]; err == nil && ok && !strings.EqualFold(cs, "utf-8") {
		return cs
	}
	return ""
}

// problem writes err as an RFC 9457 problem document with the members code,
// request_id and, for input errors, field (a JSON pointer). A field error
// of a request check (internal/wire, settlement) answers as
// fiscal.InputError makes it.
func (s *Server) problem(w http.ResponseWriter, r *http.Request, err error) {
	err = fiscal.InputError(err)
	var fe *fiscal.Error
	if clientGone(r, err) {
		// Not a server error: nobody reads this answer, and the engine
		// wrote nothing (a ledger append under a cancelled context is
		// refused whole). The request line says CLIENT_CLOSED with nginx's
		// 499; no error is logged.
		fe = &fiscal.Error{Code: codeClientClosed, Detail: "the client closed the request before the answer", Err: err}
	} else if !errors.As(err, &fe) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			fe = &fiscal.Error{Code: fiscal.CodeDBUnavailable, Detail: "the request was cancelled before it completed", Err: err}
		} else {
			fe = &fiscal.Error{Code: fiscal.CodeInternal, Detail: "internal error", Err: err}
		}
	}
	status := httpStatus(fe.Code)
	info := requestInfoOf(r)
	id := info.id
	info.code = string(fe.Code)
	switch {
	case fe.Code == fiscal.CodeChainUnavailable:
		s.logChainUnavailable(r.Context(), id, fe)
	case status >= 500:
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

// clientGone reports whether err comes from the client going away: the
// request's context is cancelled (net/http cancels it when the connection
// closes) and the error is that cancellation, however wrapped.
func clientGone(r *http.Request, err error) bool {
	return errors.Is(r.Context().Err(), context.Canceled) && errors.Is(err, context.Canceled)
}

// writeJSON writes raw JSON bytes (already encoded, e.g. a stored record).
func writeJSON(w http.ResponseWriter, status int, raw []byte) {
	wholeResponse(w)
	n, newline := len(raw), len(raw) == 0 || raw[len(raw)-1] != '\n'
	if newline {
		n++
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	_, _ = w.Write(raw)
	if newline {
		_, _ = io.WriteString(w, "\n")
	}
	// Not flushed here: net/http completes the answer after the handler,
	// behind the request's log line, so that an answered request is a
	// logged one even when the process is killed right after.
}

// writeUBL answers an account's stored UBL document: immutable, private,
// its ETag the SHA-256 (hex) the record states for it.
func writeUBL(w http.ResponseWriter, r *http.Request, sha256Hex string, raw []byte) {
	writeImmutable(w, r, "application/xml", `"sha256-`+sha256Hex+`"`, "private, max-age=31536000, immutable", raw)
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
	wholeResponse(w)
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
	// ctx is the request's context as net/http made it, which knows the
	// connection (httpconn.Whole).
	ctx context.Context
}

// wholeResponse says that the answer about to be written on w is written
// in one piece (Content-Length set, no flush): the bundled server's
// connections then send it in one system call (internal/httpconn).
func wholeResponse(w http.ResponseWriter) {
	if rec, ok := w.(*statusRecorder); ok && rec.ctx != nil {
		httpconn.Whole(rec.ctx)
	}
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

// WriteString lets io.WriteString reach net/http's own, which copies no
// string into a new []byte.
func (s *statusRecorder) WriteString(str string) (int, error) {
	s.wrote = true
	return io.WriteString(s.ResponseWriter, str)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
