// Package vies looks up VAT identification numbers in the registries that can
// confirm them (EU VIES, UK HMRC) and reports valid, invalid or unavailable,
// with the registry's proof.
//
// B2B reverse charge is lawful only with a customer VAT number the supplier
// had confirmed through VIES (Art. 18(1) of Implementing Regulation
// 282/2011, https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32011R0282),
// judged at the time of the sale (Art. 25), so the answer and its proof
// (VIES requestIdentifier, HMRC consultationNumber, request date) are kept on
// the fiscal record. Registries are slow and often down; the one promise of
// this package is that an outage is never reported as "invalid".
//
// The engine depends on the [Checker] interface. [Service] is the real one:
//
//	syntax (injected SyntaxFunc; a failure is invalid without a network call)
//	→ route: GB → HMRC; EU-27 with EL for Greece, and XI → VIES; others unsupported
//	→ cache (valid and invalid answers, each with its own TTL)
//	→ one registry call in flight per number (concurrent lookups share it)
//	→ per-country rate limit → call → retry transient faults with backoff
//	→ cache the definitive answer
//
// [VIESClient] and [HMRCClient] make exactly one call each and classify the
// reply. [Fake] is an in-memory Checker for tests. [New] builds a Service
// from one [Config] (mode live/off, base URLs, requester numbers, TTLs, rate
// limits); in mode off no network call is made and every syntactically valid
// number is unavailable (REGISTRY_OFF), which the engine turns into a pending
// review, never a guess.
//
// # Results
//
// [Result.Status] is one of:
//
//   - valid: the registry confirmed the number. Name and Address are the
//     registry's, verbatim ("---" when a member state does not disclose them).
//   - invalid: a definitive "no". Only these faults: SYNTAX (the injected
//     syntax/check-digit function), INVALID (VIES valid:false without a
//     fault), INVALID_INPUT (VIES INVALID_INPUT; HMRC 400 about the target
//     VRN), NOT_FOUND (HMRC 404 NOT_FOUND).
//   - unavailable: anything else, with the fault code: the registry's own
//     (MS_UNAVAILABLE, MS_MAX_CONCURRENT_REQ, SERVICE_UNAVAILABLE, TIMEOUT,
//     SERVER_BUSY, GLOBAL_MAX_CONCURRENT_REQ…, IP_BLOCKED, VAT_BLOCKED,
//     INVALID_REQUESTER_INFO), HTTP_<status> for an HTTP error without a
//     registry code, or this package's: TIMEOUT, NETWORK, MALFORMED_RESPONSE,
//     CANCELED, RATE_LIMITED, UNSUPPORTED_NUMBER, REGISTRY_OFF, AUTH_FAILED.
//
// [Transient] says which unavailable faults are retried: NETWORK, TIMEOUT,
// HTTP_429, HTTP_5xx, SERVICE_UNAVAILABLE, MS_UNAVAILABLE, SERVER_BUSY and
// every *_MAX_CONCURRENT_REQ* (the fault codes of the VIES WSDL,
// https://ec.europa.eu/taxation_customs/vies/checkVatService.wsdl). The rest would fail the same way
// again (IP_BLOCKED is made worse by retrying).
//
// # Wire format
//
// A Result is stored as JSON on the fiscal record; testdata/results.golden.json
// pins it. Members: status, registry ("VIES" | "HMRC", "" when none was asked),
// countryCode (VIES code: EL, XI, DE…; "GB" for HMRC), vatNumber (body without
// prefix), name?, address?, requestDate (RFC 3339, the registry's own date and
// offset when it sent one, else the injected clock), requestIdentifier?, fault?,
// detail? (human text, not for branching), attempts? (registry calls made),
// cached? (served from the cache; the proof is the original consultation's).
// Members are only ever added.
//
// VIES (REST, https://ec.europa.eu/assets/taxud/vow-information/swagger_publicVAT.yaml):
// POST {base}/check-vat-number
// with {countryCode, vatNumber, requesterMemberStateCode, requesterNumber}; the
// requester members are sent only when both are configured, and only then
// does VIES return a requestIdentifier. The reply is decided in this order:
//
//  1. Not a JSON object: HTTP 200 → MALFORMED_RESPONSE; otherwise HTTP_<status>.
//  2. CommonResponse (actionSucceed:false or errorWrappers), whatever the HTTP
//     status: invalid INVALID_INPUT when every error code is INVALID_INPUT;
//     otherwise unavailable with the first other code. No code: HTTP_<status>
//     (MALFORMED_RESPONSE on 200).
//  3. Any other non-200: HTTP_<status>, even if it carries valid:true.
//  4. userError (the GET /ms/… shape; read on POST replies too, should a proxy
//     or a later API version send it): VALID and INVALID are
//     answers; INVALID_INPUT is invalid once 5 and 6 hold (valid:true beside
//     it is contradictory); any other code is that fault — faults
//     arrive as HTTP 200 with valid:false and name "---", and are never invalid.
//  5. valid (or isValid; both present must agree) absent → MALFORMED_RESPONSE.
//     valid:true with userError INVALID, or valid:false with userError VALID,
//     is contradictory → MALFORMED_RESPONSE: a proof must be unambiguous.
//  6. An echoed countryCode or vatNumber (prefix and separators ignored) of a
//     different number, or an unreadable requestDate → MALFORMED_RESPONSE.
//     requestDate may be RFC 3339 (with offset, optional fraction), a date
//     with offset ("2026-09-14+02:00", the SOAP form) or a bare date (UTC).
//  7. valid:false → invalid (INVALID); valid:true → valid.
//
// HMRC ("Check a UK VAT number" v2;
// https://github.com/hmrc/vat-registered-companies-api/blob/main/public/api/conf/2.0/application.yaml): GET
// {base}/organisations/vat/check-vat-number/lookup/{target}[/{requester}] with
// Accept: application/vnd.hmrc.2.0+json and a bearer token from POST
// {TokenURL} (client_credentials, scope read:vat; cached until a tenth of its
// lifetime, at most a minute, before expiry). 200 → valid (address lines,
// postcode and country joined by "\n"; consultationNumber is the
// requestIdentifier); 404 NOT_FOUND → invalid, any other 404 (gateway
// MATCHING_RESOURCE_NOT_FOUND) → HTTP_404; 400 INVALID_REQUEST → invalid
// INVALID_INPUT when it concerns the target (always, when no requester is in
// the path; otherwise when the message names targetVrn), unavailable HTTP_400
// when it names requesterVrn or neither; 403 (requester not registered) →
// HTTP_403: a configuration problem is not an invalid buyer; 401 → one token
// refresh, then AUTH_FAILED; 429 and 5xx → HTTP_<status>. A GB number that is
// not 9 or 12 digits (GBGD…, GBHA…) is UNSUPPORTED_NUMBER: the API cannot
// check it, so it goes to manual review.
//
// # Retries, rate limits and cache
//
// Each registry call gets its own timeout (default 10 s). Transient faults
// are retried up to MaxAttempts calls in all (default 3), waiting a uniformly
// random time in [0, min(MaxBackoff, BaseBackoff·2ⁿ⁻¹)) before retry n ("full
// jitter", defaults 1 s and 8 s); no retry is started whose wait would end
// after the caller's deadline. Every call first takes a slot from a token
// bucket per registry country code (golang.org/x/time/rate; default 1/s,
// burst 5): VIES caps concurrency per member state and Germany trips
// MS_MAX_CONCURRENT_REQ daily. A slot that would come only after the caller's
// deadline is given back and the lookup is RATE_LIMITED. Valid answers are
// cached for ValidTTL (default 12 h), invalid ones for InvalidTTL (default
// 1 h), keyed by the VIES country code and the body returned by the syntax
// function (so GR… and EL… share an entry); unavailable answers are never
// cached, nor is a valid answer without the requestIdentifier or
// consultationNumber a configured requester number should have brought
// (the next lookup may get the proof). The cache is bounded (default 10 000 entries, least recently used
// out first).
//
// # Errors
//
// Lookups do not return errors: everything a caller branches on is in
// Result.Status and Result.Fault (compare with the Fault* constants and
// [Transient], never Detail). Configuration errors from [NewService], [New]
// and [ParseMode] wrap [ErrConfig]. A requester number that is configured but
// unusable makes every lookup unavailable with INVALID_REQUESTER_INFO, rather
// than lookups silently made without proof.
//
// # Determinism
//
// No package state changes after init. Clock, jitter source and sleep are
// injected ([ServiceConfig].Clock, Rand, Sleep; the clients' Clock), so with
// fixed ones a Result depends only on the registry's reply. Registry dates
// keep their offset in a fixed zone, never the machine's Local. Detail texts
// of transport failures quote the Go error and are not reproducible; the
// other members are.
//
// This package states what a registry said; it is not tax advice.
package vies
