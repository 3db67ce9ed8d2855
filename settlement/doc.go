// Package settlement is the settled payment a merchant reports (POST
// /settlements' body) and its checks: what a payment is, before any tax is
// decided.
//
// A [Request] is the body as the merchant sends it (the OpenAPI
// SettlementRequest schema); its [Request.Payment] checks it (decimal-string
// amounts, ISO-8601 UTC times, CAIP-2 networks, ISO 3166-1 alpha-2
// countries) and returns the [Payment] every way into the books records from:
// lower-case hashes and addresses, canonical amount, UTC time, a supported
// network and asset (eip155:8453 or eip155:1, USDC), and
// the merchant's [Buyer] facts. The checks answer with the field error of
// internal/wire naming the first field that fails (a JSON pointer); its
// Code is "" (BAD_REQUEST) or one of this package's UNSUPPORTED_* codes,
// and fiscal.InputError makes it the engine's *fiscal.Error. fiscal
// re-exports the types under their old names (fiscal.SettlementRequest,
// fiscal.BuyerFacts, fiscal.Payment).
//
// It imports evmverify (the networks and their USDC contracts), vat
// (location evidence, underlying providers), invoicelaw (the postal
// address) and internal/wire (the field checks), nothing else of ours.
//
// # Performance
//
// Payment.Fingerprint runs on every settlement. Its hashed bytes are the
// JSON encoding/json writes for the normalised fields; a direct writer
// (appendFingerprintJSON, held to json.Marshal by a test over 20,000
// generated inputs and a fuzz target) writes them without reflection:
// 1.78 µs, 6 allocations, 624 B per call before, 0.88 µs, 4
// allocations, 64 B after (BenchmarkFingerprint, 2-core VM).
package settlement
