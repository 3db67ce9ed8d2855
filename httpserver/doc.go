// Package httpserver exposes a fiscal.Engine over HTTP as the endpoints the
// README and the OpenAPI document (GET /openapi.json) describe; every
// handler decodes, makes one engine call and encodes.
//
// # Published documents
//
// The server describes itself: the manifest (/.well-known/service.json),
// the OpenAPI 3.1 document (/openapi.json), an A2A-style agent card, the
// capability catalog, the pricing policy and the reliability, discovery,
// preference and seller-value documents. Their facts come from package
// fiscal's values and from the route table, never from literals here; they
// are public, cached per base URL (Options.PublicURL, else the request's
// host) and served with a strong ETag; the capability catalog, whose ECB
// coverage moves with each publication, is built for each request.
//
// # OpenAPI
//
// The document is built from the route table (routes, server.go) and the
// operation table (operations, openapi.go), keyed by "METHOD path". Schemas
// are derived by reflection from the Go types the handlers decode and
// encode; request types reject unknown members, as their decoders do. A
// route without an operation fails TestOpenAPICoversRoutes, which names it.
// Members whose name says what they hold get its pattern, enum or format
// (schema_formats.go: hashes, addresses, countries, amounts, networks,
// dates); raw-JSON members get the schema of what they carry
// (openapi_types.go: typed list items, a simulation's record and receipt,
// an event's data, the x402 documents); a processed record and a determined
// VAT treatment state what they always carry (if/then). Problem answers
// repeated across operations are shared components.responses (BadRequest,
// Unauthorized, NotFound, PayloadTooLarge, UnsupportedMediaType,
// RateLimited, InternalError, Unavailable); any other set of codes at one
// status is an inline answer whose code is the enum of that set. Every
// operation carries examples of its request and answers, recorded from a
// deterministic run of the walkthrough (openapi_examples.json, a golden file
// of TestOpenAPIExamples).
//
// # Operations
//
// Beside the API, and outside its OpenAPI document and manifest, the server
// mounts the endpoints of the people who run it (ops.go): GET /healthz
// (alive; reads nothing), GET /readyz (200 or 503 with each check: the
// ledger takes a write, the newest ECB rate is at most Options.FXMaxAge
// old, the engine runs its background work, and the host's
// Options.ReadyChecks; probes within a second share one run), GET /metrics
// (Prometheus, package metrics) and GET /v1/admin/backup (a consistent copy
// of the ledger file, LedgerBackup). /metrics and the backup need the
// operator key (Options.OperatorKey) as "Authorization: Bearer <key>",
// never an account's key; Options.MetricsPublic opens /metrics.
//
// # Request log
//
// Each request ends with one log line, message "request", with
// request_id, method, route (the pattern it matched, "unmatched" for none),
// status, duration_ms and, when known, account (the authenticated account
// id), code (the problem's code), outcome and record_status (an ingest's).
// No key, body, query string or raw path is logged, so no personal data of
// a buyer reaches the log. The same labels feed the metrics.
//
// # Authentication
//
// X-Service-Key (README "Who needs a key") is required on ingest (POST
// /settlements, POST /v1/fiscal-events) and on
// every read of an account's records: GET /settlements,
// /settlements/{id}, /settlements/{id}/ubl and /v1/fiscal-events[...]. It
// is optional on POST /v1/compliance/evaluate and POST
// /sandbox/v1/simulate: without it the caller is anonymous and its client
// address is the quota's agent; a key that is sent must be valid (401
// otherwise), so a mistyped key never silently turns a caller anonymous.
// Receipts, key sets, log endpoints and the sandbox's read routes (a sandbox
// id carries 128 random bits) need no key.
//
// # Limits
//
// The keyed endpoints share one token bucket per account (Options.RateLimit,
// Options.RateBurst; default 100 requests a second, bursts of 200): past
// it, 429 RATE_LIMITED with Retry-After, and nothing is done. Evaluate and
// simulate have the sandbox quota instead (fiscal, "# Sandbox"): 429
// QUOTA_EXCEEDED with Retry-After, X-Quota-Limit, X-Quota-Remaining,
// X-Quota-Reset and the problem member reset_at; every counted call states
// X-Quota-Limit, X-Quota-Remaining and X-Quota-Reset. The client address is
// the connection's peer, or behind Options.TrustedProxies the nearest
// untrusted X-Forwarded-For hop; an IPv6 client counts per /64. Request
// bodies are limited to Options.MaxBodyBytes (413).
package httpserver
