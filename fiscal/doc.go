// Package fiscal turns settled stablecoin payments into EU VAT fiscal records:
// it composes vat, fx, ubl, ledger, receipt, vies and evmverify behind one
// Engine, and owns the error codes.
//
// An Engine is the library API. The bundled HTTP service (package httpserver,
// command examples/server) is a thin layer over it, so everything the service
// does can be done in-process:
//
//	engine, err := fiscal.New(fiscal.Config{DataDir: "fiscal402-data", Accounts: accounts})
//	res, err := engine.Settle(ctx, "acct_demo", fiscal.SettlementRequest{...}, "idempotency-key")
//
// The engine never holds funds (custody "none") and is not tax advice: it is
// a deterministic classification engine and artifact generator.
//
// # Data flow
//
// Settle validates the request, answers replays and duplicates from the
// ledger, optionally verifies the transfer on chain (evmverify), looks up the
// buyer's VAT number (vies), determines the VAT treatment (vat), converts the
// USDC amount to EUR at the ECB reference rate (fx), splits the VAT-inclusive
// amount into net and VAT, renders the UBL invoice (ubl), signs the receipt
// (receipt) and appends record, invoice and receipt leaf to the ledger in one
// transaction (ledger). A nil error means the append was committed and
// fsynced: an acknowledged settlement is never lost.
//
// # Records
//
// A record is PROCESSED when the VAT treatment is determined and an ECB rate
// exists for its date; otherwise it is PENDING_MANUAL_REVIEW with
// machine-readable reviewReasons (for example buyer_country_missing,
// vat_number_unverified, fx_rate_unavailable). A pending record is stored,
// signed and logged like any other, but has no invoice: without a tax
// determination there is nothing lawful to invoice, and the VAT is never
// treated as 0 %.
//
// The record's JSON (type Record) is versioned in-band by "version"
// (fiscal402.record/1); fields may be added, none are renamed.
//
// # Revisions and registry re-checks
//
// A record's state can change without any entry being rewritten: each state
// is a new signed ledger entry (revision n ≥ 2 has the entry and event id
// "<record id>-r<n>" and the receipt "rcpt_<record id>-r<n>", whose
// "supersedes" names the previous receipt), a heads bucket points at the
// newest, and the record lists its history. The first use is a VAT number
// the registry could not confirm at the sale (vat_number_unverified): the
// re-check is queued in the same transaction as the pending entry, and a
// background loop (RecheckPolicy: exponential backoff with jitter, 72 hours
// by default) re-asks; a definitive answer appends revision 2 (event
// settlement.review_resolved when it becomes PROCESSED), giving up appends a
// revision that leaves the record to a person. RecheckNow runs one pass.
//
// # Background work
//
// New starts, and Close stops, the registry re-check loop (when a registry
// is configured) and the webhook dispatcher (unless
// WebhookOptions.NoDispatcher). The x402 ingest queue is run by the host:
// call RunIngestQueue in a goroutine (examples/server does), or
// ProcessIngestQueue for one pass.
//
// # Money
//
// Amounts are decimal strings in JSON and decimal.Decimal in code, never
// floats. The settled USDC amount is what the buyer paid, VAT included:
// gross EUR = USDC × 1 (peg) / ECB USD-per-EUR rate, rounded to the cent half
// away from zero; net = gross / (1 + rate), rounded the same way; VAT =
// gross − net. Where no VAT is charged (reverse charge, outside scope),
// net = gross.
//
// # Identifiers and idempotency
//
// The event id is "x402-" + the first 16 bytes (hex) of
// SHA-256(network ":" lower-case txHash), so replays and replicas agree; the
// receipt id is "rcpt_" + event id. A (network, txHash) pair is recorded once
// across all accounts: a duplicate from the same account returns the
// existing record (Outcome Existing, HTTP 200); from another account it is a
// SETTLEMENT_CONFLICT (409). An Idempotency-Key (per account, kept forever)
// with the same body returns the original record (Outcome Replayed, HTTP
// 201); with a different body it is an IDEMPOTENCY_CONFLICT (409). "Same
// body" means the same normalised settlement: "1.5" and "1.50" are the same
// amount.
//
// # x402 and evm-transfer ingest
//
// IngestX402 takes the three documents an x402 resource server or
// facilitator holds after settling (SettleResponse, PaymentRequirements,
// PaymentPayload: x402 v2 JSON, the v1 names, or the base64 header values);
// IngestTransfer takes a USDC Transfer log by (network, tx hash, log index)
// (protocol evm-transfer, scheme erc20-transfer). BuyerFacts carries what
// the merchant attests about the buyer. Both read the payment from the
// chain, so the network's chain mode must be "required"
// (CHAIN_VERIFICATION_REQUIRED otherwise): x402 documents are claims, not
// proof, and carry no settlement time. The record's amount, payer, receiver
// and timestamp are the Transfer log's and its block's; the verification
// facts (block number, hash and time, log index, confirmations, finality)
// are on the record and signed into the receipt. One (network, tx hash),
// and one (network, tx hash, log index), back at most one record.
//
// EnqueueX402 validates and durably queues instead of waiting for the chain
// (an x402 hook runs in the buyer's request); both queue a
// "settlement_pending" report, and success:false is NOT_SETTLED. The queue
// lives in side buckets of the ledger file; RunIngestQueue (or
// ProcessIngestQueue) attempts due entries, retries what the chain cannot
// answer yet with exponential backoff, fails what it refuses, and writes an
// entry's recorded state in its record's own transaction: an entry is never
// lost and never recorded twice. IngestStatus (object "x402_ingest") is its
// public state.
// # Service description
//
// capabilities.go holds the values that describe what the service does:
// versions (APIVersion, ProtocolVersion), capability tokens, payment
// protocols, the networks and assets (from the USDC contract table request
// validation uses), the jurisdiction table (which also chooses each
// receipt's version) and the receipt versions. Engine.Catalog,
// Engine.PricingPolicy and SecurityBlock publish them; the HTTP layer's
// manifest and OpenAPI document are built from them. Engine.Capabilities
// reports each token's status under the engine's configuration: without a
// VAT-number registry there is no VIES lookup and no reverse charge.
//
// Engine.CheckCapabilities answers a corridor check (spec §2.4) in five
// separate aspects, with vat.Determine on the inputs ingest would build;
// it writes nothing.
//
// # Fiscal events
//
// RecordFiscalEvent (POST /v1/fiscal-events, spec §2.3) records a settled
// payment whose parties are named in the body, from any ISO 3166-1 country.
// Required: payment (the payment fields of §2.1, validated as for
// settlements), seller.legalName, seller.country and supply.kind;
// buyer.businessStatus defaults to B2C (B2B when a VAT number is given);
// buyer.country may be absent, which is MANUAL_REVIEW_REQUIRED
// (buyer_country_missing), never 0 %. The determination is vat.Determine's,
// with two rules of its own: Art. 59c facts of a seller that is not the
// account's (overThreshold, optedForDestination) are unknown unless the body
// states them, and when they change the answer the determination is
// MANUAL_REVIEW_REQUIRED (seller_threshold_unknown); and a corridor with
// neither party in the EU or the UK VAT area is MANUAL_REVIEW_REQUIRED
// (corridor_not_covered): "outside EU VAT" says nothing of the taxes that
// do apply there.
//
// An event gets a production receipt (service.receipt/1.0.0, eu-vat) and a
// UBL invoice only when every EU VAT production invariant holds.
// FiscalEvent.Production lists them in this order with their outcome:
//
//  1. payment_supported: x402 "exact", USDC on eip155:8453 or eip155:1, and
//     verified on chain where the network's policy requires it. Checked at
//     input: otherwise the request is refused (422) and nothing is recorded.
//  2. seller_is_account: the seller in the body is the authenticated
//     account's own seller (the same legal name, case and white space
//     aside; the same country; the account's VAT number when one is given).
//     The service vouches only for its account's own sales (spec §5.3), and
//     the invoice needs the account's full seller profile.
//  3. buyer_in_eu: the buyer's attested country is an EU-27 member state.
//  4. determined_eu_vat: the determination is DETERMINED under
//     eu-vat-oss-2026.09.
//  5. fx_rate_available: an ECB reference rate exists for the settlement
//     date.
//
// Otherwise the event is still one ledger entry and one leaf of the Merkle
// log, whose leaf is then the stored event JSON itself (so the log commits
// to every event), and it has neither receipt nor invoice
// (GET /v1/receipts/rcpt_<id> is NOT_FOUND).
//
// One payment is one record, whichever endpoint records it: fiscal events
// and settlements share the event id and take the same (network, txHash)
// claim in the same ledger transaction. A duplicate of the same kind from
// the same account answers with the existing record; a payment this account
// recorded as the other kind is PAYMENT_ALREADY_RECORDED (409, naming it);
// another account's is SETTLEMENT_CONFLICT. Idempotency-Keys are one space
// per account across both endpoints. A fiscal event's JSON (FiscalEvent) is
// versioned in-band by "version" (fiscal402.fiscal_event/1).
//
// # Listing
//
// ListSettlements and ListFiscalEvents return an account's records newest
// first by createdAt (ties by id), a page at a time (ListQuery, Page).
// createdAt order is the index order, in which new records can only appear
// before the first page, so a cursor never skips or repeats one. Filters:
// from/to on createdAt, settledFrom/settledTo on the settlement timestamp
// (the chargeable event an OSS return is organised by), reviewStatus
// (settlements), status (fiscal events) and taxingCountry. A page examines
// at most 2000 index entries: with a selective filter it may hold fewer
// than limit items while has_more is true.
//
// # Sandbox
//
// The sandbox lives in <DataDir>/sandbox: its own ledger file (log origin
// <origin>/sandbox), log key and receipt keyring ("sandbox"), so sandbox
// data never enters the production ledger and a sandbox key is never in the
// production JWKS. Simulate runs a settlement through the production
// pipeline and records it there under a random id (sandboxIDPrefix + 128
// bits), with ubl.SandboxWatermark opening the invoice note and the receipt
// claims environment "sandbox" and watermark receipt.SandboxWatermark; the
// receipt verifies with SandboxJWKS and SandboxLogVerifierKey and fails
// against the production keys. Evaluate previews a classification and
// records nothing.
//
// Evaluate and Simulate together count against a quota of
// Pricing.SandboxQuotaPerDay calls per Agent per UTC day (spec §8), kept in
// the sandbox ledger's side data: a restart does not reset it, and the call
// that finds it used up is QUOTA_EXCEEDED (429) with RetryAfter until the
// next UTC midnight (QuotaExceededError). A call counts once its request is
// valid. The zero Agent is not metered (in-process callers).
// # Webhooks
//
// Every entry's outbox event (bucket "events", same transaction as the
// record) is delivered to the account's webhook endpoints by a dispatcher
// that New starts and Close stops (WebhookOptions; package webhook has the
// wire format, the signature and the retry schedule). All its state is in
// ledger side buckets: a fan-out cursor, one delivery state per (endpoint,
// event) and an index of due deliveries. An attempt is counted and leased
// before it is sent, and only a recorded 2xx ends a delivery, so delivery is
// at least once across restarts and crashes, with the same event id. An
// endpoint receives the events created after it (firstSequence); Events
// lists older ones and RedeliverEvent sends one again. 410 disables an
// endpoint; other failures are retried for up to 72 hours.
//
// Endpoints come from the accounts file (Account.Webhooks, secrets in plain
// text there, chosen by the operator) or from the API
// (CreateWebhookEndpoint; a fresh 256-bit secret, shown once, stored sealed
// with AES-256-GCM under keys/webhook-secrets.key so that the ledger file
// alone, as handed to an auditor, does not reveal it). Rotation adds a
// secret; while an endpoint has several, each signs. fiscal does not import
// net/http: the HTTP sender is package webhook's, behind webhook.Sender.
//
// # Errors
//
// Every error a caller can act on is an *Error with a stable Code of the
// specification (BAD_REQUEST, UNSUPPORTED_NETWORK, IDEMPOTENCY_CONFLICT,
// CHAIN_VERIFY_FAILED, DB_UNAVAILABLE, ...), the offending field as a JSON
// pointer, and a RetryAfter where retrying helps. Code.HTTPStatus is the one
// table that maps codes to HTTP status codes. "Unavailable" (a registry, a
// chain node, the store) is never reported as "invalid".
//
// # Determinism
//
// With a fixed Config.Clock and Config.Rand (keys), the same requests produce
// byte-identical records, invoices and receipts.
package fiscal

//go:generate go run ./internal/gencountries
