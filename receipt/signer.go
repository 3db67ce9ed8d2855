package receipt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Signer signs receipt claims with one Ed25519 key. It is safe for
// concurrent use. Ed25519 signatures are deterministic (RFC 8032 §5.1.6), so
// the same claims and key always give the same JWS, byte for byte.
type Signer struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
	kid  string
	env  string // when set, Sign refuses claims of another environment
	// headers holds, per spec version, the encoded protected header
	// BASE64URL(UTF8(JWS Protected Header)) (RFC 7515 §7.1): it depends on
	// the key and the version only, so it is written once.
	headers map[string]string
	// note is the key as a signed-note signer (NoteSigner), named by kid.
	note *noteSigner
}

// ErrWrongEnvironment is returned when a keyring's signer is asked to sign
// claims of another environment: a sandbox receipt must never be signed by
// a production key, nor the reverse.
var ErrWrongEnvironment = errors.New("receipt: claims environment does not match the signing key's environment")

// jwsHeaderJSON is the protected header of a receipt: exactly alg, kid and
// typ, in this order, no white space. It is the byte sequence go-jose v4
// wrote for the 1.0.0 and 2.0.0 receipts already issued (the golden vectors
// prove it), so those versions sign as before.
func jwsHeaderJSON(alg, kid, typ string) []byte {
	// alg and typ are constants; kid is base64url. None needs escaping, but
	// encode through encoding/json anyway so that no input can break out.
	a, _ := json.Marshal(alg)
	k, _ := json.Marshal(kid)
	t, _ := json.Marshal(typ)
	var b bytes.Buffer
	b.WriteString(`{"alg":`)
	b.Write(a)
	b.WriteString(`,"kid":`)
	b.Write(k)
	b.WriteString(`,"typ":`)
	b.Write(t)
	b.WriteByte('}')
	return b.Bytes()
}

// specHeaders are the alg and typ each version signs with: SpecV1 "EdDSA"
// (RFC 8037 §3.1), the later versions its fully specified name "Ed25519"
// (RFC 9864 §2).
var specHeaders = [...]struct{ spec, alg, typ string }{
	{SpecV1, AlgEdDSA, TypeV1},
	{SpecV2, AlgEd25519, TypeV2},
	{SpecV3, AlgEd25519, TypeV3},
}

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
	s := &Signer{priv: derived, pub: pub, kid: kid, headers: make(map[string]string, len(specHeaders)),
		note: &noteSigner{priv: derived, name: kid, hash: NoteKeyHash(kid, pub)}}
	for _, h := range specHeaders {
		s.headers[h.spec] = base64.RawURLEncoding.EncodeToString(jwsHeaderJSON(h.alg, kid, h.typ))
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
//	BASE64URL({"alg":…,"kid":…,"typ":…}) "." BASE64URL(payload) "." BASE64URL(signature)
//
// with alg/typ "EdDSA"/TypeV1 for SpecV1 claims, "Ed25519"/TypeV2 for SpecV2
// and "Ed25519"/TypeV3 for SpecV3. The payload is json.Marshal(c) for
// SpecV1 and SpecV2; for SpecV3 it is the position-independent form of
// doc.go "# Version 3.0.0": c must have no personal field in clear (see
// Conceal) and c.Log.Index is not signed, so the JWS can be made before the
// log position is known. The JWS string is the Merkle log leaf, byte for
// byte.
//
// The compact serialisation is written directly: the header is fixed per
// key and version, the payload is written once by the reflection-free
// encoder of encode.go (appendClaims, appendClaimsV3: byte for byte what
// json.Marshal writes, which TestEncodeMatchesMarshal, FuzzEncodeClaims and
// the golden receipts hold it to), and the signature is crypto/ed25519 over
// the ASCII signing input (RFC 7515 §5.1).
//
// SpecV4 claims are refused (*ClaimsError at /spec): a 4.0.0 receipt has
// no JWS. Seal writes its payload, the log leaf, and the key cosigns the
// checkpoints instead (NoteSigner, Keyring.Cosigners).
func (s *Signer) Sign(c Claims) (string, error) {
	if c.Spec == SpecV4 {
		return "", errNotSigned
	}
	if err := checkClaims(&c); err != nil {
		return "", err
	}
	return s.signChecked(&c)
}

// signChecked signs claims that checkClaims accepted.
func (s *Signer) signChecked(c *Claims) (string, error) {
	if s.env != "" && c.Environment != s.env {
		return "", fmt.Errorf("%w: claims are %q, key is %q", ErrWrongEnvironment, c.Environment, s.env)
	}
	sc := scratchPool.Get().(*scratch)
	sc.payload = appendPayload(sc.payload[:0], c)
	var jws string
	jws, sc.jws = s.signPayload(sc.jws[:0], s.headers[c.Spec], sc.payload)
	if cap(sc.payload)+cap(sc.jws) <= maxPooledScratch {
		scratchPool.Put(sc)
	}
	return jws, nil
}

// scratch is the working memory of one signature: the payload, only read
// to be base64url-encoded, and the JWS before it is copied into its string.
type scratch struct{ payload, jws []byte }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledScratch bounds the buffers kept in scratchPool, so that one
// huge receipt does not pin its memory.
const maxPooledScratch = 64 << 10

// appendPayload appends the signed payload of claims that checkClaims
// accepted: json.Marshal(c), or for SpecV3 json.Marshal(toV3(c)).
func appendPayload(b []byte, c *Claims) []byte {
	if ConcealedSpec(c.Spec) {
		w := toV3(c)
		return appendClaimsV3(b, &w)
	}
	return appendClaims(b, c)
}

// signPayload writes header "." BASE64URL(payload) "." BASE64URL(sig) into
// buf and returns it as a string, with buf for reuse.
func (s *Signer) signPayload(buf []byte, header string, payload []byte) (string, []byte) {
	enc := base64.RawURLEncoding
	buf = slices.Grow(buf, len(header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(ed25519.SignatureSize))
	buf = append(buf, header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	sig := ed25519.Sign(s.priv, buf)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), buf
}
