package receipt

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// newTamperSetV4 is newTamperSet with five 4.0.0 receipts, logged at
// indexes 0 to 4 and proven against one checkpoint cosigned by the
// fixture's receipt key.
func newTamperSetV4(t testing.TB) *tamperSet {
	t.Helper()
	f := newFixture(t)
	s := &tamperSet{version: "v4", f: f}
	for i, clear := range []Claims{sampleClaimsV3Clear(0), sampleClaimsV3Clear(1), sampleClaimsV3UKClear(2), sampleClaimsV3B2BClear(3), pendingClaimsV3Clear(4)} {
		public, openings := conceal(t, asV4(clear), byte(50+i))
		s.claims, s.openings = append(s.claims, public), append(s.openings, openings)
	}
	s.rs = f.issueV4(t, s.claims...)
	for i := range s.claims {
		s.claims[i].Log = LogRef{Origin: testOrigin, Index: int64(i)}
	}
	s.good, s.other = decodeReceipt(t, s.rs[1]), decodeReceipt(t, s.rs[3])
	return s
}

// payloadOf is the decoded payload (the log leaf) of a 4.0.0 document.
func payloadOf(t testing.TB, r Receipt) []byte {
	t.Helper()
	p, err := decodeB64URLStrict(r.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cosignedBy returns the checkpoint of r's tlog-proof with its signature
// lines replaced by signers' over the same text (the proof lines kept).
func cosignedBy(t testing.TB, r Receipt, signers ...note.Signer) string {
	t.Helper()
	i := strings.Index(r.TlogProof, "\n\n") + 2
	head, cp := r.TlogProof[:i], r.TlogProof[i:]
	text := cp[:strings.LastIndex(cp, "\n\n")+1]
	msg, err := note.Sign(&note.Note{Text: text}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return head + string(msg)
}

// signatureLines are the signature lines of the checkpoint of a
// tlog-proof, and where they start.
func signatureLines(tlogProof string) (start int, lines []string) {
	start = strings.LastIndex(tlogProof, "\n\n") + 2
	return start, strings.Split(strings.TrimSuffix(tlogProof[start:], "\n"), "\n")
}

// casesV4 are the tamper cases of a 4.0.0 receipt with the exact step that
// must reject each (step "" must verify): the payload, the readable claims,
// the proof, the checkpoint and its signature lines, the key set. goOnly
// marks cases whose step only the Go verifier tells (the canonical
// spelling of the payload, which the independent verifiers do not
// rebuild, and the field rules: they reject those receipts at the
// inclusion step; the member set they check, as Go, at the payload step).
func (s *tamperSet) casesV4(t testing.TB, stride int) (cs []tamperCase, goOnly map[string]bool) {
	t.Helper()
	jwks, vkey := s.f.jwks(t), s.f.log.vkey
	goOnly = map[string]bool{}
	add := func(name, step string, receipt []byte) {
		cs = append(cs, tamperCase{name: name, receipt: receipt, jwks: jwks, vkey: vkey, step: step})
	}
	p := payloadOf(t, s.good)
	withPayload := func(r *Receipt, payload []byte) { r.Payload = base64.RawURLEncoding.EncodeToString(payload) }

	// The payload is signed by inclusion only: changed together with the
	// readable copy, it is consistent, and only the proof tells.
	add("payload and readable claims changed alike", StepInclusion, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), `"legal_name":"Example Digital GmbH"`, `"legal_name":"Example Digital AG"`, 1)))
		r.Claims = []byte(strings.Replace(string(r.Claims), `"legal_name": "Example Digital GmbH"`, `"legal_name": "Example Digital AG"`, 1))
	}))
	add("payload and readable claims of another receipt", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Payload, r.Claims = s.other.Payload, s.other.Claims
	}))
	add("payload, claims and id of another receipt", StepInclusion, s.with(t, func(r *Receipt) {
		r.Payload, r.Claims, r.ID = s.other.Payload, s.other.Claims, s.other.ID
	}))
	add("payload changed alone", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), `"gross_eur":"10.33"`, `"gross_eur":"1.33"`, 1)))
	}))
	add("payload iat moved out of the key window, claims alike", StepInclusion, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), `"iat":1789466400`, `"iat":1689466400`, 1)))
		r.Claims = []byte(strings.Replace(string(r.Claims), `"iat": 1789466400`, `"iat": 1689466400`, 1))
	}))
	add("payload padding bits", StepPayload, s.with(t, func(r *Receipt) {
		r.Payload = noncanonicalB64(r.Payload, len(p), b64URLAlphabet)
	}))
	add("payload in padded base64url", StepPayload, s.with(t, func(r *Receipt) {
		r.Payload = base64.URLEncoding.EncodeToString(p)
	}))
	add("payload not JSON", StepPayload, s.with(t, func(r *Receipt) { withPayload(r, p[:len(p)-1]) }))
	add("payload of 3.0.0 claims", StepSpec, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), SpecV4, SpecV3, 1)))
		r.Claims = []byte(strings.Replace(string(r.Claims), SpecV4, SpecV3, 1))
	}))
	// An unknown member is refused at the payload step by every verifier
	// (the member set of 4.0.0 claims, doc.go "# Version 3.0.0").
	goOnly["payload breaks a rule, claims alike"] = true // the field rules are Go's alone
	add("payload with an unknown member, claims alike", StepPayload, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), `"custody":"none"`, `"custody":"none","paid":true`, 1)))
		r.Claims = []byte(strings.Replace(string(r.Claims), `"custody": "none"`, `"custody": "none", "paid": true`, 1))
	}))
	add("payload breaks a rule, claims alike", StepSpec, s.with(t, func(r *Receipt) {
		withPayload(r, []byte(strings.Replace(string(p), `"custody":"none"`, `"custody":"held"`, 1)))
		r.Claims = []byte(strings.Replace(string(r.Claims), `"custody": "none"`, `"custody": "held"`, 1))
	}))
	respelled := func(name string, payload []byte) {
		goOnly[name] = true
		add(name, StepPayload, s.with(t, func(r *Receipt) { withPayload(r, payload) }))
	}
	respelled("payload re-indented", []byte(strings.ReplaceAll(string(p), `,"`, `, "`)))
	respelled("payload string escaped differently", []byte(strings.Replace(string(p), `"custody":"none"`, `"custody":"\u006eone"`, 1)))
	var sorted map[string]any
	dec := json.NewDecoder(strings.NewReader(string(p)))
	dec.UseNumber()
	if err := dec.Decode(&sorted); err != nil {
		t.Fatal(err)
	}
	respelled("payload members sorted", mustJSON(t, sorted))

	add("readable claims changed", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"gross_eur": "10.33"`, `"gross_eur": "1.33"`, 1))
	}))
	add("readable number respelled", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"iat": 1789466400`, `"iat": 1789466400.0`, 1))
	}))
	add("readable claims reindented (verifies)", "", s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.ReplaceAll(string(r.Claims), "\n", "\n\t "))
	}))
	add("readable members in sorted order (verifies)", "", s.with(t, func(r *Receipt) {
		r.Claims = mustJSON(t, sorted)
	}))
	add("readable member added", StepClaimsMismatch, s.with(t, func(r *Receipt) {
		r.Claims = []byte(strings.Replace(string(r.Claims), `"custody": "none"`, `"custody": "none", "note": "paid"`, 1))
	}))
	add("document id changed", StepClaimsMismatch, s.with(t, func(r *Receipt) { r.ID = s.other.ID }))
	add("document spec changed", StepClaimsMismatch, s.with(t, func(r *Receipt) { r.Spec = SpecV3 }))
	add("document with a jws and a payload", StepParse, s.with(t, func(r *Receipt) { r.JWS = "a.b.c" }))
	add("document without a payload", StepParse, s.with(t, func(r *Receipt) { r.Payload = "" }))

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
	add("proofs swapped", StepInclusion, s.with(t, func(r *Receipt) { r.TlogProof = s.other.TlogProof }))
	add("index line changed", StepInclusion, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, "index 1\n", "index 0\n", 1)
	}))
	add("proof hash dropped", StepInclusion, s.with(t, func(r *Receipt) {
		ls := strings.Split(r.TlogProof, "\n")
		r.TlogProof = strings.Join(append(ls[:2:2], ls[3:]...), "\n")
	}))

	// The checkpoint: its text and the log key's line are the log key's
	// (every changed byte fails its signature); the receipt key's line is
	// the receipt's signature.
	cpStart := strings.Index(s.good.TlogProof, "\n\n") + 2
	sigStart, lines := signatureLines(s.good.TlogProof)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "— "+s.f.signer.KeyID()+" ") {
		t.Fatalf("checkpoint signature lines %q: want the log key's, then the receipt key's", lines)
	}
	cosigStart := sigStart + len(lines[0]) + 1
	for i := cpStart; i < cosigStart-1; i += max(1, stride/4) {
		add("checkpoint byte "+itoa(int64(i-cpStart)), StepCheckpointSignature, s.with(t, func(r *Receipt) {
			b := []byte(r.TlogProof)
			b[i] ^= 0x01
			r.TlogProof = string(b)
		}))
	}
	cosig := lines[1]
	b64 := cosig[strings.LastIndexByte(cosig, ' ')+1:]
	for i := 6; i < len(b64); i += max(1, stride/4) { // past the key hash (4 bytes, 5⅓ characters)
		add("cosignature byte "+itoa(int64(i)), StepSignature, s.with(t, func(r *Receipt) {
			r.TlogProof = strings.Replace(r.TlogProof, cosig, strings.TrimSuffix(cosig, b64)+flipB64(b64, i, 68, b64StdAlphabet), 1)
		}))
	}
	add("cosignature key hash changed", StepKid, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, cosig, strings.TrimSuffix(cosig, b64)+flipB64(b64, 1, 68, b64StdAlphabet), 1)
	}))
	add("cosignature padding bits", StepCheckpointSignature, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, cosig, strings.TrimSuffix(cosig, b64)+noncanonicalB64(b64, 68, b64StdAlphabet), 1)
	}))
	add("cosignature removed", StepKid, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, cosig+"\n", "", 1)
	}))
	add("cosignature only, no log signature", StepCheckpointSignature, s.with(t, func(r *Receipt) {
		r.TlogProof = strings.Replace(r.TlogProof, lines[0]+"\n", "", 1)
	}))
	add("cosignature before the log signature (verifies)", "", s.with(t, func(r *Receipt) {
		r.TlogProof = r.TlogProof[:sigStart] + cosig + "\n" + lines[0] + "\n"
	}))
	add("cosignature repeated (verifies)", "", s.with(t, func(r *Receipt) { r.TlogProof += cosig + "\n" }))
	other, _ := NewSigner(seedKey(9))
	logSigner := s.f.log.signer
	add("cosigned by a key outside the key set", StepKid, s.with(t, func(r *Receipt) {
		r.TlogProof = cosignedBy(t, *r, logSigner, other.NoteSigner())
	}))
	add("cosigned by a key outside the key set, and by the key set's", "", s.with(t, func(r *Receipt) {
		r.TlogProof = cosignedBy(t, *r, logSigner, other.NoteSigner(), s.f.signer.NoteSigner())
	}))
	add("cosignature by another key under the key set's name", StepSignature, s.with(t, func(r *Receipt) {
		r.TlogProof = cosignedBy(t, *r, logSigner, &noteSigner{priv: other.priv, name: s.f.signer.KeyID(), hash: s.f.signer.note.hash})
	}))

	if len(s.openings) > 1 {
		good := s.openings[1]
		addOpened := func(name, step string, os []Opening) {
			cs = append(cs, tamperCase{name: name, receipt: s.rs[1], jwks: jwks, vkey: vkey, openings: mustJSON(t, os), step: step})
		}
		addOpened("all openings (verifies)", "", good)
		addOpened("openings of another receipt", StepOpening, s.openings[3])
		changed := good[0]
		changed.Value += " "
		addOpened("opening value changed", StepOpening, []Opening{changed})
	}

	// The key set: the key that cosigned, and its window, judged at iat.
	rotated := func(old, cur func(k *Key)) []byte {
		o := s.f.keys.Keys[0]
		n := mustKey(t, seedKey(9), fixedTime)
		old(&o)
		cur(&n)
		return mustJSON(t, KeySet{Keys: []Key{o, n}})
	}
	retire := func(k *Key) { exp := fixedTime.Unix() + 1; k.Expires = &exp }
	noop := func(*Key) {}
	bothCosigned := s.with(t, func(r *Receipt) {
		r.TlogProof = cosignedBy(t, *r, logSigner, other.NoteSigner(), s.f.signer.NoteSigner())
	})
	cs = append(cs,
		tamperCase{name: "unknown cosigner", receipt: s.rs[1], vkey: vkey, step: StepKid,
			jwks: mustJSON(t, KeySet{Keys: []Key{mustKey(t, seedKey(9), fixedTime.Add(-time.Hour))}})},
		tamperCase{name: "empty key set", receipt: s.rs[1], vkey: vkey, step: StepKid, jwks: []byte(`{"keys":[]}`)},
		tamperCase{name: "key not yet valid", receipt: s.rs[1], vkey: vkey, step: StepKeyWindow,
			jwks: s.jwksWith(t, func(k *Key) { k.NotBefore = fixedTime.Unix() + 1 })},
		tamperCase{name: "key expired at iat", receipt: s.rs[1], vkey: vkey, step: StepKeyWindow,
			jwks: s.jwksWith(t, func(k *Key) { exp := fixedTime.Unix(); k.Expires = &exp })},
		tamperCase{name: "key valid from iat (boundary, verifies)", receipt: s.rs[1], vkey: vkey, step: "",
			jwks: s.jwksWith(t, func(k *Key) { k.NotBefore = fixedTime.Unix() })},
		tamperCase{name: "key expires right after iat (boundary, verifies)", receipt: s.rs[1], vkey: vkey, step: "",
			jwks: s.jwksWith(t, retire)},
		tamperCase{name: "key revoked", receipt: s.rs[1], vkey: vkey, step: StepKeyRevoked,
			jwks: s.jwksWith(t, func(k *Key) { k.Revoked = true })},
		tamperCase{name: "kid is not the thumbprint", receipt: s.rs[1], vkey: vkey, step: StepJWKS,
			jwks: s.jwksWith(t, func(k *Key) { k.X = mustKey(t, seedKey(9), fixedTime).X })},
		tamperCase{name: "log key of another key", receipt: s.rs[1], jwks: jwks, step: StepCheckpointSignature,
			vkey: newMemLog(t, testOrigin, 8).vkey},
		tamperCase{name: "log key of another log", receipt: s.rs[1], jwks: jwks, step: StepCheckpointSignature,
			vkey: newMemLog(t, "other.example/log", 7).vkey},
		// A rotation: the old key retired right after iat, a new key from
		// iat on (the window of the old key holds iat).
		tamperCase{name: "rotated, cosigned by the old key (verifies)", receipt: s.rs[1], vkey: vkey, step: "", jwks: rotated(retire, noop)},
		tamperCase{name: "rotated, cosigned by the new key only, whose window begins after iat", receipt: s.with(t, func(r *Receipt) {
			r.TlogProof = cosignedBy(t, *r, logSigner, other.NoteSigner())
		}), vkey: vkey, step: StepKeyWindow, jwks: rotated(retire, func(k *Key) { k.NotBefore = fixedTime.Unix() + 1 })},
		tamperCase{name: "rotated, cosigned by both (verifies)", receipt: bothCosigned, vkey: vkey, step: "", jwks: rotated(retire, noop)},
		tamperCase{name: "rotated, cosigned by both, the one valid at iat revoked", receipt: bothCosigned, vkey: vkey, step: StepKeyRevoked,
			jwks: rotated(func(k *Key) { retire(k); k.Revoked = true }, func(k *Key) { k.NotBefore = fixedTime.Unix() + 1 })},
		tamperCase{name: "rotated, cosigned by both, the one outside its window revoked (verifies)", receipt: bothCosigned, vkey: vkey, step: "",
			jwks: rotated(retire, func(k *Key) { k.NotBefore = fixedTime.Unix() + 1; k.Revoked = true })},
		tamperCase{name: "rotated, cosigned by both, both revoked", receipt: bothCosigned, vkey: vkey, step: StepKeyRevoked,
			jwks: rotated(func(k *Key) { retire(k); k.Revoked = true }, func(k *Key) { k.Revoked = true })},
	)
	return cs, goOnly
}

// TestTamperV4: every case of casesV4 fails at its step (or verifies), with
// Verifier.Verify and the package-level Verify alike.
func TestTamperV4(t *testing.T) {
	s := newTamperSetV4(t)
	if _, err := Verify(s.rs[1], s.f.jwks(t), s.f.log.vkey); err != nil {
		t.Fatalf("untampered receipt: %v", err)
	}
	cases, _ := s.casesV4(t, 1)
	t.Logf("%d tamper cases", len(cases))
	for _, tc := range cases {
		_, err := tc.verify(t)
		if got := stepOf(err); got != tc.step {
			t.Errorf("%s: step %q, want %q (err: %v)", tc.name, got, tc.step, err)
		}
		if tc.openings == nil {
			if _, err2 := Verify(tc.receipt, tc.jwks, tc.vkey); stepOf(err2) != stepOf(err) {
				t.Errorf("%s: Verify says %v, Verifier.Verify %v", tc.name, err2, err)
			}
		}
	}
}

// TestTamperPayloadV4 flips every character of the payload's base64url
// alone and together with the readable claims: what breaks depends on the
// byte (the JSON, the claims, a value), but it must never pass; a change
// the readable claims agree with is caught by the proof (or, for the log's
// name, by the checkpoint's origin).
func TestTamperPayloadV4(t *testing.T) {
	s := newTamperSetV4(t)
	p := payloadOf(t, s.good)
	for i := range len(s.good.Payload) {
		flipped := flipB64(s.good.Payload, i, len(p), b64URLAlphabet)
		r := s.with(t, func(r *Receipt) { r.Payload = flipped })
		_, err := Verify(r, s.f.jwks(t), s.f.log.vkey)
		switch stepOf(err) {
		case StepPayload, StepSpec, StepClaimsMismatch:
		default:
			t.Errorf("payload byte %d: %v", i, err)
		}
		// The readable copy made to agree, where the changed payload is
		// still JSON: the proof decides.
		q, _ := decodeB64URLStrict(flipped)
		var readable json.RawMessage
		if json.Unmarshal(q, &readable) != nil {
			continue
		}
		r = s.with(t, func(r *Receipt) { r.Payload, r.Claims = flipped, readable })
		_, err = Verify(r, s.f.jwks(t), s.f.log.vkey)
		switch stepOf(err) {
		case StepPayload, StepSpec, StepClaimsMismatch, StepInclusion:
		case StepOrigin: // the log's name changed: another log's proof
		case StepParse: // invalid UTF-8 in the readable copy
		default:
			t.Errorf("payload and claims byte %d: %v", i, err)
		}
	}
}

// TestTamperCheckpointV4 flips every byte of the checkpoint's signature
// lines: the log key's line fails its signature; the receipt key's fails
// as a malformed note, its key (another key hash), or its signature.
func TestTamperCheckpointV4(t *testing.T) {
	s := newTamperSetV4(t)
	start, _ := signatureLines(s.good.TlogProof)
	for i := start; i < len(s.good.TlogProof)-1; i++ {
		r := s.with(t, func(r *Receipt) {
			b := []byte(r.TlogProof)
			b[i] ^= 0x01
			r.TlogProof = string(b)
		})
		_, err := Verify(r, s.f.jwks(t), s.f.log.vkey)
		if !slices.Contains([]string{StepCheckpointSignature, StepKid, StepSignature}, stepOf(err)) {
			t.Errorf("signature byte %d: %v", i-start, err)
		}
	}
}
