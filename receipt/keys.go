package receipt

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is one entry of the receipt JWKS: an RFC 8037 OKP Ed25519 public key
// plus its validity window. go-jose's JSONWebKey drops the nbf/exp members
// (its JSON form has no such fields: jwk.go in
// https://github.com/go-jose/go-jose), hence this struct. nbf/exp/revoked
// are not IANA-registered JWK members
// (https://www.iana.org/assignments/jose/jose.xhtml); Nimbus JOSE+JWT
// (https://connect2id.com/products/nimbus-jose-jwt) and the historical keys
// of OpenID Federation 1.0 (https://openid.net/specs/openid-federation-1_0.html)
// use the same names, and RFC 7517 §4 makes other verifiers ignore them.
type Key struct {
	Kty       string `json:"kty"`           // "OKP" (RFC 8037 §2)
	Crv       string `json:"crv"`           // "Ed25519"
	X         string `json:"x"`             // base64url public key, 32 bytes
	Kid       string `json:"kid"`           // RFC 7638 thumbprint of {crv,kty,x}, base64url SHA-256
	Alg       string `json:"alg,omitempty"` // absent on keys we create; see NewKey
	Use       string `json:"use,omitempty"` // "sig"
	NotBefore int64  `json:"nbf"`           // unix seconds; receipts need nbf ≤ iat
	Expires   *int64 `json:"exp,omitempty"` // unix seconds; receipts need iat < exp; absent while active
	Revoked   bool   `json:"revoked,omitempty"`
}

// KeySet is the JWKS served at GET /.well-known/jwks.json (RFC 7517 §5):
// every key a keyring ever signed with, in the order they were created.
type KeySet struct {
	Keys []Key `json:"keys"`
}

// Thumbprint returns the RFC 7638 JWK thumbprint of an Ed25519 public key
// (SHA-256 over {"crv":"Ed25519","kty":"OKP","x":…}, RFC 8037 §2), base64url
// without padding: the key's kid. It refuses low-order (weak) keys.
func Thumbprint(pub ed25519.PublicKey) (string, error) {
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("receipt: ed25519 public key has %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	jwk := jose.JSONWebKey{Key: pub}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("receipt: thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// NewKey returns the JWKS entry of pub, valid from notBefore (truncated to
// whole seconds) with no end. The "alg" member is left out on purpose: the
// same key signs SpecV1 receipts as "EdDSA" and SpecV2 receipts as "Ed25519"
// (RFC 9864), and a JWK "alg" would forbid one of them (RFC 7517 §4.4).
func NewKey(pub ed25519.PublicKey, notBefore time.Time) (Key, error) {
	kid, err := Thumbprint(pub)
	if err != nil {
		return Key{}, err
	}
	return Key{
		Kty:       "OKP",
		Crv:       "Ed25519",
		X:         base64.RawURLEncoding.EncodeToString(pub),
		Kid:       kid,
		Use:       "sig",
		NotBefore: notBefore.Unix(),
	}, nil
}

// ErrUnknownKey is returned by KeySet.Lookup when no key has the kid.
var ErrUnknownKey = errors.New("receipt: no key with this kid in the key set")

// Lookup returns the key whose kid is kid. Two entries with the same kid make
// the set ambiguous (their windows could differ), which is an error.
func (ks KeySet) Lookup(kid string) (Key, error) {
	var found *Key
	for i := range ks.Keys {
		if ks.Keys[i].Kid == kid {
			if found != nil {
				return Key{}, fmt.Errorf("receipt: key set lists kid %q twice", kid)
			}
			found = &ks.Keys[i]
		}
	}
	if found == nil {
		return Key{}, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	return *found, nil
}

// PublicKey checks that k is an Ed25519 signing key whose kid is its own
// thumbprint and returns the public key. A kid that is not the thumbprint of
// x would let a key set bind one key's window to another key.
func (k Key) PublicKey() (ed25519.PublicKey, error) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return nil, fmt.Errorf("receipt: key %q is kty %q crv %q, want OKP Ed25519", k.Kid, k.Kty, k.Crv)
	}
	if k.Use != "" && k.Use != "sig" {
		return nil, fmt.Errorf("receipt: key %q has use %q, want sig", k.Kid, k.Use)
	}
	if k.Alg != "" && k.Alg != AlgEdDSA && k.Alg != AlgEd25519 {
		return nil, fmt.Errorf("receipt: key %q has alg %q, want %s or %s", k.Kid, k.Alg, AlgEdDSA, AlgEd25519)
	}
	raw, err := decodeB64URLStrict(k.X)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("receipt: key %q: x is not a base64url 32-byte key", k.Kid)
	}
	pub := ed25519.PublicKey(raw)
	kid, err := Thumbprint(pub)
	if err != nil {
		return nil, fmt.Errorf("receipt: key %q: %w", k.Kid, err)
	}
	if kid != k.Kid {
		return nil, fmt.Errorf("receipt: key %q: kid is not the RFC 7638 thumbprint of x (%s)", k.Kid, kid)
	}
	return pub, nil
}

// ValidAt reports whether a receipt issued at iat (unix seconds) falls in
// the key's window nbf ≤ iat < exp (half-open, our rule: a key is valid from
// nbf and no longer at exp). Revocation is separate.
func (k Key) ValidAt(iat int64) bool {
	return k.NotBefore <= iat && (k.Expires == nil || iat < *k.Expires)
}

// privateMembers are the JWK members that carry private key material:
// "d" of OKP (RFC 8037 §2) and EC keys (RFC 7518 §6.2.2.1), the RSA
// private members (RFC 7518 §6.3.2) and the symmetric key "k" (§6.4.1).
var privateMembers = [...]string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// ErrPrivateKeyPublished is matched (errors.Is) by the error of ParseKeySet
// (and hence of Verify, at StepJWKS) for a key set that holds a private key.
var ErrPrivateKeyPublished = errors.New("receipt: the key set contains private key material")

// ParseKeySet parses a JWKS document. Member names are matched exactly (not
// case-insensitively as encoding/json would), a repeated member is an
// error, and unknown members are ignored as RFC 7517 §4 requires. Every key
// needs a kid; kty, crv, x, kid, alg and use must be strings, nbf and exp
// integers, revoked a boolean, wherever present.
//
// A key with a private member (d, p, q, dp, dq, qi, oth, k) is refused
// (ErrPrivateKeyPublished), whatever its type: a published receipt key set
// that carries a private key lets anyone forge receipts.
func ParseKeySet(data []byte) (KeySet, error) {
	ks, err := parseKeySet(data)
	if err != nil {
		return KeySet{}, fmt.Errorf("receipt: key set: %w", err)
	}
	return ks, nil
}

// parseKeySet is ParseKeySet with messages that do not name the package.
func parseKeySet(data []byte) (KeySet, error) {
	if len(data) > MaxInputSize {
		return KeySet{}, fmt.Errorf("larger than %d bytes", MaxInputSize)
	}
	v, err := decodeStrict(data)
	if err != nil {
		return KeySet{}, fmt.Errorf("not JSON: %w", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return KeySet{}, errors.New("not a JSON object")
	}
	list, ok := doc["keys"].([]any)
	if !ok {
		return KeySet{}, errors.New(`no "keys" array`)
	}
	ks := KeySet{Keys: make([]Key, 0, len(list))}
	for i, e := range list {
		if m, ok := e.(map[string]any); ok {
			for _, name := range privateMembers {
				if _, has := m[name]; has {
					kid, _ := m["kid"].(string)
					return KeySet{}, &sentence{err: ErrPrivateKeyPublished, msg: fmt.Sprintf(
						"/keys/%d (kid %q) has the private member %q: whoever holds this key set can forge receipts with that key. Never publish private members; remove them, and treat the key as compromised (rotate it, then revoke it)",
						i, kid, name)}
				}
			}
		}
		k, err := keyFromJSON(e)
		if err != nil {
			return KeySet{}, fmt.Errorf("/keys/%d: %w", i, err)
		}
		ks.Keys = append(ks.Keys, k)
	}
	return ks, nil
}

func keyFromJSON(v any) (Key, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Key{}, errors.New("not a JSON object")
	}
	var k Key
	for _, f := range []struct {
		name string
		dst  *string
	}{{"kty", &k.Kty}, {"crv", &k.Crv}, {"x", &k.X}, {"kid", &k.Kid}, {"alg", &k.Alg}, {"use", &k.Use}} {
		name, dst := f.name, f.dst
		if raw, present := m[name]; present {
			s, ok := raw.(string)
			if !ok {
				return Key{}, fmt.Errorf("%s is not a string", name)
			}
			*dst = s
		}
	}
	if k.Kid == "" {
		return Key{}, errors.New("kid missing")
	}
	if raw, present := m["nbf"]; present {
		n, err := jsonInt(raw)
		if err != nil {
			return Key{}, fmt.Errorf("nbf: %w", err)
		}
		k.NotBefore = n
	} else if k.Kty == "OKP" {
		// A receipt key without a window start cannot be checked against a
		// receipt's iat; refuse it rather than treat it as valid forever.
		return Key{}, errors.New("nbf missing")
	}
	if raw, present := m["exp"]; present {
		n, err := jsonInt(raw)
		if err != nil {
			return Key{}, fmt.Errorf("exp: %w", err)
		}
		k.Expires = &n
	}
	if raw, present := m["revoked"]; present {
		b, ok := raw.(bool)
		if !ok {
			return Key{}, errors.New("revoked is not a boolean")
		}
		k.Revoked = b
	}
	return k, nil
}

// jsonInt accepts a JSON number that is an integer literal (no fraction, no
// exponent) fitting in int64.
func jsonInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("not a number")
	}
	for i, c := range n {
		if (c < '0' || c > '9') && (i != 0 || c != '-') {
			return 0, fmt.Errorf("%s is not an integer", n)
		}
	}
	i, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s does not fit in 64 bits", n)
	}
	return i, nil
}

// decodeB64URLStrict decodes unpadded base64url (RFC 7515 §2) and rejects
// every non-canonical spelling: padding, white space, line breaks and
// non-zero trailing bits all decode to the same bytes under encoding/base64's
// lenient rules, which would let different strings carry the same value.
func decodeB64URLStrict(s string) ([]byte, error) {
	// Strict() already refuses non-zero trailing bits and RawURLEncoding
	// refuses padding; the decoder would still skip CR and LF.
	if strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\n') >= 0 {
		return nil, errors.New("non-canonical base64url (line break)")
	}
	return base64.RawURLEncoding.Strict().DecodeString(s)
}

// decodeB64URLStrictBytes is decodeB64URLStrict for bytes.
func decodeB64URLStrictBytes(s []byte) ([]byte, error) {
	if bytes.IndexByte(s, '\r') >= 0 || bytes.IndexByte(s, '\n') >= 0 {
		return nil, errors.New("non-canonical base64url (line break)")
	}
	enc := base64.RawURLEncoding.Strict()
	out := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(out, s)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}

// decodeB64StdStrict is decodeB64URLStrict for padded standard base64
// (RFC 4648 §4), the encoding of notes and tlog-proof hashes.
func decodeB64StdStrict(s string) ([]byte, error) {
	if strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, '\n') >= 0 {
		return nil, errors.New("non-canonical base64 (line break)")
	}
	return base64.StdEncoding.Strict().DecodeString(s)
}
