package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// MaxInputSize bounds every document Verify and ParseKeySet read (a receipt
// is a few kilobytes; a JWKS of ten years of keys is smaller still).
const MaxInputSize = 1 << 20

// Receipt is the JSON document served at GET /v1/receipts/{id}: the signed
// JWS (1.0.0 to 3.0.0) or the payload (4.0.0), a readable copy of its
// claims, and the C2SP tlog-proof that puts the JWS or the payload in the
// ledger's Merkle log. Exactly one of JWS and Payload is set.
type Receipt struct {
	Spec   string          `json:"spec"`
	ID     string          `json:"id"`
	Claims json.RawMessage `json:"claims"`
	JWS    string          `json:"jws,omitempty"`
	// Payload is, for 4.0.0, the log leaf (the claims' JSON, exactly as
	// logged) in unpadded base64url.
	Payload   string `json:"payload,omitempty"`
	TlogProof string `json:"tlog_proof"`
}

// Assemble builds the receipt JSON for a log leaf at log index index, with
// its inclusion proof and the signed checkpoint it leads to. The leaf is a
// signed JWS (1.0.0 to 3.0.0) or a 4.0.0 payload (IsLeafV4), whose document
// is then {spec, id, claims, payload, tlog_proof}. It cross-checks what it
// can without the keys: the JWS or payload is well formed and valid
// claims, the claims name the checkpoint's origin (and, for 1.0.0 and
// 2.0.0, this index), and the proof leads from the leaf to the checkpoint's
// root. A failure is a bug in the caller, never a property of the data.
// For 4.0.0 the checkpoint must be the one the receipt key cosigned (the
// covering checkpoint of the commit that appended the leaf), which only
// Verify, with the key set, can check.
//
// For a SpecV3 JWS or a SpecV4 payload, made before its position was
// known, index is where the committer appended it; nothing in the leaf
// changes.
//
// The output is indented JSON ending in a newline, deterministic for the
// same inputs.
func Assemble(leaf string, index int64, proof tlog.RecordProof, checkpointNote []byte) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("receipt: assemble: %s", fmt.Sprintf(format, args...))
	}
	if IsLeafV4([]byte(leaf)) {
		return assembleV4([]byte(leaf), index, proof, checkpointNote)
	}
	jws := leaf
	parts, err := splitJWS(jws)
	if err != nil {
		return fail("%v", err)
	}
	hdr, err := parseJWSHeader(parts.header)
	if err != nil {
		return fail("%v", err)
	}
	spec, ok := specOfType(hdr.typ)
	if !ok {
		return fail("jws typ %q is no receipt type", hdr.typ)
	}
	c, err := decodePayload(parts.payload, spec)
	if err != nil {
		return fail("%v", err)
	}
	if err := checkClaims(&c); err != nil {
		return fail("%v", err)
	}
	if spec != SpecV3 && c.Log.Index != index {
		return fail("claims name log index %d, proof is for %d", c.Log.Index, index)
	}
	if err := assembledIn([]byte(jws), c.Log.Origin, index, proof, checkpointNote); err != nil {
		return fail("%v", err)
	}
	return encodeAssembled(Receipt{
		Spec:      c.Spec,
		ID:        c.ReceiptID,
		Claims:    parts.payload,
		JWS:       jws,
		TlogProof: FormatTlogProof(index, proof, checkpointNote),
	})
}

// assembledIn checks, for Assemble, that the leaf is at index in the
// checkpoint of the claims' log: a signed note of that origin whose tree
// holds index, and a proof from the leaf's hash to its root.
func assembledIn(leaf []byte, origin string, index int64, proof tlog.RecordProof, checkpointNote []byte) error {
	text, _, ok := splitNote(checkpointNote)
	if !ok {
		return errors.New("checkpoint is not a signed note")
	}
	cp, err := parseCheckpoint(string(text))
	if err != nil {
		return err
	}
	if cp.origin != origin {
		return fmt.Errorf("claims name log %q, checkpoint is of %q", origin, cp.origin)
	}
	if index < 0 || index >= cp.size {
		return fmt.Errorf("index %d is not in a tree of size %d", index, cp.size)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("proof of index %d does not lead to the checkpoint root: %v", index, err)
	}
	return nil
}

// encodeAssembled is Assemble's output: indented JSON and a newline.
func encodeAssembled(r Receipt) ([]byte, error) {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("receipt: assemble: encode: %v", err)
	}
	return append(out, '\n'), nil
}

// jwsParts is a compact JWS split and decoded.
type jwsParts struct {
	header    []byte
	payload   []byte
	signature []byte
	// signingInputLen is the length of header "." payload in the JWS
	// string: the bytes the signature covers (RFC 7515 §5.2).
	signingInputLen int
}

// splitJWS splits a compact JWS (RFC 7515 §7.1) and decodes its three parts
// with decodeB64URLStrict, so that one JWS has exactly one spelling: the log
// leaf is the JWS string, and a second spelling of the same signature would
// be a second, unlogged leaf.
func splitJWS(jws string) (jwsParts, error) { return splitJWSBytes([]byte(jws)) }

// splitJWSBytes is splitJWS over bytes, which Verify takes from the
// document without copying.
func splitJWSBytes(jws []byte) (jwsParts, error) {
	h, rest, ok1 := bytes.Cut(jws, []byte("."))
	p, s, ok2 := bytes.Cut(rest, []byte("."))
	if !ok1 || !ok2 || bytes.IndexByte(s, '.') >= 0 {
		return jwsParts{}, errors.New("jws is not three base64url parts separated by '.'")
	}
	parts := jwsParts{signingInputLen: len(h) + 1 + len(p)}
	var err error
	if parts.header, err = decodeB64URLStrictBytes(h); err != nil {
		return jwsParts{}, fmt.Errorf("jws header: %v", err)
	}
	if parts.payload, err = decodeB64URLStrictBytes(p); err != nil {
		return jwsParts{}, fmt.Errorf("jws payload: %v", err)
	}
	if parts.signature, err = decodeB64URLStrictBytes(s); err != nil {
		return jwsParts{}, fmt.Errorf("jws signature: %v", err)
	}
	return parts, nil
}

// jwsHeader is the protected header of a receipt JWS: exactly these three
// members, all strings.
type jwsHeader struct {
	alg, kid, typ string
	hasKid        bool
}

func parseJWSHeader(raw []byte) (jwsHeader, error) {
	if h, ok := signerHeader(raw); ok {
		return h, nil
	}
	return strictJWSHeader(raw)
}

// strictJWSHeader reads any header through the strict decode, naming what
// is wrong with it.
func strictJWSHeader(raw []byte) (jwsHeader, error) {
	v, err := decodeStrict(raw)
	if err != nil {
		return jwsHeader{}, fmt.Errorf("jws header: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return jwsHeader{}, errors.New("jws header is not a JSON object")
	}
	var h jwsHeader
	for _, f := range []struct {
		name string
		dst  *string
	}{{"alg", &h.alg}, {"kid", &h.kid}, {"typ", &h.typ}} {
		raw, present := m[f.name]
		if !present {
			continue
		}
		s, ok := raw.(string)
		if !ok {
			return jwsHeader{}, fmt.Errorf("jws header %q is not a string", f.name)
		}
		*f.dst = s
		h.hasKid = h.hasKid || f.name == "kid"
		delete(m, f.name)
	}
	// Any other member, "crit" (RFC 7515 §4.1.11) and "jwk" (§4.1.3)
	// included, is outside the receipt format. Sorted for a deterministic
	// message.
	if len(m) > 0 {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		return jwsHeader{}, fmt.Errorf("jws header has members outside the receipt format: %s", strings.Join(names, ", "))
	}
	return h, nil
}

// signerHeader reads a header in the one form signers write,
// {"alg":…,"kid":…,"typ":…} without white space, each value printable ASCII
// without '"' or '\\' (no escapes): the same header the strict decode
// would return, without building a map. Any other header returns false and
// goes through the strict decode.
func signerHeader(raw []byte) (jwsHeader, bool) {
	var h jwsHeader
	rest := raw
	for _, f := range [...]struct {
		prefix string
		dst    *string
	}{{`{"alg":"`, &h.alg}, {`","kid":"`, &h.kid}, {`","typ":"`, &h.typ}} {
		if !bytes.HasPrefix(rest, []byte(f.prefix)) {
			return jwsHeader{}, false
		}
		rest = rest[len(f.prefix):]
		n := 0
		for n < len(rest) && rest[n] != '"' {
			if c := rest[n]; c < 0x20 || c > 0x7e || c == '\\' {
				return jwsHeader{}, false
			}
			n++
		}
		*f.dst, rest = string(rest[:n]), rest[n:]
	}
	if string(rest) != `"}` {
		return jwsHeader{}, false
	}
	h.hasKid = true
	return h, true
}

// specError says that a payload is claims of another spec version than the
// JWS typ announced.
type specError struct{ spec string }

func (e *specError) Error() string { return fmt.Sprintf("claims of spec %q", e.spec) }

// decodePayload decodes a signed payload into Claims, reading it as the
// form of spec (the version its JWS typ names), and proves that the claims
// value is the whole payload: nothing unknown, no member matched only
// case-insensitively (encoding/json's habit), no explicit empty member that
// Sign would have omitted, no repeated member.
//
// The fast path is one decode (fastClaims) and one encode (appendClaims,
// which writes what json.Marshal writes), neither with reflection: when the
// re-encoding is byte for byte the payload, the payload is exactly what
// Sign writes, which has none of those defects. Otherwise the slow path
// compares the payload with its re-encoding as strict JSON values, as the
// first versions of Verify did, so a receipt stays valid if a future
// encoding/json spells the same values differently.
func decodePayload(payload []byte, spec string) (Claims, error) {
	if ConcealedSpec(spec) {
		var w claimsV3
		if fastClaimsV3(payload, &w) && w.Spec == spec && bytes.Equal(appendClaimsV3(make([]byte, 0, len(payload)), &w), payload) {
			return fromV3(&w), nil
		}
		var strict claimsV3
		if err := slowPayloadCheck(payload, spec, &strict, func() ([]byte, error) { return json.Marshal(&strict) }); err != nil {
			return Claims{}, err
		}
		return fromV3(&strict), nil
	}
	var c Claims
	if fastClaims(payload, &c) && c.Spec == spec && bytes.Equal(appendClaims(make([]byte, 0, len(payload)), &c), payload) {
		return c, nil
	}
	var strict Claims
	if err := slowPayloadCheck(payload, spec, &strict, func() ([]byte, error) { return json.Marshal(&strict) }); err != nil {
		return Claims{}, err
	}
	return strict, nil
}

// slowPayloadCheck decodes payload strictly into dst (a *Claims or
// *claimsV3) and requires its re-encoding to equal the payload as JSON
// values.
func slowPayloadCheck(payload []byte, spec string, dst any, marshal func() ([]byte, error)) error {
	generic, err := decodeStrict(payload)
	if err != nil {
		return fmt.Errorf("it is not strict JSON (%v)", err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return errors.New("it is not a JSON object")
	}
	if got, ok := obj["spec"].(string); ok && got != spec {
		if _, known := jurisdictionsOf(got); known {
			return &specError{spec: got}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("it does not decode as %s claims (%v)", spec, err)
	}
	again, err := marshal()
	if err != nil {
		return err
	}
	back, err := decodeStrict(again)
	if err != nil {
		return err
	}
	if d, ok := firstDifference(generic, back, ""); ok {
		return fmt.Errorf("at %s the payload has %s where the form Sign writes has %s (member names, types and omitted empty members must match)", d.path, d.a, d.b)
	}
	return nil
}

// probeEnvironment reads the environment claim of a payload whose signature
// has not been checked, for an error message only.
func probeEnvironment(payload []byte) string {
	var p struct {
		Environment string `json:"environment"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Environment
}

// sameClaims checks that the readable claims of the document equal the
// signed payload. Assemble writes the payload re-indented, so the fast path
// compares the two byte for byte ignoring white space between tokens; the
// slow path compares them as strict JSON values and names the first
// difference.
func (vf *verification) sameClaims(doc *receiptDoc, payload []byte) error {
	if doc.claimsUnchecked {
		// The payload is strict JSON (decodePayload proved it the form
		// Sign writes), so claims equal to it token for token are too.
		if sameTokens(doc.claims, payload) {
			doc.claimsUnchecked = false
			return nil
		}
	} else if compactEqual(doc.claims, payload) {
		return nil
	}
	readable, err := decodeStrict(doc.claims)
	if err != nil {
		return vf.fail(StepParse, parseFailure(fmt.Errorf("claims: %v", err)))
	}
	signed, err := decodeStrict(payload)
	if err != nil {
		return vf.failf(StepPayload, "the signed payload is not strict JSON: %v", err)
	}
	d, differ := firstDifference(readable, signed, "")
	if !differ {
		return nil
	}
	var msg string
	switch {
	case d.a == absent:
		msg = fmt.Sprintf("the readable claims lack %s, which the signed payload has (%s)", d.path, d.b)
	case d.b == absent:
		msg = fmt.Sprintf("the readable claims have %s (%s), which the signed payload does not have", d.path, d.a)
	default:
		msg = fmt.Sprintf("the readable claims say %s is %s, but the signed payload says %s", d.path, d.a, d.b)
	}
	return vf.failField(StepClaimsMismatch, d.path, errors.New(msg+
		": the readable copy was changed after signing. Trust only the signed values (Verify returns them), and ask the issuer for an unaltered receipt"))
}

// jurisdictionsOf returns the jurisdictions a spec version serves.
func jurisdictionsOf(spec string) ([]string, bool) {
	switch spec {
	case SpecV1:
		return []string{JurisdictionEUVAT}, true
	case SpecV2:
		return []string{JurisdictionUKVAT}, true
	case SpecV3, SpecV4:
		return []string{JurisdictionEUVAT, JurisdictionUKVAT}, true
	}
	return nil, false
}

// LeafReceiptID returns the receipt id a log leaf (a receipt JWS, or a
// 4.0.0 payload) carries, without checking its signature: for tools that
// walk a log whose checkpoints they have verified and must find two leaves
// with one receipt id, the mark of a 3.0.0 JWS or 4.0.0 payload appended
// twice (doc.go "# Version 3.0.0").
func LeafReceiptID(leaf []byte) (string, error) {
	if IsLeafV4(leaf) {
		c, err := decodeLeafV4(leaf)
		if err != nil {
			return "", fmt.Errorf("receipt: leaf: payload: %v", err)
		}
		return c.ReceiptID, nil
	}
	parts, err := splitJWSBytes(leaf)
	if err != nil {
		return "", fmt.Errorf("receipt: leaf: %v", err)
	}
	hdr, err := parseJWSHeader(parts.header)
	if err != nil {
		return "", fmt.Errorf("receipt: leaf: %v", err)
	}
	spec, ok := specOfType(hdr.typ)
	if !ok {
		return "", fmt.Errorf("receipt: leaf: jws typ %q is no receipt type", hdr.typ)
	}
	c, err := decodePayload(parts.payload, spec)
	if err != nil {
		return "", fmt.Errorf("receipt: leaf: payload: %v", err)
	}
	if c.ReceiptID == "" {
		return "", errors.New("receipt: leaf: payload has no receipt_id")
	}
	return c.ReceiptID, nil
}
