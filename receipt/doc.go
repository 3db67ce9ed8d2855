// Package receipt signs fiscal receipts and verifies them offline, including
// their proof of inclusion in the ledger's Merkle log.
//
// A receipt says, under the service's Ed25519 key, what fiscal record the
// service made of one settled payment, and proves that this statement sits
// at a given index of the service's append-only log. Anyone can check both
// with three inputs and no network: the receipt document, the receipt key
// set (JWKS, GET /.well-known/jwks.json) and the log's verifier key (GET
// /.well-known/log-key). This page is the specification of the formats
// service.receipt/1.0.0 (frozen), 2.0.0 (experimental), 3.0.0 (frozen) and
// 4.0.0 (issued for new receipts). A breaking change gets a new spec
// version and a deprecation period; fields are deprecated, never renamed.
//
// # Wire format
//
// The document served at GET /v1/receipts/{id} is a JSON object with exactly
// these members (Receipt), in versions 1.0.0 to 3.0.0:
//
//	spec        string  "service.receipt/1.0.0", "…/2.0.0" or "…/3.0.0"; equals claims.spec
//	id          string  the receipt id, "rcpt_" + event id; equals claims.receipt_id
//	claims      object  a readable copy of the signed payload; must equal it as JSON
//	jws         string  compact JWS (RFC 7515 §7.1) over the claims; the Merkle log leaf
//	tlog_proof  string  C2SP tlog-proof@v1: log index, inclusion proof, signed checkpoint
//
// Only jws and tlog_proof carry proof; claims, spec and id are for reading,
// and a verifier checks them against the signed payload. A 4.0.0 document
// has payload (the log leaf, unpadded base64url) in place of jws: see
// "# Version 4.0.0".
//
// The JWS protected header is exactly (members in this order, no others):
//
//	1.0.0  {"alg":"EdDSA","kid":<kid>,"typ":"service.receipt+jws"}
//	2.0.0  {"alg":"Ed25519","kid":<kid>,"typ":"service.receipt.v2+jws"}
//	3.0.0  {"alg":"Ed25519","kid":<kid>,"typ":"service.receipt.v3+jws"}
//
// alg EdDSA is RFC 8037 §3.1; Ed25519 is its fully specified name from RFC
// 9864 §2, which deprecates EdDSA. For an OKP Ed25519 key both mean the same
// algorithm, so a verifier accepts either with any version; typ must be
// the version's. kid is the RFC 7638 thumbprint of the signing key (SHA-256
// over {"crv":"Ed25519","kty":"OKP","x":…}, base64url). The payload is the
// UTF-8 JSON of the claims, written by encoding/json in the field order of
// Claims (3.0.0: of the member list in "# Version 3.0.0"). All three parts
// are unpadded base64url in their one canonical spelling (no padding, no
// line breaks, zero trailing bits). Checking the signature needs no JOSE
// library: it is an Ed25519 signature (RFC 8032) by the key over the ASCII
// bytes of header "." payload, exactly as they appear in the jws string.
// Sign writes exactly these bytes itself (the header is fixed per key and
// version, the payload is marshalled once); the 1.0.0 and 2.0.0 test
// vectors, first written with go-jose, are reproduced byte for byte.
//
// tlog_proof follows C2SP tlog-proof
// (https://github.com/C2SP/C2SP/blob/main/tlog-proof.md):
//
//	c2sp.org/tlog-proof@v1
//	index <log index, decimal, no leading zeros>
//	<base64 SHA-256>      inclusion proof, RFC 6962 §2.1.1 order: leaf's sibling first
//	…
//	<empty line>
//	<checkpoint>          the signed note, verbatim
//
// The checkpoint is a C2SP tlog-checkpoint signed as a C2SP signed note by
// the log key (https://c2sp.org/tlog-checkpoint, https://c2sp.org/signed-note;
// the log key is distinct from the receipt key, ledger/doc.go):
//
//	<origin>\n<tree size>\n<base64 RFC 6962 root>\n\n— <origin> <base64(key hash ‖ signature)>\n
//
// Witness cosignatures, and since 4.0.0 the receipt key's (below), may
// follow; verifiers ignore signatures by keys they do not know (C2SP
// signed-note). The log leaf is the jws string's bytes:
// leaf hash = SHA-256(0x00 ‖ jws), node hash = SHA-256(0x01 ‖ left ‖ right)
// (RFC 6962 §2.1). No canonicalisation is needed anywhere.
//
// # Claims
//
// The claims are a JSON object. Types: "string", "int" (a JSON integer),
// "bool", "decimal" (a decimal STRING: digits, optional '.' and digits, no
// exponent; never a JSON number), "money" (a decimal string with exactly two
// decimals, may be negative), "exact" (3.0.0: a decimal string with at most
// twelve decimals, may be negative: an unrounded amount), "usdc" (a
// non-negative decimal string with at most six decimals, USDC having 6),
// "date" (YYYY-MM-DD), "time" (RFC 3339 in UTC, ending in Z), "country"
// (ISO 3166-1 alpha-2, upper case), "currency" (ISO 4217 alphabetic code,
// upper case), "commitment" (see "# Commitments"). A member marked
// "optional" is omitted when absent, never null or "". Top level of 1.0.0
// and 2.0.0 (3.0.0 differs as "# Version 3.0.0" says):
//
//	spec             string    SpecV1 or SpecV2
//	receipt_id       string    "rcpt_" + event_id
//	event_id         string    "x402-" + 1..128 of [0-9A-Za-z_-]
//	iat              int       issue time, unix seconds; judged against the key window
//	iss              string    optional: the issuing service's origin
//	environment      string    "production" or "sandbox"
//	watermark        string    sandbox only, and then exactly SandboxWatermark
//	custody          string    always "none"
//	jurisdiction     string    "eu-vat" with 1.0.0; "uk-vat" with 2.0.0 (the jurisdictions of GET /v1/capabilities)
//	ruleset          string    ruleset version, "<jurisdiction>-…", e.g. "eu-vat-oss-2026.09"
//	review_status    string    "PROCESSED" or "PENDING_MANUAL_REVIEW"
//	review_reasons   [string]  present exactly when PENDING_MANUAL_REVIEW: why
//	supersedes       string    optional: id of the receipt this one amends (of any version)
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
//	protocol         string    "x402" or "evm-transfer" (the payment protocols of GET /v1/capabilities)
//	network          string    CAIP-2 chain id, e.g. "eip155:8453"
//	tx_hash          string    for eip155: "0x" + 64 lower-case hex
//	log_index        int       optional: index of the token Transfer log in the transaction
//	asset            string    "USDC"
//	asset_contract   string    optional: token contract (for eip155 an address)
//	amount_usdc      usdc      the settled amount, VAT included (the buyer pays the gross)
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
// to judge. Sign and Seal refuse claims that break these rules
// (*ClaimsError with a JSON pointer), so the service never issues a
// receipt Verify rejects.
//
// # Version 3.0.0
//
// service.receipt/3.0.0 serves both jurisdictions (eu-vat and uk-vat) and
// is what the engine issues for new receipts. It answers three issues: the
// public receipt must not show personal data or have a guessable id (19),
// the receipt must be signable before its log position is known (22), and
// amounts need their exact values beside the rounded ones. Its payload is
// the 1.0.0 claims with these differences (the Go view is still Claims;
// the signed form is written from a narrower struct, so a personal field
// cannot be signed in clear by mistake):
//
//	spec             string    SpecV3; JWS typ TypeV3, alg Ed25519 (EdDSA accepted)
//	event_id         string    "x402-" + 32..128 of [0-9A-Za-z_-]: room for ≥ 128 bits, see "Ids"
//	jurisdiction     string    "eu-vat" or "uk-vat"
//	settlement       object    without tx_hash, log_index, payer, receiver (committed)
//	settlement.chain object    without block_number, block_hash (committed)
//	buyer            object    country country optional; registry {registry, status, checked_at}
//	                           optional (number and request_identifier committed);
//	                           location_evidence optional, below; name, postal_code,
//	                           vat_number committed, never in clear
//	fx               object    as 1.0.0, plus gross_eur_exact exact optional, and
//	                           net_eur_exact, vat_eur_exact exact (both or neither, only with
//	                           gross_eur_exact and net_eur), net + vat = gross exactly
//	fx_tax_currency  object    optional, below; replaces 2.0.0's fx_gbp (refused in 3.0.0)
//	invoice          object    optional: id string only (the UBL hash is committed)
//	commitments      object    JSON pointer → commitment, see "# Commitments"
//	log              object    origin string only: the index is not signed
//
// The member order of the payload is: spec, receipt_id, event_id, iat, iss,
// environment, watermark, custody, jurisdiction, ruleset, review_status,
// review_reasons, supersedes, settlement {protocol, network, asset,
// asset_contract, amount_usdc, timestamp, scheme, chain {verification,
// block_time, confirmations, finalized}}, seller, buyer {country, registry,
// location_evidence}, classification, fx, fx_tax_currency, invoice, fee,
// commitments (members sorted), log {origin}.
//
// location_evidence is a list of the items of evidence of the customer's
// location the merchant relied on (Art. 24b and 24f Implementing Regulation
// (EU) No 282/2011): each {kind string, country country}, kind lower-case
// [a-z][a-z0-9_]*, e.g. billing_address, ip_address, bank_details,
// sim_country_code, fixed_line_location, other (Art. 24f (a) to (f)). The
// kinds and countries stay in clear, so an auditor sees two
// non-contradictory items; each item's value (the address, the IP address)
// is committed at /buyer/location_evidence/<i>/value, an item given
// without its datum by committing "" (every item has its commitment).
//
// fx_tax_currency is the conversion to the national currency of the taxing
// state, in which the VAT payable must be expressed (Art. 230 Directive
// 2006/112/EC, converted by the mechanism of Art. 91(2)): currency currency
// (not "EUR": euro figures are fx), pair "USDC/" + currency, amount_usdc,
// usdc_usd_rate, usdc_usd_source as in fx, usd_per_unit (the rate object of
// fx: US dollars per one unit of currency, e.g. the ECB cross rate
// USD/EUR ÷ PLN/EUR), gross money, net and vat money (both or neither, net
// + vat = gross), gross_exact, net_exact, vat_exact exact (as in fx),
// rounding. Every currency that can be due here (BGN, CZK, DKK, GBP, HUF,
// PLN, RON, SEK) has two decimals in ISO 4217, hence money. For uk-vat it
// carries the sterling figures (currency "GBP").
//
// Why the index is outside the signature. A 1.0.0 payload contains
// log.index, so it could only be signed inside the ledger's write
// transaction, after the index was assigned: one Ed25519 signature per
// record on the single committer. In 3.0.0 everything signed is known
// before the record enters the committer (the log origin included: it is
// fixed per log), so the caller's goroutine signs the receipt and the
// committer only assigns indexes, writes, hashes leaves and signs one
// checkpoint per commit. The position is still bound, by the log: the
// inclusion proof leads from SHA-256(0x00 ‖ jws) at the proof's index to
// the root of a checkpoint the log key signed, and that checkpoint's origin
// must be claims.log.origin. Verify takes the index from the proof and
// returns it in Claims.Log.Index.
//
// What an attacker can and cannot do with this. Nobody without the receipt
// key can make a JWS, and nobody without the log key can make a checkpoint,
// so a valid 3.0.0 receipt still proves that the service signed these
// claims and that its log holds them under a checkpoint it signed. A proof
// from another log fails (the origin is signed). What the receipt key alone
// no longer fixes is the index: whoever holds the log key (the operator, or
// a thief of both keys) could append one valid JWS twice, at two indexes,
// and serve either proof. Each proof would verify; the log would then hold
// two leaves for one receipt id. That is detectable, and auditors must
// check it: a receipt id is unique within a log (the ledger appends each
// event once), so a log in which two leaves carry the same receipt_id
// (LeafReceiptID reads it from a leaf) is inconsistent, and ledger checks
// and auditor tools that walk the log report it. An auditor who counts
// receipts counts distinct receipt ids, never leaves. Replaying a JWS
// changes no fiscal fact: the claims, iat and key window are the signed
// ones. The 1.0.0 binding was no stronger against the log key's holder, who
// could equally have withheld or reordered entries before signing
// checkpoints; consistency between checkpoints (RFC 6962 §2.1.2,
// https://www.rfc-editor.org/rfc/rfc6962#section-2.1.2) is the
// defence against a log that rewrites itself, in both versions.
//
// Ids. A 3.0.0 (and 4.0.0) receipt id must not be guessable (issue 19):
// the engine derives the event id as a keyed MAC (HMAC-SHA256 under a server secret of
// "network:txHash", at least 128 bits) or draws it at random, and the
// format requires room for 128 bits in hex (32 characters). The format
// cannot tell a MAC from a plain hash; 1.0.0 ids, which the engine derived
// from the transaction hash alone, stay valid for 1.0.0 receipts.
//
// Content binding. The engine binds the stored record and the UBL invoice
// to the receipt through the committed fields /record_sha256 (lower-case
// hex SHA-256 of the record document exactly as stored) and
// /invoice/ubl_sha256, so it can check the bytes it serves against the
// leaf. Both are committed rather than signed in clear because a plain hash
// of a document whose other contents are known (amounts, dates, the seller)
// lets anyone test guesses of its few unknown fields, such as a postal code.
// The record states its own log index (and the invoice its number), so
// /record_sha256 does depend on the position even though the index is not
// signed: the engine seals each receipt at a predicted index and number in
// the request's goroutine (ledger.Predictor) and seals it again in the
// committer only when the prediction missed, which holding an append for a
// predecessor still on its way makes rare (issue 22: 7–11 % of appends at
// 64 callers before, ~0 % after). That needed no format change; 4.0.0
// keeps this binding as it is (sealing again is then an encoding, with no
// signature).
//
// # Version 4.0.0
//
// service.receipt/4.0.0, "signed by inclusion", is what the engine issues
// for new receipts of both jurisdictions. Its claims are exactly 3.0.0's:
// the members, their order, types and rules of "# Version 3.0.0" and "#
// Commitments", with spec "service.receipt/4.0.0" (the Go view is still
// Claims; Conceal and Reveal work as for 3.0.0). What changes is how they
// are signed: there is no JWS and no signature per receipt. The log leaf is
// the claims' JSON itself, and the receipt key signs the log's checkpoints.
//
// The payload P is the UTF-8 JSON of the claims exactly as Seal writes it:
// the member order above, no white space, encoding/json's string escapes
// (what 3.0.0 puts inside its JWS, with the spec changed). It is the leaf:
// leaf hash = SHA-256(0x00 ‖ P). P has one spelling: a verifier decodes it
// and requires its re-encoding to be P byte for byte (so every text in the
// claims is valid UTF-8: Seal refuses other text, which encoding/json
// would write as � and which would then decode to another string), so every 4.0.0 leaf
// begins with {"spec":"service.receipt/4.0.0", (IsLeafV4), and the
// service's other leaves (JWS strings, and the documents of entries
// without a receipt, which begin with another member) can never be read
// as one.
//
// Every checkpoint the ledger writes carries, after the log key's line, a
// C2SP signed-note signature line by the receipt key active at that commit
// (ledger Options.Cosigners, Keyring.Cosigners):
//
//	— <kid> <base64(key hash ‖ Ed25519 signature over the checkpoint text)>
//
// The key name is the key's kid (its RFC 7638 thumbprint, base64url: a
// valid note key name), the key hash the note key hash of (kid, 0x01 ‖
// public key): the first 4 bytes of SHA-256(kid ‖ 0x0A ‖ 0x01 ‖ key),
// NoteKeyHash; Key.NoteVerifierKey writes the key in note form. A verifier
// that does not know the key ignores the line (C2SP signed-note), so
// receipts of earlier versions, the ledger's own checks and existing
// auditors are unaffected. The document is:
//
//	spec        string  "service.receipt/4.0.0"; equals claims.spec
//	id          string  the receipt id; equals claims.receipt_id
//	claims      object  a readable copy of P; must equal it as JSON
//	payload     string  P in canonical unpadded base64url: the log leaf
//	tlog_proof  string  as 3.0.0; its checkpoint carries the receipt key's signature
//
// The service proves each receipt against the checkpoint of the commit that
// appended it (the covering checkpoint, kept forever), which the key active
// at that commit cosigned.
//
// Why 4.0.0. Issue 22: the Ed25519 signature of each receipt, made in the
// request's goroutine, was the largest single CPU item of a settlement (13 %
// of all CPU at 64 concurrent callers, ~60–70 µs of ~550 µs, plus the JOSE
// work around it). 3.0.0 already kept the position out of the signature
// and required every verifier to check the inclusion proof and the
// checkpoint's signature; so the receipt key can sign what the inclusion
// proof already binds the receipt to, the tree head, once per commit, on
// the goroutine that signs the checkpoint off the committer's serial path.
// What it costs an auditor: nothing. Verification was and stays two
// Ed25519 verifications (3.0.0: the JWS and the checkpoint; 4.0.0: the
// checkpoint by the log key and by the receipt key) plus the same
// hashing, and 3.0.0 already needed the proof, the log key and the key set.
// What it saves the service: one Ed25519 signature per receipt, replaced
// by one per commit (a commit holds many receipts under load), and the
// base64 of the JWS; the leaf is shorter by the header and signature.
// Measured through fiscal's BenchmarkSettle at 64 callers on the 2-CPU
// development VM (shared with other work: CPU time is the figure to trust),
// medians of three alternating runs, in two sessions: 601 → 524 and 658 →
// 532 µs of process CPU per settlement (−13 % and −19 %: the signature
// and the JWS around it; not profiled further), 816 → 839 and
// 1,241 → 1,493 records/s, 72 → 68 KB allocated per settlement, the
// allocation count unchanged (about 306).
//
// What an attacker can and cannot do with this. A cosignature by the
// receipt key on a checkpoint says: every leaf of this tree that is a 4.0.0
// payload is a receipt this service issued. A valid 4.0.0 receipt therefore
// needs P to be a leaf of a tree whose checkpoint both keys signed. Nobody
// without the log key can make a checkpoint, and nobody without the
// receipt key can make its cosignature, so forging a receipt needs both
// keys, as in 3.0.0 (a JWS and a checkpoint). A proof from another log
// fails (the origin is in P); a leaf that is not a 4.0.0 payload cannot be
// passed off as one (its bytes would have to decode to 4.0.0 claims and
// re-encode to themselves); a receipt-key signature of one kind cannot be
// taken for the other (a checkpoint text always contains newlines, a JWS
// signing input of a receipt or a statement never does). What the receipt
// key alone no longer fixes, besides the index (as in 3.0.0), is which
// receipts it vouches for one by one: the holder of both keys (the
// operator, or a thief of both) can log any payload, exactly as it could
// sign any JWS and log it in 3.0.0. A payload logged twice is detected as a
// JWS logged twice is: two leaves with one receipt id (LeafReceiptID reads
// P). Every later checkpoint also holds every earlier leaf; a receipt
// proven against a newer checkpoint is valid only if that checkpoint was
// cosigned by a key whose window holds its iat (next paragraph), so a
// newer key cannot vouch for receipts of an older key's time, and
// revoking a key still invalidates every receipt of its window.
//
// Key window. A 4.0.0 receipt is valid when its checkpoint carries a valid
// signature by a key of the JWKS that is not revoked and whose window holds
// nbf ≤ iat < exp: the key vouches for receipts issued within its window,
// as a 3.0.0 key signs them. Every line by a key of the JWKS must verify;
// lines by other keys are ignored. Rotation: a receipt is admitted under
// the active key (Keyring.Hold: environment, nbf ≤ iat, and its iat
// remembered so that Rotate gives the key an exp after it, as for Sign)
// and sealed before its commit; if the key is rotated in between, the
// commit's checkpoint would be cosigned by the new key, whose nbf may be
// after iat. So until the Hold is released (the engine releases it when the
// append is answered), Cosigners keeps the retired key beside the active
// one, and such a checkpoint carries both signatures: the retired key's
// window holds the receipt's iat, the new key's holds the others'. The
// private half of a retired key is deleted from disk at rotation as before
// and kept in memory only while held.
//
// ConcealSeal is Conceal then Seal with the claims checked once: the
// public claims Conceal returns are in the format by construction, and
// Seal's second check of them was about a tenth of the engine's sealing.
// Its leaf, openings and errors are those of Conceal then Seal
// (TestConcealSealMatches: the samples and 20,000 variants with spoiled
// fields, about a fifth accepted; FuzzConcealSeal). BenchmarkConcealSeal,
// process CPU per call, medians of five alternating runs on the loaded
// 2-core VM: 21.4 µs (Conceal, then Seal) -> 17.2 µs (ConcealSeal), 17
// allocations both.
//
// ConcealSealAppend is ConcealSeal writing the leaf into the caller's
// buffer, from the clear claims and their commitments (the payload of
// the public claims, which toV3 never copies a personal field into; no
// public claims are built, and the commitments are a list sorted once,
// not a map). The engine keeps a buffer per receipt in flight and gives
// it back once the leaf is logged. BenchmarkConcealSeal on the 2-core VM,
// five runs each: ConcealSeal 10.3-10.5 µs, 8.2 KB, 18 allocations;
// ConcealSealAppend into a reused buffer 7.7-8.0 µs, 3.9 KB, 10.
// ConcealSeal is now ConcealSealAppend into a pooled buffer and a copy of
// the leaf: three alternated runs, 11.2-12.9 -> 10.7-10.9 µs, 8.2 -> 7.4
// KB, 18 -> 11 allocations.
//
// # Commitments
//
// Each personal field of a 3.0.0 or 4.0.0 receipt appears in the public
// claims only as a commitment, in the commitments object under the JSON
// pointer (RFC 6901) of the field as it would appear in clear:
//
//	commitment = "sha256:" + BASE64URL(SHA-256(lp(tag) ‖ lp(field) ‖ lp(salt) ‖ lp(value)))
//	lp(x)      = 4-byte big-endian length of x ‖ x
//	tag        = "fiscal402/receipt-commitment/v1" (CommitmentTag), domain separation
//	field      = the JSON pointer, e.g. "/buyer/name", UTF-8
//	salt       = 16 to 64 random bytes, fresh for each field of each receipt
//	value      = the field's value as UTF-8 text; integers in decimal, no leading zeros
//
// BASE64URL is unpadded. The committed fields are /settlement/tx_hash,
// /settlement/log_index, /settlement/payer, /settlement/receiver,
// /settlement/chain/block_number, /settlement/chain/block_hash,
// /buyer/name, /buyer/postal_code, /buyer/vat_number,
// /buyer/registry/number, /buyer/registry/request_identifier,
// /buyer/location_evidence/<i>/value, /invoice/ubl_sha256 and
// /record_sha256: the buyer's identity and address, and every identifier
// that finds the transfer on chain and hence the wallets. tx_hash, payer
// and receiver are always committed; block_number and block_hash exactly
// when the chain was verified; registry number exactly with a registry
// section; ubl_sha256 exactly with an invoice; one value per evidence item;
// the others when the record has them. In clear stay what an auditor checks
// the tax by: the buyer's country, evidence kinds and countries, the seller,
// amounts, rates, VAT, classification, dates and times.
//
// The salt makes a commitment hiding (with 128 random bits, testing a
// guessed value means guessing the salt too) and the hash makes it binding
// (no second value opens it; the field name is hashed, so a commitment
// cannot be moved to another field). The service keeps the openings
// (Conceal returns them) with the private record and hands them only to
// the account holder, behind the account's API key; the holder decides whom
// to show which field.
//
// Opening a commitment. An opening is {"field", "value", "salt"} (Opening;
// ParseOpenings reads a JSON array of them). To check one, recompute the
// commitment from field, value and the decoded salt and compare it with
// claims.commitments[field] of a receipt that Verify accepted:
// VerifyOpening does this, Verifier.Verify(receipt, openings...) does it
// for each and returns the claims with the opened values in place (Reveal),
// and testdata/verify.mjs does it without Go (a fourth argument, an
// openings file; or --commit FIELD VALUE SALT to print one commitment).
// Test vector:
//
//	field      /buyer/name
//	value      Jan Kowalski
//	salt       AAECAwQFBgcICQoLDA0ODw  (the bytes 00 01 … 0f)
//	commitment sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA
//
// What commitments do not hide. The amount, the network, the asset and the
// times stay in clear, and a public chain is searchable: someone with a
// chain index who looks for a transfer of exactly this amount of USDC on
// this network around settlement.timestamp (or iat) may find it, and with
// it the wallets. Commitments keep the receipt from stating who paid whom
// and from being a lookup key; they do not make the payment unlinkable.
//
// # Verifying
//
// Verify(receiptJSON, jwks, logVerifierKey) checks, in order: the document
// parses; the JWS is canonical with the header above; the kid names exactly
// one key in the JWKS, an Ed25519 key whose kid is its own thumbprint, not
// revoked, and the JWKS publishes no private key; the signature; the
// payload decodes to claims exactly; the key's window holds nbf ≤ iat <
// exp; readable claims, spec and id equal the signed ones; the claims follow
// the rules above; the tlog-proof parses; the checkpoint carries a valid
// signature by the log key; its origin is claims.log.origin; for 1.0.0 and
// 2.0.0 the proof index is claims.log.index (3.0.0: Verify sets
// claims.Log.Index to it); the proof leads from SHA-256(0x00 ‖ jws) to the
// checkpoint root. NewVerifier parses the JWKS and the log key once for
// many receipts; its Verify also checks openings.
//
// For a 4.0.0 document Verify checks, in order: the document parses (with
// payload in place of jws); the payload is canonical unpadded base64url
// (StepPayload); P decodes to 4.0.0 claims and re-encodes to P byte for
// byte (StepPayload; claims of another version: StepSpec); readable
// claims, spec and id equal P's (StepClaimsMismatch); the claims follow
// the rules (StepSpec); the tlog-proof parses; the checkpoint carries a
// valid signature by the log key and its origin is claims.log.origin; the
// proof leads from SHA-256(0x00 ‖ P) at the proof's index to the
// checkpoint root (StepInclusion; Verify sets claims.Log.Index to the
// index); then the receipt key: the checkpoint carries a signature line
// named by the kid of an Ed25519 key of the JWKS with that key's note key
// hash (StepKid otherwise), every such line verifies (StepSignature), and
// one of those keys is not revoked and holds iat in its window
// (StepKeyRevoked when the keys whose window holds iat are revoked,
// StepKeyWindow otherwise). The receipt key comes last, as the key window
// comes after the signature in 3.0.0: until the proof has authenticated P,
// a changed iat would look like a key problem. Openings as for 3.0.0.
//
// Verify decodes the document once: a strict scan that only delimits the
// readable claims, a decode of the signed payload whose re-encoding must be
// the payload byte for byte (a payload spelt otherwise is compared as JSON
// values, so a receipt stays valid if a future encoding/json writes
// differently), and a byte comparison of the readable claims with the
// payload that ignores white space between tokens, which also proves the
// readable claims strict JSON (when the bytes differ: a strict decode and
// a comparison as JSON values, naming the first difference). A document
// whose readable claims are not strict JSON fails at StepParse with the
// same error as if they had been validated first. Its cost is two Ed25519
// verifications (the JWS, the checkpoint) plus a few tens of microseconds.
// A 4.0.0 payload is decoded once and re-encoded once; a payload spelt
// otherwise is refused (the strict decode then only says why), since it
// would be another leaf. Its cost is two Ed25519 verifications (the
// checkpoint by the log key and by the receipt key) plus the same tens of
// microseconds (BenchmarkVerifyV4 and BenchmarkVerifyV4Floor: 297 against
// 176 µs of CPU, 1.7 times; 3.0.0: 312 against 202 µs; medians of three
// runs on the loaded 2-CPU development VM).
//
// testdata/verify.mjs makes the same checks, except the field rules of
// "# Claims" (of a 3.0.0 or 4.0.0 payload it does check, as Verify, the
// members and their types at StepPayload, so that no personal field is
// shown in clear, and that the commitments cover exactly the personal
// fields at StepSpec) and the exact spelling of a 4.0.0 payload beyond its first
// member (it requires the prefix IsLeafV4 does; a leaf of another spelling
// is refused at the inclusion step unless that spelling is itself in the
// log, which the engine's leaves never are), in some 400 lines of
// Node.js (18 or later) using only its built-in crypto module: a second
// implementation that shares no code with this one, and a starting point
// for auditors working in other languages:
//
//	node verify.mjs receipt.json jwks.json "$(cat log.vkey)" [openings.json]
//
// The files under testdata/ (receipts of every version, pending and
// sandbox receipts, openings of two 3.0.0 receipts and a 4.0.0 one, key
// sets and log keys) are test vectors. The 3.0.0 receipts continue the log
// of the 1.0.0 ones under a later checkpoint, and the 4.0.0 ones continue
// it again under a checkpoint the receipt key cosigns, as an auditor would
// see one log over time.
//
// A verified receipt proves that the service signed these claims (4.0.0:
// signed a tree head that holds them) and logged them at log.index of a
// tree it committed to. It does not prove that the
// checkpoint is the newest or that the log shows everyone the same tree:
// auditors keep the checkpoints they see and check consistency proofs
// between them (ledger package), and may require witness cosignatures.
//
// # Keys and rotation
//
// The JWKS lists every key that ever signed receipts (or, 4.0.0,
// checkpoints), with members kty
// "OKP", crv "Ed25519", x, kid, use "sig", nbf (unix seconds), exp (absent
// while active) and revoked (true for a key that must no longer be trusted).
// A receipt is valid under a key when nbf ≤ iat < exp (4.0.0: a key that
// cosigned its checkpoint); retired keys stay in
// the set so that receipts stay verifiable for the ten-year OSS retention
// (Art. 369 and 369k(2) Directive 2006/112/EC: records kept for 10 years,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112). Keys carry no alg member because one key signs every
// version. A key set in which any key has a private member (d, p, q, dp,
// dq, qi, oth, k; RFC 7518 §6, RFC 8037 §2) is refused outright
// (ErrPrivateKeyPublished): a published private key lets anyone forge
// receipts, so such a key must be rotated and revoked. Key, the only type
// key sets are written from, has no member that could carry one. Auditors
// should archive the JWKS and the log verifier key with the receipts.
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
// have backdated receipts into its window, and so do the 4.0.0 receipts of
// its window (no later key's window holds their iat); re-issue them under
// the new key. A rotation while receipts are on their way to the log is
// safe: see Keyring.Hold and "# Version 4.0.0".
// To revoke the active key, rotate first. Rotation is crash-safe; see Rotate.
//
// # Sandbox
//
// Sandbox receipts (POST /sandbox/v1/simulate) have environment "sandbox"
// and the watermark claim, and are signed by the "sandbox" keyring, whose
// keys never enter the production JWKS (they are served at GET
// /sandbox/v1/jwks.json, the sandbox log key at GET /sandbox/v1/log-key): a
// sandbox receipt verified against the production key set fails at StepKid,
// and the message says so. A keyring's signer refuses claims of the other
// environment (ErrWrongEnvironment).
//
// # Version 2.0.0 (experimental)
//
// service.receipt/2.0.0 serves the experimental uk-vat jurisdiction, behind
// the same Sign and Verify. It differs from 1.0.0 in: JWS alg "Ed25519" (RFC
// 9864) and typ "service.receipt.v2+jws"; jurisdiction "uk-vat"; the
// optional fx_gbp section, and fx being as optional as in 1.0.0 (a UK record
// needs no EUR figures, and sterling figures are absent when no GBP rate was
// available). 3.0.0 supersedes it for new uk-vat receipts (fx_tax_currency
// with currency GBP).
//
// # Migration
//
// Receipts of every version verify forever with the same Verify: a receipt
// already issued is never re-signed, and the test vectors under testdata/
// must keep verifying byte for byte. The engine issues 4.0.0 for new
// receipts of both jurisdictions: it builds the claims in clear as before
// (Spec SpecV4, RecordSHA256 and LocationEvidence filled), takes a
// Keyring.Hold for them, calls Conceal to commit the personal fields
// (keeping the openings with the private record), seals the result with
// Seal in the request's goroutine, hands the payload to the committer as
// the leaf (the ledger cosigns each commit's checkpoint with
// Keyring.Cosigners), releases the Hold once the append is answered, and
// calls Assemble with the index the committer assigned and the covering
// checkpoint. It serves the documents of older leaves (JWS strings) as
// before. supersedes may name a receipt of any version, so a revision of
// a 1.0.0 or 3.0.0 record can be a 4.0.0 receipt. Until 4.0.0 the engine
// issued 3.0.0 the same way, signing each receipt with Keyring.Sign.
//
// # Statements
//
// The receipt key also signs statements: documents other than receipts
// that the service vouches for, such as an OSS return (package returns).
// Signer.SignStatement (Keyring.SignStatement) writes a compact JWS whose
// header is exactly {"alg":"Ed25519","kid":<kid>,"typ":<typ>}, typ a
// lower-case name ending in "+jws" that is never a receipt's typ, and whose
// payload is the statement's bytes; VerifyStatement checks it against the
// key set (the key listed, not revoked; no key window, as a statement has
// no iat). A statement is not logged as a leaf and has no inclusion proof:
// what it says about the log it carries in its payload (a return names the
// signed checkpoint it was computed at).
//
// # Errors
//
// Verify returns a *VerifyError whose Step (StepSignature, StepInclusion, …)
// says which check failed; branch on it, never on the text. Field is the
// JSON pointer of the claim concerned, when there is one. The message (Err)
// is written for a person: what was found (for a changed claim, the field
// and both values), what it means (altered after signing, signed by another
// key, a receipt of the other environment) and what to do (which document
// to fetch, and where it is published). Sign and Seal return a
// *ClaimsError (errors.Is ErrInvalidClaims) for claims outside the format
// (Sign for SpecV4 claims too, which have no JWS), Sign and Keyring.Hold
// ErrWrongEnvironment. ParseTlogProof errors match ErrMalformedTlogProof;
// ParseKeySet's ErrPrivateKeyPublished; VerifyOpening, Reveal and
// ParseOpenings return an *OpeningError (errors.Is ErrBadOpening).
// Keyring errors: ErrKeyFileMode, ErrKeyringInconsistent,
// ErrOutsideKeyWindow, ErrRevokeActive; KeySet.Lookup: ErrUnknownKey.
//
// # Determinism
//
// Ed25519 signatures are deterministic and the payload is json.Marshal of a
// struct, so the same claims and key always give the same JWS (4.0.0: the
// same payload, and the same checkpoint for the same tree and keys);
// Assemble's output is a function of its inputs; Conceal's is a function of its
// claims and the bytes its random source yields. Nothing here reads a
// clock: the caller sets iat and passes now and the random source to
// OpenKeyring and Rotate.
package receipt
