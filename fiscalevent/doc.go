// Package fiscalevent records fiscal events: settled payments whose seller,
// buyer and supply the caller names in the body (POST /v1/fiscal-events,
// README "Fiscal events (global ingest)"), from any country, each
// determined, stored once in the ledger
// and, when the EU VAT production invariants hold, invoiced and receipted.
//
// A Service wraps an engine; the HTTP layer decodes a Request and makes one
// call:
//
//	events := fiscalevent.New(engine)
//	res, err := events.Record(ctx, accountID, fiscalevent.Request{
//		Payment: fiscalevent.Payment{AmountUSDC: "11.90", TxHash: "0x…", ...},
//		Seller:  parties.Seller{LegalName: "Demo Digital Services Ltd", Country: "IE"},
//		Buyer:   parties.Buyer{Country: "DE", BusinessStatus: "B2C"},
//		Supply:  parties.Supply{Kind: "digital_service"},
//	}, idempotencyKey)
//
// Get, Invoice and List read the account's events back. The buyer may
// carry the customer's locationEvidence and address, checked as POST
// /settlements checks its locationEvidence and consumerAddress. An event
// left for review or waiting for a rate is revised (Resolve, RetryRate,
// the registry's re-check) under the account's seller profile as it stood
// when the event was recorded, kept beside it while it can be revised.
//
// # Wire format
//
// Event is stored as JSON exactly as served and versioned in-band by
// "version" (Version, fiscal402.fiscal_event/1); fields may be added, none
// are renamed. A fiscal event and a settlement record share the event id
// space (one per payment, "x402-<32 hex>") and are told apart by "object".
// The production invariants (InvariantPaymentSupported, ...) are listed in a
// fixed order with whether each held; Invoice and Receipt are present
// exactly when all held. Otherwise the event is recorded without them, and a
// corridor the rulesets do not cover (neither party in the EU or UK VAT
// area) is MANUAL_REVIEW_REQUIRED with reason corridor_not_covered.
//
// # Errors
//
// Every error is a *fiscal.Error. Payment problems are validated by the
// settlement rules and point into /payment (e.g. /payment/amountUsdc);
// parties' problems are BAD_REQUEST naming their member (package parties).
// A payment already recorded as a settlement of the account is
// PAYMENT_ALREADY_RECORDED; another account's is SETTLEMENT_CONFLICT.
//
// # Determinism
//
// Given the engine's clock, rates and registry, the same request gives the
// same event: the id derives from (network, txHash), the determination
// from package vat and the seller facts stated (DetermineWithUnknowns never
// guesses an unknown Art. 59c fact; the account's own seller is decided on
// the account's running totals, to which its events count as its
// settlements do), the amounts from the ECB rate of the
// settlement day.
package fiscalevent
