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
