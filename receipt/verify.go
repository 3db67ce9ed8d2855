package receipt

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// Verification steps, in the order Verify runs them. A *VerifyError names
// the first step that failed.
const (
	StepParse               = "parse"                // the receipt document is not a receipt (JSON, members, types)
	StepJWKS                = "jwks"                 // the key set is malformed, or the key its kid selects is unusable
	StepLogKey              = "log-key"              // the log verifier key is not a note verifier key
	StepJWS                 = "jws"                  // the JWS is not a canonical compact JWS with a receipt header
	StepAlg                 = "alg"                  // alg is not EdDSA or Ed25519
	StepTyp                 = "typ"                  // typ is not a receipt type
	StepKid                 = "kid"                  // the JWKS has no key with this kid
	StepKeyRevoked          = "key-revoked"          // the key is marked revoked
	StepSignature           = "signature"            // the Ed25519 signature does not verify
	StepPayload             = "payload"              // the signed payload is not a claims object in the form Sign writes
	StepKeyWindow           = "key-window"           // iat is outside the key's nbf ≤ iat < exp
	StepClaimsMismatch      = "claims-mismatch"      // the readable claims, spec or id differ from the signed payload
	StepSpec                = "spec"                 // the signed claims break the format rules of their spec version
	StepTlogProof           = "tlog-proof"           // the tlog-proof is malformed
	StepCheckpointSignature = "checkpoint-signature" // the checkpoint note is not validly signed by the log key
	StepCheckpoint          = "checkpoint"           // the signed note is not a tlog checkpoint
	StepOrigin              = "origin"               // the checkpoint is of another log than the claims name
	StepIndex               = "index"                // the proof is for another index than the claims name
	StepInclusion           = "inclusion"            // the inclusion proof does not lead from the JWS to the checkpoint root
)

// VerifyError is the error of Verify: which step failed and why. Branch on
// Step (errors.As), never on the message.
type VerifyError struct {
	ReceiptID string // the document's id, when it could be read
	Step      string // one of the Step constants
	Err       error
}

func (e *VerifyError) Error() string {
	if e.ReceiptID != "" {
		return fmt.Sprintf("receipt: verify %s: %s: %v", e.ReceiptID, e.Step, e.Err)
	}
	return fmt.Sprintf("receipt: verify: %s: %v", e.Step, e.Err)
}

func (e *VerifyError) Unwrap() error { return e.Err }

// Verify checks a receipt offline, with nothing but the receipt JSON, the
// receipt JWKS (archived by the auditor) and the log's note verifier key
// ("origin+hash+base64", golang.org/x/mod/sumdb/note). It returns the
// verified claims, or a *VerifyError naming the first failed step:
//
//  1. parse: the document has exactly spec, id, claims, jws, tlog_proof;
//     jwks, log-key: the two keys parse.
//  2. jws, alg, typ: canonical compact JWS; header exactly {alg, kid, typ};
//     alg EdDSA or Ed25519 (both mean Ed25519 for an OKP key, RFC 9864 §2);
//     typ TypeV1 or TypeV2.
//  3. kid, key-revoked: the JWKS has exactly one key with that kid, an
//     Ed25519 key whose kid is its own RFC 7638 thumbprint, not revoked.
//  4. signature: Ed25519 over the JWS signing input (go-jose v4).
//  5. payload, key-window: the signed payload decodes to Claims exactly, and
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
//  9. origin, index: the checkpoint origin is claims.log.origin; the proof
//     index is claims.log.index.
//  10. inclusion: tlog.CheckRecord(proof, size, root, index,
//     tlog.RecordHash([]byte(jws))) (RFC 6962 §2.1.1).
//
// Verify reads no clock: a key's window is judged at the receipt's iat, so a
// receipt signed by a since-retired key stays valid. It proves that the
// receipt is in the log as of the checkpoint, not that the checkpoint is the
// latest; compare checkpoints over time (consistency proofs, witnesses) for
// that.
func Verify(receiptJSON, jwks []byte, logVerifierKey string) (*Claims, error) {
	v := verification{}
	c, err := v.run(receiptJSON, jwks, logVerifierKey)
	if err != nil {
		return nil, err
	}
	return c, nil
}

type verification struct{ id string }

func (v *verification) fail(step string, err error) error {
	return &VerifyError{ReceiptID: v.id, Step: step, Err: err}
}

func (v *verification) failf(step, format string, args ...any) error {
	return v.fail(step, fmt.Errorf(format, args...))
}

func (v *verification) run(receiptJSON, jwks []byte, logVerifierKey string) (*Claims, error) {
	r, readable, err := parseReceipt(receiptJSON)
	if err != nil {
		return nil, v.fail(StepParse, err)
	}
	v.id = r.ID
	keys, err := ParseKeySet(jwks)
	if err != nil {
		return nil, v.fail(StepJWKS, err)
	}
	logKey, err := note.NewVerifier(logVerifierKey)
	if err != nil {
		return nil, v.failf(StepLogKey, "%q: %v", logVerifierKey, err)
	}

	parts, err := splitJWS(r.JWS)
	if err != nil {
		return nil, v.fail(StepJWS, err)
	}
	hdr, err := parseJWSHeader(parts.header)
	if err != nil {
		return nil, v.fail(StepJWS, err)
	}
	if hdr.alg != AlgEdDSA && hdr.alg != AlgEd25519 {
		return nil, v.failf(StepAlg, "alg %q is not %s or %s", hdr.alg, AlgEdDSA, AlgEd25519)
	}
	if hdr.typ != TypeV1 && hdr.typ != TypeV2 {
		return nil, v.failf(StepTyp, "typ %q is not %s or %s", hdr.typ, TypeV1, TypeV2)
	}
	if !hdr.has["kid"] {
		return nil, v.failf(StepKid, "jws header has no kid")
	}
	key, err := keys.Lookup(hdr.kid)
	if errors.Is(err, ErrUnknownKey) {
		return nil, v.fail(StepKid, err)
	} else if err != nil {
		return nil, v.fail(StepJWKS, err)
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, v.fail(StepJWKS, err)
	}
	if key.Revoked {
		return nil, v.failf(StepKeyRevoked, "key %s is revoked", key.Kid)
	}
	if err := verifySignature(r.JWS, hdr.alg, pub, key.Kid); err != nil {
		return nil, v.fail(StepSignature, err)
	}

	c, signed, err := decodeClaims(parts.payload)
	if err != nil {
		return nil, v.fail(StepPayload, err)
	}
	if !key.ValidAt(c.IssuedAt) {
		return nil, v.failf(StepKeyWindow, "iat %d is outside the window of key %s (%s)", c.IssuedAt, key.Kid, windowString(key))
	}
	if !sameJSON(readable, signed) {
		return nil, v.failf(StepClaimsMismatch, "readable claims differ from the signed payload")
	}
	if r.Spec != c.Spec {
		return nil, v.failf(StepClaimsMismatch, "document spec %q, signed spec %q", r.Spec, c.Spec)
	}
	if r.ID != c.ReceiptID {
		return nil, v.failf(StepClaimsMismatch, "document id %q, signed receipt_id %q", r.ID, c.ReceiptID)
	}
	if err := checkClaims(&c); err != nil {
		return nil, v.fail(StepSpec, err)
	}
	if want := map[string]string{SpecV1: TypeV1, SpecV2: TypeV2}[c.Spec]; hdr.typ != want {
		return nil, v.failf(StepSpec, "%s receipt with typ %q, want %q", c.Spec, hdr.typ, want)
	}

	index, proof, cpNote, err := ParseTlogProof(r.TlogProof)
	if err != nil {
		return nil, v.fail(StepTlogProof, err)
	}
	if err := checkNoteSignatureEncoding(cpNote); err != nil {
		return nil, v.fail(StepCheckpointSignature, err)
	}
	opened, err := note.Open(cpNote, note.VerifierList(logKey))
	if err != nil {
		return nil, v.failf(StepCheckpointSignature, "log key %s+%08x: %v", logKey.Name(), logKey.KeyHash(), err)
	}
	cp, err := parseCheckpoint(opened.Text)
	if err != nil {
		return nil, v.fail(StepCheckpoint, err)
	}
	if cp.origin != c.Log.Origin {
		return nil, v.failf(StepOrigin, "checkpoint origin %q, claims name log %q", cp.origin, c.Log.Origin)
	}
	if index != c.Log.Index {
		return nil, v.failf(StepIndex, "proof is for index %d, claims name index %d", index, c.Log.Index)
	}
	if index >= cp.size {
		return nil, v.failf(StepInclusion, "index %d is not in the checkpointed tree of size %d", index, cp.size)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, index, tlog.RecordHash([]byte(r.JWS))); err != nil {
		return nil, v.failf(StepInclusion, "leaf %d does not lead to the root of tree size %d: %v", index, cp.size, err)
	}
	return &c, nil
}

// parseReceipt reads the receipt document: a JSON object with exactly the
// members spec, id, claims (an object), jws and tlog_proof (strings).
// Unknown members are refused: anything unsigned beside the claims could be
// read as part of the receipt.
func parseReceipt(data []byte) (Receipt, any, error) {
	if len(data) > MaxInputSize {
		return Receipt{}, nil, fmt.Errorf("larger than %d bytes", MaxInputSize)
	}
	v, err := decodeStrict(data)
	if err != nil {
		return Receipt{}, nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Receipt{}, nil, errors.New("not a JSON object")
	}
	var r Receipt
	for _, f := range []struct {
		name string
		dst  *string
	}{{"spec", &r.Spec}, {"id", &r.ID}, {"jws", &r.JWS}, {"tlog_proof", &r.TlogProof}} {
		s, ok := m[f.name].(string)
		if !ok {
			return Receipt{}, nil, fmt.Errorf("member %q missing or not a string", f.name)
		}
		*f.dst = s
	}
	claims, ok := m["claims"].(map[string]any)
	if !ok {
		return Receipt{}, nil, errors.New(`member "claims" missing or not an object`)
	}
	if len(m) != 5 {
		return Receipt{}, nil, errors.New("members other than spec, id, claims, jws, tlog_proof")
	}
	return r, claims, nil
}

// verifySignature checks the JWS signature with go-jose. alg has been pinned
// to EdDSA or Ed25519 already; go-jose v4.1.8 verifies EdDSA itself and
// Ed25519 through an OpaqueVerifier (research §3.1).
func verifySignature(jws, alg string, pub ed25519.PublicKey, kid string) error {
	obj, err := jose.ParseSignedCompact(jws, []jose.SignatureAlgorithm{jose.EdDSA, AlgEd25519})
	if err != nil {
		return fmt.Errorf("jws: %v", err)
	}
	var key any = pub
	if alg == AlgEd25519 {
		key = opaqueEd25519{pub: jose.JSONWebKey{Key: pub, KeyID: kid}}
	}
	if _, err := obj.Verify(key); err != nil {
		return fmt.Errorf("ed25519 signature does not verify with key %s: %v", kid, err)
	}
	return nil
}

func windowString(k Key) string {
	if k.Expires == nil {
		return fmt.Sprintf("nbf %d, no exp", k.NotBefore)
	}
	return fmt.Sprintf("nbf %d, exp %d", k.NotBefore, *k.Expires)
}
