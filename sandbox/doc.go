// Package sandbox is the sandbox environment of a production engine: it
// previews the VAT of a supply without recording it (Evaluate, POST
// /v1/compliance/evaluate) and runs settlements through the production
// pipeline into a separate, watermarked ledger (Simulate, POST
// /sandbox/v1/simulate), both under a per-agent daily quota (README
// "Limits, quota and authentication").
//
// A Sandbox wraps a production engine and opens its own engine in
// <Dir>/sandbox on first use; the HTTP layer decodes a request and makes one
// call:
//
//	sb := sandbox.New(engine, sandbox.Options{})
//	ev, err := sb.Evaluate(ctx, accountID, sandbox.AddressAgent(addr), sandbox.EvaluateRequest{...})
//	sim, err := sb.Simulate(ctx, accountID, sandbox.AccountAgent(accountID), sandbox.SimulateRequest{...})
//
// Record, Invoice, Receipt, JWKS and LogVerifierKey read the sandbox back.
// The production engine's Close closes the sandbox engine.
//
// # Separation
//
// Sandbox data never enters the production ledger: the sandbox engine has
// its own ledger file (log origin <origin>/sandbox), log key and receipt
// keyring ("sandbox"). A sandbox receipt (environment "sandbox", claim
// watermark receipt.SandboxWatermark) fails receipt.Verify against the
// production JWKS, and a sandbox key is never in it; sandbox invoices open
// their note with ubl.SandboxWatermark; sandbox record ids open with
// IDPrefix and carry 128 random bits, which is why they are readable
// without a key.
//
// # Wire format
//
// Evaluation (object "compliance_evaluation", recorded always false) and
// Simulation (object "sandbox_simulation", with the record and receipt as
// the sandbox serves them) are the 200 bodies of the two calls; netEur and
// vatEur are present only when the determination is DETERMINED.
//
// # Errors
//
// Every error is a *fiscal.Error. Request problems are BAD_REQUEST naming
// the JSON pointer of the member (a simulation's settlement fields as POST
// /settlements names them); an evaluation whose buyer is not an attested
// EU-27 customer is UNSUPPORTED_JURISDICTION (422); a used-up quota is
// QUOTA_EXCEEDED (429) with RetryAfter until the next UTC midnight and a
// *QuotaExceededError cause. The zero Agent is not metered.
//
// # Determinism
//
// An evaluation depends only on the request, the engine's clock and its
// rates and registry. A simulation's ids and keys come from the engine's
// Config.Rand, so a fixed Rand and clock give fixed output.
package sandbox
