// Package webhooks delivers an engine's outbox events to merchants'
// endpoints as signed HTTP POSTs, and lets receivers verify them.
//
// New(engine, Options{}) returns the Service of an engine: the endpoints
// (from the configuration and the API) with their sealed secrets, and the
// dispatcher that sends each outbox event on a retry Schedule through the
// HTTP sender that makes it safe to point at a merchant's URL; the engine's
// Close stops it. Receivers use Verify or VerifyRequest to check what they
// receive.
//
// # Wire format
//
// A delivery is an HTTP POST of a JSON body with these headers:
//
//	Content-Type: application/json
//	X-Service-Timestamp: 1776086400
//	X-Service-Signature: v1=<hex>[,v1=<hex>]
//	X-Service-Event-Id: evt_x402-…        (equals the body's "id"; stable across attempts)
//	X-Service-Event-Type: settlement.processed
//	X-Service-Delivery-Id: dlv_…          (unique per attempt, for support and logs)
//	X-Service-Attempt: 1                  (1, 2, … per event and endpoint)
//
// The body is {"id", "type", "created", "sequence", "data", "checkpoint"}:
// the event id, its type, when the entry was recorded (RFC 3339 UTC), the
// ledger index (for ordering and gap detection), the fiscal record as stored
// in that entry, and the latest signed log checkpoint (C2SP tlog-checkpoint
// text). Fields may be added; event type names never change (README
// "Webhooks").
//
// # Signature
//
// The v1 signature is the lower-case hex of HMAC-SHA256 keyed with the
// endpoint secret's bytes as written (the whole "whsec_…" string, not
// base64-decoded) over the X-Service-Timestamp value, a dot, and the raw
// body (the service's signing contract, README "Webhooks": HMAC-SHA256 over
// the string timestamp.rawBody; the same construction as Stripe's v1 scheme,
// https://docs.stripe.com/webhooks, "Verify signatures manually"). While a
// secret is being rotated, each active secret adds its own v1 entry, so a
// receiver holding either the old or the new secret verifies. Every attempt
// is signed again with a fresh timestamp.
//
// Test vector (our own, computed with the algorithm above and checked with
// openssl dgst -sha256 -hmac; TestPublishedTestVector fixes it): secret
// "whsec_test", timestamp 1776086400, body
// {"id":"evt_1","type":"record.created"} gives
//
//	v1=da7aabf2a8cbe3ede8002c04520d915d351b1a94522c472e7ebf7b8997494adc
//
// # Verifying
//
// A receiver reads the raw body, checks that X-Service-Timestamp is within
// the tolerance of its clock (default 300 s, in both directions), computes
// the v1 signature with each of its secrets and accepts when one equals one
// of the header's v1 entries, comparing in constant time. Entries of unknown
// schemes are ignored. Deliveries are at least once: deduplicate on the
// event id, the signed body's "id" (the headers are not signed:
// VerifyRequest refuses X-Service-Event-Id and X-Service-Event-Type that
// differ from the body's "id" and "type"). They are not ordered: order by
// "sequence".
//
// # Retries
//
// 2xx means delivered. 410 means the receiver is gone: the endpoint is
// disabled. Anything else, a redirect (3xx, never followed), a timeout (10 s)
// or a refused address is retried on a Schedule: exponential backoff from
// 30 s, doubling to at most 8 h, each delay drawn within ±20 % (jitter), for
// up to 72 h after the first attempt, about 19 attempts. On 429 and 503 a
// Retry-After is honoured: the next attempt is never earlier.
//
// # Cost to the ledger
//
// The dispatcher keeps its state in the ledger's side buckets, whose
// writes share bbolt's one writer (and its fsyncs) with the ledger's
// commits; it writes only what deliveries need. Events no endpoint receives
// cost no write: the fan-out cursor passes them in memory and is stored
// with the next write, every 16,384 events, or on Close (after a crash the
// next start reads them again, and finds them again for nobody). Under
// load, fan-out writes come at most every 20 ms, claims every 5 ms and the
// attempts' outcomes, stored together, every 20 ms, each covering all that
// arrived meanwhile: a bounded number of writes a second whatever the
// commit rate, for at most 20 ms more before a first attempt starts. Once
// idle, the first write of each kind goes at once.
//
// # Retention and monitoring
//
// Every (endpoint, event) pair keeps a delivery state. Prune removes the
// states that finished (delivered, failed, cancelled) before a cutoff; a
// pending delivery is never removed, and neither are endpoints, the outbox
// or any ledger entry, so a pruned event can still be listed and
// redelivered. Stats reads the backlog (pending deliveries and when the
// earliest was due), the failed deliveries still retained and the
// endpoints' health.
//
// # Target addresses
//
// HTTPSender checks every address it connects to, after DNS resolution, in
// its net.Dialer's Control hook: only public unicast addresses unless the
// TargetPolicy allows loopback or private ones. Link-local (cloud metadata),
// multicast, unspecified and reserved addresses are always refused;
// IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they
// carry. Redirects are not followed and proxy variables are ignored.
//
// # Errors
//
// Verify returns ErrNoSecret (no secret, or only empty ones),
// ErrBadTimestamp, ErrTimestampOutOfTolerance, ErrMissingSignature or
// ErrSignatureMismatch (possibly wrapped: use errors.Is). The sender returns ErrAddressNotAllowed, ErrTimeout or the
// network error; TargetPolicy.CheckURL returns ErrBadURL or
// ErrAddressNotAllowed. The Service's methods return *fiscal.Error, with
// the codes CodeLimitReached and CodeEndpointConflict of this package
// besides the engine's.
//
// # Determinism
//
// Signing is a pure function of secret, timestamp and body. Schedule.Next is
// a pure function of its arguments: the jitter is drawn by the caller from
// its injected randomness.
package webhooks
