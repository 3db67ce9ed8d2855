package httpserver

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/rates"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/webhooks"
)

// The OpenAPI 3.1 document (GET /openapi.json) is built from the route
// table (routes) and the operation table (operations): one operation per
// "METHOD path" a route mounts. A test fails, naming the route, when the
// two disagree, so adding a route means adding its operation here.

// authMode is who may call an operation.
type authMode int

const (
	authNone     authMode = iota // public: no key is read
	authRequired                 // X-Service-Key required (route.auth)
	authOptional                 // a key may be sent; if sent it must be valid
)

func (a authMode) label() string {
	switch a {
	case authRequired:
		return authKeyLabel
	case authOptional:
		return authOptionalLabel
	}
	return authNoneLabel
}

// operation documents one route.
type operation struct {
	id          string // operationId
	summary     string
	description string
	tag         string
	auth        authMode
	idempotent  bool              // accepts the Idempotency-Key header
	conditional bool              // answers If-None-Match with 304
	pathParams  map[string]string // description of each {name} in the path
	query       []queryParam
	request     reflect.Type // the JSON request body; nil for none
	responses   []response   // success answers
	errors      []fiscal.Code
}

type queryParam struct {
	name, description string
	required          bool
	deprecated        bool // an alias kept for existing clients; the description names its replacement
	schema            map[string]any
}

// response is one success answer. body is a Go type encoded as JSON; schema
// is used instead for non-JSON bodies.
type response struct {
	status      int
	description string
	mediaType   string
	body        reflect.Type
	schema      map[string]any
	headers     []string // names in components.headers
	// example is the example of a text body (CSV, JSON Lines) that the
	// examples' scenario does not record.
	example string
}

func jsonBody(status int, desc string, t reflect.Type, headers ...string) response {
	return response{status: status, description: desc, mediaType: "application/json", body: t, headers: headers}
}

// documentResponse is the 200 of a cacheable JSON document.
func documentResponse(desc string, t reflect.Type) []response {
	return []response{jsonBody(http.StatusOK, desc, t, "ETag", "Cache-Control")}
}

// tags group the operations.
var openAPITags = []struct{ name, description string }{
	{"Ingest", "Recording settled payments. Key required."},
	{"Records", "The account's fiscal records and invoices. Key required."},
	{"Returns", "The OSS VAT return and the records behind it, computed from the ledger and signed. Key required."},
	{"Receipts and log", "Signed receipts, their keys and the Merkle log: public, for offline verification."},
	{"Capabilities", "What the service supports and costs, and a corridor check before ingest."},
	{"Discovery", "Read-only documents that describe the service. Public and cacheable."},
	{"Sandbox", "Previews and simulations that write nothing to the production ledger: watermarked, on their own keys, metered by a daily quota."},
	{"Webhooks", "Signed event delivery to the account's endpoints, secret rotation, and the event backfill. Key required."},
}

// operations is the operation table, keyed by "METHOD path" exactly as the
// route table mounts them.
func operations() map[string]operation {
	idParam := map[string]string{"id": "The event id of the record, `x402-<32 hex>`."}
	return map[string]operation{
		"POST /settlements": {
			id: "createSettlement", tag: "Ingest", auth: authRequired, idempotent: true,
			summary: "Record a settled payment",
			description: "Classifies a settled USDC payment for EU VAT, converts it to EUR at the ECB rate, renders the UBL invoice and appends record, invoice and signed receipt to the ledger in one fsynced transaction. " +
				"Synchronous: the receipt is readable at once. Without `consumerCountry` the record is `PENDING_MANUAL_REVIEW` (reason `buyer_country_missing`), never 0 % VAT. " +
				"The seller is the account the key identifies (seller data belongs to the account, never to this body). `asset` defaults to `USDC` (the network's USDC contract address is accepted too) and `scheme` to `exact`.",
			request: reflect.TypeFor[fiscal.SettlementRequest](),
			responses: []response{
				jsonBody(http.StatusCreated, "The new record; also the replay of the same Idempotency-Key with the same body (then with `Idempotent-Replayed: true`).", reflect.TypeFor[fiscal.Record](), "Location", "Idempotent-Replayed"),
				jsonBody(http.StatusOK, "The (network, txHash) pair is already recorded for this account: the existing record (a duplicate (network, txHash) is not an error).", reflect.TypeFor[fiscal.Record](), "Location"),
			},
			errors: []fiscal.Code{fiscal.CodeIdempotencyConflict, fiscal.CodeSettlementConflict, fiscal.CodePaymentConflict, fiscal.CodeChainVerifyFailed,
				fiscal.CodeUnsupportedNetwork, fiscal.CodeUnsupportedAsset, fiscal.CodeUnsupportedScheme, fiscal.CodeChainUnavailable, fiscal.CodeDBUnavailable},
		},
		"POST /v1/x402/settlements": {
			id: "ingestX402Settlement", tag: "Ingest", auth: authRequired, idempotent: true,
			summary: "Record an x402 settlement from the SDK's documents",
			description: "The HTTP form of `fiscal.Engine.IngestX402`, for resource servers and facilitators in any language: `settleResponse`, `paymentRequirements` and `paymentPayload` as the x402 SDK holds them after settling (x402 v2 JSON, the v1 field names, or the base64 header values), plus the merchant-attested `buyer` facts. " +
				"x402 documents are claims, not proof, and carry no settlement time: the payment is read from the chain (the network's chain mode must be `required`, else 422 `CHAIN_VERIFICATION_REQUIRED`); amount, payer, receiver and timestamp are the Transfer log's and its block's. " +
				"`success:false` is 422 `NOT_SETTLED` and writes nothing, also when it names a transaction; `success:true` with an `errorReason` or `errorMessage` reports both outcomes and is 400 `BAD_REQUEST` at that member; `settlement_pending` with a transaction hash is held in a durable queue (202). With `Prefer: respond-async` the documents are validated and queued without waiting for the chain (202, `Preference-Applied: respond-async`).",
			request: reflect.TypeFor[X402IngestRequest](),
			responses: []response{
				jsonBody(http.StatusCreated, "The new record (Location `/settlements/{id}`); also an idempotent replay (`Idempotent-Replayed: true`).", reflect.TypeFor[fiscal.Record](), "Location", "Idempotent-Replayed"),
				jsonBody(http.StatusOK, "The payment is already recorded for this account: the existing record.", reflect.TypeFor[fiscal.Record](), "Location"),
				jsonBody(http.StatusAccepted, "Held or queued: the queue entry (Location `/v1/x402/settlements/{id}`); also the replay of a request repeated under the Idempotency-Key of its entry still queued, with the same body (then with `Idempotent-Replayed: true`; the chain is not asked).", reflect.TypeFor[ingest.Status](), "Location", "Preference-Applied", "Idempotent-Replayed"),
			},
			errors: []fiscal.Code{fiscal.CodeIdempotencyConflict, fiscal.CodeSettlementConflict, ingest.CodeNotSettled, fiscal.CodeChainVerifyRequired,
				fiscal.CodeChainVerifyFailed, fiscal.CodeUnsupportedNetwork, fiscal.CodeUnsupportedAsset, fiscal.CodeUnsupportedScheme,
				fiscal.CodeChainUnavailable, fiscal.CodeDBUnavailable},
		},
		"GET /v1/x402/settlements/{id}": {
			id: "getX402Ingest", tag: "Ingest", auth: authRequired, pathParams: map[string]string{"id": "The queue entry's id, from the Location of a 202."},
			summary:     "Read the state of a queued x402 payment",
			description: "`queued` (with the next attempt's time), `recorded` (with the record's URL) or `failed` (with the last error). Only the account that queued it can read it.",
			responses:   []response{jsonBody(http.StatusOK, "The queue entry.", reflect.TypeFor[ingest.Status](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /settlements": {
			id: "listSettlements", tag: "Records", auth: authRequired,
			summary:     "List the account's fiscal records",
			description: "Newest first (by `createdAt`, ties by id), a page at a time: pass `next_cursor` back as `cursor` while `has_more` is true; a cursor never skips or repeats a record. `data` holds each record exactly as `GET /settlements/{id}` serves it (current revision). Unknown or repeated query parameters are 400. A page examines at most 2000 index entries, so a very selective filter can return a short page with `has_more: true`.",
			query: []queryParam{
				{name: "limit", description: "Page size, 1 to 200 (default 50).", schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 200}},
				{name: "cursor", description: "The `next_cursor` of the previous page (opaque).", schema: map[string]any{"type": "string"}},
				{name: "from", description: "Only records created at or after this date (`YYYY-MM-DD`) or instant (RFC 3339 UTC).", schema: dateOrInstant()},
				{name: "to", description: "Only records created at or before this instant, or on or before this date (its whole UTC day); inclusive, as `from`.", schema: dateOrInstant()},
				{name: "settledFrom", description: "Only payments settled at or after this date or instant (an OSS return is organised by supply date).", schema: dateOrInstant()},
				{name: "settledTo", description: "Only payments settled at or before this instant, or on or before this date (its whole UTC day); inclusive, as `settledFrom`.", schema: dateOrInstant()},
				{name: "reviewStatus", description: "`PROCESSED` or `PENDING_MANUAL_REVIEW`.", schema: map[string]any{"type": "string", "enum": []string{fiscal.StatusProcessed, fiscal.StatusPendingReview}}},
				{name: "status", deprecated: true, description: "Deprecated alias of `reviewStatus` (same values); use `reviewStatus`. Given with `reviewStatus`, the two must agree (400 otherwise).", schema: map[string]any{"type": "string", "enum": []string{fiscal.StatusProcessed, fiscal.StatusPendingReview}}},
				{name: "taxingCountry", description: "Only records taxed in this country (ISO 3166-1 alpha-2; `EL` is read as `GR`).", schema: map[string]any{"type": "string", "pattern": patternCountryIn}},
			},
			responses: []response{jsonBody(http.StatusOK, "A page of records.", reflect.TypeFor[settlementPageDoc](), "Cache-Control")},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/fiscal-events": {
			id: "createFiscalEvent", tag: "Ingest", auth: authRequired, idempotent: true,
			summary: "Record a fiscal event (global ingest)",
			description: "Parties from any ISO 3166-1 country, the seller in the body. The event is persisted as one ledger entry with its determination; `MANUAL_REVIEW_REQUIRED` (with reasons) where the rules do not cover the corridor. " +
				"A production receipt and an invoice are issued only when all EU VAT production invariants hold: `payment_supported`, `seller_is_account` (the body's seller is the account's), `buyer_in_eu`, `determined_eu_vat` and `fx_rate_available` (listed with their outcome in `production.invariants`); otherwise the log leaf is the event JSON and there is no receipt. " +
				"One payment, one record: a settlement and a fiscal event share the event id and the (network, txHash) claim; the same payment on the other endpoint is 409 `PAYMENT_ALREADY_RECORDED`. Does not replace `POST /settlements`.",
			request: reflect.TypeFor[fiscalevent.Request](),
			responses: []response{
				jsonBody(http.StatusCreated, "The persisted event; also an idempotent replay (`Idempotent-Replayed: true`).", reflect.TypeFor[fiscalevent.Event](), "Location", "Idempotent-Replayed"),
				jsonBody(http.StatusOK, "The payment is already a fiscal event of this account: the existing event.", reflect.TypeFor[fiscalevent.Event](), "Location"),
			},
			errors: []fiscal.Code{fiscal.CodeIdempotencyConflict, fiscal.CodeSettlementConflict, fiscal.CodePaymentConflict, fiscal.CodePaymentAlreadyRecorded, fiscal.CodeChainVerifyFailed,
				fiscal.CodeUnsupportedNetwork, fiscal.CodeUnsupportedAsset, fiscal.CodeUnsupportedScheme, codeRateLimited, fiscal.CodeChainUnavailable, fiscal.CodeDBUnavailable},
		},
		"GET /v1/fiscal-events": {
			id: "listFiscalEvents", tag: "Records", auth: authRequired,
			summary:     "List the account's fiscal events",
			description: "As `GET /settlements`, for fiscal events; filter on the determination's `status`.",
			query: []queryParam{
				{name: "limit", description: "Page size, 1 to 200 (default 50).", schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 200}},
				{name: "cursor", description: "The `next_cursor` of the previous page (opaque).", schema: map[string]any{"type": "string"}},
				{name: "from", description: "Only records created at or after this date (`YYYY-MM-DD`) or instant (RFC 3339 UTC).", schema: dateOrInstant()},
				{name: "to", description: "Only records created at or before this instant, or on or before this date (its whole UTC day); inclusive, as `from`.", schema: dateOrInstant()},
				{name: "settledFrom", description: "Only payments settled at or after this date or instant (an OSS return is organised by supply date).", schema: dateOrInstant()},
				{name: "settledTo", description: "Only payments settled at or before this instant, or on or before this date (its whole UTC day); inclusive, as `settledFrom`.", schema: dateOrInstant()},
				{name: "status", description: "`DETERMINED` or `MANUAL_REVIEW_REQUIRED`.", schema: map[string]any{"type": "string", "enum": []string{vat.StatusDetermined, vat.StatusManualReview}}},
				{name: "taxingCountry", description: "Only records taxed in this country (ISO 3166-1 alpha-2; `EL` is read as `GR`).", schema: map[string]any{"type": "string", "pattern": patternCountryIn}},
			},
			responses: []response{jsonBody(http.StatusOK, "A page of fiscal events.", reflect.TypeFor[fiscalEventPageDoc](), "Cache-Control")},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/fiscal-events/{id}": {
			id: "getFiscalEvent", tag: "Records", auth: authRequired, pathParams: idParam,
			summary:     "Read a fiscal event",
			description: "The account's fiscal event. Another account's is answered 404.",
			responses:   []response{jsonBody(http.StatusOK, "The fiscal event.", reflect.TypeFor[fiscalevent.Event](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/fiscal-events/{id}/resolve": {
			id: "resolveFiscalEvent", tag: "Records", auth: authRequired, idempotent: true,
			pathParams: map[string]string{"id": "The fiscal event's id."},
			summary:    "Resolve a fiscal event left for review",
			description: "As `POST /settlements/{id}/resolve`, for a fiscal event whose determination is `MANUAL_REVIEW_REQUIRED`, whose ECB rate was missing, or whose invoice could not be issued (`invoice_issuable`, e.g. `buyer_address_missing`: give `consumerName` and `consumerAddress`, recorded as `buyer.address`): the buyer facts or a manual determination make a new revision (event `fiscal_event.revised`), with a production receipt and invoice when the invariants now hold. " +
				"The registry's later answer about a buyer's VAT number revises such an event on its own, as it does a settlement.",
			request: reflect.TypeFor[fiscal.Resolution](),
			responses: []response{
				jsonBody(http.StatusCreated, "The event at its new revision; also the replay of the same Idempotency-Key with the same body (then with `Idempotent-Replayed: true`).", reflect.TypeFor[fiscalevent.Event](), "Location", "Idempotent-Replayed"),
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeNotFound, fiscal.CodeRecordNotPending, fiscal.CodeRevisionConflict, fiscal.CodeIdempotencyConflict, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/fiscal-events/{id}/ubl": {
			id: "getFiscalEventInvoice", tag: "Records", auth: authRequired, conditional: true, pathParams: idParam,
			summary:     "Read the UBL 2.1 invoice of a fiscal event",
			description: "Only events for which every production invariant held have one (404 otherwise). The exact stored bytes; the ETag is their SHA-256.",
			responses: []response{{status: http.StatusOK, description: "The invoice.", mediaType: "application/xml",
				schema: ublSchema(), headers: []string{"ETag", "Cache-Control"}}},
			errors: []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/compliance/evaluate": {
			id: "evaluateCompliance", tag: "Sandbox", auth: authOptional,
			summary: "Preview an EU VAT classification (writes nothing)",
			description: "A classification preview: no production record, no receipt, no ledger entry. The seller may be outside the EU (omit `seller` to use the account's when a key is sent); the buyer must be an attested EU-27 customer, Monaco counting as France (Art. 7(1) Directive 2006/112/EC; otherwise 422 `UNSUPPORTED_JURISDICTION`); the amount is in USDC, converted at the ECB rate of `date` (default today, never in the future). " +
				"Counts against the sandbox quota with simulate: 10 calls per agent per UTC day, price 0 (see `GET /v1/pricing`); the agent is the account when a key is sent, else the client address. Every counted answer states `X-Quota-Limit`, `X-Quota-Remaining` and `X-Quota-Reset`.",
			request:   reflect.TypeFor[sandbox.EvaluateRequest](),
			responses: []response{jsonBody(http.StatusOK, "The preview, marked `recorded: false` and watermarked.", reflect.TypeFor[sandbox.Evaluation](), "X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset")},
			errors:    []fiscal.Code{sandbox.CodeUnsupportedJurisdiction, fiscal.CodeUnsupportedAsset, sandbox.CodeQuotaExceeded, fiscal.CodeDBUnavailable},
		},
		"POST /sandbox/v1/simulate": {
			id: "simulateSettlement", tag: "Sandbox", auth: authOptional,
			summary: "Simulate a settlement: a watermarked UBL and receipt",
			description: "Runs the production pipeline on a `POST /settlements` body (plus an optional `seller`) in the sandbox: its own ledger file, log and receipt keys, never the production ones, so a sandbox receipt can never pass as a production one (`receipt.Verify` with the production JWKS refuses it; `/sandbox/v1/jwks.json` accepts it). The UBL note opens with a watermark and the receipt carries `environment: sandbox` and a `watermark` claim. " +
				"The seller's invoicing mode applies as recording applies it: under `summary_monthly` or `none_b2c` a supply that gets no invoice of its own has no `ubl`, and the record's `invoicing` says what covers it. " +
				"Counts against the sandbox quota (see evaluate).",
			request: reflect.TypeFor[sandbox.SimulateRequest](),
			responses: []response{jsonBody(http.StatusCreated, "The sandbox record, its UBL and its receipt (Location `/sandbox/v1/settlements/{id}`).", reflect.TypeFor[sandbox.Simulation](),
				"Location", "X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset")},
			errors: []fiscal.Code{fiscal.CodeUnsupportedNetwork, fiscal.CodeUnsupportedAsset, fiscal.CodeUnsupportedScheme, fiscal.CodeChainVerifyFailed,
				sandbox.CodeQuotaExceeded, fiscal.CodeChainUnavailable, fiscal.CodeDBUnavailable},
		},
		"GET /sandbox/v1/settlements/{id}": {
			id: "getSandboxSettlement", tag: "Sandbox", auth: authNone, conditional: true,
			pathParams:  map[string]string{"id": "The sandbox record id (`x402-sandbox-` + 128 random bits: the id is the capability)."},
			summary:     "Read a sandbox record",
			description: "Public by id; immutable.",
			responses:   []response{jsonBody(http.StatusOK, "The sandbox record.", reflect.TypeFor[fiscal.Record](), "ETag", "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /sandbox/v1/settlements/{id}/ubl": {
			id: "getSandboxInvoice", tag: "Sandbox", auth: authNone, conditional: true,
			pathParams:  map[string]string{"id": "The sandbox record id."},
			summary:     "Read a sandbox UBL document",
			description: "Watermarked in its note: not a valid invoice.",
			responses: []response{{status: http.StatusOK, description: "The watermarked UBL document.", mediaType: "application/xml",
				schema: ublSchema(), headers: []string{"ETag", "Cache-Control"}}},
			errors: []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /sandbox/v1/receipts/{id}": {
			id: "getSandboxReceipt", tag: "Sandbox", auth: authNone, conditional: true,
			pathParams:  map[string]string{"id": "The sandbox receipt id, `rcpt_<sandbox record id>`."},
			summary:     "Read a sandbox receipt",
			description: "Signed by the sandbox key and proved against the sandbox log; verify it with `/sandbox/v1/jwks.json` and `/sandbox/v1/log-key`.",
			responses:   []response{jsonBody(http.StatusOK, "The sandbox receipt.", reflect.TypeFor[receiptDoc](), "ETag", "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /sandbox/v1/jwks.json": {
			id: "getSandboxJWKS", tag: "Sandbox", auth: authNone,
			summary:     "Sandbox receipt keys",
			description: "The sandbox keyring's keys; never part of the production JWKS.",
			responses:   []response{{status: http.StatusOK, description: "The JWK Set.", mediaType: "application/jwk-set+json", body: reflect.TypeFor[receipt.KeySet](), headers: []string{"Cache-Control"}}},
		},
		"GET /sandbox/v1/log-key": {
			id: "getSandboxLogKey", tag: "Sandbox", auth: authNone,
			summary:     "Sandbox log verifier key",
			description: "The note verifier key of the sandbox log (origin `<production origin>/sandbox`).",
			responses:   []response{{status: http.StatusOK, description: "The verifier key, one line.", mediaType: "text/plain", schema: map[string]any{"type": "string"}, headers: []string{"Cache-Control"}}},
		},
		"GET /v1/webhook-endpoints": {
			id: "listWebhookEndpoints", tag: "Webhooks", auth: authRequired,
			summary:     "List the account's webhook endpoints",
			description: "Endpoints from the accounts file (source `config`, changed only there) and those created over the API. Secrets are never shown again after creation: only their ids and creation times.",
			responses:   []response{jsonBody(http.StatusOK, "The endpoints.", reflect.TypeFor[webhookEndpointListDoc](), "Cache-Control")},
			errors:      []fiscal.Code{codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/webhook-endpoints": {
			id: "createWebhookEndpoint", tag: "Webhooks", auth: authRequired, idempotent: true,
			summary: "Register a webhook endpoint",
			description: "An https URL (http only to loopback when the operator allows it; private and loopback targets are refused at connect time unless allowed, and redirects are never followed). The answer shows the signing secret (`whsec_` + 256 random bits) **once**. " +
				"With an `Idempotency-Key`, a retry with the same key and body (the URL compared as the same-target check compares it) gets the first answer again, secret included (201, `Idempotent-Replayed: true`), while the endpoint exists and that secret was not rotated since; once the endpoint is deleted or its secret rotated, the key gets 409 `IDEMPOTENCY_CONFLICT` naming the endpoint and creates nothing, as does the key with another body. The key is the account's, kept forever, one key space for the webhook operations (creation, rotation, redelivery): a key bound to one of them is 409 `IDEMPOTENCY_CONFLICT` on another. " +
				"Deliveries: `POST` with `X-Service-Timestamp`, `X-Service-Signature: v1=<hex HMAC-SHA256(secret, timestamp + \".\" + rawBody)>` (one `v1=` per active secret during rotation), `X-Service-Event-Id`, `X-Service-Event-Type`, `X-Service-Delivery-Id`, `X-Service-Attempt`; body `{id, type, created, sequence, data, checkpoint}`. At least once, with exponential backoff and jitter for up to 3 days; 2xx delivered, 410 disables the endpoint, 429/503 honour Retry-After, 10 s timeout. An endpoint receives the events created after it.",
			request:   reflect.TypeFor[webhooks.EndpointRequest](),
			responses: []response{jsonBody(http.StatusCreated, "The endpoint with its secret (shown once); also the replay of the same Idempotency-Key with the same body (then with `Idempotent-Replayed: true`, the same secret).", reflect.TypeFor[webhooks.EndpointWithSecret](), "Location", "Cache-Control", "Idempotent-Replayed")},
			errors:    []fiscal.Code{webhooks.CodeLimitReached, webhooks.CodeEndpointConflict, fiscal.CodeIdempotencyConflict, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/webhook-endpoints/{id}": {
			id: "getWebhookEndpoint", tag: "Webhooks", auth: authRequired, pathParams: map[string]string{"id": "The endpoint id."},
			summary:     "Read a webhook endpoint",
			description: "Its URL, state (enabled, or disabled after a 410), secret ids and the last delivery attempt.",
			responses:   []response{jsonBody(http.StatusOK, "The endpoint.", reflect.TypeFor[webhooks.Endpoint](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"DELETE /v1/webhook-endpoints/{id}": {
			id: "deleteWebhookEndpoint", tag: "Webhooks", auth: authRequired, pathParams: map[string]string{"id": "The endpoint id."},
			summary:     "Delete a webhook endpoint",
			description: "Its pending deliveries are cancelled. Endpoints from the accounts file can only be removed there (409 `WEBHOOK_ENDPOINT_CONFLICT`).",
			responses:   []response{{status: http.StatusNoContent, description: "Deleted."}},
			errors:      []fiscal.Code{fiscal.CodeNotFound, webhooks.CodeEndpointConflict, codeRateLimited, fiscal.CodeDBUnavailable, codeUnsupportedMedia},
		},
		"POST /v1/webhook-endpoints/{id}/secrets": {
			id: "addWebhookSecret", tag: "Webhooks", auth: authRequired, idempotent: true, pathParams: map[string]string{"id": "The endpoint id."},
			summary: "Start a secret rotation",
			description: "Adds a new signing secret (shown once); until the old one is deleted, every delivery carries one `v1=` signature per secret, so receivers can switch without a gap. At most 3 secrets per endpoint. " +
				"With an `Idempotency-Key`, the rotation and the key's binding are one write, so concurrent requests with the key add one secret; a retry with the same key for the same endpoint gets the first answer again, the same new secret included (201, `Idempotent-Replayed: true`; unsealed again only for the account that sent the key, as a creation's replay is), and adds nothing, while the endpoint exists and that secret is still its newest (deleting the old secret keeps it so). Once the secret was rotated again or deleted, or the endpoint deleted, the key gets 409 `IDEMPOTENCY_CONFLICT` naming the endpoint and showing no secret, and adds nothing; so does the key bound to another endpoint or webhook operation. The key is the account's, kept forever, in the key space of the webhook operations.",
			responses: []response{jsonBody(http.StatusCreated, "The endpoint with the new secret (shown once); also the replay of the same Idempotency-Key for the same endpoint (then with `Idempotent-Replayed: true`, the same secret and the endpoint as the first answer showed it).", reflect.TypeFor[webhooks.EndpointWithSecret](), "Cache-Control", "Idempotent-Replayed")},
			errors:    []fiscal.Code{fiscal.CodeNotFound, webhooks.CodeLimitReached, webhooks.CodeEndpointConflict, fiscal.CodeIdempotencyConflict, codeRateLimited, fiscal.CodeDBUnavailable, codeUnsupportedMedia},
		},
		"DELETE /v1/webhook-endpoints/{id}/secrets/{secretId}": {
			id: "deleteWebhookSecret", tag: "Webhooks", auth: authRequired,
			pathParams:  map[string]string{"id": "The endpoint id.", "secretId": "The secret's id."},
			summary:     "Finish a secret rotation",
			description: "Removes a secret; the last one cannot be removed (409 `WEBHOOK_ENDPOINT_CONFLICT`).",
			responses:   []response{jsonBody(http.StatusOK, "The endpoint.", reflect.TypeFor[webhooks.Endpoint](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, webhooks.CodeEndpointConflict, codeRateLimited, fiscal.CodeDBUnavailable, codeUnsupportedMedia},
		},
		"POST /v1/webhook-endpoints/{id}/enable": {
			id: "enableWebhookEndpoint", tag: "Webhooks", auth: authRequired, pathParams: map[string]string{"id": "The endpoint id."},
			summary:     "Re-enable an endpoint a 410 disabled",
			description: "Events recorded while it was disabled are not sent (its `firstSequence` becomes the next event's); use the events backfill and redeliver for those.",
			responses:   []response{jsonBody(http.StatusOK, "The endpoint.", reflect.TypeFor[webhooks.Endpoint](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable, codeUnsupportedMedia},
		},
		"GET /v1/events": {
			id: "listEvents", tag: "Webhooks", auth: authRequired,
			summary:     "Backfill the account's events",
			description: "Events in ledger order (`sequence` is the ledger index: gaps in an account's sequence are other accounts' entries, never lost events), each with its data, plus the latest log checkpoint. Pages as every list does: `has_more`, and `next_cursor` to pass as `cursor` (the former `after` is still read); a `Link: rel=\"next\"` header carries the next page's URL.",
			query: []queryParam{
				{name: "cursor", description: "The `next_cursor` of the previous page (default: from the start).", schema: map[string]any{"type": "string"}},
				{name: "after", deprecated: true, description: "Deprecated: the former name of `cursor`, still read.", schema: map[string]any{"type": "string"}},
				{name: "limit", description: "Page size, 1 to 200 (default 50).", schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 200}},
			},
			responses: []response{jsonBody(http.StatusOK, "A page of events.", reflect.TypeFor[webhooks.EventList](), "Link", "Cache-Control")},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/events/{id}": {
			id: "getEvent", tag: "Webhooks", auth: authRequired, pathParams: map[string]string{"id": "The event id, `evt_<entry id>`."},
			summary:     "Read an event and its deliveries",
			description: "The event as delivered, and the delivery state per endpoint (attempts, last status, next attempt).",
			responses:   []response{jsonBody(http.StatusOK, "The event.", reflect.TypeFor[webhooks.EventDetail](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/events/{id}/redeliver": {
			id: "redeliverEvent", tag: "Webhooks", auth: authRequired, idempotent: true, pathParams: map[string]string{"id": "The event id."},
			summary: "Redeliver an event",
			description: "Schedules a new delivery round (same event id, new delivery ids) to the account's enabled endpoints, or to one endpoint; endpoints created after the event are included. 409 when no endpoint is enabled. " +
				"With an `Idempotency-Key`, the round and the key's binding are one write, so concurrent requests with the key schedule one round; a retry with the same key for the same event and `endpoint` filter gets the first answer again (202, `Idempotent-Replayed: true`, the deliveries as they were then scheduled; `GET /v1/events/{id}` shows them now) and schedules nothing, also after a restart. The key bound to another event, filter or webhook operation is 409 `IDEMPOTENCY_CONFLICT`, and nothing is scheduled. The key is the account's, kept forever, in the key space of the webhook operations.",
			query:     []queryParam{{name: "endpoint", description: "Only this endpoint (its id). Any other parameter, or an empty one, is 400.", schema: map[string]any{"type": "string", "minLength": 1}}},
			responses: []response{jsonBody(http.StatusAccepted, "The scheduled deliveries, due now; also the replay of the same Idempotency-Key for the same event and filter (then with `Idempotent-Replayed: true`).", reflect.TypeFor[redeliveryDoc](), "Idempotent-Replayed")},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeNotFound, webhooks.CodeEndpointConflict, fiscal.CodeIdempotencyConflict, codeRateLimited, fiscal.CodeDBUnavailable, codeUnsupportedMedia},
		},
		"GET /settlements/{id}": {
			id: "getSettlement", tag: "Records", auth: authRequired, pathParams: idParam,
			summary:     "Read a fiscal record",
			description: "The current state (newest revision) of the account's record, with its refunds (`refunds`: totals and every refund as stored) once it has any, and the summary invoice that covers it (`invoicedBy`, once issued). Another account's record is answered 404, not 403: its existence is none of the caller's business.",
			responses:   []response{jsonBody(http.StatusOK, "The record as committed (with `refunds` appended once it has any); when a summary invoice covers it (`invoicing.invoice` `summary`, once issued), a `Link` header with `rel=\"invoiced-by\"` names it (`GET /settlements/{id}/invoiced-by` tells more).", reflect.TypeFor[fiscal.Record](), "Cache-Control", "Link")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"POST /settlements/{id}/resolve": {
			id: "resolveSettlement", tag: "Records", auth: authRequired, idempotent: true, pathParams: idParam,
			summary: "Resolve a record pending review",
			description: "Ends (or advances) the review of a `PENDING_MANUAL_REVIEW` record: `buyer` supplies the facts the determination lacked (country, VAT number or `businessStatus`, location evidence), `determination` a person's own decision of the treatment (regime, taxing country, rate, reason), checked against the facts and the rate table; `resolvedBy` names the person. " +
				"The result is a new revision (new ledger entry, receipt, invoice when now `PROCESSED`, event `settlement.review_resolved` or, with facts still missing, `settlement.pending_review`); the pending entry stays in the log. The same as `fiscal.Books.Resolve`.",
			request: reflect.TypeFor[fiscal.Resolution](),
			responses: []response{
				jsonBody(http.StatusCreated, "The record at its new revision; also the replay of the same Idempotency-Key with the same body (then with `Idempotent-Replayed: true`).", reflect.TypeFor[fiscal.Record](), "Location", "Idempotent-Replayed"),
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeNotFound, fiscal.CodeRecordNotPending, fiscal.CodeRevisionConflict, fiscal.CodeIdempotencyConflict, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /settlements/{id}/refunds": {
			id: "refundSettlement", tag: "Records", auth: authRequired, idempotent: true, pathParams: idParam,
			summary: "Refund a settlement (credit note)",
			description: "Records a refund of a `PROCESSED` settlement, full (no `amountUsdc`: everything that remains) or partial, as a ledger entry of its own: the refund document (`object` `refund`, id `<settlement id>-refund-<n>`), " +
				"a UBL 2.1 credit note (type 381, `BillingReference` to the invoice, the invoice's VAT rate and ECB rate: the correction mirrors the supply; numbered in the account's credit-note series), a `" + receipt.SpecV4 + "` receipt whose `supersedes` is the corrected receipt and whose `fx` is the negative correction, and the event `settlement.refunded`. " +
				"Refunds never exceed what remains (`REFUND_EXCEEDS_REMAINING`, also under concurrent requests); a record pending review is refused (`RECORD_PENDING_REVIEW`). A `transaction` on a network whose chain verification is required must be a USDC transfer of exactly the amount from the settlement's receiver back to its payer, mined no earlier than the settlement (`CHAIN_VERIFY_FAILED` otherwise). The same as `refunds.Create`.",
			request: reflect.TypeFor[refunds.Request](),
			responses: []response{
				jsonBody(http.StatusCreated, "The new refund; also the replay of the same Idempotency-Key with the same body (then with `Idempotent-Replayed: true`).", reflect.TypeFor[refunds.Refund](), "Location", "Idempotent-Replayed"),
				jsonBody(http.StatusOK, "The refund transfer already backs this refund: the recorded refund.", reflect.TypeFor[refunds.Refund](), "Location"),
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeNotFound, refunds.CodeRecordPendingReview, refunds.CodeRefundExceedsRemaining, fiscal.CodeIdempotencyConflict, fiscal.CodeSettlementConflict,
				fiscal.CodeChainVerifyFailed, fiscal.CodeUnsupportedNetwork, fiscal.CodeCreditNoteRefused, fiscal.CodeChainUnavailable, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /settlements/{id}/refunds/{rid}": {
			id: "getRefund", tag: "Records", auth: authRequired, pathParams: map[string]string{"id": idParam["id"], "rid": "The refund id, `<settlement id>-refund-<n>`."},
			summary:     "Read a refund",
			description: "The refund exactly as stored in its ledger entry (its receipt is `GET /v1/receipts/rcpt_<refund id>`).",
			responses:   []response{jsonBody(http.StatusOK, "The refund.", reflect.TypeFor[refunds.Refund](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /settlements/{id}/refunds/{rid}/ubl": {
			id: "getRefundCreditNote", tag: "Records", auth: authRequired, conditional: true, pathParams: map[string]string{"id": idParam["id"], "rid": "The refund id, `<settlement id>-refund-<n>`."},
			summary:     "Read the UBL 2.1 credit note of a refund",
			description: "The exact stored bytes of the credit note (type 381), whose SHA-256 the refund (`creditNote.ublSha256`) carries and the refund's receipt commits to; the ETag is that hash. A refund of a supply that has no invoice (the account's `none_b2c` invoicing, none being required) has no credit note (`creditNote` null): `404`.",
			responses: []response{{status: http.StatusOK, description: "The credit note (UBL 2.1 CreditNote, EN 16931 or Peppol BIS Billing 3.0).", mediaType: "application/xml",
				schema: ublSchema(), headers: []string{"ETag", "Cache-Control"}}},
			errors: []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /v1/account/totals": {
			id: "getAccountTotals", tag: "Records", auth: authRequired,
			summary:     "The account's Art. 59c running totals",
			description: "Per calendar year (in the seller's time zone): the total, exclusive of VAT and exact, of the account's cross-border B2C supplies of telecommunications, broadcasting and electronic services, with its opening figure, against the EUR 10,000 of Art. 59c Directive 2006/112/EC. The engine decides each such sale on these totals in append order; the sale that crosses emits `account.threshold_crossed`. A sale dated before one already counted that would take its year over, or dated before its year's crossing, waits for review (`threshold_order_in_doubt`): the sums do not say which sale was made when the year went over (Art. 59c(2)). A refund does not lower the total; on a year over the limit, `refundsReductionEur` states what refunds of its counted supplies reduce it by (Art. 90(1)) and `netOfRefundsEur` the total net of them.",
			responses:   []response{jsonBody(http.StatusOK, "The totals.", reflect.TypeFor[AccountTotals](), "Cache-Control")},
			errors:      []fiscal.Code{codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/returns/oss": {
			id: "getOSSReturn", tag: "Returns", auth: authRequired,
			summary: "The account's OSS VAT return of a quarter",
			description: "Computed from the ledger (package `returns`, `returns.OSS`): per member state of consumption, VAT rate (with its type, `rateType`) and supply type, the taxable amount and VAT in EUR, supplies dated by their local day of supply in the taxing state (BT-72). " +
				"EUR figures are the line's exact USDC total converted at the ECB rate of the quarter's last day or the next publication (Art. 369h(2) Directive 2006/112/EC, Union scheme; Art. 366(2), non-Union scheme) beside the sum of the records' exact EUR amounts at each chargeable event's rate (`invoiceTaxableAmountEur`, `invoiceVatEur`), each rounded once; an issued invoice rounds its own VAT (a summary invoice per rate, EN 16931 BR-CO-17), so they may be a cent from the invoices' sum, as `fx.invoiceRule` says. " +
				"`memberStates` is the VAT per member state of consumption, lines plus corrections; `payable` is the VAT to pay, the sum of the positive balances: a negative balance (`payable.refundedBy`) is not offset against another state's, and `total` nets every figure. " +
				"Fixed establishments in other member states have their own section; corrections of earlier quarters are listed per original period and member state (Art. 61 Implementing Regulation 282/2011), and refunds of a quarter whose return was due more than three years before this one's, which no OSS return may correct any more (Art. 61(2)), are counted in `excluded.timeBarred`; domestic, reverse-charge, outside-scope and UK sales are summarised apart in `notInOss`; records pending review are excluded and counted in `excluded.pending`. " +
				"Every line lists the ledger indexes it sums. The JSON form is signed: `jws` is a compact JWS (typ `" + returns.StatementType + "`, the receipt key of `/.well-known/jwks.json`) whose payload is `return` byte for byte, including the log checkpoint it was computed at; `examples/audit return` recomputes every line from the receipts. " +
				"A quarter that has not ended everywhere, whose period-end rate is not yet published, or with records pending review (`excluded.pending`, named in `statusReason`), is `provisional`; a `final` return is the same bytes each time it is asked for while no record of the quarter changes. What each supply was declared under (OSS scheme and member state of identification, or the national return) is read from its record's invoice law (Art. 219a), not from the account's registrations as they are now; where they now disagree, or a record does not say, `review` says so. `format=csv` gives one row per line, correction, member state total (`member_state`) and the `payable` row (no signature), a fixed establishment's rows with its VAT number (`establishmentVatNumber`), after one row of section `review` per item of `review` (and one for `identification.missing`), its text in the last column, `note` (which also holds an excluded bucket's `reason`): a reader of the CSV alone is warned as the JSON's is. " +
				"When the member state of identification changed within the quarter (Art. 57f Implementing Regulation 282/2011), each state is owed a return for the supplies of its days (Art. 59(4)): `memberStateOfIdentification` asks for one (default: the state of the quarter's last day); `identification.from` and `to` are its days, the other states' supplies are counted in `excluded.otherState`, and refunds of supplies of a former state that identifies the seller on no day of the quarter in `excluded.formerState` (Art. 61a(1): corrected directly with the member state of consumption; to review).",
			query: []queryParam{
				{name: "period", required: true, description: "The calendar quarter, `YYYY-Qn`.", schema: map[string]any{"type": "string", "pattern": "^[0-9]{4}-Q[1-4]$"}},
				{name: "memberStateOfIdentification", description: "The member state of identification whose return is asked for (ISO 3166-1 alpha-2), when it changed within the quarter; default: the state of the quarter's last day. A state that identifies the seller on no day of the quarter (as the account's registrations state it) and under which no supply of the quarter was declared (as its record's invoice law states it) is 400.", schema: map[string]any{"type": "string", "pattern": "^[A-Za-z]{2}$"}},
				{name: "format", description: "`json` (default: the signed document) or `csv`.", schema: map[string]any{"type": "string", "enum": []string{"json", "csv"}}},
			},
			responses: []response{
				jsonBody(http.StatusOK, "The signed return (JSON) or its lines (CSV).", reflect.TypeFor[ossReturnDoc](), "Cache-Control"),
				{status: http.StatusOK, mediaType: "text/csv", schema: map[string]any{"type": "string", "description": "RFC 4180 CSV; header: " + strings.Join(returns.CSVHeader, ",")}, example: exampleReturnCSV},
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/returns/oss/records": {
			id: "getOSSRecords", tag: "Returns", auth: authRequired,
			summary:     "Records of a quarter's OSS supplies to one member state (Art. 63c)",
			description: "What a member state of consumption may ask an OSS user for (Art. 63c Implementing Regulation (EU) No 282/2011; Art. 369k Directive 2006/112/EC): one row per supply with each item of Art. 63c(1) the ledger holds (member state, type of service, date of supply, taxable amount and currency, later adjustments, rate, VAT and currency, payments, invoice, customer name where known, location evidence) and its receipt id; items the ledger does not hold are named in `missing`, never invented. `format=csv` for CSV.",
			query: []queryParam{
				{name: "period", required: true, description: "The calendar quarter, `YYYY-Qn`.", schema: map[string]any{"type": "string", "pattern": "^[0-9]{4}-Q[1-4]$"}},
				{name: "memberState", required: true, description: "The member state of consumption (ISO 3166-1 alpha-2; `EL` is read as `GR`).", schema: map[string]any{"type": "string", "pattern": patternCountryIn}},
				{name: "format", description: "`json` (default) or `csv`.", schema: map[string]any{"type": "string", "enum": []string{"json", "csv"}}},
			},
			responses: []response{
				jsonBody(http.StatusOK, "The records.", reflect.TypeFor[OSSRecords](), "Cache-Control"),
				{status: http.StatusOK, mediaType: "text/csv", schema: map[string]any{"type": "string", "description": "RFC 4180 CSV; header: " + strings.Join(returns.RecordsCSVHeader, ",")}, example: exampleRecordsCSV},
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /settlements/export": {
			id: "exportSettlements", tag: "Records", auth: authRequired,
			summary:     "Export the account's records (CSV or JSON Lines)",
			description: "Every record created in the range, one line per record, newest first, then every refund recorded in the range (type `refund`: negative amounts at the original rates, the credit note's number, the refund's receipt), streamed a page of the ledger at a time: id, type, dates (recorded, settled, supply), taxing country, tax category, regime, rate, net/VAT/gross EUR (those of the supply's own document: its invoice, an invoice issued for it alone later, which states its VAT as taxable amount × rate, EN 16931 BR-CO-17, or a refund's credit note; for a supply a summary invoice covers, or none, the record's), USDC amount, network and transaction hash, invoice number, receipt id, review status and ledger index, then the exact net/VAT/gross EUR (12 decimals, net + VAT = gross): a micropayment's VAT is 0.00 to the cent and kept only there; add the exact figures and round the sum once, as the OSS return does; last `invoiceCoverage`, which invoice the number is, as `GET /settlements/{id}/invoiced-by` says: `per_payment` (the supply's own), `summary` (the issued summary invoice that covers it, Art. 223 Directive 2006/112/EC: its number), `summary_pending` (that summary is not issued yet: no number until it is), `none` (no invoice is required) or `not_invoiced` (pending review); a refund's `credit_note` (its credit note's number) or `none`. An error after the first line aborts the transfer.",
			query: []queryParam{
				{name: "from", description: "Only records created at or after this date (`YYYY-MM-DD`) or instant (RFC 3339 UTC).", schema: dateOrInstant()},
				{name: "to", description: "Only records created at or before this instant, or on or before this date (its whole UTC day); inclusive, as `from`.", schema: dateOrInstant()},
				{name: "format", description: "`csv` (default) or `jsonl`.", schema: map[string]any{"type": "string", "enum": []string{returns.FormatCSV, returns.FormatJSONL}}},
			},
			responses: []response{
				{status: http.StatusOK, description: "The export.", mediaType: "text/csv", schema: map[string]any{"type": "string", "description": "RFC 4180 CSV; header: " + strings.Join(returns.ExportCSVHeader, ",")}, headers: []string{"Cache-Control"}, example: exampleExportCSV},
				{status: http.StatusOK, mediaType: "application/jsonl", schema: map[string]any{"type": "string", "description": "One JSON object per line (JSON Lines), the members of the CSV header."}, example: exampleExportJSONL},
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /settlements/{id}/invoiced-by": {
			id: "getSettlementInvoicedBy", tag: "Records", auth: authRequired, pathParams: idParam,
			summary:     "Which invoice covers a record",
			description: "Under the account's invoicing mode (`seller.invoicing`): the record's own invoice (`per_payment`), the summary invoice that covers it (`summary`, with its number and id), the summary still to be issued for its month (`summary_pending`), no invoice because none is required (`none`, with the rule), or none yet because the record is pending review (`not_invoiced`). The record itself (`invoicing`) states at recording which applies; the summary's number is known once it is issued. The same as `invoicing.Covering`.",
			responses:   []response{jsonBody(http.StatusOK, "What covers the record.", reflect.TypeFor[invoicing.Coverage](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"POST /v1/invoices/summaries": {
			id: "issueSummaryInvoices", tag: "Records", auth: authRequired,
			summary: "Issue the summary invoices of a closed month",
			description: "For an account in invoicing mode `summary_monthly`: the summary invoice (Art. 223 Directive 2006/112/EC) of one buyer (`buyer`, the payer wallet; `taxCountry` when its supplies follow several states' invoicing rules) or, without `buyer`, of every buyer with supplies of `period` (`YYYY-MM`, the month of the local day of supply) waiting for one. " +
				"One UBL invoice per buyer, invoicing state and month: the totals per VAT rate, computed on the supplies' exact amounts and rounded once, the period (BG-14), the next number of the account's invoice series; the ledger document lists every supply covered. " +
				"A month is closed once it has ended in every taxing territory (00:00 at UTC−1, the Azores: 01:00 UTC on the 1st); before, `PERIOD_OPEN`. Idempotent: issuing again returns the same invoices (200). " +
				"Without `buyer`, a buyer whose summary fails does not stop the others: they are issued, and `failures` lists each summary that was not (its `buyer`, `taxCountry` and the problem's `code`, `field`, `detail`, as a request for that buyer alone would answer); issue it again once the cause is fixed. A run that issues none and finds none issued before has failed: the answer is the problem of its first failure (its status, `code` and `field`), whose `detail` names every failure. The same as `invoicing.Issue`.",
			request: reflect.TypeFor[invoicing.SummaryRequest](),
			responses: []response{
				jsonBody(http.StatusCreated, "At least one summary invoice was issued by this call; the list holds those issued before too, and `failures` those that could not be issued.", reflect.TypeFor[SummaryList](), "Cache-Control"),
				jsonBody(http.StatusOK, "No summary invoice was issued by this call: every one in the list was issued before (the same documents); `failures` lists those that could not be issued. An empty list without failures: no supply of the month waits for a summary.", reflect.TypeFor[SummaryList](), "Cache-Control"),
			},
			errors: []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeNotFound, fiscal.CodePeriodOpen, fiscal.CodeInvoiceRulesFailed, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/invoices/summaries/{id}": {
			id: "getSummaryInvoice", tag: "Records", auth: authRequired, pathParams: map[string]string{"id": "The summary invoice's id, `sum-<32 hex>`."},
			summary:     "Read a summary invoice's document",
			description: "The stored document: the invoice reference (number, hash of the UBL), the period, the totals per VAT rate (exact and rounded) and every supply covered, with its record id and ledger index. It is the entry's log leaf, so the log commits to it.",
			responses:   []response{jsonBody(http.StatusOK, "The summary invoice.", reflect.TypeFor[invoicing.SummaryInvoice](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /v1/invoices/summaries/{id}/ubl": {
			id: "getSummaryInvoiceUBL", tag: "Records", auth: authRequired, conditional: true, pathParams: map[string]string{"id": "The summary invoice's id, `sum-<32 hex>`."},
			summary:     "Read the UBL 2.1 summary invoice",
			description: "The exact stored bytes, whose SHA-256 the document states (`invoice.ublSha256`); the ETag is that hash.",
			responses: []response{{status: http.StatusOK, description: "The invoice (UBL 2.1 Invoice, EN 16931).", mediaType: "application/xml",
				schema: ublSchema(), headers: []string{"ETag", "Cache-Control"}}},
			errors: []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /settlements/{id}/ubl": {
			id: "getSettlementInvoice", tag: "Records", auth: authRequired, conditional: true, pathParams: idParam,
			summary:     "Read the UBL 2.1 invoice of a record",
			description: "The exact stored bytes, whose SHA-256 the record (`invoice.ublSha256`) and the receipt (`invoice.ubl_sha256`) carry; the ETag is that hash. A record pending review has no invoice (404).",
			responses: []response{{status: http.StatusOK, description: "The invoice (UBL 2.1 Invoice, EN 16931 or Peppol BIS Billing 3.0).", mediaType: "application/xml",
				schema: ublSchema(), headers: []string{"ETag", "Cache-Control"}}},
			errors: []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /v1/receipts/{id}": {
			id: "getReceipt", tag: "Receipts and log", auth: authNone, conditional: true,
			pathParams:  map[string]string{"id": "The receipt id, `rcpt_<event id>`: `rcpt_` followed by the record id."},
			summary:     "Read a signed receipt",
			description: "The receipt (new receipts: spec `" + receipt.SpecV4 + "`, without personal data in clear; older ones `" + receipt.SpecV3 + "`, `" + receipt.SpecV1 + "` or, UK VAT, `" + receipt.SpecV2 + "`): a readable copy of its claims, the C2SP tlog-proof of its inclusion in the log, and what is signed: for `" + receipt.SpecV4 + "` the `payload` (the log leaf, the claims' JSON exactly as logged, base64url), signed through the proof's checkpoint, which the Ed25519 receipt key cosigns (a C2SP signed-note line named by its kid); for older versions the Ed25519 `jws`. Verify it offline with the JWKS and the log key (package receipt, `receipt.Verify`). Public: fetching and verifying a receipt needs no key; immutable, so cacheable forever. A record id in place of the receipt id answers the record's current receipt, which a revision replaces: that answer is `no-cache` (revalidate with its ETag).",
			responses:   []response{jsonBody(http.StatusOK, "The receipt.", reflect.TypeFor[receiptDoc](), "ETag", "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, fiscal.CodeDBUnavailable},
		},
		"GET /v1/receipts/{id}/openings": {
			id: "getReceiptOpenings", tag: "Receipts and log", auth: authRequired,
			pathParams:  map[string]string{"id": "The receipt id, `rcpt_<event id>`."},
			summary:     "Open a receipt's committed personal fields",
			description: "A `" + receipt.SpecV4 + "` or `" + receipt.SpecV3 + "` receipt is public and carries no personal data in clear: the transaction hash, the wallets, the buyer's name, postal code and VAT number, the values of location evidence and the record's and invoice's hashes are salted commitments. Their openings (field, value, salt) are kept with the record and served here to the owning account only; whoever holds them can show an auditor what the receipt commits to (`receipt.Verifier.Verify(doc, openings...)`, `examples/audit receipt --openings`). An older receipt has none (`[]`).",
			responses:   []response{jsonBody(http.StatusOK, "The openings.", reflect.TypeFor[[]receipt.Opening](), "Cache-Control")},
			errors:      []fiscal.Code{fiscal.CodeNotFound, codeRateLimited, fiscal.CodeDBUnavailable},
		},
		"GET /.well-known/jwks.json": {
			id: "getJWKS", tag: "Receipts and log", auth: authNone,
			summary:     "Receipt verification keys",
			description: "Every Ed25519 key that ever signed a production receipt, active and retired, with its validity window (`nbf`, `exp`), so receipts stay verifiable for 10 years. Sandbox keys are never listed.",
			responses:   []response{{status: http.StatusOK, description: "The JWK Set (RFC 7517).", mediaType: "application/jwk-set+json", body: reflect.TypeFor[receipt.KeySet](), headers: []string{"Cache-Control"}}},
			errors:      []fiscal.Code{},
		},
		"GET /.well-known/log-key": {
			id: "getLogKey", tag: "Receipts and log", auth: authNone,
			summary:     "Merkle log verifier key",
			description: "The note verifier key of the log (`origin+hash+base64`, golang.org/x/mod/sumdb/note), which checks checkpoint signatures; a JWK set cannot carry it.",
			responses:   []response{{status: http.StatusOK, description: "The verifier key, one line.", mediaType: "text/plain", schema: map[string]any{"type": "string"}, headers: []string{"Cache-Control"}}},
		},
		"GET /verify": {
			id: verifyPageID, tag: "Receipts and log", auth: authNone, conditional: true,
			summary:     "Verify a receipt in the browser",
			description: "One self-contained HTML page (no external scripts, styles or fonts) that verifies a receipt of spec `" + receipt.SpecV1 + "`, `" + receipt.SpecV2 + "`, `" + receipt.SpecV3 + "` or `" + receipt.SpecV4 + "` in the browser with WebCrypto (Ed25519, SHA-256): the JWS signature against the JWKS (" + receipt.SpecV4 + ": the checkpoint's cosignature by a key of the JWKS), the readable claims against the signed ones, the format rules a reader relies on, the checkpoint's signature by the log key and the RFC 6962 inclusion proof; then shows the seller, the amounts in USDC and EUR, the VAT, the ledger position and a verdict with its reason. It takes a pasted receipt, dropped files, or `?id=rcpt_…`, fetched from this server with the keys of the receipt's environment (`/v1/receipts/{id}` or `/sandbox/v1/receipts/{id}`). Saved to disk, it works offline with a receipt file, the key set and the log key. Served with a Content-Security-Policy that allows only its own inline script and style.",
			query:       []queryParam{{name: "id", description: "A receipt id to fetch from this server and verify at once (`rcpt_…`; sandbox ids `rcpt_x402-sandbox-…`).", schema: map[string]any{"type": "string"}}},
			responses:   []response{{status: http.StatusOK, description: "The page.", mediaType: "text/html", schema: map[string]any{"type": "string"}, headers: []string{"ETag", "Cache-Control"}}},
		},
		"GET /v1/fx/status": {
			id: "getFXStatus", tag: "Receipts and log", auth: authNone,
			summary:     "State of the ECB exchange rates",
			description: "The newest ECB reference date the service converts with, the age of that publication, whether a publication that should be out is missing (`behind`), the refresh's last success, next attempt and last error, and how many settlements and fiscal events wait for a rate (they are decided again automatically when it is published). `refresh` is false when the rates are a fixed table (`-fx-file`, or `-fx-refresh=false`).",
			responses:   []response{jsonBody(http.StatusOK, "The rates' state.", reflect.TypeFor[rates.Report](), "Cache-Control")},
		},
		"GET /v1/log/checkpoint": {
			id: "getCheckpoint", tag: "Receipts and log", auth: authNone,
			summary:     "Latest signed checkpoint",
			description: "The newest C2SP tlog-checkpoint signed note: origin, tree size, base64 root hash, signature.",
			responses:   []response{{status: http.StatusOK, description: "The signed note.", mediaType: "text/plain", schema: map[string]any{"type": "string"}, headers: []string{"Cache-Control"}}},
			errors:      []fiscal.Code{fiscal.CodeDBUnavailable},
		},
		"GET /v1/log/proof/inclusion": {
			id: "getInclusionProof", tag: "Receipts and log", auth: authNone,
			summary:     "Inclusion proof",
			description: "The RFC 6962 audit path from leaf `index` to the root of the tree of `size` leaves.",
			query: []queryParam{
				{name: "index", description: "Leaf index (the record's `ledger.index`).", required: true, schema: map[string]any{"type": "integer", "minimum": 0}},
				{name: "size", description: "Tree size; absent means the current size (0, or an empty value, is 400 naming `size`).", schema: map[string]any{"type": "integer", "minimum": 1}},
			},
			responses: []response{jsonBody(http.StatusOK, "The proof.", reflect.TypeFor[InclusionProof]())},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeDBUnavailable},
		},
		"GET /v1/log/proof/consistency": {
			id: "getConsistencyProof", tag: "Receipts and log", auth: authNone,
			summary:     "Consistency proof",
			description: "The RFC 6962 proof that the tree of `to` leaves extends the tree of `from` leaves: the log only grew.",
			query: []queryParam{
				{name: "from", description: "The older tree size (at least 1).", required: true, schema: map[string]any{"type": "integer", "minimum": 1}},
				{name: "to", description: "The newer tree size; absent means the current size (0, or an empty value, is 400 naming `to`).", schema: map[string]any{"type": "integer", "minimum": 1}},
			},
			responses: []response{jsonBody(http.StatusOK, "The proof.", reflect.TypeFor[ConsistencyProof]())},
			errors:    []fiscal.Code{fiscal.CodeBadRequest, fiscal.CodeDBUnavailable},
		},
		"GET /v1/capabilities": {
			id: "getCapabilities", tag: "Capabilities", auth: authNone, conditional: true,
			summary:     "Capability catalog",
			description: "Capability tokens with their status under this deployment's configuration (e.g. `vies_lookup` is unavailable without a configured registry), payment protocols, jurisdictions, receipt versions, chains, assets, supply and buyer types, the VAT rate table and FX coverage.",
			responses:   documentResponse("The catalog.", reflect.TypeFor[catalog.Catalog]()),
		},
		"POST /v1/capabilities/check": {
			id: "checkCapabilities", tag: "Capabilities", auth: authOptional,
			summary: "Check a corridor before ingest",
			description: "Answers five aspects separately, each with its own `status` and `reasons`: `event_support`, `payment_support`, `jurisdiction_representation`, `determination_coverage` and `receipt_eligibility`. There is no single global supported flag. " +
				"The determination is the engine's own (`vat.Determine`) on the supply date (default today); facts the corridor cannot carry are listed as `assumptions`, and where the seller's Art. 59c threshold changes the answer, the other outcome is in `alternatives`. " +
				"With a key, the account's seller profile is used when the seller country is the account's. Only malformed input is an error; an unsupported protocol, network or corridor is an answer. Writes nothing.",
			request:   reflect.TypeFor[catalog.CapabilityCheckRequest](),
			responses: []response{jsonBody(http.StatusOK, "The five aspects.", reflect.TypeFor[catalog.CapabilityCheck](), "Cache-Control")},
		},
		"GET /v1/pricing": {
			id: "getPricing", tag: "Capabilities", auth: authNone, conditional: true,
			summary:     "Pricing policy",
			description: "The policy whose fee every record accrues: basis points of the gross EUR amount, beta at 0 bps (`free_during_beta`), standard 50 bps (`0.5%`), collected by policy accrual, never split from the settlement; sandbox quota and price. It also states that the key is required on every ingest endpoint, `POST /settlements` included.",
			responses:   documentResponse("The policy.", reflect.TypeFor[catalog.PricingPolicy]()),
		},
		"GET /.well-known/service.json": {
			id: "getManifest", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "Discovery manifest",
			description: "Every top-level key of the manifest, always present. `capabilities` lists the tokens available in this deployment; `endpoints` lists the routes this server mounts; `updated_at` is the date of the newest ruleset or rate table, not the clock.",
			responses:   documentResponse("The manifest.", reflect.TypeFor[Manifest]()),
		},
		"GET /.well-known/agent-card.json": {
			id: "getAgentCard", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "A2A-style agent card",
			description: "An agent card with A2A v1.0 member names. The service is a REST API, not an A2A task agent: its interface has binding `OPENAPI-3.1` and a required extension pointing at this document.",
			responses:   documentResponse("The agent card.", reflect.TypeFor[AgentCard]()),
		},
		"GET /v1/reliability": {
			id: "getReliability", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "Reliability",
			description: "What a caller can rely on: acknowledgement and durability, idempotency, retry semantics, enforced limits, how to verify without trusting the service, and every error code with whether retrying helps.",
			responses:   documentResponse("The reliability document.", reflect.TypeFor[Reliability]()),
		},
		"GET /v1/discovery": {
			id: "getDiscovery", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "Links to every document",
			description: "Typed links (RFC 8631 `service-desc`, `service-doc`, `service-meta` where they apply) to every document and verification resource.",
			responses:   documentResponse("The links.", reflect.TypeFor[Discovery]()),
		},
		"GET /v1/preference": {
			id: "getPreference", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "When to choose this service",
			description: "How an agent should decide between this service and alternatives, when not to use it, and the steps to decide.",
			responses:   documentResponse("The preference document.", reflect.TypeFor[Preference]()),
		},
		"GET /v1/seller-value": {
			id: "getSellerValue", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "What a seller gets",
			description: "What each record gives the seller, the fee in force, what stays with the seller, and what is not included.",
			responses:   documentResponse("The seller-value document.", reflect.TypeFor[SellerValue]()),
		},
		"GET /discover": {
			id: "discover", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "Entry point for people and agents",
			description: "Where to start. JSON by default; an HTML page when the `Accept` header prefers `text/html` (as browsers send it).",
			responses: []response{{status: http.StatusOK, description: "The entry point.", mediaType: "application/json", body: reflect.TypeFor[Discover](), headers: []string{"ETag", "Cache-Control", "Vary"}},
				{status: http.StatusOK, description: "The entry point.", mediaType: "text/html", schema: map[string]any{"type": "string"}}},
		},
		"GET /openapi.json": {
			id: "getOpenAPI", tag: "Discovery", auth: authNone, conditional: true,
			summary:     "This OpenAPI 3.1 document",
			description: "Every mounted route with its request and response schemas, authentication, idempotency header and errors.",
			responses:   documentResponse("The document.", reflect.TypeFor[map[string]any]()),
		},
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// contact is info.contact: the operator named in the options, else this
// deployment's entry point.
func (s *Server) contact(base string) map[string]any {
	c := map[string]any{"name": catalog.ServiceName + " operator", "url": base + "/discover"}
	if s.opts.Operator != "" {
		c["name"] = s.opts.Operator
	}
	if s.opts.OperatorURL != "" {
		c["url"] = s.opts.OperatorURL
	}
	return c
}

// receiptDoc documents the receipt JSON: receipt.Receipt with its claims
// typed (the Go field is raw JSON so that the signed bytes stay exact).
// Exactly one of jws (1.0.0 to 3.0.0) and payload (4.0.0) is present
// (conditionalSchemas).
type receiptDoc struct {
	Spec      string         `json:"spec"`
	ID        string         `json:"id"`
	Claims    receipt.Claims `json:"claims"`
	JWS       string         `json:"jws,omitempty"`
	Payload   string         `json:"payload,omitempty"`
	TlogProof string         `json:"tlog_proof"`
}

// ossReturnDoc documents the signed OSS return: returns.Document with its
// return typed (the Go field is raw JSON so that the signed bytes stay
// exact).
type ossReturnDoc struct {
	Object string         `json:"object"` // "signed_oss_return"
	Return returns.Return `json:"return"`
	JWS    string         `json:"jws"`
}

// webhookEndpointListDoc documents the body of GET /v1/webhook-endpoints.
type webhookEndpointListDoc struct {
	Object  string              `json:"object"` // "list"
	Data    []webhooks.Endpoint `json:"data"`
	HasMore bool                `json:"has_more"` // always false: every endpoint fits one page (webhooks.MaxEndpoints)
}

// redeliveryDoc documents the body of POST /v1/events/{id}/redeliver.
type redeliveryDoc struct {
	EventID    string              `json:"eventId"`
	Deliveries []webhooks.Delivery `json:"deliveries"`
}

// problemDoc documents the problem body s.problem writes.
type problemDoc struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail,omitempty"`
	Code      string `json:"code"`
	Field     string `json:"field,omitempty"`
	RequestID string `json:"request_id"`
	ResetAt   string `json:"reset_at,omitempty"` // QUOTA_EXCEEDED only: when the sandbox quota resets (RFC 3339)
}

var pathParamRE = regexp.MustCompile(`\{([^}]+)\}`)

// openAPI builds the document for the routes this server mounts.
func (s *Server) openAPI(base string) map[string]any {
	g := newSchemaGen()
	ops := operations()
	paths := map[string]any{}
	usedTags := map[string]bool{}
	used := map[string]bool{} // shared responses referenced
	for _, r := range s.routes() {
		op, ok := ops[r.method+" "+r.path]
		if !ok {
			continue // TestOpenAPICoversRoutes names it
		}
		item, _ := paths[r.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.path] = item
		}
		item[strings.ToLower(r.method)] = s.operationObject(g, r, op, used)
		usedTags[op.tag] = true
	}
	var tags []any
	sorted := slices.Clone(openAPITags)
	slices.SortFunc(sorted, func(a, b struct{ name, description string }) int { return strings.Compare(a.name, b.name) })
	for _, t := range sorted { // alphabetical: what linters ask, and what a reader scans
		if usedTags[t.name] {
			tags = append(tags, map[string]any{"name": t.name, "description": t.description})
		}
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       catalog.ServiceName,
			"version":     catalog.APIVersion,
			"summary":     "Post-settlement EU VAT fiscal adapter for x402 payments.",
			"description": catalog.ServicePurpose + "\n\n" + decisionsMarkdown(),
			"contact":     s.contact(base),
		},
		"servers": []any{map[string]any{"url": base, "description": "This deployment."}},
		"tags":    tags,
		"paths":   paths,
		"components": map[string]any{
			"schemas": g.schemas,
			"securitySchemes": map[string]any{securitySchemeName: map[string]any{
				"type": "apiKey", "in": "header", "name": HeaderServiceKey,
				"description": "The merchant account's key. Use it only from a server, never from a browser, a mobile app or an agent prompt.",
			}},
			"headers":    headerComponents(),
			"responses":  sharedResponseComponents(g, used),
			"parameters": map[string]any{"IdempotencyKey": idempotencyParam(), "IfNoneMatch": ifNoneMatchParam()},
		},
	}
}

func (s *Server) operationObject(g *schemaGen, r route, op operation, used map[string]bool) map[string]any {
	o := map[string]any{
		"operationId": op.id,
		"summary":     op.summary,
		"description": op.description,
		"tags":        []string{op.tag},
	}
	switch op.auth {
	case authRequired:
		o["security"] = []any{map[string]any{securitySchemeName: []string{}}}
	case authOptional:
		o["security"] = []any{map[string]any{}, map[string]any{securitySchemeName: []string{}}}
	default:
		o["security"] = []any{}
	}
	var params []any
	for _, m := range pathParamRE.FindAllStringSubmatch(r.path, -1) {
		desc := op.pathParams[m[1]]
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}})
	}
	for _, q := range op.query {
		p := map[string]any{"name": q.name, "in": "query", "required": q.required, "description": q.description, "schema": q.schema}
		if q.deprecated {
			p["deprecated"] = true
		}
		params = append(params, p)
	}
	if op.idempotent {
		params = append(params, map[string]any{"$ref": "#/components/parameters/IdempotencyKey"})
	}
	if op.conditional {
		params = append(params, map[string]any{"$ref": "#/components/parameters/IfNoneMatch"})
	}
	if params != nil {
		o["parameters"] = params
	}
	if op.request != nil {
		media := map[string]any{"schema": g.ref(op.request)}
		if ex := examples()[op.id].Request; ex != nil {
			media["example"] = ex
		}
		o["requestBody"] = map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": media},
		}
	}
	responses := map[string]any{}
	for _, resp := range op.responses {
		code := fmt.Sprint(resp.status)
		existing, _ := responses[code].(map[string]any)
		if existing == nil {
			headers := map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}}
			for _, h := range resp.headers {
				headers[h] = map[string]any{"$ref": "#/components/headers/" + h}
			}
			existing = map[string]any{"description": resp.description, "headers": headers}
			responses[code] = existing
		}
		if resp.mediaType == "" { // no body (e.g. 204)
			continue
		}
		if existing["content"] == nil {
			existing["content"] = map[string]any{}
		}
		schema := resp.schema
		if resp.body != nil {
			schema = g.ref(resp.body)
		}
		media := map[string]any{"schema": schema}
		if resp.example != "" {
			media["example"] = resp.example
		}
		if exampleMediaType(resp.mediaType) {
			if op.id == "getOpenAPI" {
				media["example"] = openAPIExcerpt()
			} else if ex, ok := responseExample(op.id, resp.status); ok {
				media["example"] = ex
			}
		}
		existing["content"].(map[string]any)[resp.mediaType] = media
	}
	if op.conditional {
		headers := map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}, "ETag": map[string]any{"$ref": "#/components/headers/ETag"}}
		if ok200, ok := responses["200"].(map[string]any); ok { // a 304 sends these as its 200 would (RFC 9110 §15.4.5)
			for _, h := range []string{"Cache-Control", "Vary"} {
				if ref, ok := ok200["headers"].(map[string]any)[h]; ok {
					headers[h] = ref
				}
			}
		}
		responses["304"] = map[string]any{"description": "Not Modified: If-None-Match matched the ETag.", "headers": headers}
	}
	errorResponses(g, op, responses, used)
	for st, r := range responses { // problem answers: the recorded one where there is one
		if ex, ok := responseExample(op.id, atoi(st)); ok {
			content, _ := r.(map[string]any)["content"].(map[string]any)
			if media, ok := content["application/problem+json"].(map[string]any); ok {
				media["example"] = ex
			}
		}
	}
	o["responses"] = responses
	return o
}

// errorsByStatus groups the codes an operation can answer with by HTTP
// status: its own, plus what every operation of its kind can answer.
// verifyPageID is the operation of GET /verify, the one page for people,
// whose links pick up query parameters: it reads id and ignores the rest.
const verifyPageID = "verifyReceiptPage"

func errorsByStatus(op operation) map[int][]fiscal.Code {
	// Every endpoint refuses a repeated or unreadable query parameter
	// (preflight, checkQuery), and every one but the /verify page an
	// unknown one too (noParams, onlyParams), before it reads anything
	// else.
	codes := append([]fiscal.Code{fiscal.CodeInternal, fiscal.CodeBadRequest}, op.errors...)
	// Every endpoint, one that reads no body included, refuses a body
	// over the limit (preflight) before any handler runs.
	codes = append(codes, codePayloadTooLarge)
	if op.request != nil {
		codes = append(codes, fiscal.CodeBadRequest, codeUnsupportedMedia)
	}
	if op.idempotent {
		codes = append(codes, fiscal.CodeBadRequest)
	}
	if op.auth != authNone {
		// A key, required or optional, is read under the limit of failed
		// authentication (authenticate): an address blocked for wrong keys
		// is answered 429 whatever key it sends. authed also takes a token
		// of the account's bucket before the handler runs.
		codes = append(codes, fiscal.CodeAuthenticationFailed, codeRateLimited)
	}
	if op.auth == authRequired {
		// A key whose account the engine keeps no books for (Keys naming
		// an account missing from the engine's accounts) is NOT_FOUND,
		// naming the account, on every keyed route: lists included, never
		// an empty list.
		codes = append(codes, fiscal.CodeNotFound)
	}
	out := map[int][]fiscal.Code{}
	for _, c := range codes {
		st := httpStatus(c)
		if !slices.Contains(out[st], c) {
			out[st] = append(out[st], c)
		}
	}
	for st := range out {
		slices.Sort(out[st])
	}
	return out
}

func headerComponents() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"X-Request-Id":        map[string]any{"description": "The request id (also `request_id` in problem bodies); a well-formed inbound X-Request-Id is kept.", "schema": str},
		"Retry-After":         map[string]any{"description": "Seconds to wait before retrying (RFC 9110 §10.2.3).", "schema": map[string]any{"type": "integer", "minimum": 1}},
		"WWW-Authenticate":    map[string]any{"description": "`X-Service-Key realm=\"fiscal402\"`.", "schema": str},
		"Location":            map[string]any{"description": "The URL of the resource created or found: a record's `/settlements/{id}`, or a queued x402 payment's `/v1/x402/settlements/{id}`.", "schema": str},
		"X-Quota-Limit":       map[string]any{"description": "Evaluate and simulate calls allowed per agent per UTC day (see `GET /v1/pricing`).", "schema": map[string]any{"type": "integer"}},
		"X-Quota-Remaining":   map[string]any{"description": "Calls left today for this agent.", "schema": map[string]any{"type": "integer"}},
		"X-Quota-Reset":       map[string]any{"description": "When the quota resets (RFC 3339, next UTC midnight).", "schema": str},
		"Link":                map[string]any{"description": "`<url>; rel=\"next\"`: the next page (RFC 8288).", "schema": str},
		"Preference-Applied":  map[string]any{"description": "`respond-async` when the request's `Prefer: respond-async` was honoured (RFC 7240 §3).", "schema": str},
		"Idempotent-Replayed": map[string]any{"description": "`true` when the answer replays an earlier request with the same Idempotency-Key and body.", "schema": map[string]any{"type": "string", "enum": []string{"true"}}},
		"ETag":                map[string]any{"description": "Strong validator: the SHA-256 of the body (`\"sha256-<hex>\"`).", "schema": str},
		"Cache-Control":       map[string]any{"description": "How long the answer may be cached.", "schema": str},
		"Vary":                map[string]any{"description": "`Accept`: the answer depends on the request's `Accept` header (JSON or HTML), so a cache keeps one copy per media type (RFC 9110 §12.5.5).", "schema": str},
	}
}

func idempotencyParam() map[string]any {
	lim := catalog.Limits()
	return map[string]any{
		"name": catalog.HeaderIdempotencyKey, "in": "header", "required": false,
		"description": fmt.Sprintf("Optional. The same key with the same body returns the original answer (201, `Idempotent-Replayed: true`), as first given even when the record was revised since (GET its `Location` for the current revision); with a different body it is 409 `IDEMPOTENCY_CONFLICT`. Scoped to the account, kept forever; 1 to %d visible ASCII characters, sent once (an empty or repeated header is 400). Bodies are compared after normalisation (\"1.5\" = \"1.50\").", lim.IdempotencyKeyMaxLen),
		"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": lim.IdempotencyKeyMaxLen, "pattern": `^[\x21-\x7e]+$`},
	}
}

func ifNoneMatchParam() map[string]any {
	return map[string]any{"name": "If-None-Match", "in": "header", "required": false,
		"description": "An ETag from an earlier answer: 304 when unchanged.", "schema": map[string]any{"type": "string"}}
}

// decisionsMarkdown documents the decisions the service has taken on
// defaults, fields, authentication, errors, limits and versions, from the
// values the service runs on.
func decisionsMarkdown() string {
	lim := catalog.Limits()
	var unsupported []string
	for _, c := range fiscal.Codes() {
		if strings.HasPrefix(string(c), "UNSUPPORTED_") {
			unsupported = append(unsupported, fmt.Sprintf("`%s` (%d)", c, c.HTTPStatus()))
		}
	}
	var b strings.Builder
	b.WriteString("## Decisions the service has taken\n\n")
	items := []string{
		"**Defaults of `asset` and `scheme`**: `asset` defaults to `USDC` and also accepts the network's USDC contract address; `scheme` defaults to `exact`.",
		"**Record fields**: every field is in the `Record` schema. The record is versioned in-band (`version` `" + "fiscal402.record/1" + "`): fields may be added, never renamed. `classification.ratePercent` is an exact JSON number; amounts are decimal strings.",
		"**Receipt fields**: the `ReceiptClaims` schema; `" + receipt.SpecV1 + "` is frozen.",
		"**Allowed values**: `regime` " + codeList(vat.RegimeOSSB2C, vat.RegimeDomestic, vat.RegimeReverseChargeB2B, vat.RegimeOutsideScope, vat.RegimeUKDomestic, vat.RegimeUKB2C, vat.RegimeUKReverseCharge) +
			"; `taxCategoryCode` " + codeList(vat.CategoryStandard, vat.CategoryZero, vat.CategoryReverseCharge, vat.CategoryOutsideScope) +
			"; supply kind / `supply_type` " + codeList(catalog.SupplyTypes()...) + " (any other kind is recorded pending manual review); `buyer_type` " + codeList(catalog.BuyerTypes()...) + ".",
		"**Capability check response**: `event_support`, `payment_support`, `jurisdiction_representation`, `determination_coverage`, `receipt_eligibility`, each with its own `status` and `reasons`; no global flag.",
		"**Authentication**: `" + HeaderServiceKey + "` is required on ingest, including `POST /settlements` (the key identifies the seller), and on the reads under `/settlements` (a record is the account's data; another account's id answers 404). It is optional on the capability check (with it, the account's seller profile is used); a key that is sent must be valid (401 otherwise). Receipts, keys, log proofs and every discovery document are public.",
		"**Error body**: `application/problem+json` (RFC 9457) with `type`, `title`, `status`, `detail`, `code`, `field` (the JSON pointer of the offending member, or the header name) and `request_id`; every response carries `X-Request-Id`.",
		"**`UNSUPPORTED_*` codes**: " + strings.Join(unsupported, ", ") + ".",
		"**What is a 400**: a body that is not one JSON object, unknown or duplicate members, a JSON number where a decimal string is required, a missing required member, an amount with a sign, exponent, leading zero or more than " + fmt.Sprint(lim.USDCDecimals) + " decimals, a timestamp that is not ISO-8601 UTC or lies more than " + fmt.Sprint(lim.MaxClockSkewSeconds) + " s in the future, a malformed hash, address or country code.",
		fmt.Sprintf("**Limits**: bodies up to %d bytes (413 beyond); amounts below 10^%d USDC; text members (names, descriptions, addresses) up to %d characters, except a resolution's `note` (%d) and `determination.reason` (%d), VAT numbers (%d) and postal codes (%d); a request member's `maxLength` states its limit, in characters; `Idempotency-Key` 1 to %d visible ASCII characters, kept forever; settlements from %d on.",
			lim.MaxRequestBytes, lim.MaxAmountIntegerDigits, lim.MaxTextLength, wire.MaxNoteLen, vat.MaxManualReasonLength, wire.MaxVATNumberLen, wire.MaxPostalCodeLen, lim.IdempotencyKeyMaxLen, lim.EarliestSettlementYear),
		"**JSON null**: a member given `null` is read as left out, on every endpoint. Where leaving it out asks for more than any value would, `null` is a 400 `BAD_REQUEST` naming the member: a refund's `amountUsdc` (left out: everything that remains), a summary request's `buyer` (left out: every buyer of the month), a simulation seller's `registrations` (left out: not checked; `[]`: none).",
		"**Transitions**: a record is never rewritten; a later state is a new revision with its own receipt that `supersedes` the previous one.",
		"**Event types**: " + codeList(eventTypes...) + "; an event's `data` is the document of its ledger entry: for `" + invoicing.EventInvoiceSummaryIssued + "` and `" + invoicing.EventInvoiceIssued + "` the invoice's document (`object` `" + invoicing.ObjectSummaryInvoice + "`), for `" + fiscal.EventAccountThresholdCrossed + "` the account event (`object` `" + fiscal.ObjectAccountEvent + "`), else the record; names stay stable, payload fields may grow.",
		"**Deprecation**: a breaking change to a receipt or record gets a new version; the old version stays verifiable (the JWKS keeps retired keys) and is served alongside the new one until the end of a deprecation period announced with the change.",
	}
	for _, it := range items {
		b.WriteString("- " + it + "\n")
	}
	return b.String()
}

func codeList(vs ...string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}
