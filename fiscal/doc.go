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
