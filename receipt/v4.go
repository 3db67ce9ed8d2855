package receipt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// service.receipt/4.0.0, "signed by inclusion" (doc.go "# Version 4.0.0"):
// the log leaf is the payload, the claims' JSON in the form of 3.0.0's
// payload, and the receipt key signs the log's checkpoints instead of
// each receipt.

// leafV4Prefix begins every 4.0.0 payload: Seal writes spec first, and
// Verify accepts only the bytes Seal writes.
var leafV4Prefix = []byte(`{"spec":"` + SpecV4 + `",`)

// IsLeafV4 reports whether a log leaf is a 4.0.0 payload: it begins with
// {"spec":"service.receipt/4.0.0", exactly as Seal writes it. No other
// leaf can: a JWS begins with base64url, and the documents the engine logs
// for entries without a receipt begin with another member.
func IsLeafV4(leaf []byte) bool { return bytes.HasPrefix(leaf, leafV4Prefix) }

// LeafPayload returns the claims' JSON of a log leaf that is a receipt: a
// 4.0.0 leaf itself (IsLeafV4), or the decoded payload of a compact JWS
// (three '.'-separated parts, the header's base64url beginning "ey", a
// JSON object). ok is false for any other leaf (the engine's documents of
// entries without a receipt); err when a JWS-shaped leaf's payload is not
// base64url. Nothing is verified: for readers of a log whose checkpoints
// and records they check otherwise.
func LeafPayload(leaf []byte) (payload []byte, ok bool, err error) {
	if IsLeafV4(leaf) {
		return leaf, true, nil
	}
	h, rest, ok1 := bytes.Cut(leaf, []byte("."))
	p, _, ok2 := bytes.Cut(rest, []byte("."))
	if !ok1 || !ok2 || bytes.Count(leaf, []byte(".")) != 2 || !bytes.HasPrefix(h, []byte("ey")) {
		return nil, false, nil
	}
	payload = make([]byte, base64.RawURLEncoding.DecodedLen(len(p)))
	n, err := base64.RawURLEncoding.Decode(payload, p)
	if err != nil {
		return nil, true, fmt.Errorf("receipt: leaf: the JWS payload is not base64url: %w", err)
	}
	return payload[:n], true, nil
}

// errNotSigned refuses SpecV4 claims to Sign: a 4.0.0 receipt has no JWS.
var errNotSigned = &ClaimsError{Field: "/spec", Problem: SpecV4 + " receipts are not signed one by one: Seal writes the payload, the log leaf, and the receipt key cosigns the log's checkpoints"}

// Seal checks c against the format rules, exactly as Sign checks claims
// (an invalid receipt is never issued: *ClaimsError), and returns the
// payload of a 4.0.0 receipt: the UTF-8 JSON of the claims in the form and
// member order of doc.go "# Version 3.0.0", spec SpecV4, written by the
// reflection-free encoder Sign uses (byte for byte what json.Marshal
// writes). The payload is the Merkle log leaf, byte for byte; nothing is
// signed here. c must be SpecV4 claims with no personal field in clear
// (see Conceal); c.Log.Index is not part of the payload.
//
// Seal needs no key. The engine first takes a Keyring.Hold for the claims
// (environment, key window, and the key's cosignature of the commit's
// checkpoint), then seals, in the caller's goroutine, and seals again, as
// a pure function, wherever the claims change before they are logged.
func Seal(c Claims) ([]byte, error) {
	if c.Spec != SpecV4 {
		return nil, notSealed(c.Spec)
	}
	if err := checkClaims(&c); err != nil {
		return nil, err
	}
	return sealChecked(&c)
}

// notSealed is Seal's refusal of claims of another spec.
func notSealed(spec string) error {
	return &ClaimsError{Field: "/spec", Problem: fmt.Sprintf("Seal writes %s payloads; %q claims are signed with Sign", SpecV4, spec)}
}

// ConcealSeal is Conceal of clear SpecV4 claims followed by Seal of the
// public claims, with the claims checked once: Conceal checks the clear
// claims, and the public claims it returns are in the format by
// construction (each personal field present is committed and blanked), so
// Seal's second check of them is skipped. Leaf, openings and errors are
// those of Conceal then Seal (TestConcealSealMatches, FuzzConcealSeal);
// a Conceal error is returned as Conceal returns it. It is
// ConcealSealAppend into a pooled buffer, whose leaf it copies.
func ConcealSeal(clear Claims, rand io.Reader) (leaf []byte, openings []Opening, err error) {
	leaf, err = sealedCopy(func(dst []byte) (out []byte, err error) {
		out, openings, err = ConcealSealAppend(dst, clear, rand)
		return out, err
	})
	if err != nil {
		return nil, nil, err
	}
	return leaf, openings, nil
}

// ConcealSealAppend is ConcealSeal with the leaf appended to dst (whose
// bytes before len(dst) it leaves alone): a caller that keeps one buffer
// per receipt in flight, as the engine does until the leaf is logged,
// allocates no leaf. The leaf is out[len(dst):].
func ConcealSealAppend(dst []byte, clear Claims, rand io.Reader) (out []byte, openings []Opening, err error) {
	cms, openings, err := commitAll(&clear, rand)
	if err != nil {
		return nil, nil, err
	}
	if clear.Spec != SpecV4 {
		return nil, nil, notSealed(clear.Spec)
	}
	// The payload of the public claims Conceal would return: toV3 copies
	// no personal field (each is a commitment), so the clear claims with
	// the commitments give the same.
	w := toV3(&clear)
	w.commitList = cms
	if out, err = appendSealed(dst, &w); err != nil {
		return nil, nil, err
	}
	return out, openings, nil
}

// sealChecked is Seal after its checks.
func sealChecked(c *Claims) ([]byte, error) {
	return sealedCopy(func(dst []byte) ([]byte, error) {
		w := toV3(c)
		return appendSealed(dst, &w)
	})
}

// sealedCopy runs write on a pooled scratch buffer and returns a copy of
// what it wrote, at its exact size.
func sealedCopy(write func(dst []byte) ([]byte, error)) ([]byte, error) {
	sc := scratchPool.Get().(*scratch)
	out, err := write(sc.payload[:0])
	var leaf []byte
	if err == nil {
		leaf, sc.payload = bytes.Clone(out), out[:0]
	}
	if cap(sc.payload)+cap(sc.jws) <= maxPooledScratch {
		scratchPool.Put(sc)
	}
	return leaf, err
}

// appendSealed appends the 4.0.0 payload of w to dst.
func appendSealed(dst []byte, w *claimsV3) ([]byte, error) {
	out := appendClaimsV3(dst, w)
	if replacedInvalidUTF8(out[len(dst):]) {
		// The encoder wrote \ufffd for bytes that are not UTF-8, as
		// encoding/json does; decoded, that is U+FFFD, which re-encodes
		// otherwise: the payload would have no canonical spelling, and
		// Verify would refuse it. A JWS could carry such a payload (its
		// signature covers the bytes); a 4.0.0 payload cannot.
		return nil, &ClaimsError{Field: invalidUTF8Field(w), Problem: "is not valid UTF-8 text"}
	}
	return out, nil
}

// escapedReplacement is how the encoder writes each byte of invalid UTF-8.
var escapedReplacement = []byte(`\ufffd`)

// replacedInvalidUTF8 reports whether an encoded payload holds the escape
// \ufffd, which the encoder writes only for a byte of invalid UTF-8 (a
// valid U+FFFD is written as its UTF-8 bytes): a backslash that is not
// itself escaped, followed by ufffd.
func replacedInvalidUTF8(p []byte) bool {
	for i := 0; ; {
		j := bytes.Index(p[i:], escapedReplacement)
		if j < 0 {
			return false
		}
		k, n := i+j, 0
		for k-1-n >= 0 && p[k-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = k + 1
	}
}

// invalidUTF8Field names the first member of the payload form w, in
// payload order, whose text (or, in a map, key) is not valid UTF-8: for the
// error of Seal, a rare path, hence reflection.
func invalidUTF8Field(w *claimsV3) string {
	var find func(v reflect.Value, path string) (string, bool)
	find = func(v reflect.Value, path string) (string, bool) {
		switch v.Kind() {
		case reflect.String:
			return path, !utf8.ValidString(v.String())
		case reflect.Pointer:
			if !v.IsNil() {
				return find(v.Elem(), path)
			}
		case reflect.Struct:
			for i := range v.NumField() {
				name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
				if f, ok := find(v.Field(i), path+"/"+name); ok {
					return f, true
				}
			}
		case reflect.Slice:
			for i := range v.Len() {
				if f, ok := find(v.Index(i), path+"/"+strconv.Itoa(i)); ok {
					return f, true
				}
			}
		case reflect.Map:
			keys := v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
			for _, k := range keys {
				p := path + "/" + escapePointer(k.String())
				if !utf8.ValidString(k.String()) {
					return p, true
				}
				if f, ok := find(v.MapIndex(k), p); ok {
					return f, true
				}
			}
		}
		return "", false
	}
	f, _ := find(reflect.ValueOf(w).Elem(), "")
	return f
}

// decodeLeafV4 decodes a 4.0.0 payload, which must be exactly the bytes
// Seal writes for the claims it decodes to: one decode (fastClaimsV3), one
// re-encoding, a byte comparison. A payload spelt otherwise is refused,
// with a strict decode afterwards only to say why.
func decodeLeafV4(p []byte) (Claims, error) {
	var w claimsV3
	if fastClaimsV3(p, &w) && w.Spec == SpecV4 {
		sc := scratchPool.Get().(*scratch)
		sc.jws = appendClaimsV3(sc.jws[:0], &w)
		same := bytes.Equal(sc.jws, p)
		if cap(sc.payload)+cap(sc.jws) <= maxPooledScratch {
			scratchPool.Put(sc)
		}
		if same {
			return fromV3(&w), nil
		}
	}
	var strict claimsV3
	if err := slowPayloadCheck(p, SpecV4, &strict, func() ([]byte, error) { return json.Marshal(&strict) }); err != nil {
		return Claims{}, err
	}
	return Claims{}, errors.New("it is not in its one canonical spelling, the bytes the issuer writes (members in the order of the format, no white space, encoding/json's escapes): a payload spelt otherwise is another log leaf")
}

// assembleV4 is Assemble for a 4.0.0 payload.
func assembleV4(p []byte, index int64, proof tlog.RecordProof, checkpointNote []byte) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("receipt: assemble: %s", fmt.Sprintf(format, args...))
	}
	c, err := decodeLeafV4(p)
	if err != nil {
		return fail("payload: %v", err)
	}
	if err := checkClaims(&c); err != nil {
		return fail("%v", err)
	}
	if err := assembledIn(p, c.Log.Origin, index, proof, checkpointNote); err != nil {
		return fail("%v", err)
	}
	return encodeAssembled(Receipt{
		Spec:      c.Spec,
		ID:        c.ReceiptID,
		Claims:    p,
		Payload:   base64.RawURLEncoding.EncodeToString(p),
		TlogProof: FormatTlogProof(index, proof, checkpointNote),
	})
}

// NoteKeyHash is the C2SP signed-note key hash of an Ed25519 key named
// name: the first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key),
// big-endian (golang.org/x/mod/sumdb/note). A receipt key's cosignature
// line names the key by its kid and this hash of (kid, key).
func NoteKeyHash(name string, pub ed25519.PublicKey) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', 0x01})
	h.Write(pub)
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint32(h.Sum(sum[:0]))
}

// NoteVerifierKey returns the C2SP note verifier key of a receipt key,
// "<kid>+<8 hex key hash>+<base64(0x01 ‖ public key)>", which
// golang.org/x/mod/sumdb/note.NewVerifier reads: for tools that check a
// checkpoint's receipt-key cosignature with a note library.
func (k Key) NoteVerifierKey() (string, error) {
	pub, err := k.PublicKey()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s+%08x+%s", k.Kid, NoteKeyHash(k.Kid, pub), base64.StdEncoding.EncodeToString(append([]byte{0x01}, pub...))), nil
}

// noteSigner is a receipt key as a C2SP signed-note signer: key name the
// kid (base64url, a valid note key name), key hash NoteKeyHash(kid, key).
type noteSigner struct {
	priv ed25519.PrivateKey
	name string
	hash uint32
}

func (n *noteSigner) Name() string    { return n.name }
func (n *noteSigner) KeyHash() uint32 { return n.hash }
func (n *noteSigner) Sign(msg []byte) ([]byte, error) {
	return ed25519.Sign(n.priv, msg), nil
}

// NoteSigner returns the key as a C2SP signed-note signer, named by its
// kid: the cosigner of the log's checkpoints that makes 4.0.0 receipts
// (ledger.Options.Cosigners). Its signature line reads
// "— <kid> <base64(key hash ‖ Ed25519 signature)>". A checkpoint text
// always contains newlines and a JWS signing input never does, so no
// signature of one kind can be taken for the other.
func (s *Signer) NoteSigner() note.Signer { return s.note }

// verifyV4 verifies a 4.0.0 document (doc.go "# Verifying").
func (v *Verifier) verifyV4(doc *receiptDoc, openings []Opening) (*Claims, error) {
	vf := &verification{v: v, id: doc.id}
	p, err := decodeB64URLStrictBytes(doc.payload)
	if err != nil {
		return nil, vf.failf(StepPayload, "the payload member is not unpadded base64url in its one canonical spelling: %v. Pass the receipt exactly as the issuer served it", err)
	}
	c, err := decodeLeafV4(p)
	if err != nil {
		var se *specError
		if errors.As(err, &se) {
			return nil, vf.failField(StepSpec, "/spec", fmt.Errorf("the document is a %s receipt (a payload, no JWS), but its payload is claims of %s: it is not a receipt the issuer logged", SpecV4, se.spec))
		}
		return nil, vf.failf(StepPayload, "the payload is not %s claims in the form the issuer writes: %v. It was altered, or is not a receipt: get it again from its issuer (GET %s)", SpecV4, err, pathReceiptPattern)
	}
	if err := vf.sameClaims(doc, p); err != nil {
		return nil, err
	}
	if doc.spec != c.Spec {
		return nil, vf.failField(StepClaimsMismatch, "/spec", fmt.Errorf("the document's spec is %q but the payload says %q: the document was changed after it was issued; trust the payload", doc.spec, c.Spec))
	}
	if doc.id != c.ReceiptID {
		return nil, vf.failField(StepClaimsMismatch, "/receipt_id", fmt.Errorf("the document's id is %q but the payload is receipt %q: the document was changed after it was issued, or the payload of another receipt was put in it", doc.id, c.ReceiptID))
	}
	if err := vf.rules(&c); err != nil {
		return nil, err
	}
	index, proof, cpNote, text, cp, err := vf.checkpoint(doc.tlogProof, &c)
	if err != nil {
		return nil, err
	}
	// The position is not in the payload: the inclusion proof binds it.
	c.Log.Index = index
	if err := vf.included(index, proof, cp, p, "payload"); err != nil {
		return nil, err
	}
	if err := vf.cosigned(cpNote, text, &c); err != nil {
		return nil, err
	}
	return vf.reveal(&c, openings)
}

// cosigned checks that the checkpoint, whose text the log key signed,
// carries a signature by a receipt key of the key set whose window holds
// the receipt's iat and which is not revoked. Every signature line named by
// a kid of the key set with that key's hash must verify; lines of other
// keys (the log key, witnesses) are not looked at.
func (vf *verification) cosigned(cpNote, text []byte, c *Claims) error {
	_, lines, _ := splitNote(cpNote)
	var keys []Key
	var names []string
	for _, l := range lines {
		body, _ := strings.CutPrefix(l, "— ")
		name, b64, _ := strings.Cut(body, " ")
		key, err := vf.v.keys.Lookup(name)
		if errors.Is(err, ErrUnknownKey) {
			names = append(names, name)
			continue
		} else if err != nil {
			return vf.failf(StepJWKS, "the key set is ambiguous: %s. Use the key set the issuer publishes, unchanged", plain(err))
		}
		pub, err := key.PublicKey()
		if err != nil {
			return vf.failf(StepJWKS, "the key set's entry for the key that cosigned this receipt's checkpoint cannot be used: %s", plain(err))
		}
		raw, err := decodeB64StdStrict(b64)
		if err != nil || len(raw) < 4 || binary.BigEndian.Uint32(raw) != NoteKeyHash(name, pub) {
			// Another key of the same name (C2SP signed-note identifies
			// a key by its name and hash): not this key set's.
			names = append(names, name)
			continue
		}
		if len(raw) != 4+ed25519.SignatureSize || !ed25519.Verify(pub, text, raw[4:]) {
			return vf.failf(StepSignature, "the checkpoint's signature by receipt key %s does not verify, although the log key's signature shows its text intact: the signature line was altered, or was not made by this key of the key set. Do not rely on this receipt; get it again from its issuer (GET %s)", key.Kid, pathReceiptPattern)
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return vf.fail(StepKid, &sentence{msg: vf.noCosigner(names, c), err: ErrUnknownKey})
	}
	for _, k := range keys {
		if !k.Revoked && k.ValidAt(c.IssuedAt) {
			return nil
		}
	}
	for _, k := range keys {
		if k.ValidAt(c.IssuedAt) { // and revoked
			return vf.failf(StepKeyRevoked, "key %s, which cosigned this receipt's checkpoint and was valid when it was issued, is marked revoked in the key set: its private key may have leaked, so a receipt it vouches for cannot be trusted, whatever its date. Ask the issuer for this receipt re-issued under a current key", k.Kid)
		}
	}
	for _, k := range keys {
		if !k.Revoked {
			return vf.failf(StepKeyWindow, "the receipt says it was issued at %s (iat %d), when key %s, which cosigned its checkpoint, was not valid (%s): a key vouches only for receipts issued within its window. A receipt dated outside it may have been made with a retired, leaked key; ask the issuer",
				unixString(c.IssuedAt), c.IssuedAt, k.Kid, windowString(k))
		}
	}
	return vf.failf(StepKeyRevoked, "key %s, the only key of the key set that cosigned this receipt's checkpoint, is marked revoked: its private key may have leaked, so a receipt it vouches for cannot be trusted. Ask the issuer for this receipt re-issued under a current key", keys[0].Kid)
}

// noCosigner explains a checkpoint without a signature by a key of the
// key set, naming the likely cause as unknownKey does. The environment is
// the payload's, which the log has authenticated by now.
func (vf *verification) noCosigner(names []string, c *Claims) string {
	msg := fmt.Sprintf("the checkpoint carries no signature by a key of this key set (it is signed by %s). A %s receipt is signed through its checkpoint, which the issuer's receipt key cosigns under its kid", strings.Join(names, ", "), SpecV4)
	switch c.Environment {
	case EnvSandbox:
		return msg + fmt.Sprintf(". The receipt says it is a sandbox receipt: those are cosigned by sandbox keys, published at GET %s, never at GET %s. Verify it with the sandbox key set and the sandbox log key (GET %s)", PathSandboxJWKS, PathJWKS, PathSandboxLogKey)
	case EnvProduction:
		return msg + fmt.Sprintf(". The receipt says it is a production receipt: use the production key set, GET %s (not the sandbox one, GET %s). If that key set lacks the key too, it is older than the receipt: fetch it again", PathJWKS, PathSandboxJWKS)
	}
	return msg + fmt.Sprintf(". Use the issuer's current key set (GET %s, sandbox GET %s)", PathJWKS, PathSandboxJWKS)
}
