package receipt

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Verification steps, in the order Verify runs them. A *VerifyError names
// the first step that failed.
const (
	StepParse               = "parse"                // the receipt document is not a receipt (JSON, members, types)
	StepJWKS                = "jwks"                 // the key set is malformed, publishes a private key, or the key its kid selects is unusable
	StepLogKey              = "log-key"              // the log verifier key is missing or not a note verifier key
	StepJWS                 = "jws"                  // the JWS is not a canonical compact JWS with a receipt header
	StepAlg                 = "alg"                  // alg is not EdDSA or Ed25519
	StepTyp                 = "typ"                  // typ is not a receipt type
	StepKid                 = "kid"                  // the JWKS has no key with this kid (4.0.0: no key of the JWKS cosigned the checkpoint)
	StepKeyRevoked          = "key-revoked"          // the key is marked revoked
	StepSignature           = "signature"            // the Ed25519 signature does not verify
	StepPayload             = "payload"              // the signed payload (4.0.0: the payload) is not a claims object in the form Sign (Seal) writes
	StepKeyWindow           = "key-window"           // iat is outside the key's nbf ≤ iat < exp
	StepClaimsMismatch      = "claims-mismatch"      // the readable claims, spec or id differ from the signed payload
	StepSpec                = "spec"                 // the signed claims break the format rules of their spec version
	StepTlogProof           = "tlog-proof"           // the tlog-proof is malformed
	StepCheckpointSignature = "checkpoint-signature" // the checkpoint note is not validly signed by the log key
	StepCheckpoint          = "checkpoint"           // the signed note is not a tlog checkpoint
	StepOrigin              = "origin"               // the checkpoint is of another log than the claims name
	StepIndex               = "index"                // the proof is for another index than the claims name (1.0.0, 2.0.0)
	StepInclusion           = "inclusion"            // the inclusion proof does not lead from the JWS (4.0.0: the payload) to the checkpoint root
	StepOpening             = "opening"              // an opening given to Verifier.Verify does not open its commitment
)

// Where the service publishes what a verifier needs (public: fetching and
// verifying a receipt needs no key).
const (
	PathJWKS           = "/.well-known/jwks.json"
	PathLogKey         = "/.well-known/log-key"
	PathSandboxJWKS    = "/sandbox/v1/jwks.json"
	PathSandboxLogKey  = "/sandbox/v1/log-key"
	pathReceiptPattern = "/v1/receipts/{id}"
)

// VerifyError is the error of Verify: which step failed and why. Branch on
// Step (errors.As), never on the message. The message (Err) is written for a
// person: what was found, what it means, and what to do.
type VerifyError struct {
	ReceiptID string // the document's id, when it could be read
	Step      string // one of the Step constants
	// Field is the JSON pointer of the claim concerned (claims-mismatch,
	// spec, opening), when there is one.
	Field string
	Err   error
}

func (e *VerifyError) Error() string {
	if e.ReceiptID != "" {
		return fmt.Sprintf("receipt: verify %s: %s: %v", e.ReceiptID, e.Step, e.Err)
	}
	return fmt.Sprintf("receipt: verify: %s: %v", e.Step, e.Err)
}

func (e *VerifyError) Unwrap() error { return e.Err }

// sentence is an error whose text is written for a person, wrapping the
// error it explains (errors.Is still sees ErrUnknownKey and the like).
type sentence struct {
	msg string
	err error
}

func (s *sentence) Error() string { return s.msg }
func (s *sentence) Unwrap() error { return s.err }

// plain drops this package's "receipt: " prefix from an error text that is
// embedded in a VerifyError, which has the prefix already.
func plain(err error) string { return strings.TrimPrefix(err.Error(), "receipt: ") }

// Verifier verifies receipts against one key set and one log key, parsed
// once. It is safe for concurrent use.
type Verifier struct {
	keys   KeySet
	logKey note.Verifier
}

// NewVerifier parses the receipt JWKS and the log's note verifier key
// ("origin+hash+base64", golang.org/x/mod/sumdb/note). Its errors are
// *VerifyError with Step StepJWKS or StepLogKey.
func NewVerifier(jwks []byte, logVerifierKey string) (*Verifier, error) {
	keys, err := parseKeySet(jwks)
	if errors.Is(err, ErrPrivateKeyPublished) {
		return nil, &VerifyError{Step: StepJWKS, Err: err}
	}
	if err != nil {
		return nil, &VerifyError{Step: StepJWKS, Err: &sentence{
			msg: fmt.Sprintf("the key set cannot be used: %s. Use the receipt key set the issuer publishes at GET %s (sandbox receipts: GET %s), unchanged.",
				plain(err), PathJWKS, PathSandboxJWKS), err: err}}
	}
	if strings.TrimSpace(logVerifierKey) == "" {
		return nil, &VerifyError{Step: StepLogKey, Err: fmt.Errorf(
			"no log verifier key was given. Checking the inclusion proof needs the log's note verifier key (origin+hash+base64), which the issuer publishes at GET %s (sandbox: GET %s); keep it with the receipts",
			PathLogKey, PathSandboxLogKey)}
	}
	logKey, err := note.NewVerifier(logVerifierKey)
	if err != nil {
		return nil, &VerifyError{Step: StepLogKey, Err: fmt.Errorf(
			"%q is not a log verifier key (%v): a key has the form origin+hash+base64, e.g. ledger.example/fiscal402+22b2ed1b+Aep…; copy it exactly from GET %s (sandbox: GET %s)",
			logVerifierKey, err, PathLogKey, PathSandboxLogKey)}
	}
	return &Verifier{keys: keys, logKey: logKey}, nil
}

// Verify checks a receipt offline, with nothing but the receipt JSON, the
// receipt JWKS (archived by the auditor) and the log's note verifier key
// ("origin+hash+base64", golang.org/x/mod/sumdb/note). It returns the
// verified claims, or a *VerifyError naming the first failed step:
//
//  1. parse: the document has exactly spec, id, claims, jws (4.0.0:
//     payload), tlog_proof;
//     jwks, log-key: the two keys parse, and the key set publishes no
//     private key.
//  2. jws, alg, typ: canonical compact JWS; header exactly {alg, kid, typ};
//     alg EdDSA or Ed25519 (both mean Ed25519 for an OKP key, RFC 9864 §2);
//     typ TypeV1, TypeV2 or TypeV3.
//  3. kid, key-revoked: the JWKS has exactly one key with that kid, an
//     Ed25519 key whose kid is its own RFC 7638 thumbprint, not revoked.
//  4. signature: Ed25519 (RFC 8032) over the JWS signing input.
//  5. payload, key-window: the signed payload decodes to claims exactly, and
//     the key's nbf ≤ iat < exp. The window needs the signed iat, so it is
//     checked after the signature: an unverified iat would make a tampered
//     payload look like a key problem.
//  6. claims-mismatch: readable claims equal the signed payload as JSON
//     values (numbers compared by their literal text); spec and id equal the
//     signed spec and receipt_id.
//  7. spec: the claims follow the rules of their spec version, and the JWS
//     typ is that version's.
//  8. tlog-proof, checkpoint-signature, checkpoint: the proof parses; the
//     checkpoint note carries a valid signature by the log key (signatures of
//     unknown keys, such as witness cosignatures, are ignored per C2SP
//     signed-note); its text is a tlog checkpoint.
//  9. origin, index: the checkpoint origin is claims.log.origin; for 1.0.0
//     and 2.0.0 the proof index is claims.log.index (3.0.0 signs no index:
//     Verify sets claims.Log.Index from the proof).
//  10. inclusion: tlog.CheckRecord(proof, size, root, index,
//     tlog.RecordHash([]byte(jws))) (RFC 6962 §2.1.1).
//
// A 4.0.0 document (a payload member in place of jws) is checked in this
// order instead (doc.go "# Version 4.0.0"):
//
//  1. parse, jwks, log-key as above.
//  2. payload: the payload member is canonical unpadded base64url, and the
//     payload decodes to 4.0.0 claims and is exactly the bytes Seal writes
//     for them (spec: claims of another version).
//  3. claims-mismatch: the readable claims, spec and id equal the
//     payload's.
//  4. spec: the claims follow the rules of 4.0.0 (those of 3.0.0).
//  5. tlog-proof, checkpoint-signature, checkpoint, origin: as above.
//  6. inclusion: tlog.CheckRecord from tlog.RecordHash(payload) at the
//     proof's index (returned in claims.Log.Index) to the checkpoint root.
//  7. kid, signature, key-revoked, key-window: the checkpoint carries a
//     signature line named by the kid of an Ed25519 key of the JWKS, with
//     that key's note key hash (NoteKeyHash); every such line verifies
//     over the checkpoint text; one of these keys is not revoked and its
//     window holds nbf ≤ iat < exp. Judged last, when the log has
//     authenticated the payload: an altered iat fails at inclusion, never
//     as a key problem.
//
// Verify reads no clock: a key's window is judged at the receipt's iat, so a
// receipt signed by a since-retired key stays valid. It proves that the
// receipt is in the log as of the checkpoint, not that the checkpoint is the
// latest; compare checkpoints over time (consistency proofs, witnesses) for
// that.
func Verify(receiptJSON, jwks []byte, logVerifierKey string) (*Claims, error) {
	doc, err := readDocument(receiptJSON)
	if err != nil {
		return nil, err
	}
	v, err := NewVerifier(jwks, logVerifierKey)
	if err != nil {
		if _, perr := parseReceipt(receiptJSON); doc.claimsUnchecked && perr != nil {
			return nil, &VerifyError{Step: StepParse, Err: parseFailure(perr)}
		}
		err.(*VerifyError).ReceiptID = doc.id
		return nil, err
	}
	return v.verifyScanned(receiptJSON, &doc, nil)
}

// Verify checks a receipt as the package-level Verify does, and then each
// opening against the commitment it opens (StepOpening, with Field): the
// returned claims carry the opened values in their places (Reveal).
func (v *Verifier) Verify(receiptJSON []byte, openings ...Opening) (*Claims, error) {
	doc, err := readDocument(receiptJSON)
	if err != nil {
		return nil, err
	}
	return v.verifyScanned(receiptJSON, &doc, openings)
}

// readDocument reads the receipt document with scanReceipt, or, if that
// fails, with parseReceipt, whose error is the StepParse error.
func readDocument(receiptJSON []byte) (receiptDoc, error) {
	doc, err := scanReceipt(receiptJSON)
	if err == nil {
		return doc, nil
	}
	if doc, err = parseReceipt(receiptJSON); err != nil {
		return receiptDoc{}, &VerifyError{Step: StepParse, Err: parseFailure(err)}
	}
	return doc, nil
}

// verifyScanned verifies a document read by scanReceipt. Its readable
// claims are proven valid JSON when they match the signed payload token
// for token (sameClaims); otherwise the answer is the document's parse
// error if parseReceipt refuses the document, as if it had been parsed
// first.
func (v *Verifier) verifyScanned(receiptJSON []byte, doc *receiptDoc, openings []Opening) (*Claims, error) {
	c, err := v.verify(doc, openings)
	if doc.claimsUnchecked {
		if _, perr := parseReceipt(receiptJSON); perr != nil {
			return nil, &VerifyError{Step: StepParse, Err: parseFailure(perr)}
		}
	}
	return c, err
}

func parseFailure(err error) error {
	return &sentence{msg: fmt.Sprintf("this is not a receipt document: %v. A receipt is the JSON object served at GET %s, with exactly the members spec, id, claims, jws (4.0.0: payload) and tlog_proof; pass that document unchanged",
		err, pathReceiptPattern), err: err}
}

type verification struct {
	v  *Verifier
	id string
}

func (vf *verification) fail(step string, err error) error {
	return &VerifyError{ReceiptID: vf.id, Step: step, Err: err}
}

func (vf *verification) failf(step, format string, args ...any) error {
	return vf.fail(step, fmt.Errorf(format, args...))
}

func (vf *verification) failField(step, field string, err error) error {
	return &VerifyError{ReceiptID: vf.id, Step: step, Field: field, Err: err}
}

func (v *Verifier) verify(doc *receiptDoc, openings []Opening) (*Claims, error) {
	if doc.v4 {
		return v.verifyV4(doc, openings)
	}
	vf := &verification{v: v, id: doc.id}

	parts, err := splitJWSBytes(doc.jws)
	if err != nil {
		return nil, vf.failf(StepJWS, "the jws member is not a compact JWS in its one canonical spelling: %v. Pass the receipt exactly as the issuer served it", err)
	}
	hdr, err := parseJWSHeader(parts.header)
	if err != nil {
		return nil, vf.failf(StepJWS, "the JWS header is not a receipt header: %v", err)
	}
	if hdr.alg != AlgEdDSA && hdr.alg != AlgEd25519 {
		return nil, vf.failf(StepAlg, "the JWS names algorithm %q; receipts are signed with Ed25519 only (alg %q or %q). This JWS was not made by a receipt signer", hdr.alg, AlgEd25519, AlgEdDSA)
	}
	spec, known := specOfType(hdr.typ)
	if !known {
		return nil, vf.failf(StepTyp, "the JWS type is %q, which is no receipt type (%s, %s, %s): this is not a receipt JWS, or one of a version newer than this verifier", hdr.typ, TypeV1, TypeV2, TypeV3)
	}
	if !hdr.hasKid {
		return nil, vf.failf(StepKid, "the JWS header names no key (kid): a receipt always does. This JWS was not made by a receipt signer")
	}
	key, err := v.keys.Lookup(hdr.kid)
	if errors.Is(err, ErrUnknownKey) {
		return nil, vf.fail(StepKid, &sentence{msg: vf.unknownKey(hdr.kid, parts.payload), err: err})
	} else if err != nil {
		return nil, vf.failf(StepJWKS, "the key set is ambiguous: %s. Use the key set the issuer publishes, unchanged", plain(err))
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, vf.failf(StepJWKS, "the key set's entry for this receipt's key cannot be used: %s", plain(err))
	}
	if key.Revoked {
		return nil, vf.failf(StepKeyRevoked, "key %s is marked revoked in the key set: its private key may have leaked, so a receipt it signed cannot be trusted, whatever its date. Ask the issuer for this receipt re-issued under a current key", key.Kid)
	}
	// RFC 7515 §5.2: the signature is over the ASCII of header "." payload,
	// as they appear in the JWS.
	if !ed25519.Verify(pub, doc.jws[:parts.signingInputLen], parts.signature) {
		return nil, vf.failf(StepSignature, "the signature does not match the signed content: the JWS header or payload was altered after signing, or the receipt was signed by another key than %s of this key set. Do not rely on this receipt; get it again from its issuer (GET %s)", key.Kid, pathReceiptPattern)
	}

	c, err := decodePayload(parts.payload, spec)
	if err != nil {
		var se *specError
		if errors.As(err, &se) {
			return nil, vf.failField(StepSpec, "/spec", fmt.Errorf("the JWS is typed %q, for %s receipts, but its signed claims are %s: the issuer signed a malformed receipt; report it to them", hdr.typ, spec, se.spec))
		}
		return nil, vf.failf(StepPayload, "the signed payload is not claims in the form the issuer's signer writes: %v. The signature is valid, so the issuer signed this payload: report it to them", err)
	}
	if !key.ValidAt(c.IssuedAt) {
		return nil, vf.failf(StepKeyWindow, "the receipt says it was issued at %s (iat %d), when key %s was not valid (%s): a key may only sign within its window. A receipt dated outside it may have been made with a retired, leaked key; ask the issuer",
			unixString(c.IssuedAt), c.IssuedAt, key.Kid, windowString(key))
	}
	if err := vf.sameClaims(doc, parts.payload); err != nil {
		return nil, err
	}
	if doc.spec != c.Spec {
		return nil, vf.failField(StepClaimsMismatch, "/spec", fmt.Errorf("the document's spec is %q but the signed claims say %q: the document was changed after signing; trust the signed value", doc.spec, c.Spec))
	}
	if doc.id != c.ReceiptID {
		return nil, vf.failField(StepClaimsMismatch, "/receipt_id", fmt.Errorf("the document's id is %q but the signed claims are for receipt %q: the document was changed after signing, or the JWS of another receipt was put in it", doc.id, c.ReceiptID))
	}
	if err := vf.rules(&c); err != nil {
		return nil, err
	}
	index, proof, _, _, cp, err := vf.checkpoint(doc.tlogProof, &c)
	if err != nil {
		return nil, err
	}
	if c.Spec == SpecV3 {
		// The position is not signed (doc.go "# Version 3.0.0"): the
		// checkpoint signature and the inclusion proof below bind it.
		c.Log.Index = index
	} else if index != c.Log.Index {
		return nil, vf.failField(StepIndex, "/log/index", fmt.Errorf("the proof is for log index %d, but the receipt says it is at index %d: the proof belongs to another entry", index, c.Log.Index))
	}
	if err := vf.included(index, proof, cp, doc.jws, "JWS"); err != nil {
		return nil, err
	}
	return vf.reveal(&c, openings)
}

// rules checks signed (or, in 4.0.0, logged) claims against the rules of
// their spec version.
func (vf *verification) rules(c *Claims) error {
	if err := checkClaims(c); err != nil {
		var ce *ClaimsError
		field := ""
		if errors.As(err, &ce) {
			field = ce.Field
		}
		if c.Spec == SpecV4 {
			// Not yet authenticated: the proof comes later.
			return vf.failField(StepSpec, field, fmt.Errorf("the claims break the rules of %s: %s. They were altered, or the issuer logged a malformed receipt: get it again from its issuer, and report it if it persists", c.Spec, plain(err)))
		}
		return vf.failField(StepSpec, field, fmt.Errorf("the signed claims break the rules of %s: %s. The issuer signed a malformed receipt; report it to them", c.Spec, plain(err)))
	}
	return nil
}

// checkpoint parses the tlog-proof and checks its checkpoint: a C2SP
// checkpoint signed by the log key, of the log the claims name. It returns
// the proof's index and hashes, the note and its signed text, and the
// checkpoint.
func (vf *verification) checkpoint(tlogProof string, c *Claims) (index int64, proof tlog.RecordProof, cpNote, text []byte, cp checkpoint, err error) {
	fail := func(err error) (int64, tlog.RecordProof, []byte, []byte, checkpoint, error) {
		return 0, nil, nil, nil, checkpoint{}, err
	}
	index, proof, cpNote, err = ParseTlogProof(tlogProof)
	if err != nil {
		return fail(vf.failf(StepTlogProof, "the tlog_proof member is not a C2SP tlog-proof: %s. Pass the receipt exactly as the issuer served it", plain(err)))
	}
	if err := checkNoteSignatureEncoding(cpNote); err != nil {
		return fail(vf.failf(StepCheckpointSignature, "the checkpoint's signature is not in its one canonical spelling (%v): it was altered", err))
	}
	opened, err := note.Open(cpNote, note.VerifierList(vf.v.logKey))
	if err != nil {
		return fail(vf.fail(StepCheckpointSignature, vf.checkpointFailure(err, c)))
	}
	if !logKeyLinesVerify(cpNote, cpNote[:len(opened.Text)], vf.v.logKey, opened.Sigs) {
		return fail(vf.failf(StepCheckpointSignature, "the checkpoint carries a second signature line of the log key that does not verify: it was altered. Get the receipt again from its issuer (GET %s)", pathReceiptPattern))
	}
	cp, err = parseCheckpoint(opened.Text)
	if err != nil {
		return fail(vf.failf(StepCheckpoint, "the log key signed a note that is not a tlog checkpoint (%v): report it to the issuer", err))
	}
	if cp.origin != c.Log.Origin {
		return fail(vf.failField(StepOrigin, "/log/origin", fmt.Errorf("the checkpoint is of log %q, but the receipt was signed for log %q: the proof comes from another log. Fetch the receipt from its issuer, and use that log's key", cp.origin, c.Log.Origin)))
	}
	return index, proof, cpNote, cpNote[:len(opened.Text)], cp, nil
}

// logKeyLinesVerify reports whether every signature line of the note msg
// named by the log key v with its key hash verifies over text. note.Open
// verifies the first such line and drops the others, so a second, altered
// one would pass and give the checkpoint a second spelling (a review found
// it; verify.mjs and /verify check every line, as cosigned does for the
// receipt key). A line identical to one of verified, the signatures
// note.Open has just verified over the same text, is not verified again:
// Ed25519 verification is a function of key, text and signature, so it
// would only repeat the answer at the cost of a third verification, a
// quarter of Verify's time.
func logKeyLinesVerify(msg, text []byte, v note.Verifier, verified []note.Signature) bool {
	_, lines, _ := splitNote(msg)
lines:
	for _, l := range lines {
		name, b64, _ := strings.Cut(strings.TrimPrefix(l, "— "), " ")
		raw, err := decodeB64StdStrict(b64)
		if name != v.Name() || err != nil || len(raw) < 4 || binary.BigEndian.Uint32(raw) != v.KeyHash() {
			continue
		}
		for _, s := range verified {
			if s.Name == name && s.Hash == v.KeyHash() && s.Base64 == b64 {
				continue lines
			}
		}
		if !v.Verify(text, raw[4:]) {
			return false
		}
	}
	return true
}

// included checks the inclusion proof of the leaf at index up to the
// checkpoint's root; what names the leaf in the message.
func (vf *verification) included(index int64, proof tlog.RecordProof, cp checkpoint, leaf []byte, what string) error {
	if index >= cp.size {
		return vf.failf(StepInclusion, "the proof is for index %d, which is not in the checkpointed tree of %d entries: the proof or checkpoint was swapped", index, cp.size)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, index, tlog.RecordHash(leaf)); err != nil {
		return vf.failf(StepInclusion, "the inclusion proof does not lead from this receipt's %s at index %d to the root of the checkpointed tree of %d entries: the proof, the index or the %s was altered, or the proof is for another entry. Fetch the receipt again; if it persists, the log may be inconsistent: report it",
			what, index, cp.size, what)
	}
	return nil
}

// reveal checks the openings against the verified claims and returns the
// claims with the opened values in place (the claims as they are without
// openings).
func (vf *verification) reveal(c *Claims, openings []Opening) (*Claims, error) {
	if len(openings) == 0 {
		return c, nil
	}
	revealed, err := Reveal(c, openings...)
	if err != nil {
		var oe *OpeningError
		if errors.As(err, &oe) {
			return nil, vf.failField(StepOpening, oe.Field, fmt.Errorf("%s. The receipt itself is valid; the opening is not the one the issuer committed to: ask the account holder for the openings of this receipt", plain(err)))
		}
		return nil, vf.fail(StepOpening, err)
	}
	return revealed, nil
}

// unknownKey explains a kid missing from the key set, naming the likely
// cause: a receipt of one environment checked against the other's keys. The
// environment is read from the payload before its signature is checked, so
// the message only says what the receipt claims.
func (vf *verification) unknownKey(kid string, payload []byte) string {
	msg := fmt.Sprintf("the key set has no key %s, which signed this receipt", kid)
	switch probeEnvironment(payload) {
	case EnvSandbox:
		return msg + fmt.Sprintf(". The receipt says it is a sandbox receipt: those are signed by sandbox keys, published at GET %s, never at GET %s. Verify it with the sandbox key set and the sandbox log key (GET %s)", PathSandboxJWKS, PathJWKS, PathSandboxLogKey)
	case EnvProduction:
		return msg + fmt.Sprintf(". The receipt says it is a production receipt: use the production key set, GET %s (not the sandbox one, GET %s). If that key set lacks the key too, it is older than the receipt: fetch it again", PathJWKS, PathSandboxJWKS)
	}
	return msg + fmt.Sprintf(". Use the issuer's current key set (GET %s, sandbox GET %s)", PathJWKS, PathSandboxJWKS)
}

// checkpointFailure explains a note.Open error.
func (vf *verification) checkpointFailure(err error, c *Claims) error {
	where := fmt.Sprintf("GET %s", PathLogKey)
	if c.Environment == EnvSandbox {
		where = fmt.Sprintf("GET %s (this is a sandbox receipt)", PathSandboxLogKey)
	}
	key := fmt.Sprintf("%s+%08x", vf.v.logKey.Name(), vf.v.logKey.KeyHash())
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		var signers []string
		for _, s := range unverified.Note.UnverifiedSigs {
			signers = append(signers, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
		}
		return &sentence{msg: fmt.Sprintf("the checkpoint is not signed by the log key you gave (%s); it is signed by %s. Use the key of the log that issued the receipt, published at %s",
			key, strings.Join(signers, ", "), where), err: err}
	case errors.As(err, &invalid):
		return &sentence{msg: fmt.Sprintf("the checkpoint's signature by the log key %s does not verify: the checkpoint was altered after the log signed it. Fetch the receipt again from its issuer", key), err: err}
	}
	return &sentence{msg: fmt.Sprintf("the checkpoint in the tlog_proof is not a signed note (%v): it was altered or truncated. Fetch the receipt again from its issuer", err), err: err}
}

// specOfType maps a JWS typ to its spec version.
func specOfType(typ string) (string, bool) {
	for _, h := range specHeaders {
		if h.typ == typ {
			return h.spec, true
		}
	}
	return "", false
}

func unixString(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

func windowString(k Key) string {
	if k.Expires == nil {
		return fmt.Sprintf("valid from %s, nbf %d, no end", unixString(k.NotBefore), k.NotBefore)
	}
	return fmt.Sprintf("valid from %s until before %s, nbf %d, exp %d", unixString(k.NotBefore), unixString(*k.Expires), k.NotBefore, *k.Expires)
}
