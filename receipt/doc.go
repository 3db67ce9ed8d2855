// Package receipt signs fiscal receipts and verifies them offline, including
// their proof of inclusion in the ledger's Merkle log.
//
// A receipt says, under the service's Ed25519 key, what fiscal record the
// service made of one settled payment, and proves that this statement sits
// at a given index of the service's append-only log. Anyone can check both
// with three inputs and no network: the receipt document, the receipt key
// set (JWKS, GET /.well-known/jwks.json) and the log's verifier key. This
// page is the specification of the format service.receipt/1.0.0 (frozen)
// and service.receipt/2.0.0 (experimental). A breaking change gets a new
// spec version (service-spec §9); fields are deprecated, never renamed.
//
// # Wire format
//
// The document served at GET /v1/receipts/{id} is a JSON object with exactly
// these members (Receipt):
//
//	spec        string  "service.receipt/1.0.0" or "service.receipt/2.0.0"; equals claims.spec
//	id          string  the receipt id, "rcpt_" + event id; equals claims.receipt_id
//	claims      object  a readable copy of the signed payload; must equal it as JSON
//	jws         string  compact JWS (RFC 7515 §7.1) over the claims; the Merkle log leaf
//	tlog_proof  string  C2SP tlog-proof@v1: log index, inclusion proof, signed checkpoint
//
// Only jws and tlog_proof carry proof; claims, spec and id are for reading,
// and a verifier checks them against the signed payload.
//
// The JWS protected header is exactly (members in this order, no others):
//
//	1.0.0  {"alg":"EdDSA","kid":<kid>,"typ":"service.receipt+jws"}
//	2.0.0  {"alg":"Ed25519","kid":<kid>,"typ":"service.receipt.v2+jws"}
//
// alg EdDSA is RFC 8037 §3.1; Ed25519 is its fully specified name from RFC
// 9864 §2, which deprecates EdDSA. For an OKP Ed25519 key both mean the same
// algorithm, so a verifier accepts either with either version; typ must be
// the version's. kid is the RFC 7638 thumbprint of the signing key (SHA-256
// over {"crv":"Ed25519","kty":"OKP","x":…}, base64url). The payload is the
// UTF-8 JSON of the claims, written by encoding/json in the field order of
// Claims. All three parts are unpadded base64url in their one canonical
// spelling (no padding, no line breaks, zero trailing bits). Checking the
// signature needs no JOSE library: it is an Ed25519 signature (RFC 8032) by
// the key over the ASCII bytes of header "." payload, exactly as they appear
// in the jws string.
//
// tlog_proof follows c2sp.org/tlog-proof (research §2.2):
//
//	c2sp.org/tlog-proof@v1
//	index <log index, decimal, no leading zeros>
//	<base64 SHA-256>      inclusion proof, RFC 6962 §2.1.1 order: leaf's sibling first
//	…
//	<empty line>
//	<checkpoint>          the signed note, verbatim
//
// The checkpoint is a C2SP tlog-checkpoint signed as a C2SP signed note by
// the log key (a key separate from the receipt key, DESIGN "Ledger"):
//
//	<origin>\n<tree size>\n<base64 RFC 6962 root>\n\n— <origin> <base64(key hash ‖ signature)>\n
//
// Witness cosignatures may follow; verifiers ignore signatures by keys they
// do not know (C2SP signed-note). The log leaf is the jws string's bytes:
// leaf hash = SHA-256(0x00 ‖ jws), node hash = SHA-256(0x01 ‖ left ‖ right)
// (RFC 6962 §2.1). No canonicalisation is needed anywhere.
//
// # Claims
//
// The claims are a JSON object. Types: "string", "int" (a JSON integer),
// "bool", "decimal" (a decimal STRING: digits, optional '.' and digits, no
// exponent; never a JSON number), "money" (a decimal string with exactly two
// decimals, may be negative), "usdc" (a non-negative decimal string with at
// most six decimals, USDC having 6), "date" (YYYY-MM-DD), "time" (RFC 3339
// in UTC, ending in Z), "country" (ISO 3166-1 alpha-2, upper case). A member
// marked "optional" is omitted when absent, never null or "". Top level:
//
//	spec             string    SpecV1 or SpecV2
//	receipt_id       string    "rcpt_" + event_id
//	event_id         string    "x402-" + 1..128 of [0-9A-Za-z_-]
//	iat              int       issue time, unix seconds; judged against the key window
//	iss              string    optional: the issuing service's origin
//	environment      string    "production" or "sandbox"
//	watermark        string    sandbox only, and then exactly SandboxWatermark
//	custody          string    always "none"
//	jurisdiction     string    "eu-vat" with 1.0.0; "uk-vat" with 2.0.0 (service-spec jurisdiction table)
//	ruleset          string    ruleset version, "<jurisdiction>-…", e.g. "eu-vat-oss-2026.09"
//	review_status    string    "PROCESSED" or "PENDING_MANUAL_REVIEW"
//	review_reasons   [string]  present exactly when PENDING_MANUAL_REVIEW: why
//	supersedes       string    optional: id of the receipt this one amends
//	settlement       object    the payment (below)
//	seller           object    legal_name string; vat_number string optional; country country
//	buyer            object    merchant-attested, all optional (below)
//	classification   object    optional: the VAT determination (below)
//	fx               object    optional: conversion to EUR (below); absent when no rate was available
//	fx_gbp           object    2.0.0 only, optional: conversion to GBP, the shape of fx with _gbp amounts
//	invoice          object    optional: id string; ubl_sha256 string (lower-case hex SHA-256 of the UBL bytes)
//	fee              object    optional: model "basis_points"; bps decimal; accrued_eur money; label string optional
//	log              object    origin string (the checkpoint origin); index int (this JWS's leaf index)
//
// settlement:
//
//	protocol         string    "x402" or "evm-transfer" (service-spec payment protocols)
//	network          string    CAIP-2 chain id, e.g. "eip155:8453"
//	tx_hash          string    for eip155: "0x" + 64 lower-case hex
//	log_index        int       optional: index of the token Transfer log in the transaction
//	asset            string    "USDC"
//	asset_contract   string    optional: token contract (for eip155 an address)
//	amount_usdc      usdc      the settled amount, VAT included (DESIGN "Gross, not net")
//	payer, receiver  string    for eip155: "0x" + 40 hex, case kept (EIP-55)
//	timestamp        time      settlement time as submitted
//	scheme           string    optional: x402 scheme, "exact"
//	chain            object    verification "verified" or "not_performed"; when verified also
//	                           block_number int, block_hash string, block_time time,
//	                           confirmations int (≥ 1), finalized bool; when not_performed nothing else
//
// buyer: country country, postal_code string, vat_number string, name
// string, registry object (the registry answer relied on: registry string,
// e.g. "vies" or "hmrc"; status string; number string; request_identifier
// string optional, VIES requestIdentifier or HMRC consultation number;
// checked_at time). All optional.
//
// classification: status string (required); then, each optional and present
// when the ruleset produced it: regime, oss_scheme, category (UNCL5305),
// rate_percent decimal, taxing_country country, vatex (CEF VATEX code),
// legal_basis, invoice_note, buyer_treatment, rate_table (rate data
// version), rate_effective_from date, reasons [string].
//
// fx (and fx_gbp with "USDC/GBP", usd_per_gbp, gross_gbp, net_gbp, vat_gbp):
//
//	pair             string    "USDC/EUR"
//	amount_usdc      usdc      equal to settlement.amount_usdc
//	usdc_usd_rate    decimal   USD per USDC, "1" under the peg assumption
//	usdc_usd_source  string    where that rate comes from, "peg" for the 1:1 assumption
//	usd_per_eur      object    the reference rate: raw decimal (as published), rate_date date,
//	                           requested_date date, policy string, source string, snapshot string optional
//	gross_eur        money     the settled amount in EUR
//	net_eur, vat_eur money     optional, both or neither; net_eur + vat_eur = gross_eur exactly
//	rounding         string    rounding rule and stage, e.g. "half-away-from-zero,scale=2,per-document"
//
// The format checks shape and syntax, not tax content: whether a rate or a
// regime is right is the ruleset's claim, signed and shown, for the auditor
// to judge. Sign refuses claims that break these rules (*ClaimsError with a
// JSON pointer), so the service never issues a receipt Verify rejects.
//
// # Verifying
//
// Verify(receiptJSON, jwks, logVerifierKey) checks, in order: the document
// parses; the JWS is canonical with the header above; the kid names exactly
// one key in the JWKS, an Ed25519 key whose kid is its own thumbprint, not
// revoked; the signature; the payload decodes to Claims exactly; the key's
// window holds nbf ≤ iat < exp; readable claims, spec and id equal the
// signed ones; the claims follow the rules above; the tlog-proof parses; the
// checkpoint carries a valid signature by the log key; its origin is
// claims.log.origin; the proof index is claims.log.index; the proof leads
// from SHA-256(0x00 ‖ jws) to the checkpoint root.
//
// testdata/verify.mjs makes the same checks, except the field rules of
// "# Claims", in under 300 lines of Node.js (18 or later) using only its
// built-in crypto module: a second implementation that shares no code with
// this one, and a starting point for auditors working in other languages:
//
//	node verify.mjs receipt.json jwks.json "$(cat log.vkey)"
//
// The files under testdata/ (receipts of both versions, a pending and a
// sandbox receipt, their key sets and log keys) are test vectors.
//
// A verified receipt proves that the service signed these claims and logged
// them at log.index of a tree it committed to. It does not prove that the
// checkpoint is the newest or that the log shows everyone the same tree:
// auditors keep the checkpoints they see and check consistency proofs
// between them (ledger package), and may require witness cosignatures.
//
// # Keys and rotation
//
// The JWKS lists every key that ever signed receipts, with members kty
// "OKP", crv "Ed25519", x, kid, use "sig", nbf (unix seconds), exp (absent
// while active) and revoked (true for a key that must no longer be trusted).
// A receipt is valid under a key when nbf ≤ iat < exp; retired keys stay in
// the set so that receipts stay verifiable for the ten-year OSS retention
// (research §3.4). Keys carry no alg member because one key signs both
// versions. Auditors should archive the JWKS and the log verifier key with
// the receipts.
//
// A Keyring keeps one environment's keys in the data directory:
// <name>.key (PKCS#8 PEM, mode 0600; a looser mode is refused), and
// <name>.jwks.json. OpenKeyring creates both on first start. The operator
// rotates the receipt key as follows:
//
//  1. Back up the data directory (the JWKS file above all: losing it makes
//     old receipts unverifiable).
//  2. Call Keyring.Rotate: from the running server's operator command, or
//     from a maintenance program while the server is stopped (one process
//     owns the directory). The active key gets exp = now, a new key gets
//     nbf = now; the retired private key is deleted, its public half and
//     window stay in the JWKS.
//  3. Republish: GET /.well-known/jwks.json serves the new set at once;
//     tell auditors to refresh their archived copy.
//
// If a retired private key may have leaked, Keyring.Revoke marks it revoked:
// all receipts it signed then fail with StepKeyRevoked, since a thief could
// have backdated receipts into its window; re-issue them under the new key.
// To revoke the active key, rotate first. Rotation is crash-safe; see Rotate.
//
// # Sandbox
//
// Sandbox receipts (POST /sandbox/v1/simulate) have environment "sandbox"
// and the watermark claim, and are signed by the "sandbox" keyring, whose
// keys never enter the production JWKS: a sandbox receipt verified against
// the production key set fails at StepKid. A keyring's signer refuses claims
// of the other environment (ErrWrongEnvironment).
//
// # Version 2.0.0 (experimental)
//
// service.receipt/2.0.0 serves the experimental uk-vat jurisdiction, behind
// the same Sign and Verify. It differs from 1.0.0 in: JWS alg "Ed25519" (RFC
// 9864) and typ "service.receipt.v2+jws"; jurisdiction "uk-vat"; the
// optional fx_gbp section, and fx being as optional as in 1.0.0 (a UK record
// needs no EUR figures, and sterling figures are absent when no GBP rate was
// available). It may change incompatibly until it is frozen.
//
// # Errors
//
// Verify returns a *VerifyError whose Step (StepSignature, StepInclusion, …)
// says which check failed; the message says why. Sign returns a *ClaimsError
// (errors.Is ErrInvalidClaims) for claims outside the format, and
// ErrWrongEnvironment. ParseTlogProof errors match ErrMalformedTlogProof.
// Keyring errors: ErrKeyFileMode, ErrKeyringInconsistent,
// ErrOutsideKeyWindow, ErrRevokeActive; KeySet.Lookup: ErrUnknownKey.
//
// # Determinism
//
// Ed25519 signatures are deterministic and the payload is json.Marshal of a
// struct, so the same claims and key always give the same JWS; Assemble's
// output is a function of its inputs. Nothing here reads a clock: the caller
// sets iat and passes now and the random source to OpenKeyring and Rotate.
// Verify compares JSON as values, not bytes, so a receipt stays verifiable if
// a future encoding/json writes the readable copy differently.
package receipt
