package receipt

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
)

// Statements.
//
// A statement is a document other than a receipt that the service signs
// with its receipt key, so that the same key set (GET
// /.well-known/jwks.json) verifies it: an OSS return (package returns) is
// one. Its compact JWS has the protected header, exactly and in this order,
//
//	{"alg":"Ed25519","kid":<kid>,"typ":<typ>}
//
// where typ names the statement's format ("fiscal402.oss-return+jws") and is
// never a receipt's typ, so that a statement can never pass for a receipt
// nor a receipt for a statement. The payload is the statement's bytes,
// whatever they are; Ed25519 being deterministic, the same payload signed by
// the same key gives the same JWS.

// statementTyp is the shape of a statement's typ: a media-type suffix form,
// never one of the receipt types.
var statementTyp = regexp.MustCompile(`^[a-z0-9][a-z0-9.\-]{0,62}\+jws$`)

// ErrStatementType is returned for a typ that is not a statement type.
var ErrStatementType = errors.New("receipt: not a statement type")

func checkStatementTyp(typ string) error {
	if !statementTyp.MatchString(typ) || typ == TypeV1 || typ == TypeV2 || typ == TypeV3 {
		return fmt.Errorf("%w: %q (want lower-case name+jws, not a receipt type)", ErrStatementType, typ)
	}
	return nil
}

// SignStatement returns the compact JWS of payload as a statement of type
// typ, signed with s's key.
func (s *Signer) SignStatement(typ string, payload []byte) (string, error) {
	if err := checkStatementTyp(typ); err != nil {
		return "", err
	}
	header := base64.RawURLEncoding.EncodeToString(jwsHeaderJSON(AlgEd25519, s.kid, typ))
	jws, _ := s.signPayload(nil, header, payload)
	return jws, nil
}

// SignStatement signs payload as a statement of type typ with the active
// key (Signer.SignStatement).
func (k *Keyring) SignStatement(typ string, payload []byte) (string, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.signer.SignStatement(typ, payload)
}

// VerifyStatement checks a statement's compact JWS against a key set (the
// JWKS bytes) and returns its payload and the kid that signed it. It
// checks, in order: the JWS is canonical compact serialisation; the header
// is exactly {alg, kid, typ} with alg Ed25519 (or EdDSA) and typ the wanted
// one; the key set has exactly one key of that kid, an Ed25519 key that is
// not revoked; the Ed25519 signature. A statement carries no issue time, so
// no key window is judged: a retired key's statements stay valid, a revoked
// key's do not.
func VerifyStatement(jws string, jwks []byte, typ string) (payload []byte, kid string, err error) {
	if err := checkStatementTyp(typ); err != nil {
		return nil, "", err
	}
	keys, err := parseKeySet(jwks)
	if err != nil {
		return nil, "", fmt.Errorf("receipt: statement: the key set cannot be used: %s", plain(err))
	}
	parts, err := splitJWS(jws)
	if err != nil {
		return nil, "", fmt.Errorf("receipt: statement: %v", err)
	}
	h, err := parseJWSHeader(parts.header)
	if err != nil {
		return nil, "", fmt.Errorf("receipt: statement: %v", err)
	}
	if h.alg != AlgEd25519 && h.alg != AlgEdDSA {
		return nil, "", fmt.Errorf("receipt: statement: alg %q, want %s", h.alg, AlgEd25519)
	}
	if h.typ != typ {
		return nil, "", fmt.Errorf("receipt: statement: typ %q, want %q", h.typ, typ)
	}
	key, err := keys.Lookup(h.kid)
	if err != nil {
		return nil, "", fmt.Errorf("receipt: statement: signed by key %q, which the key set does not list: %s", h.kid, plain(err))
	}
	if key.Revoked {
		return nil, "", fmt.Errorf("receipt: statement: key %q is revoked", h.kid)
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, "", fmt.Errorf("receipt: statement: %s", plain(err))
	}
	if !ed25519.Verify(pub, []byte(jws[:parts.signingInputLen]), parts.signature) {
		return nil, "", fmt.Errorf("receipt: statement: the signature does not verify: the statement was altered after signing, or signed by another key than %q", h.kid)
	}
	return parts.payload, h.kid, nil
}
