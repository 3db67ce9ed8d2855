package httpserver

import (
	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/webhooks"
)

// Descriptions and value sets of the OpenAPI schemas, keyed by component
// name ("Record") and by "Component.member" ("Record.reviewStatus"). The
// structure comes from the Go types (schema.go); these tables only add the
// prose and the enumerations reflection cannot see. Value sets are built
// from the constants the code uses.

var typeDocs = map[string]string{
	"SettlementRequest":      "The body of POST /settlements (spec §2.1). Every member is a JSON string; unknown or duplicate members are rejected.",
	"Record":                 "A fiscal record (spec §2.2): the 201 body of POST /settlements and the body of GET /settlements/{id}.",
	"RecordPayment":          "The settled payment as recorded: normalised request members (lower-case hash and addresses).",
	"RecordSeller":           "The seller as it stood in the account when the record was made.",
	"RecordBuyer":            "What the merchant attested about the buyer, and the registry's answer about a VAT number.",
	"RecordFX":               "The conversion to EUR with its provenance. netEur and vatEur are absent while the tax is not determined; every EUR amount is absent when no ECB rate is known for the date.",
	"Fee":                    "The fee accrued on the record under the pricing policy in force (spec §8); never a split of the settlement.",
	"VatDetermination":       "The VAT treatment of the supply (package vat).",
	"VatReason":              "A machine-readable reason: why a record waits for manual review, a note on a determined result, or (in a capability check) an assumption or a limitation.",
	"ViesResult":             "A VAT-number registry answer (VIES or HMRC), the proof Art. 18(1) Implementing Regulation 282/2011 asks for.",
	"FxRate":                 "One ECB reference rate, the request it answered and the data set it came from.",
	"EvmverifyFacts":         "What the chain proved about the settlement.",
	"ReceiptClaims":          "The signed claims of a receipt (package receipt documents every member).",
	"receiptDoc":             "The receipt JSON: the JWS, a readable copy of its claims, and the C2SP tlog-proof of its inclusion in the log.",
	"problemDoc":             "An RFC 9457 problem document.",
	"CapabilityCheckRequest": "The body of POST /v1/capabilities/check (spec §2.4).",
	"CapabilityCheck":        "The five aspects of a capability check, each with its own status and reasons.",
	"Catalog":                "The capability catalog.",
	"PricingPolicy":          "The pricing policy (spec §8).",
	"Manifest":               "The discovery manifest (spec §2.7).",
	"AgentCard":              "An A2A-style agent card (A2A v1.0 member names).",
	"ReceiptKeySet":          "A JWK Set of Ed25519 keys (RFC 7517, RFC 8037).",
}

var fieldDocs = map[string]string{
	"SettlementRequest.amountUsdc":         "The settled USDC amount, VAT included: a plain decimal string, at most 6 decimals, greater than zero.",
	"SettlementRequest.txHash":             "The settlement transaction hash: 0x and 64 hexadecimal digits.",
	"SettlementRequest.timestamp":          "When the payment settled: ISO-8601 UTC (Z or +00:00).",
	"SettlementRequest.payerWallet":        "The payer's address: 0x and 40 hexadecimal digits.",
	"SettlementRequest.receiverWallet":     "The receiver's address.",
	"SettlementRequest.network":            "CAIP-2 network id.",
	"SettlementRequest.asset":              "`USDC` (default) or the network's USDC contract address.",
	"SettlementRequest.scheme":             "`exact` (default).",
	"SettlementRequest.consumerCountry":    "ISO 3166-1 alpha-2 (EL and XI accepted), merchant-attested. Missing: PENDING_MANUAL_REVIEW, never 0 % VAT.",
	"SettlementRequest.consumerVatNumber":  "The buyer's VAT number with its country prefix; giving one is a B2B claim, honoured only when a registry confirms it.",
	"SettlementRequest.consumerName":       "The buyer's name for the invoice (at most 200 characters).",
	"SettlementRequest.consumerPostalCode": "Extension: the buyer's postal code; reveals special territories (Canary Islands, Åland, Azores, ...).",
	"SettlementRequest.supplyKind":         "Extension: the supply kind; default from the account, else `digital_service`.",
	"SettlementRequest.description":        "Extension: the invoice line's item name.",
	"Record.id":                            "The event id, `x402-` + 32 hex digits from SHA-256(network \":\" lower-case txHash).",
	"Record.custody":                       "Always `none`.",
	"Record.reviewStatus":                  "PROCESSED when the VAT is determined and an ECB rate exists; otherwise PENDING_MANUAL_REVIEW with reviewReasons.",
	"Record.environment":                   "`production` for records of this API.",
	"Record.invoice":                       "Absent while pending review: no invoice without a tax determination.",
	"Record.revision":                      "1 for the first state; each later state is a new ledger entry.",
	"VatDetermination.ratePercent":         "The VAT rate in percent, an exact JSON number.",
	"CapabilityCheckRequest.supply_date":   "Extension: the supply date (YYYY-MM-DD or ISO-8601 UTC) whose rates apply; default today.",
	"CapabilityCheckRequest.supply_type":   "Default `digital_service`.",
	"CapabilityCheckRequest.buyer_type":    "Default `B2C`.",
	"CheckPayment.scheme":                  "Extension: default the protocol's scheme.",
	"CheckPayment.asset":                   "Default `USDC`.",
	"Manifest.updated_at":                  "The date of the newest ruleset or VAT rate table version: deterministic for a build.",
	"Manifest.capabilities":                "The capability tokens available in this deployment (spec §1 lists all ten; see /v1/capabilities for the status of each).",
	"Manifest.endpoints":                   "Every route this server mounts.",
}

var fieldEnums = map[string][]string{
	"Record.reviewStatus":               {fiscal.StatusProcessed, fiscal.StatusPendingReview},
	"Revision.reviewStatus":             {fiscal.StatusProcessed, fiscal.StatusPendingReview},
	"Revision.eventType":                {fiscal.EventSettlementProcessed, fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve, fiscalevent.EventRecorded, fiscalevent.EventRevised, fiscal.EventAccountThresholdCrossed},
	"Record.custody":                    {fiscal.CustodyNone},
	"VatDetermination.status":           {vat.StatusDetermined, vat.StatusManualReview},
	"VatDetermination.regime":           {vat.RegimeOSSB2C, vat.RegimeDomestic, vat.RegimeReverseChargeB2B, vat.RegimeOutsideScope, vat.RegimeUKDomestic, vat.RegimeUKB2C, vat.RegimeUKReverseCharge},
	"VatDetermination.taxCategoryCode":  {vat.CategoryStandard, vat.CategoryZero, vat.CategoryReverseCharge, vat.CategoryOutsideScope},
	"VatDetermination.jurisdiction":     {vat.JurisdictionEU, vat.JurisdictionUK},
	"VatDetermination.buyerTreatment":   {vat.TreatmentB2C, vat.TreatmentB2B},
	"VatDetermination.ossScheme":        {vat.SchemeUnion, vat.SchemeNonUnion},
	"RecordPayment.protocol":            {catalog.ProtocolX402, catalog.ProtocolEVMTransfer},
	"Verification.chain":                {receipt.ChainVerified, receipt.ChainNotPerformed},
	"Capability.status":                 {catalog.Available, catalog.Unavailable},
	"EventSupport.status":               {catalog.CheckSupported, catalog.CheckUnsupported},
	"PaymentSupport.status":             {catalog.CheckSupported, catalog.CheckPlanned, catalog.CheckUnsupported},
	"JurisdictionRepresentation.status": {catalog.CheckSupported, catalog.CheckExperimental, catalog.CheckOutsideScope, catalog.CheckUnsupported},
	"DeterminationCoverage.status":      {catalog.CheckDetermined, catalog.CheckManualReview, catalog.CheckNotEvaluated},
	"ReceiptEligibility.status":         {catalog.CheckEligible, catalog.CheckExperimental, catalog.CheckIneligible},
	"ReceiptEligibility.review_status":  {fiscal.StatusProcessed, fiscal.StatusPendingReview},
	"IngestRoute.status":                {catalog.RouteUsable, catalog.RouteNotUsable, catalog.RouteConditional},
	"Endpoint.auth":                     {authKeyLabel, authOptionalLabel, authNoneLabel},
	"Link.auth":                         {authKeyLabel, authOptionalLabel, authNoneLabel},
	"Chain.verification":                {"required", "off"},
	"PaymentProtocol.ingest":            {catalog.IngestHTTP, catalog.IngestLibrary, catalog.IngestNone},
	"MCP.status":                        {"not_implemented"},
	"ReceiptClaims.environment":         {receipt.EnvProduction, receipt.EnvSandbox},
	"ReceiptClaims.custody":             {receipt.CustodyNone},
	"ReceiptClaims.jurisdiction":        {receipt.JurisdictionEUVAT, receipt.JurisdictionUKVAT},
	"ReceiptClaims.review_status":       {receipt.ReviewProcessed, receipt.ReviewPending},
	"ReceiptClaims.spec":                {receipt.SpecV1, receipt.SpecV2, receipt.SpecV3},
	"ManifestPricing.model":             {"basis_points"},
	"Record.object":                     {fiscal.ObjectSettlement},
	"FiscalEvent.object":                {fiscal.ObjectFiscalEvent},
	"SettlementPage.object":             {"list"},
	"FiscalEventPage.object":            {"list"},
	"EventList.object":                  {"list"},
	"webhookEndpointListDoc.object":     {"list"},
	"EventPayload.type":                 {fiscal.EventSettlementProcessed, fiscal.EventSettlementPendingReview, fiscal.EventSettlementReviewResolve, fiscalevent.EventRecorded},
	"IngestStatus.object":               {"x402_ingest"},
	"IngestStatus.state":                {ingest.StateQueued, ingest.StateRecorded, ingest.StateFailed},
	"WebhookEndpoint.object":            {"webhook_endpoint"},
	"WebhookEndpoint.status":            {webhooks.EndpointEnabled, webhooks.EndpointDisabled},
	"WebhookEndpoint.source":            {webhooks.EndpointSourceAPI, webhooks.EndpointSourceConfig},
	"WebhookDelivery.status":            {webhooks.DeliveryPending, webhooks.DeliveryDelivered, webhooks.DeliveryFailed, webhooks.DeliveryCancelled},
	"WebhookAttempt.outcome":            {"delivered", "failed", "gone"},
	"PricingPolicy.model":               {"basis_points"},
}

// codeDocs says when each error code is answered.
var codeDocs = map[fiscal.Code]string{
	fiscal.CodeAuthenticationFailed:     "the X-Service-Key is missing (where required) or unknown.",
	fiscal.CodeBadRequest:               "the request is malformed; `field` names the member (JSON pointer) or the header.",
	fiscal.CodeNotFound:                 "no such resource for this account.",
	codeMethodNotAllowed:                "the path exists, the method does not.",
	codePayloadTooLarge:                 "the body is over the limit.",
	codeUnsupportedMedia:                "the body is not sent as `Content-Type: application/json`.",
	fiscal.CodeIdempotencyConflict:      "the Idempotency-Key was used with a different body.",
	fiscal.CodeSettlementConflict:       "the (network, txHash) is recorded for another account.",
	fiscal.CodeChainVerifyFailed:        "the chain says the claimed transfer did not happen as claimed (final).",
	fiscal.CodeChainVerifyRequired:      "x402 and evm-transfer ingest read the payment from the chain, but the network's chain verification is off (final until the operator enables it).",
	fiscal.CodePaymentAlreadyRecorded:   "this account already recorded the payment through the other ingest endpoint (a settlement vs a fiscal event): one payment, one record (final).",
	fiscal.CodeRecordNotPending:         "only a record pending review can be resolved; a processed record is corrected by a credit note (final).",
	fiscal.CodeLedgerIntegrity:          "stored bytes do not match what the log commits to: the data was altered or damaged and is not served; the operator restores the ledger from a backup (final).",
	fiscal.CodePaymentConflict:          "this (network, txHash) payment is recorded with another amount, payer, receiver or asset than the request states; nothing was written (final).",
	fiscal.CodeRevisionConflict:         "the record got another revision while this resolution was made: read it again and decide on its current state.",
	sandbox.CodeUnsupportedJurisdiction: "the parties are outside what the endpoint covers, e.g. an evaluate whose buyer is not an attested EU-27 customer (final).",
	webhooks.CodeLimitReached:           "the account has the most webhook endpoints, or the endpoint the most secrets, allowed (final until one is removed).",
	webhooks.CodeEndpointConflict:       "the endpoint cannot be changed that way: a URL registered twice, an endpoint from the accounts file, the last secret, or no enabled endpoint to redeliver to (final).",
	ingest.CodeNotSettled:               "the x402 settle response says the payment did not settle (success:false): nothing to record (final).",
	fiscal.CodeUnsupportedNetwork:       "the network is not one of the supported CAIP-2 ids.",
	fiscal.CodeUnsupportedAsset:         "the asset is not USDC (or its contract) on that network.",
	fiscal.CodeUnsupportedScheme:        "the scheme is not supported.",
	ingest.CodeUnsupportedProtocol:      "the payment protocol is not supported.",
	codeRateLimited:                     "too many requests for this key; retry after Retry-After.",
	sandbox.CodeQuotaExceeded:           "the daily sandbox quota is used up; retry after Retry-After.",
	fiscal.CodeChainUnavailable:         "the chain could not be asked or the transfer is not final yet; retry after Retry-After, nothing was written.",
	fiscal.CodeDBUnavailable:            "the ledger cannot be written or read right now; retry after Retry-After, nothing was written.",
	fiscal.CodeInternal:                 "an unexpected error; nothing acknowledged is lost, retrying with the same Idempotency-Key is safe.",
}
