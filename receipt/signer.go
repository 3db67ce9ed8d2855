package receipt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
)

// Signer signs receipt claims with one Ed25519 key. It is safe for
// concurrent use. Ed25519 signatures are deterministic (RFC 8032 §5.1.6), so
// the same claims and key always give the same JWS, byte for byte.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	kid  string
	env  string // when set, Sign refuses claims of another environment
	v1   jose.Signer
	v2   jose.Signer
}

// ErrWrongEnvironment is returned when a keyring's signer is asked to sign
// claims of another environment: a sandbox receipt must never be signed by
// a production key, nor the reverse.
var ErrWrongEnvironment = errors.New("receipt: claims environment does not match the signing key's environment")

// NewSigner returns a signer for priv. Its kid is the RFC 7638 thumbprint of
// the public key. It signs claims of any environment; a Keyring's signer is
// bound to the keyring's environment.
func NewSigner(priv ed25519.PrivateKey) (*Signer, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("receipt: ed25519 private key has %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	// The second half of an ed25519.PrivateKey is a cached public key; a
	// corrupted copy would produce signatures no published key verifies.
	derived := ed25519.NewKeyFromSeed(priv.Seed())
	if !bytes.Equal(derived, priv) {
		return nil, errors.New("receipt: ed25519 private key: public half does not match the seed")
	}
	pub := derived.Public().(ed25519.PublicKey)
	kid, err := Thumbprint(pub)
	if err != nil {
		return nil, err
	}
	s := &Signer{priv: derived, pub: pub, kid: kid}

	// SpecV1: alg "EdDSA" through go-jose's own Ed25519 signer.
	s.v1, err = jose.NewSigner(
		jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: derived, KeyID: kid}},
		(&jose.SignerOptions{}).WithType(TypeV1))
	if err != nil {
		return nil, fmt.Errorf("receipt: %s signer: %w", SpecV1, err)
	}
	// SpecV2: alg "Ed25519" (RFC 9864), which go-jose v4.1.8 has no
	// constant for; an OpaqueSigner emits it (research §3.1).
	s.v2, err = jose.NewSigner(
		jose.SigningKey{Algorithm: AlgEd25519, Key: opaqueEd25519{priv: derived, pub: jose.JSONWebKey{Key: pub, KeyID: kid}}},
		(&jose.SignerOptions{}).WithType(TypeV2))
	if err != nil {
		return nil, fmt.Errorf("receipt: %s signer: %w", SpecV2, err)
	}
	return s, nil
}

// KeyID returns the kid: the RFC 7638 thumbprint of the public key, base64url.
func (s *Signer) KeyID() string { return s.kid }

// PublicKey returns the Ed25519 public key.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.pub }

// Sign checks c against the format rules (an invalid receipt is never
// signed: *ClaimsError) and returns the compact JWS
//
//	BASE64URL({"alg":…,"kid":…,"typ":…}) "." BASE64URL(json.Marshal(c)) "." BASE64URL(signature)
//
// with alg/typ "EdDSA"/TypeV1 for SpecV1 claims and "Ed25519"/TypeV2 for
// SpecV2 claims. The JWS string is the Merkle log leaf, byte for byte.
func (s *Signer) Sign(c Claims) (string, error) {
	if err := checkClaims(&c); err != nil {
		return "", err
	}
	if s.env != "" && c.Environment != s.env {
		return "", fmt.Errorf("%w: claims are %q, key is %q", ErrWrongEnvironment, c.Environment, s.env)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("receipt: encode claims: %w", err)
	}
	js := s.v1
	if c.Spec == SpecV2 {
		js = s.v2
	}
	obj, err := js.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("receipt: sign %s: %w", c.ReceiptID, err)
	}
	out, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("receipt: serialise %s: %w", c.ReceiptID, err)
	}
	return out, nil
}

// opaqueEd25519 lets go-jose emit and check alg "Ed25519" (RFC 9864 §2),
// the fully specified name of the algorithm "EdDSA" means for OKP Ed25519
// keys. As a verifier it is only used after Verify has pinned the alg.
type opaqueEd25519 struct {
	priv ed25519.PrivateKey // nil when verifying
	pub  jose.JSONWebKey
}

func (o opaqueEd25519) Public() *jose.JSONWebKey        { return &o.pub }
func (o opaqueEd25519) Algs() []jose.SignatureAlgorithm { return []jose.SignatureAlgorithm{AlgEd25519} }
func (o opaqueEd25519) SignPayload(p []byte, alg jose.SignatureAlgorithm) ([]byte, error) {
	if alg != AlgEd25519 {
		return nil, fmt.Errorf("receipt: opaque signer asked for alg %q", alg)
	}
	return ed25519.Sign(o.priv, p), nil
}

func (o opaqueEd25519) VerifyPayload(p, sig []byte, alg jose.SignatureAlgorithm) error {
	if alg != AlgEd25519 {
		return fmt.Errorf("receipt: opaque verifier asked for alg %q", alg)
	}
	pub, _ := o.pub.Key.(ed25519.PublicKey)
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, p, sig) {
		return errors.New("receipt: ed25519 signature does not verify")
	}
	return nil
}
