package httpserver

import (
	"fmt"
	"html"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// The read-only documents the service publishes about itself. Every value
// that states a fact about behaviour (networks, assets, jurisdictions,
// capabilities, fees, limits, error codes, routes) is computed from the
// values the engine and this server run on; only prose is written here.

// Manifest is the discovery manifest, GET /.well-known/service.json:
// every top-level key, in its published order.
type Manifest struct {
	SchemaVersion     string                            `json:"schema_version"`
	Spec              string                            `json:"spec"`
	Name              string                            `json:"name"`
	Description       string                            `json:"description"`
	Category          string                            `json:"category"`
	Protocol          string                            `json:"protocol"`
	Custody           string                            `json:"custody"`
	ProtocolVersion   string                            `json:"protocol_version"`
	TaxRulesetVersion string                            `json:"tax_ruleset_version"`
	UpdatedAt         string                            `json:"updated_at"`
	Capabilities      []string                          `json:"capabilities"`
	ReceiptVersions   map[string]catalog.ReceiptVersion `json:"receipt_versions"`
	PaymentProtocols  []catalog.PaymentProtocol         `json:"payment_protocols"`
	Jurisdictions     []catalog.Jurisdiction            `json:"jurisdictions"`
	SupportedChains   []string                          `json:"supported_chains"`
	SupportedAssets   []catalog.Asset                   `json:"supported_assets"`
	Endpoints         []Endpoint                        `json:"endpoints"`
	Pricing           ManifestPricing                   `json:"pricing"`
	Sandbox           ManifestSandbox                   `json:"sandbox"`
	Security          catalog.Security                  `json:"security"`
	Reliability       ManifestReliability               `json:"reliability"`
	Documentation     Documentation                     `json:"documentation"`
	AgentCard         string                            `json:"agent_card"`
	OpenAPI           string                            `json:"openapi"`
	MCP               MCP                               `json:"mcp"`
	Legal             Legal                             `json:"legal"`
}

// Endpoint is one mounted route.
type Endpoint struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	URL     string `json:"url"`
	Auth    string `json:"auth"` // "key" | "optional" | "none"
	Summary string `json:"summary"`
}

// ManifestPricing is the pricing policy with the address of its document.
type ManifestPricing struct {
	catalog.PricingPolicy
	URL string `json:"url"`
}

// ManifestSandbox describes the sandbox (README "Sandbox", "Limits, quota
// and authentication").
type ManifestSandbox struct {
	SeparateOrigin      bool     `json:"separate_origin"`
	Origin              string   `json:"origin"`
	Prefix              string   `json:"prefix"`
	Endpoints           []string `json:"endpoints"`
	QuotaPerAgentPerDay int      `json:"quota_per_agent_per_day"`
	Price               string   `json:"price"`
	Currency            string   `json:"currency"`
	Watermarked         bool     `json:"watermarked"`
	ProductionRecord    bool     `json:"writes_production_records"`
	Keys                string   `json:"keys"`
}

// ManifestReliability summarises the reliability document.
type ManifestReliability struct {
	URL             string `json:"url"`
	Acknowledgement string `json:"acknowledgement"`
	Idempotency     string `json:"idempotency"`
	Webhooks        string `json:"webhooks"`
}

// Documentation links the service's documents.
type Documentation struct {
	OpenAPI      string `json:"openapi"`
	Discover     string `json:"discover"`
	Discovery    string `json:"discovery"`
	Capabilities string `json:"capabilities"`
	Pricing      string `json:"pricing"`
	Reliability  string `json:"reliability"`
	Preference   string `json:"preference"`
	SellerValue  string `json:"seller_value"`
	JWKS         string `json:"jwks"`
	LogKey       string `json:"log_key"`
	Checkpoint   string `json:"checkpoint"`
}

// MCP states that no MCP interface exists.
type MCP struct {
	Implemented bool   `json:"implemented"`
	Status      string `json:"status"`
}

// Legal carries the statements of what the service is not.
type Legal struct {
	NotTaxAdvice bool     `json:"not_tax_advice"`
	Custody      string   `json:"custody"`
	Statements   []string `json:"statements"`
	Operator     string   `json:"operator,omitempty"`
	TermsURL     string   `json:"terms_url,omitempty"`
}

// legalStatements are what the service is and is not, word for word as
// every document publishes them.
func legalStatements() []string {
	return []string{
		"The service is a technical classification engine and a deterministic artifact generator.",
		"It is not tax advice.",
		"It is not a guarantee that a tax authority accepts its output.",
		"It is not a national clearance e-invoice network.",
		"It does not collect fees from the settlement itself, and never holds funds (custody none).",
	}
}

// Auth modes of an endpoint, as published.
const (
	authKeyLabel      = "key"
	authOptionalLabel = "optional"
	authNoneLabel     = "none"
)

func (s *Server) manifest(base string) Manifest {
	pricing := s.svc.Catalog.PricingPolicy()
	var endpoints []Endpoint
	ops := operations()
	for _, r := range s.routes() {
		op := ops[r.method+" "+r.path]
		endpoints = append(endpoints, Endpoint{Method: r.method, Path: r.path, URL: base + r.path, Auth: op.auth.label(), Summary: op.summary})
	}
	ruleset := ""
	for _, j := range catalog.Jurisdictions() {
		if j.ID == vat.JurisdictionEU {
			ruleset = j.RulesetVersion
		}
	}
	return Manifest{
		SchemaVersion:     catalog.ManifestSchemaVersion,
		Spec:              catalog.ManifestSpec,
		Name:              catalog.ServiceName,
		Description:       catalog.ServicePurpose,
		Category:          catalog.ServiceCategory,
		Protocol:          catalog.ProtocolX402,
		Custody:           catalog.CustodyToken,
		ProtocolVersion:   catalog.ProtocolVersion,
		TaxRulesetVersion: ruleset,
		UpdatedAt:         s.svc.Catalog.DescriptionDate().Format(time.RFC3339),
		Capabilities:      s.svc.Catalog.AvailableCapabilities(),
		ReceiptVersions:   catalog.ReceiptVersions(),
		PaymentProtocols:  catalog.PaymentProtocols(),
		Jurisdictions:     catalog.Jurisdictions(),
		SupportedChains:   catalog.SupportedNetworks(),
		SupportedAssets:   catalog.SupportedAssets(),
		Endpoints:         endpoints,
		Pricing:           ManifestPricing{PricingPolicy: pricing, URL: base + "/v1/pricing"},
		Sandbox: ManifestSandbox{
			SeparateOrigin:      false,
			Origin:              base,
			Prefix:              "/sandbox/v1",
			Endpoints:           pricing.Sandbox.Endpoints,
			QuotaPerAgentPerDay: pricing.Sandbox.QuotaPerAgentPerDay,
			Price:               pricing.Sandbox.Price,
			Currency:            pricing.Sandbox.Currency,
			Watermarked:         true,
			ProductionRecord:    false,
			Keys:                "sandbox receipts are signed by a sandbox key that is never in the production JWKS (" + base + "/.well-known/jwks.json), so a sandbox receipt can never verify as a production one",
		},
		Security: catalog.SecurityBlock(),
		Reliability: ManifestReliability{
			URL:             base + "/v1/reliability",
			Acknowledgement: "synchronous: a 201 means the record, its invoice and its signed receipt were committed to the ledger and fsynced",
			Idempotency:     "one record per (network, txHash); Idempotency-Key replays return the original; a different body is 409 IDEMPOTENCY_CONFLICT",
			Webhooks:        "events are written in the same ledger transaction as the record and delivered at least once",
		},
		Documentation: s.documentation(base),
		AgentCard:     base + "/.well-known/agent-card.json",
		OpenAPI:       base + "/openapi.json",
		MCP:           MCP{Implemented: false, Status: "not_implemented"},
		Legal: Legal{NotTaxAdvice: true, Custody: fiscal.CustodyNone, Statements: legalStatements(),
			Operator: s.opts.Operator, TermsURL: s.opts.TermsURL},
	}
}

func (s *Server) documentation(base string) Documentation {
	return Documentation{
		OpenAPI:      base + "/openapi.json",
		Discover:     base + "/discover",
		Discovery:    base + "/v1/discovery",
		Capabilities: base + "/v1/capabilities",
		Pricing:      base + "/v1/pricing",
		Reliability:  base + "/v1/reliability",
		Preference:   base + "/v1/preference",
		SellerValue:  base + "/v1/seller-value",
		JWKS:         base + "/.well-known/jwks.json",
		LogKey:       base + "/.well-known/log-key",
		Checkpoint:   base + "/v1/log/checkpoint",
	}
}

// AgentCard is an A2A-style agent card (A2A v1.0 AgentCard member names,
// a2aproject/A2A specification/a2a.proto). This service is a REST API, not
// an A2A task agent: its one interface is declared with the binding
// "OPENAPI-3.1" and a required extension says so, so that an A2A client
// does not mistake it for a JSONRPC, GRPC or HTTP+JSON A2A endpoint.
type AgentCard struct {
	Name                 string                         `json:"name"`
	Description          string                         `json:"description"`
	SupportedInterfaces  []AgentInterface               `json:"supportedInterfaces"`
	Provider             *AgentProvider                 `json:"provider,omitempty"`
	Version              string                         `json:"version"`
	DocumentationURL     string                         `json:"documentationUrl"`
	Capabilities         AgentCapabilities              `json:"capabilities"`
	SecuritySchemes      map[string]AgentSecurityScheme `json:"securitySchemes"`
	SecurityRequirements []AgentSecurityRequirement     `json:"securityRequirements"`
	DefaultInputModes    []string                       `json:"defaultInputModes"`
	DefaultOutputModes   []string                       `json:"defaultOutputModes"`
	Skills               []AgentSkill                   `json:"skills"`
}

// AgentInterface is a URL with its protocol binding.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider names who runs the service.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities are the A2A optional capabilities.
type AgentCapabilities struct {
	Streaming         bool             `json:"streaming"`
	PushNotifications bool             `json:"pushNotifications"`
	ExtendedAgentCard bool             `json:"extendedAgentCard"`
	Extensions        []AgentExtension `json:"extensions"`
}

// AgentExtension declares an extension of the card.
type AgentExtension struct {
	URI         string `json:"uri"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// AgentSecurityScheme is the A2A SecurityScheme union; only the API-key
// member is used.
type AgentSecurityScheme struct {
	APIKeySecurityScheme *AgentAPIKeyScheme `json:"apiKeySecurityScheme,omitempty"`
}

// AgentAPIKeyScheme is an API key in a header.
type AgentAPIKeyScheme struct {
	Description string `json:"description"`
	Location    string `json:"location"`
	Name        string `json:"name"`
}

// AgentSecurityRequirement maps scheme names to scopes.
type AgentSecurityRequirement struct {
	Schemes map[string]AgentStringList `json:"schemes"`
}

// AgentStringList is A2A's list wrapper.
type AgentStringList struct {
	List []string `json:"list"`
}

// AgentSkill is one thing the service does.
type AgentSkill struct {
	ID                   string                     `json:"id"`
	Name                 string                     `json:"name"`
	Description          string                     `json:"description"`
	Tags                 []string                   `json:"tags"`
	Examples             []string                   `json:"examples"`
	InputModes           []string                   `json:"inputModes"`
	OutputModes          []string                   `json:"outputModes"`
	SecurityRequirements []AgentSecurityRequirement `json:"securityRequirements,omitempty"`
}

// eventTypes are every event type a ledger entry carries, hence every type a
// webhook endpoint receives: the OpenAPI document and the agent card list
// them from here.
var eventTypes = []string{fiscal.EventSettlementProcessed, fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve,
	refunds.EventSettlementRefunded, fiscalevent.EventRecorded, fiscalevent.EventRevised,
	fiscal.EventAccountThresholdCrossed, invoicing.EventInvoiceSummaryIssued, invoicing.EventInvoiceIssued}

// skillExamples says, per capability, how an agent exercises it.
var skillExamples = map[string][]string{
	catalog.CapVATClassification: {"POST /v1/capabilities/check with {seller_country, buyer_country, supply_type, buyer_type, payment}", "POST /settlements: the record's classification"},
	catalog.CapVIESLookup:        {"POST /settlements with consumerVatNumber: the record's buyer.registry"},
	catalog.CapOSSB2C:            {"POST /settlements for a consumer in another member state: regime OSS_B2C"},
	catalog.CapReverseChargeB2B:  {"POST /settlements with a VIES-confirmed consumerVatNumber: regime REVERSE_CHARGE_B2B"},
	catalog.CapUBL21:             {"GET /settlements/{id}/ubl"},
	catalog.CapHistoricalFX:      {"POST /settlements: the record's fx (ECB rate, date, policy, snapshot)"},
	catalog.CapAuditLedger:       {"GET /v1/log/checkpoint", "GET /v1/log/proof/inclusion?index=0", "GET /v1/log/proof/consistency?from=1"},
	catalog.CapSignedWebhooks:    {"events " + strings.Join(eventTypes, ", ")},
	catalog.CapSignedReceipt:     {"GET /v1/receipts/rcpt_<event id>", "GET /.well-known/jwks.json"},
	catalog.CapSandboxSimulate:   {"POST /v1/compliance/evaluate", "POST /sandbox/v1/simulate"},
}

// keyedSkills need the ingest key.
var keyedSkills = map[string]bool{
	catalog.CapVIESLookup: true, catalog.CapOSSB2C: true, catalog.CapReverseChargeB2B: true, catalog.CapUBL21: true, catalog.CapHistoricalFX: true, catalog.CapSignedWebhooks: true,
}

const securitySchemeName = "ServiceKey"

func (s *Server) agentCard(base string) AgentCard {
	keyReq := []AgentSecurityRequirement{{Schemes: map[string]AgentStringList{securitySchemeName: {List: []string{}}}}}
	var skills []AgentSkill
	for _, c := range s.svc.Catalog.Capabilities() {
		if c.Status != catalog.Available {
			continue
		}
		skill := AgentSkill{ID: c.Token, Name: c.Name, Description: c.Description,
			Tags: append([]string{catalog.ServiceCategory}, strings.Split(c.Token, "_")...), Examples: skillExamples[c.Token],
			InputModes: []string{"application/json"}, OutputModes: []string{"application/json"}}
		if c.Token == catalog.CapUBL21 {
			skill.OutputModes = []string{"application/xml"}
		}
		if keyedSkills[c.Token] {
			skill.SecurityRequirements = keyReq
		}
		skills = append(skills, skill)
	}
	skills = append(skills, AgentSkill{ID: "capability_check", Name: "Corridor check before ingest",
		Description: "Answers, for a seller country, buyer country, supply and buyer type and payment, five separate aspects: event support, payment support, jurisdiction representation, determination coverage and receipt eligibility. Writes nothing.",
		Tags:        []string{catalog.ServiceCategory, "preflight", "capabilities"}, Examples: []string{`POST /v1/capabilities/check {"seller_country":"IE","buyer_country":"DE","supply_type":"digital_service","buyer_type":"B2C","payment":{"protocol":"x402","network":"eip155:8453","asset":"USDC"}}`},
		InputModes: []string{"application/json"}, OutputModes: []string{"application/json"}})
	card := AgentCard{
		Name:                catalog.ServiceName,
		Description:         catalog.ServicePurpose,
		SupportedInterfaces: []AgentInterface{{URL: base + "/", ProtocolBinding: "OPENAPI-3.1", ProtocolVersion: "1.0"}},
		Version:             catalog.APIVersion,
		DocumentationURL:    base + "/discover",
		Capabilities: AgentCapabilities{Extensions: []AgentExtension{{
			URI:         base + "/openapi.json",
			Description: "This service is not an A2A task agent: it implements no A2A method (message:send, tasks). Its skills are the REST operations of this OpenAPI 3.1 document; call them directly.",
			Required:    true,
		}}},
		SecuritySchemes: map[string]AgentSecurityScheme{securitySchemeName: {APIKeySecurityScheme: &AgentAPIKeyScheme{
			Description: "The merchant account's ingest key, required on ingest and account reads; use it only from a server, never from a browser, a mobile app or an agent prompt.",
			Location:    "header", Name: HeaderServiceKey}}},
		SecurityRequirements: []AgentSecurityRequirement{},
		DefaultInputModes:    []string{"application/json"},
		DefaultOutputModes:   []string{"application/json"},
		Skills:               skills,
	}
	if s.opts.Operator != "" && s.opts.OperatorURL != "" {
		card.Provider = &AgentProvider{Organization: s.opts.Operator, URL: s.opts.OperatorURL}
	}
	return card
}

// Reliability is GET /v1/reliability: what a caller can rely on.
type Reliability struct {
	Acknowledgement string               `json:"acknowledgement"`
	Durability      Durability           `json:"durability"`
	Idempotency     ReliabilityIdem      `json:"idempotency"`
	Retries         Retries              `json:"retries"`
	Limits          ReliabilityLimits    `json:"limits"`
	Verification    ReliabilityVerify    `json:"verification"`
	Webhooks        string               `json:"webhooks"`
	Availability    string               `json:"availability"`
	Errors          []ReliabilityErrCode `json:"errors"`
}

// Durability says where data lives and what survives a crash.
type Durability struct {
	Store      string `json:"store"`
	Commit     string `json:"commit"`
	Log        string `json:"log"`
	Outbox     string `json:"outbox"`
	Immutable  string `json:"immutable"`
	KeyHistory string `json:"key_history"`
}

// ReliabilityIdem is the idempotency contract.
type ReliabilityIdem struct {
	Header               string   `json:"header"`
	UniquePer            []string `json:"unique_per"`
	SameKeySameBody      string   `json:"same_key_same_body"`
	SameKeyDifferentBody string   `json:"same_key_different_body"`
	DuplicatePayment     string   `json:"duplicate_payment"`
	OtherAccountPayment  string   `json:"duplicate_payment_other_account"`
	Retention            string   `json:"retention"`
	BodyEquality         string   `json:"body_equality"`
}

// Retries is the retry contract.
type Retries struct {
	RetryAfterHeader string   `json:"retry_after_header"`
	Safe             string   `json:"safe"`
	Guidance         []string `json:"guidance"`
}

// ReliabilityLimits are the enforced limits; max_request_bytes is this
// server's body limit (Options.MaxBodyBytes).
type ReliabilityLimits struct {
	catalog.RequestLimits
	RateLimits string `json:"rate_limits"`
	// RateLimit is the per-account token bucket this server applies
	// (Options.RateLimit, RateBurst); absent when it is disabled.
	RateLimit *PublishedRateLimit `json:"rate_limit,omitempty"`
	// AuthFailures is the limit of failed authentications per client
	// address (Options.AuthFailure*); absent when it is disabled.
	AuthFailures *PublishedAuthFailures `json:"auth_failures,omitempty"`
}

// PublishedRateLimit is a token bucket as the server enforces it.
type PublishedRateLimit struct {
	Per       string  `json:"per"`
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
}

// PublishedAuthFailures is the failed-authentication limit: a bucket per
// client address, then blocks doubling from one second up to the maximum.
type PublishedAuthFailures struct {
	PublishedRateLimit
	MaxBlockSeconds int64 `json:"max_block_seconds"`
}

// ReliabilityVerify says how to check the service without trusting it.
type ReliabilityVerify struct {
	Receipts     string `json:"receipts"`
	Log          string `json:"log"`
	Invoices     string `json:"invoices"`
	FXProvenance string `json:"fx_provenance"`
}

// ReliabilityErrCode is one error code with what to do about it.
type ReliabilityErrCode struct {
	Code      string `json:"code"`
	Status    int    `json:"status"`
	Retryable bool   `json:"retryable"`
}

func (s *Server) reliability(base string) Reliability {
	var codes []ReliabilityErrCode
	for _, c := range fiscal.Codes() {
		codes = append(codes, ReliabilityErrCode{Code: string(c), Status: c.HTTPStatus(), Retryable: c.Retryable()})
	}
	sec := catalog.SecurityBlock()
	limits := catalog.Limits()
	limits.MaxRequestBytes = s.opts.MaxBodyBytes
	return Reliability{
		Acknowledgement: "Ingest is synchronous. A 201 (or 200 for an existing payment) means the record, its UBL invoice, its signed receipt, its log leaf and its outbox event were committed in one ledger transaction and fsynced; the receipt is readable at once. Any other answer means the payment was not acknowledged: sending the same request again never records it twice (after a 503 from a ledger stopped by a failed disk sync, the record may turn out to be written, and the repeat answers it with a 200).",
		Durability: Durability{
			Store:      "one bbolt file per service (ledger.db), written in single transactions; a process owns its file",
			Commit:     "fsync before the answer: an acknowledged record survives a crash or kill -9 (tested against the server binary)",
			Log:        "every entry is a leaf of an RFC 6962 Merkle log; each commit signs a C2SP checkpoint with the log key",
			Outbox:     "each entry writes its event in the same transaction (no lost or phantom events); the event's sequence is its ledger index",
			Immutable:  "entries are never rewritten; a later state of a record is a new revision entry with its own receipt",
			KeyHistory: "the JWKS keeps every receipt key ever used, with its validity window, so old receipts stay verifiable",
		},
		Idempotency: ReliabilityIdem{
			Header:               catalog.HeaderIdempotencyKey,
			UniquePer:            sec.Idempotency.UniquePer,
			SameKeySameBody:      "201 with the original record and Idempotent-Replayed: true",
			SameKeyDifferentBody: "409 " + string(fiscal.CodeIdempotencyConflict),
			DuplicatePayment:     "200 with the existing record (the same account, the same (network, txHash))",
			OtherAccountPayment:  "409 " + string(fiscal.CodeSettlementConflict),
			Retention:            sec.Idempotency.Retention,
			BodyEquality:         "bodies are compared after normalisation: \"1.5\" and \"1.50\" are the same amount, member order does not matter",
		},
		Retries: Retries{
			RetryAfterHeader: "Retry-After (seconds) on every 429 and 503",
			Safe:             "Repeating an ingest request is always safe: the (network, txHash) claim, and the Idempotency-Key when sent, return the original record instead of a second one.",
			Guidance: []string{
				"Retry 503 and 500 after Retry-After (or a pause with exponential backoff), with the same Idempotency-Key.",
				"Retry 429 after Retry-After.",
				"Do not retry other 4xx unchanged: fix the request (400, 413, 415, 422), the key (401) or the conflict (409).",
				"A 422 " + string(fiscal.CodeChainVerifyFailed) + " is final for that claim; a 503 " + string(fiscal.CodeChainUnavailable) + " means the chain could not be asked or is not final yet.",
			},
		},
		Limits: s.publishedLimits(limits),
		Verification: ReliabilityVerify{
			Receipts:     "verify offline with the receipt JSON and " + base + "/.well-known/jwks.json (Ed25519), plus " + base + "/.well-known/log-key for the log proof it embeds",
			Log:          base + "/v1/log/checkpoint, " + base + "/v1/log/proof/inclusion and " + base + "/v1/log/proof/consistency (RFC 6962)",
			Invoices:     "the receipt binds the UBL invoice by its SHA-256 (invoice.ubl_sha256)",
			FXProvenance: "every record names the ECB rate, its date, the policy that chose it and the SHA-256 of the rate data set",
		},
		Webhooks:     "Events are delivered at least once, signed with HMAC-SHA256 over timestamp.rawBody; the event id is stable across retries, so deduplicate on it.",
		Availability: "This software publishes no uptime commitment; the operator of a deployment states its own.",
		Errors:       codes,
	}
}

// Link is a typed link between documents (rel names from RFC 8631 where it
// has one: service-desc, service-doc, service-meta).
type Link struct {
	Rel    string `json:"rel"`
	Href   string `json:"href"`
	Method string `json:"method"`
	Type   string `json:"type"`
	Auth   string `json:"auth"`
	Title  string `json:"title"`
}

// Discovery is GET /v1/discovery: links to every document.
type Discovery struct {
	Service    string `json:"service"`
	APIVersion string `json:"api_version"`
	Links      []Link `json:"links"`
}

func (s *Server) links(base string) []Link {
	get := func(rel, p, typ, title string) Link {
		return Link{Rel: rel, Href: base + p, Method: "GET", Type: typ, Auth: authNoneLabel, Title: title}
	}
	return []Link{
		get("service-meta", "/.well-known/service.json", "application/json", "Discovery manifest"),
		get("service-desc", "/openapi.json", "application/json", "OpenAPI 3.1 description of every endpoint"),
		get("service-doc", "/discover", "text/html", "Entry point for people and agents"),
		get("agent-card", "/.well-known/agent-card.json", "application/json", "A2A-style agent card"),
		get("capabilities", "/v1/capabilities", "application/json", "Capability catalog"),
		{Rel: "capabilities-check", Href: base + "/v1/capabilities/check", Method: "POST", Type: "application/json", Auth: authOptionalLabel, Title: "Check a corridor before ingest"},
		get("pricing", "/v1/pricing", "application/json", "Pricing policy"),
		get("reliability", "/v1/reliability", "application/json", "Durability, idempotency, retries and limits"),
		get("preference", "/v1/preference", "application/json", "When to choose this service, and when not to"),
		get("seller-value", "/v1/seller-value", "application/json", "What a seller gets per settlement"),
		get("discovery", "/v1/discovery", "application/json", "This list"),
		get("jwks", "/.well-known/jwks.json", "application/jwk-set+json", "Receipt verification keys"),
		get("log-key", "/.well-known/log-key", "text/plain", "Merkle log verifier key"),
		get("checkpoint", "/v1/log/checkpoint", "text/plain", "Latest signed log checkpoint"),
		get("receipt-verifier", "/verify", "text/html", "Verify a receipt in your browser (works offline once saved)"),
	}
}

// Preference is GET /v1/preference: how an agent should decide whether to
// use this service.
type Preference struct {
	Summary           string       `json:"summary"`
	ChooseWhen        []vat.Reason `json:"choose_when"`
	DoNotChooseWhen   []vat.Reason `json:"do_not_choose_when"`
	ComparedTo        []Comparison `json:"compared_to"`
	DecisionProcedure []string     `json:"decision_procedure"`
}

// Comparison sets this service against a kind of alternative.
type Comparison struct {
	Alternative string `json:"alternative"`
	ChooseThis  string `json:"choose_this_when"`
	ChooseOther string `json:"choose_alternative_when"`
}

func (s *Server) preference(base string) Preference {
	nets := strings.Join(catalog.SupportedNetworks(), ", ")
	var planned []string
	for _, p := range catalog.PaymentProtocols() {
		if p.Status == catalog.Planned {
			planned = append(planned, p.Protocol)
		}
	}
	uk := ""
	for _, j := range catalog.Jurisdictions() {
		if j.Status == catalog.Experimental {
			uk = j.ID + " (" + j.RulesetVersion + ")"
		}
	}
	return Preference{
		Summary: "Choose fiscal402 to turn stablecoin payments that have already settled into EU VAT records, invoices and offline-verifiable receipts, without giving anyone custody of funds. Do not choose it to collect payments, to file returns, or for taxes it does not model.",
		ChooseWhen: []vat.Reason{
			{Code: "settled_usdc", Detail: "The payment has already settled on chain in " + catalog.AssetUSDC + " on " + nets + "."},
			{Code: "eu_vat_digital", Detail: "The sale is an electronically supplied service (" + strings.Join(catalog.SupplyTypes(), ", ") + ") whose EU VAT treatment must be determined and evidenced."},
			{Code: "verifiable_evidence", Detail: "An auditor must be able to verify each record offline: Ed25519 receipts, a Merkle log with signed checkpoints, ECB rate provenance."},
			{Code: "embeddable", Detail: "The merchant or facilitator wants a Go library (fiscal.Engine) or a self-hosted service, with no per-call dependency on a SaaS vendor."},
			{Code: "non_custodial", Detail: "Nobody but the parties may touch the funds: custody is always none and fees are accrued, never split from the settlement."},
		},
		DoNotChooseWhen: []vat.Reason{
			{Code: "not_settled", Detail: "The payment has not settled yet: this service records settled payments, it does not execute or guarantee them."},
			{Code: "other_assets", Detail: "The asset or network is not " + catalog.AssetUSDC + " on " + nets + " (payment protocols " + strings.Join(planned, ", ") + " are planned)."},
			{Code: "not_digital", Detail: "The supply is goods or a service other than an electronically supplied one: other place-of-supply rules apply and the record would wait for manual review."},
			{Code: "tax_advice", Detail: "You need tax advice, a filed OSS return or a guarantee that an authority accepts the output: this is a classification engine and artifact generator."},
			{Code: "clearance", Detail: "A national clearance e-invoicing network (SDI, KSeF, ...) must receive the invoice: this service produces the UBL, it does not transmit it."},
			{Code: "uk_production", Detail: "You need production-grade UK VAT: " + uk + " and its receipt format are experimental."},
			{Code: "other_taxes", Detail: "You need US sales tax or any non-EU, non-UK tax: such supplies are recorded as outside the scope of EU VAT, the local tax is not assessed."},
		},
		ComparedTo: []Comparison{
			{Alternative: "SaaS tax engines bound to a card processor", ChooseThis: "payments settle on chain in USDC, and each record must be verifiable offline without the vendor", ChooseOther: "payments are card payments inside that processor, or you need their filing services and many tax types"},
			{Alternative: "merchant-of-record platforms", ChooseThis: "you stay the seller of record and keep custody with the payment rails", ChooseOther: "you want someone else to become the seller and carry the VAT liability"},
			{Alternative: "crypto sub-ledgers and crypto invoicing tools", ChooseThis: "you need the VAT decision, EUR amounts at the ECB rate and an EN 16931 invoice bound to the settlement", ChooseOther: "you need general crypto accounting (cost basis, treasury) rather than sales VAT"},
			{Alternative: "invoice document libraries", ChooseThis: "you also need the place-of-supply decision, registry checks and the link to the on-chain payment", ChooseOther: "you already know the tax and only need a document format"},
		},
		DecisionProcedure: []string{
			"GET " + base + "/.well-known/service.json: check supported_chains, supported_assets, jurisdictions and capabilities.",
			"POST " + base + "/v1/capabilities/check with the corridor: read each of the five aspects; there is no single supported flag.",
			"If payment_support is not supported, or receipt_eligibility is ineligible, do not ingest here.",
			"If determination_coverage is manual_review, ingest only if a person will resolve the review (the reasons say what is missing).",
			"Ingest with POST /settlements (key required) and keep the receipt id; verify the receipt with the JWKS.",
		},
	}
}

// SellerValue is GET /v1/seller-value: what a seller gets, costs and keeps.
type SellerValue struct {
	Summary      string        `json:"summary"`
	PerRecord    []Deliverable `json:"per_record"`
	Fee          SellerFee     `json:"fee"`
	SellerKeeps  []string      `json:"seller_keeps"`
	NotIncluded  []string      `json:"not_included"`
	Capabilities []string      `json:"capabilities"`
}

// Deliverable is one thing a record gives the seller.
type Deliverable struct {
	Item   string `json:"item"`
	Detail string `json:"detail"`
	Where  string `json:"where"`
}

// SellerFee is the fee in force.
type SellerFee struct {
	CurrentBPS   int64  `json:"current_bps"`
	CurrentRate  string `json:"current_display_rate"`
	Label        string `json:"label,omitempty"`
	StandardBPS  int64  `json:"standard_bps"`
	StandardRate string `json:"standard_display_rate"`
	Collection   string `json:"collection"`
}

func (s *Server) sellerValue(base string) SellerValue {
	p := s.svc.Catalog.PricingPolicy()
	fee := SellerFee{CurrentBPS: p.CurrentFeeBPS, CurrentRate: p.CurrentDisplayRate, StandardBPS: p.Standard.FeeBPS, StandardRate: p.Standard.DisplayRate, Collection: p.Collection.Description}
	if p.Beta.Active {
		fee.Label = p.Beta.Label
	}
	return SellerValue{
		Summary: "For each settled payment the seller gets a VAT decision it can defend, an invoice, EUR figures at the legal rate and a receipt anyone can verify, with no custody and, during the beta, no fee.",
		PerRecord: []Deliverable{
			{Item: "VAT classification", Detail: "place of supply, regime (OSS, domestic, reverse charge, outside scope), UNCL5305 category, rate on the settlement date with its source, legal basis, or PENDING_MANUAL_REVIEW with machine-readable reasons (never a guessed 0 %)", Where: "record.classification"},
			{Item: "EUR amounts", Detail: "gross, net and VAT in EUR at the ECB reference rate of the settlement date (Art. 91(2)), with the rate's date, policy and data-set hash", Where: "record.fx"},
			{Item: "UBL 2.1 invoice", Detail: "EN 16931 (Peppol BIS 3.0 for business buyers), byte-identical for the same input, stating the USDC settlement", Where: base + "/settlements/{id}/ubl"},
			{Item: "signed receipt", Detail: fiscal.ReceiptSpec(vat.JurisdictionEU) + " binding payment, tax decision, FX and invoice hash, signed through the log checkpoint the Ed25519 receipt key cosigns, with its log inclusion proof; verifiable offline for 10 years with the JWKS (" + base + "/.well-known/jwks.json) and the log key (" + base + "/.well-known/log-key)", Where: base + "/v1/receipts/rcpt_{id}"},
			{Item: "audit trail", Detail: "an append-only ledger entry in an RFC 6962 Merkle log with signed checkpoints; amendments are new revisions, never rewrites", Where: base + "/v1/log/checkpoint"},
			{Item: "registry proof", Detail: "for business buyers, the VIES/HMRC answer with its consultation identifier (Art. 18(1) Implementing Regulation 282/2011)", Where: "record.buyer.registry"},
			{Item: "events", Detail: "an outbox event per record state, delivered as signed webhooks", Where: "webhooks"},
		},
		Fee: fee,
		SellerKeeps: []string{
			"Attesting the buyer's country from two non-contradictory items of location evidence and keeping them (Art. 24b(d), 24f and 63c Implementing Regulation 282/2011).",
			"Filing the OSS or domestic VAT return and paying the VAT (the records and their EUR figures feed it).",
			"Keeping OSS records for 10 years (Art. 369(2) and 369k(2) Directive 2006/112/EC); receipts stay verifiable that long.",
			"Declaring its Art. 59c threshold status and establishments in its account profile.",
			"Resolving records pending manual review.",
		},
		NotIncluded: []string{
			"custody or movement of funds",
			"tax advice, filing, or a guarantee that an authority accepts the output",
			"transmission to clearance e-invoicing networks",
			"taxes other than EU VAT (UK VAT experimental)",
		},
		Capabilities: s.svc.Catalog.AvailableCapabilities(),
	}
}

// Discover is GET /discover: the entry point for a person or an agent
// arriving with nothing but the base URL.
type Discover struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	APIVersion  string       `json:"api_version"`
	StartHere   []Step       `json:"start_here"`
	Links       []Link       `json:"links"`
	Auth        DiscoverAuth `json:"auth"`
	Statements  []string     `json:"statements"`
}

// Step is one step of the getting-started path.
type Step struct {
	Action string `json:"action"`
	Why    string `json:"why"`
}

// DiscoverAuth summarises who needs a key for what.
type DiscoverAuth struct {
	Header   string   `json:"header"`
	Required []string `json:"required"`
	Optional []string `json:"optional"`
	Public   string   `json:"public"`
	Rule     string   `json:"rule"`
}

func (s *Server) discover(base string) Discover {
	var required, optional []string
	ops := operations()
	for _, r := range s.routes() {
		switch ops[r.method+" "+r.path].auth {
		case authRequired:
			required = append(required, r.method+" "+r.path)
		case authOptional:
			optional = append(optional, r.method+" "+r.path)
		}
	}
	return Discover{
		Name:        catalog.ServiceName,
		Description: catalog.ServicePurpose,
		APIVersion:  catalog.APIVersion,
		StartHere: []Step{
			{Action: "GET " + base + "/.well-known/service.json", Why: "what the service supports: chains, assets, jurisdictions, capabilities, pricing"},
			{Action: "POST " + base + "/v1/capabilities/check", Why: "how a given corridor would be treated, aspect by aspect, before sending anything"},
			{Action: "POST " + base + "/settlements (X-Service-Key)", Why: "record a settled payment: 201 with the fiscal record"},
			{Action: "GET " + base + "/v1/receipts/rcpt_<id>", Why: "the signed receipt; verify it offline with " + base + "/.well-known/jwks.json"},
			{Action: "GET " + base + "/openapi.json", Why: "every endpoint with its schemas, errors and decisions"},
		},
		Links: s.links(base),
		Auth: DiscoverAuth{
			Header:   HeaderServiceKey,
			Required: required,
			Optional: optional,
			Public:   "every other endpoint: receipts, keys, log proofs and the documents are public and cacheable",
			Rule:     "Use the key only from a server, never from a browser, a mobile app or an agent prompt. A key that is sent must be valid, even where it is optional.",
		},
		Statements: legalStatements(),
	}
}

// discoverHTML renders Discover for people.
func discoverHTML(d Discover) string {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", esc(d.Name))
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n<p>API version %s.</p>\n<h2>Start here</h2>\n<ol>\n", esc(d.Name), esc(d.Description), esc(d.APIVersion))
	for _, st := range d.StartHere {
		fmt.Fprintf(&b, "<li><code>%s</code>: %s</li>\n", esc(st.Action), esc(st.Why))
	}
	b.WriteString("</ol>\n<h2>Documents</h2>\n<ul>\n")
	for _, l := range d.Links {
		fmt.Fprintf(&b, "<li>%s <a href=\"%s\">%s</a> (%s): %s</li>\n", esc(l.Method), esc(l.Href), esc(l.Href), esc(l.Type), esc(l.Title))
	}
	fmt.Fprintf(&b, "</ul>\n<h2>Authentication</h2>\n<p>Header <code>%s</code>. %s</p>\n<ul>\n", esc(d.Auth.Header), esc(d.Auth.Rule))
	for _, r := range d.Auth.Required {
		fmt.Fprintf(&b, "<li>required: <code>%s</code></li>\n", esc(r))
	}
	for _, r := range d.Auth.Optional {
		fmt.Fprintf(&b, "<li>optional: <code>%s</code></li>\n", esc(r))
	}
	fmt.Fprintf(&b, "<li>%s</li>\n</ul>\n<h2>What it is not</h2>\n<ul>\n", esc(d.Auth.Public))
	for _, st := range d.Statements {
		fmt.Fprintf(&b, "<li>%s</li>\n", esc(st))
	}
	b.WriteString("</ul>\n</body></html>\n")
	return b.String()
}

// publishedLimits are the request limits with the rate limits this server
// enforces (s.limits, s.authFails), so the numbers published are the ones
// applied.
func (s *Server) publishedLimits(limits catalog.RequestLimits) ReliabilityLimits {
	out := ReliabilityLimits{RequestLimits: limits,
		RateLimits: "Past the per-account rate limit (rate_limit) or the failed authentications of a client address (auth_failures), 429 RATE_LIMITED with Retry-After; the sandbox quota (GET /v1/pricing) answers 429 QUOTA_EXCEEDED with Retry-After."}
	if l := s.limits; l.limit != rate.Inf {
		out.RateLimit = &PublishedRateLimit{Per: "account (X-Service-Key) on every endpoint that needs a key", PerSecond: float64(l.limit), Burst: l.burst}
	}
	if a := s.authFails; a.limit != rate.Inf {
		out.AuthFailures = &PublishedAuthFailures{
			PublishedRateLimit: PublishedRateLimit{Per: "client address (IPv4 address, IPv6 /64) sending a wrong key", PerSecond: float64(a.limit), Burst: a.burst},
			MaxBlockSeconds:    int64(a.maxBackoff / time.Second),
		}
	}
	return out
}
