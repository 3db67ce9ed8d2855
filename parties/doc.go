// Package parties reads the seller, buyer and supply that a request names
// in its body (a fiscal event, POST /v1/fiscal-events; a
// compliance evaluation; a capability check), and determines the VAT of a
// seller whose facts are partly unknown.
//
// POST /settlements never names the seller: there the seller is the
// account the ingest key identifies. A request that names one may name the
// account's own seller (MatchAccountSeller: then the account's profile is
// authoritative) or another; for another seller the Art. 59c facts
// (threshold exceeded, opted for destination) are unknown unless the body
// states them, and DetermineWithUnknowns answers MANUAL_REVIEW_REQUIRED
// (seller_threshold_unknown) when they change the answer: the engine never
// guesses which VAT a seller owes.
//
// # Errors
//
// Every validation problem is a *fiscal.Error with code BAD_REQUEST and
// the JSON pointer of the offending member.
package parties
