package receipt

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const (
	b64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b64StdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// flipB64 replaces the character at position i of s, the base64 encoding of
// n bytes, by another character that keeps the encoding canonical, so the
// decoded bytes change. The last data character of an encoding whose length
// is not a multiple of 3 bytes carries only 2 (n%3 == 1) or 4 (n%3 == 2)
// significant bits; stepping by 16 or 4 in the alphabet changes exactly
// those.
func flipB64(s string, i, n int, alphabet string) string {
	step := 1
	last := (n*8+5)/6 - 1 // index of the last data character
	if i == last {
		switch n % 3 {
		case 1:
			step = 16
		case 2:
			step = 4
		}
	}
	j := strings.IndexByte(alphabet, s[i])
	return s[:i] + string(alphabet[(j+step)%64]) + s[i+1:]
}

// noncanonicalB64 changes only the zero padding bits of the last data
// character: lenient decoders still return the same bytes.
func noncanonicalB64(s string, n int, alphabet string) string {
	last := (n*8+5)/6 - 1
	j := strings.IndexByte(alphabet, s[last])
	return s[:last] + string(alphabet[j+1]) + s[last+1:]
}

type tamperCase struct {
	name     string
	receipt  []byte
	jwks     []byte
	vkey     string
	openings []byte // JSON, nil = none given
	step     string
}

// verify runs the case as an auditor would, openings included.
func (tc tamperCase) verify(t testing.TB) (*Claims, error) {
	t.Helper()
	var os []Opening
	if tc.openings != nil {
		var err error
		if os, err = ParseOpenings(tc.openings); err != nil {
			t.Fatalf("%s: openings: %v", tc.name, err)
		}
	}
	v, err := NewVerifier(tc.jwks, tc.vkey)
	if err != nil {
		return nil, err
	}
	return v.Verify(tc.receipt, os...)
}

// tamperSet is a log of five receipts and everything needed to spoil them.
type tamperSet struct {
	version  string // "v1" (with one 2.0.0 entry) or "v3"
	f        *fixture
	claims   []Claims // as signed, log indexes set
	rs       [][]byte
	openings [][]Opening // v3: the openings of each receipt
	good     Receipt     // rs[1], decoded
	other    Receipt     // rs[3], decoded
}

func newTamperSet(t testing.TB) *tamperSet {
	t.Helper()
	f := newFixture(t)
	cs := []Claims{sampleClaims(0), sampleClaims(1), sampleClaimsV2(2), sampleClaims(3), sampleClaims(4)}
	rs := f.issue(t, cs...)
	for i := range cs {
		cs[i].Log = LogRef{Origin: testOrigin, Index: int64(i)}
	}
	return &tamperSet{version: "v1", f: f, claims: cs, rs: rs, good: decodeReceipt(t, rs[1]), other: decodeReceipt(t, rs[3])}
}

// newTamperSetV3 is newTamperSet with five 3.0.0 receipts.
func newTamperSetV3(t testing.TB) *tamperSet {
	t.Helper()
	f := newFixture(t)
	s := &tamperSet{version: "v3", f: f}
	for i, clear := range []Claims{sampleClaimsV3Clear(0), sampleClaimsV3Clear(1), sampleClaimsV3UKClear(2), sampleClaimsV3B2BClear(3), pendingClaimsV3Clear(4)} {
		public, openings := conceal(t, clear, byte(40+i))
		s.claims, s.openings = append(s.claims, public), append(s.openings, openings)
	}
	s.rs = f.issue(t, s.claims...)
	for i := range s.claims {
		s.claims[i].Log = LogRef{Origin: testOrigin, Index: int64(i)}
	}
	s.good, s.other = decodeReceipt(t, s.rs[1]), decodeReceipt(t, s.rs[3])
	return s
}

func (s *tamperSet) with(t testing.TB, mutate func(r *Receipt)) []byte {
	t.Helper()
	r := s.good
	mutate(&r)
	return encodeReceipt(t, r)
}

func jwsSegments(jws string) (h, p, sig string) {
	parts := strings.Split(jws, ".")
	return parts[0], parts[1], parts[2]
}

// jwksWith returns the fixture's key set with its one key changed.
func (s *tamperSet) jwksWith(t testing.TB, mutate func(k *Key)) []byte {
	t.Helper()
	k := s.f.keys.Keys[0]
	mutate(&k)
	b, err := json.Marshal(KeySet{Keys: []Key{k}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cases are the tamper cases of the issue, each with the step that must
// reject it (two window boundaries that must pass have step ""). Positional
// flips take every stride-th position; TestTamper uses stride 1.
func (s *tamperSet) cases(t testing.TB, stride int) []tamperCase {
	t.Helper()
	jwks, vkey := s.f.jwks(t), s.f.log.vkey
	var cs []tamperCase
	add := func(name, step string, receipt []byte) {
		cs = append(cs, tamperCase{name: name, receipt: receipt, jwks: jwks, vkey: vkey, step: step})
	}
	// A 1.0.0 receipt signs its index, so a proof of another index fails at
	// the index step; a 3.0.0 receipt does not, and the inclusion proof
	// fails instead.
	indexStep := StepIndex
	if s.version == "v3" {
		indexStep = StepInclusion
	}
	h, p, sig := jwsSegments(s.good.JWS)
	payloadLen := base64.RawURLEncoding.DecodedLen(len(p))

	for i := 0; i < len(p); i += stride {
		add("payload byte "+itoa(int64(i)), StepSignature, s.with(t, func(r *Receipt) {
			r.JWS = h + "." + flipB64(p, i, payloadLen, b64URLAlphabet) + "." + sig
		}))
	}
	for i := 0; i < len(sig); i += max(1, stride/8) {
		add("signature byte "+itoa(int64(i)), StepSignature, s.with(t, func(r *Receipt) {
			r.JWS = h + "." + p + "." + flipB64(sig, i, ed25519.SignatureSize, b64URLAlphabet)
		}))
	}
	add("signature padding bits", StepJWS, s.with(t, func(r *Receipt) {
		r.JWS = h + "." + p + "." + noncanonicalB64(sig, ed25519.SignatureSize, b64URLAlphabet)
	}))
	if payloadLen%3 != 0 { // otherwise the encoding has no padding bits
		add("payload padding bits", StepJWS, s.with(t, func(r *Receipt) {
			r.JWS = h + "." + noncanonicalB64(p, payloadLen, b64URLAlphabet) + "." + sig
		}))
	}

	proofLines := strings.Split(s.good.TlogProof, "\n")
	for li := 2; proofLines[li] != ""; li++ {
		for i := 0; i < 43; i += max(1, stride/8) {
			add("proof hash "+itoa(int64(li-2))+" byte "+itoa(int64(i)), StepInclusion, s.with(t, func(r *Receipt) {
				ls := append([]string(nil), proofLines...)
				ls[li] = flipB64(ls[li], i, 32, b64StdAlphabet)
				r.TlogProof = strings.Join(ls, "\n")
			}))
		}
		add("proof hash "+itoa(int64(li-2))+" padding bits", StepTlogProof, s.with(t, func(r *Receipt) {
			ls := append([]string(nil), proofLines...)
			ls[li] = noncanonicalB64(ls[li], 32, b64StdAlphabet)
			r.TlogProof = strings.Join(ls, "\n")
		}))
	}
	cpStart := strings.Index(s.good.TlogProof, "\n\n") + 2
	for i := cpStart; i < len(s.good.TlogProof); i += max(1, stride/4) {
		add("checkpoint byte "+itoa(int64(i-cpStart)), StepCheckpointSignature, s.with(t, func(r *Receipt) {
			b := []byte(r.TlogProof)
			b[i] ^= 0x01
			r.TlogProof = string(b)
		}))
	}

	add("proofs swapped", indexStep, s.with(t, func(r *Receipt) { r.TlogProof = s.other.TlogProof }))
	add("proofs swapped, index line rewritten", StepInclusion, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(s.other.TlogProof, "index 3\n", "index 1\n", 1)
	}))
	add("index line changed", indexStep, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, "index 1\n", "index 0\n", 1)
	}))
	add("proof hash dropped", StepInclusion, s.with(t, func(r *Receipt) {
		ls := strings.Split(r.TlogProof, "\n")
		r.TlogProof = strings.Join(append(ls[:2:2], ls[3:]...), "\n")
	}))
	add("jws of another receipt", StepClaimsMismatch, s.with(t, func(r *Receipt) { r.JWS = s.other.JWS }))
	add("readable claims changed", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"gross_eur": "10.33"`, `"gross_eur": "1.33"`, 1))
	}))
	add("readable number respelled", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"iat": 1789466400`, `"iat": 1789466400.0`, 1))
	}))
	add("readable claims reindented (verifies)", "", s.with(t, func(r *Receipt) {
		if !strings.Contains(string(r.Claims), "\n") {
			t.Fatal("readable claims are not indented")
		}
		r.Claims = []byte(strings.ReplaceAll(string(r.Claims), "\n", "\n\t "))
	}))
	add("readable members in sorted order (verifies)", "", s.with(t, func(r *Receipt) {
		// encoding/json writes map members sorted, not in the payload's order.
		dec := json.NewDecoder(strings.NewReader(string(r.Claims)))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		r.Claims = mustJSON(t, m)
	}))
	add("readable string escaped differently (verifies)", "", s.with(t, func(r *Receipt) {
		if !strings.Contains(string(r.Claims), `"custody": "none"`) {
			t.Fatal("no custody claim to respell")
		}
		r.Claims = []byte(strings.Replace(string(r.Claims), `"custody": "none"`, `"custody": "\u006eone"`, 1))
	}))
	add("readable member added", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"custody": "none"`, `"custody": "none", "note": "paid"`, 1))
	}))
	add("document id changed", StepClaimsMismatch, s.with(t, func(r *Receipt) { r.ID = s.other.ID }))
	add("document spec changed", StepClaimsMismatch, s.with(t, func(r *Receipt) { r.Spec = SpecV2 }))

	if s.version == "v3" {
		good := s.openings[1]
		addOpened := func(name, step string, os []Opening) {
			cs = append(cs, tamperCase{name: name, receipt: s.rs[1], jwks: jwks, vkey: vkey, openings: mustJSON(t, os), step: step})
		}
		addOpened("all openings (verifies)", "", good)
		addOpened("no openings (verifies)", "", []Opening{})
		addOpened("openings of another receipt", StepOpening, s.openings[3])
		for i := 0; i < len(good); i += max(1, stride/16) {
			o := good[i]
			changed := o
			changed.Value += " "
			addOpened("opening "+o.Field+" value changed", StepOpening, []Opening{changed})
			changed = o
			changed.Salt = flipB64(o.Salt, 3, MinSaltSize, b64URLAlphabet)
			addOpened("opening "+o.Field+" salt changed", StepOpening, []Opening{changed})
		}
		addOpened("opening of an uncommitted field", StepOpening, []Opening{{Field: "/seller/legal_name", Value: "Example Digital GmbH", Salt: good[0].Salt}})
		addOpened("opening moved to another field", StepOpening, []Opening{{Field: "/settlement/receiver", Value: good[2].Value, Salt: good[2].Salt}})
	}

	cs = append(cs,
		tamperCase{name: "unknown kid", receipt: s.rs[1], vkey: vkey, step: StepKid,
			jwks: mustJSON(t, KeySet{Keys: []Key{mustKey(t, seedKey(9), fixedTime.Add(-time.Hour))}})},
		tamperCase{name: "empty key set", receipt: s.rs[1], vkey: vkey, step: StepKid, jwks: []byte(`{"keys":[]}`)},
		tamperCase{name: "key not yet valid", receipt: s.rs[1], vkey: vkey, step: StepKeyWindow,
			jwks: s.jwksWith(t, func(k *Key) { k.NotBefore = fixedTime.Unix() + 1 })},
		tamperCase{name: "key expired at iat", receipt: s.rs[1], vkey: vkey, step: StepKeyWindow,
			jwks: s.jwksWith(t, func(k *Key) { exp := fixedTime.Unix(); k.Expires = &exp })},
		tamperCase{name: "key valid from iat (boundary, verifies)", receipt: s.rs[1], vkey: vkey, step: "",
			jwks: s.jwksWith(t, func(k *Key) { k.NotBefore = fixedTime.Unix() })},
		tamperCase{name: "key expires right after iat (boundary, verifies)", receipt: s.rs[1], vkey: vkey, step: "",
			jwks: s.jwksWith(t, func(k *Key) { exp := fixedTime.Unix() + 1; k.Expires = &exp })},
		tamperCase{name: "key revoked", receipt: s.rs[1], vkey: vkey, step: StepKeyRevoked,
			jwks: s.jwksWith(t, func(k *Key) { k.Revoked = true })},
		tamperCase{name: "kid is not the thumbprint", receipt: s.rs[1], vkey: vkey, step: StepJWKS,
			jwks: s.jwksWith(t, func(k *Key) { k.X = mustKey(t, seedKey(9), fixedTime).X })},
		tamperCase{name: "log key of another key", receipt: s.rs[1], jwks: jwks, step: StepCheckpointSignature,
			vkey: newMemLog(t, testOrigin, 8).vkey},
		tamperCase{name: "log key of another log", receipt: s.rs[1], jwks: jwks, step: StepCheckpointSignature,
			vkey: newMemLog(t, "other.example/log", 7).vkey},
	)
	return cs
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustKey(t testing.TB, priv ed25519.PrivateKey, nbf time.Time) Key {
	t.Helper()
	k, err := NewKey(priv.Public().(ed25519.PublicKey), nbf)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestTamper(t *testing.T) {
	for _, s := range []*tamperSet{newTamperSet(t), newTamperSetV3(t)} {
		if _, err := Verify(s.rs[1], s.f.jwks(t), s.f.log.vkey); err != nil {
			t.Fatalf("%s: untampered receipt: %v", s.version, err)
		}
		cases := s.cases(t, 1)
		t.Logf("%s: %d tamper cases", s.version, len(cases))
		for _, tc := range cases {
			_, err := tc.verify(t)
			if got := stepOf(err); got != tc.step {
				t.Errorf("%s: %s: step %q, want %q (err: %v)", s.version, tc.name, got, tc.step, err)
			}
			if tc.openings == nil {
				// The package-level Verify reaches the same verdict.
				if _, err2 := Verify(tc.receipt, tc.jwks, tc.vkey); stepOf(err2) != stepOf(err) {
					t.Errorf("%s: %s: Verify says %v, Verifier.Verify %v", s.version, tc.name, err2, err)
				}
			}
		}
	}
}

// TestTamperHeader flips every character of the JWS header. The header is
// not signed-over-first like the payload: what breaks depends on which byte
// changes, but it must always be a header step, never a pass.
func TestTamperHeader(t *testing.T) {
	for _, s := range []*tamperSet{newTamperSet(t), newTamperSetV3(t)} {
		h, p, sig := jwsSegments(s.good.JWS)
		n := base64.RawURLEncoding.DecodedLen(len(h))
		for i := range len(h) {
			r := s.with(t, func(r *Receipt) { r.JWS = flipB64(h, i, n, b64URLAlphabet) + "." + p + "." + sig })
			_, err := Verify(r, s.f.jwks(t), s.f.log.vkey)
			switch stepOf(err) {
			case StepJWS, StepAlg, StepTyp, StepKid, StepSignature:
			default:
				t.Errorf("%s: header byte %d: %v", s.version, i, err)
			}
		}
	}
}
