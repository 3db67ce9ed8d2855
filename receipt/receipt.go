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
// JWS, a readable copy of its claims, and the C2SP tlog-proof that puts the
// JWS in the ledger's Merkle log.
type Receipt struct {
	Spec      string          `json:"spec"`
	ID        string          `json:"id"`
	Claims    json.RawMessage `json:"claims"`
	JWS       string          `json:"jws"`
	TlogProof string          `json:"tlog_proof"`
}

// Assemble builds the receipt JSON for a signed JWS at log index index, with
// its inclusion proof and the signed checkpoint it leads to. It cross-checks
// what it can without the log's public key: the JWS is well formed, the
// claims name this index and the checkpoint's origin, and the proof leads
// from the JWS leaf to the checkpoint's root. A failure is a bug in the
// caller, never a property of the data.
//
// The output is indented JSON ending in a newline, deterministic for the
// same inputs.
func Assemble(jws string, index int64, proof tlog.RecordProof, checkpointNote []byte) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("receipt: assemble: %s", fmt.Sprintf(format, args...))
	}
	parts, err := splitJWS(jws)
	if err != nil {
		return fail("%v", err)
	}
	c, _, err := decodeClaims(parts.payload)
	if err != nil {
		return fail("%v", err)
	}
	if err := checkClaims(&c); err != nil {
		return fail("%v", err)
	}
	if c.Log.Index != index {
		return fail("claims name log index %d, proof is for %d", c.Log.Index, index)
	}
	text, _, ok := splitNote(checkpointNote)
	if !ok {
		return fail("checkpoint is not a signed note")
	}
	cp, err := parseCheckpoint(string(text))
	if err != nil {
		return fail("%v", err)
	}
	if cp.origin != c.Log.Origin {
		return fail("claims name log %q, checkpoint is of %q", c.Log.Origin, cp.origin)
	}
	if index >= cp.size {
		return fail("index %d is not in a tree of size %d", index, cp.size)
	}
	if err := tlog.CheckRecord(proof, cp.size, cp.root, index, tlog.RecordHash([]byte(jws))); err != nil {
		return fail("proof of index %d does not lead to the checkpoint root: %v", index, err)
	}
	r := Receipt{
		Spec:      c.Spec,
		ID:        c.ReceiptID,
		Claims:    parts.payload,
		JWS:       jws,
		TlogProof: FormatTlogProof(index, proof, checkpointNote),
	}
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fail("encode: %v", err)
	}
	return append(out, '\n'), nil
}

// jwsParts is a compact JWS split and decoded.
type jwsParts struct {
	header    []byte
	payload   []byte
	signature []byte
}

// splitJWS splits a compact JWS (RFC 7515 §7.1) and decodes its three parts
// with decodeB64URLStrict, so that one JWS has exactly one spelling: the log
// leaf is the JWS string, and a second spelling of the same signature would
// be a second, unlogged leaf.
func splitJWS(jws string) (jwsParts, error) {
	h, rest, ok1 := strings.Cut(jws, ".")
	p, s, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s, ".") {
		return jwsParts{}, errors.New("jws is not three base64url parts separated by '.'")
	}
	var parts jwsParts
	var err error
	if parts.header, err = decodeB64URLStrict(h); err != nil {
		return jwsParts{}, fmt.Errorf("jws header: %v", err)
	}
	if parts.payload, err = decodeB64URLStrict(p); err != nil {
		return jwsParts{}, fmt.Errorf("jws payload: %v", err)
	}
	if parts.signature, err = decodeB64URLStrict(s); err != nil {
		return jwsParts{}, fmt.Errorf("jws signature: %v", err)
	}
	return parts, nil
}

// jwsHeader is the protected header of a receipt JWS: exactly these three
// members, all strings.
type jwsHeader struct {
	alg, kid, typ string
	has           map[string]bool
}

func parseJWSHeader(raw []byte) (jwsHeader, error) {
	v, err := decodeStrict(raw)
	if err != nil {
		return jwsHeader{}, fmt.Errorf("jws header: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return jwsHeader{}, errors.New("jws header is not a JSON object")
	}
	h := jwsHeader{has: map[string]bool{}}
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
		*f.dst, h.has[f.name] = s, true
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

// decodeClaims decodes a signed payload into Claims and proves that the
// Claims value is the whole payload: nothing unknown, no member matched only
// case-insensitively (encoding/json's habit), no explicit empty member that
// Sign would have omitted. Returns the claims and the payload's generic form.
func decodeClaims(payload []byte) (Claims, any, error) {
	generic, err := decodeStrict(payload)
	if err != nil {
		return Claims{}, nil, fmt.Errorf("payload: %v", err)
	}
	if _, ok := generic.(map[string]any); !ok {
		return Claims{}, nil, errors.New("payload is not a JSON object")
	}
	var c Claims
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Claims{}, nil, fmt.Errorf("payload: %v", err)
	}
	again, err := json.Marshal(c)
	if err != nil {
		return Claims{}, nil, fmt.Errorf("payload: %v", err)
	}
	back, err := decodeStrict(again)
	if err != nil || !sameJSON(generic, back) {
		return Claims{}, nil, errors.New("payload is not in the form Sign writes (member names, types or empty members differ)")
	}
	return c, generic, nil
}
