package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

var allSteps = []string{
	StepParse, StepJWKS, StepLogKey, StepJWS, StepAlg, StepTyp, StepKid, StepKeyRevoked, StepSignature,
	StepPayload, StepKeyWindow, StepClaimsMismatch, StepSpec, StepTlogProof, StepCheckpointSignature,
	StepCheckpoint, StepOrigin, StepIndex, StepInclusion, StepOpening,
}

// FuzzVerify mutates receipt documents of every version. Whatever the
// input, Verify must not panic, must fail with a *VerifyError naming a
// known step, and may succeed only for a JWS that the fixture really signed
// and logged, or a 4.0.0 payload it logged under a cosigned checkpoint,
// returning exactly the claims that were signed (forging is infeasible, so
// a success on anything else is a verifier bug). Seeds:
// f.Add below and testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	signed := map[string]Claims{}
	var jwks []byte
	var vkey string
	for _, s := range []*tamperSet{newTamperSet(f), newTamperSetV3(f), newTamperSetV4(f)} {
		// The sets share the signing key and the log key (seeds 1 and 7).
		jwks, vkey = s.f.jwks(f), s.f.log.vkey
		for i, r := range s.rs {
			d := decodeReceipt(f, r)
			signed[d.JWS+d.Payload] = s.claims[i] // one of them is empty
			f.Add(r)
		}
		var cases []tamperCase
		if s.version == "v4" {
			cases, _ = s.casesV4(f, 97)
		} else {
			cases = s.cases(f, 97)
		}
		for _, tc := range cases {
			f.Add(tc.receipt)
		}
	}
	f.Fuzz(func(t *testing.T, receipt []byte) {
		c, err := Verify(receipt, jwks, vkey)
		// Verify reads the document as parseReceipt does: it fails at
		// StepParse, with parseReceipt's error, exactly when parseReceipt
		// fails (though it validates the readable claims only by their
		// equality with the signed payload).
		_, perr := parseReceipt(receipt)
		if (perr != nil) != (stepOf(err) == StepParse) {
			t.Fatalf("parseReceipt: %v; Verify: %v", perr, err)
		}
		if perr != nil && !strings.Contains(err.Error(), perr.Error()) {
			t.Fatalf("parse error %q, Verify says %q", perr, err)
		}
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) || !slices.Contains(allSteps, ve.Step) {
				t.Fatalf("error %T %v is not a VerifyError with a known step", err, err)
			}
			return
		}
		var r Receipt
		if err := json.Unmarshal(receipt, &r); err != nil {
			t.Fatalf("Verify accepted what encoding/json cannot read: %v", err)
		}
		want, ok := signed[r.JWS+r.Payload]
		if !ok {
			t.Fatalf("Verify accepted a JWS or payload that was never signed or logged: %q%q", r.JWS, r.Payload)
		}
		if !reflect.DeepEqual(*c, want) {
			t.Fatalf("verified claims %+v differ from the signed %+v", *c, want)
		}
	})
}

// FuzzParseTlogProof: no panics, and whatever parses formats back to the
// same text (minus an "extra" line, which is dropped by design).
func FuzzParseTlogProof(f *testing.F) {
	fx := newFixture(f)
	for _, r := range fx.issue(f, sampleClaims(0), sampleClaims(1), sampleClaims(2)) {
		f.Add(decodeReceipt(f, r).TlogProof)
	}
	f.Add(c2spExample)
	f.Add("c2sp.org/tlog-proof@v1\nindex 0\n\nx")
	f.Fuzz(func(t *testing.T, s string) {
		index, proof, cp, err := ParseTlogProof(s)
		if err != nil {
			if !errors.Is(err, ErrMalformedTlogProof) {
				t.Fatalf("error %v does not match ErrMalformedTlogProof", err)
			}
			return
		}
		want := s
		if rest, ok := strings.CutPrefix(s, TlogProofHeader+"\nextra "); ok {
			_, rest, _ = strings.Cut(rest, "\n")
			want = TlogProofHeader + "\n" + rest
		}
		if got := FormatTlogProof(index, proof, cp); got != want {
			t.Fatalf("round trip:\n%q\nwant\n%q", got, want)
		}
	})
}

// FuzzParseKeySet: no panics; nothing with a private member parses; what
// parses re-encodes to a key set that parses to the same keys.
func FuzzParseKeySet(f *testing.F) {
	fx := newFixture(f)
	f.Add(fx.jwks(f))
	f.Add([]byte(`{"keys":[{"kid":"a","kty":"OKP","nbf":1,"exp":2,"revoked":true}]}`))
	f.Add([]byte(`{"keys":[{"kid":"a","kty":"OKP","d":"AAAA","nbf":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := ParseKeySet(data)
		if err != nil {
			return
		}
		var doc struct{ Keys []map[string]json.RawMessage }
		if json.Unmarshal(data, &doc) == nil {
			for _, k := range doc.Keys {
				for _, m := range privateMembers {
					if _, has := k[m]; has {
						t.Fatalf("key set with private member %q parsed", m)
					}
				}
			}
		}
		again, err := ParseKeySet(mustJSON(t, ks))
		if err != nil || !reflect.DeepEqual(again, ks) {
			t.Fatalf("re-parse: %+v, %v; want %+v", again, err, ks)
		}
	})
}

// FuzzDecodeStrict compares the strict parser with encoding/json: whatever
// decodeStrict accepts, encoding/json must accept with the same value, and
// it may reject only inputs with duplicate members, lone surrogate escapes,
// or excessive depth.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,-0.1e3,"x\u00e9\ud83d\ude00",true,false,null]}`, `"\ud800"`, `{"a":1,"a":2}`, `[[[]]]`, ` 1 `, `{"a":"\n"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeStrict(data)
		var want any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil && dec.More() {
			stdErr = errors.New("trailing data")
		}
		if stdErr == nil && !json.Valid(data) {
			stdErr = errors.New("invalid")
		}
		if err == nil {
			if stdErr != nil {
				t.Fatalf("strict parser accepted what encoding/json rejects (%v): %q", stdErr, data)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("values differ for %q:\n strict %#v\n   json %#v", data, got, want)
			}
		}
	})
}

// FuzzVerifyOpenings mutates the openings document given with a valid
// 3.0.0 receipt: no panics, failures are StepOpening, and a success opens
// only fields with exactly the values that were committed.
func FuzzVerifyOpenings(f *testing.F) {
	s := newTamperSetV3(f)
	v, err := NewVerifier(s.f.jwks(f), s.f.log.vkey)
	if err != nil {
		f.Fatal(err)
	}
	committed := map[string]string{} // field → value
	for _, o := range s.openings[1] {
		committed[o.Field] = o.Value
	}
	f.Add(mustJSON(f, s.openings[1]))
	f.Add(mustJSON(f, s.openings[1][:2]))
	f.Add(mustJSON(f, s.openings[3]))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		os, err := ParseOpenings(data)
		if err != nil {
			if !errors.Is(err, ErrBadOpening) {
				t.Fatalf("ParseOpenings error %v is not ErrBadOpening", err)
			}
			return
		}
		c, err := v.Verify(s.rs[1], os...)
		if err != nil {
			if stepOf(err) != StepOpening {
				t.Fatalf("step %q (%v), want %q", stepOf(err), err, StepOpening)
			}
			return
		}
		for _, o := range os {
			if want, ok := committed[o.Field]; !ok || want != o.Value {
				t.Fatalf("opening %+v accepted; committed %q", o, want)
			}
		}
		if len(os) == len(committed) && c.Buyer.Name != "Jan Kowalski" {
			t.Fatalf("all openings accepted but the buyer name is %q", c.Buyer.Name)
		}
	})
}

// FuzzVerifyOpening: VerifyOpening on arbitrary field, value and salt
// never panics and accepts only a committed (field, value) pair.
func FuzzVerifyOpening(f *testing.F) {
	public, openings := conceal(f, sampleClaimsV3B2BClear(0), 9)
	for _, o := range openings {
		f.Add(o.Field, o.Value, o.Salt)
	}
	f.Add(vectorField, vectorValue, vectorSalt)
	f.Fuzz(func(t *testing.T, field, value, salt string) {
		err := VerifyOpening(&public, Opening{Field: field, Value: value, Salt: salt})
		if err != nil {
			if !errors.Is(err, ErrBadOpening) {
				t.Fatalf("error %v is not ErrBadOpening", err)
			}
			return
		}
		for _, o := range openings {
			if o.Field == field && o.Value == value {
				return
			}
		}
		t.Fatalf("opening (%q, %q, %q) accepted", field, value, salt)
	})
}

// FuzzParseCheckpoint: the checkpoint text parser never panics, and what it
// accepts is exactly origin, size, root and non-empty extension lines,
// each spelt once.
func FuzzParseCheckpoint(f *testing.F) {
	fx := newFixture(f)
	for _, r := range fx.issue(f, sampleClaims(0), sampleClaims(1)) {
		_, _, cp, err := ParseTlogProof(decodeReceipt(f, r).TlogProof)
		if err != nil {
			f.Fatal(err)
		}
		text, _, _ := splitNote(cp)
		f.Add(string(text))
	}
	f.Add("example.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\next\n")
	f.Fuzz(func(t *testing.T, text string) {
		cp, err := parseCheckpoint(text)
		if err != nil {
			return
		}
		head := cp.origin + "\n" + strconv.FormatInt(cp.size, 10) + "\n" + cp.root.String() + "\n"
		if !strings.HasPrefix(text, head) {
			t.Fatalf("parsed %+v from %q", cp, text)
		}
	})
}

// FuzzOpenCheckpoint mutates signed checkpoint notes as Verify reads them:
// no panics, and only notes the log really signed open.
func FuzzOpenCheckpoint(f *testing.F) {
	fx := newFixture(f)
	lk := mustVerifier(f, fx.log.vkey)
	signedTexts := map[string]bool{}
	for _, r := range fx.issue(f, sampleClaims(0), sampleClaims(1), sampleClaims(2)) {
		_, _, cp, err := ParseTlogProof(decodeReceipt(f, r).TlogProof)
		if err != nil {
			f.Fatal(err)
		}
		text, _, _ := splitNote(cp)
		signedTexts[string(text)] = true
		f.Add(cp)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if checkNoteSignatureEncoding(msg) != nil {
			return
		}
		n, err := note.Open(msg, note.VerifierList(lk))
		if err != nil {
			return
		}
		if !signedTexts[n.Text] {
			t.Fatalf("a note the log never signed opened: %q", n.Text)
		}
		if _, err := parseCheckpoint(n.Text); err != nil {
			t.Fatalf("the log signed a note that is not a checkpoint: %v", err)
		}
	})
}

// FuzzParseReceipt compares the document scanner of Verify with a full
// strict decode: same verdict, same members.
func FuzzParseReceipt(f *testing.F) {
	s := newTamperSetV3(f)
	f.Add(s.rs[1])
	f.Add(newTamperSet(f).rs[2])
	f.Add(newTamperSetV4(f).rs[1])
	f.Add([]byte(`{"spec":"a","id":"b","payload":"c","tlog_proof":"d","claims":{}}`))
	f.Add([]byte(`{"spec":"a","id":"b","payload":"c","jws":"e","tlog_proof":"d","claims":{}}`))
	f.Add([]byte(`{"spec":"a","id":"b","jws":"c","tlog_proof":"d","claims":{"a":[1,{"b":null}],"\u0061b":"\ud83d\ude00"}}`))
	f.Add([]byte(`{"spec":"a","id":"b","jws":"c","tlog_proof":"d","claims":{"a":1,"\u0061":2}}`))
	f.Add([]byte(`[{"spec":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseReceipt(data)
		ref, refErr := parseReceiptReference(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("scanner %v, reference %v on %q", err, refErr, data)
		}
		if err != nil {
			return
		}
		if doc.spec != ref.Spec || doc.id != ref.ID || string(doc.jws) != ref.JWS || string(doc.payload) != ref.Payload ||
			doc.v4 != ref.v4 || doc.tlogProof != ref.TlogProof {
			t.Fatalf("members differ: %+v vs %+v", doc, ref)
		}
		readable, err := decodeStrict(doc.claims)
		if err != nil || !sameJSON(readable, ref.claims) {
			t.Fatalf("claims differ: %v", err)
		}
	})
}

type referenceReceipt struct {
	Spec, ID, JWS, Payload, TlogProof string
	v4                                bool // a payload member in place of jws
	claims                            any
}

// parseReceiptReference is the document parser of the first Verify: a
// full strict decode, then the member checks.
func parseReceiptReference(data []byte) (referenceReceipt, error) {
	if len(data) > MaxInputSize {
		return referenceReceipt{}, errors.New("too large")
	}
	v, err := decodeStrict(data)
	if err != nil {
		return referenceReceipt{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return referenceReceipt{}, errors.New("not a JSON object")
	}
	var r referenceReceipt
	proof, dst := "jws", &r.JWS
	if _, jws := m["jws"]; !jws {
		if _, payload := m["payload"]; payload {
			proof, dst, r.v4 = "payload", &r.Payload, true
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"spec", &r.Spec}, {"id", &r.ID}, {proof, dst}, {"tlog_proof", &r.TlogProof}} {
		s, ok := m[f.name].(string)
		if !ok {
			return referenceReceipt{}, fmt.Errorf("member %q missing or not a string", f.name)
		}
		*f.dst = s
	}
	claims, ok := m["claims"].(map[string]any)
	if !ok {
		return referenceReceipt{}, errors.New(`member "claims" missing or not an object`)
	}
	if len(m) != 5 {
		return referenceReceipt{}, errors.New("members other than spec, id, claims, " + proof + ", tlog_proof")
	}
	r.claims = claims
	return r, nil
}

// FuzzDecodePayload: the payload decoder of Verify (fast decoder checked by
// re-marshalling, encoding/json as fallback) accepts exactly what a strict
// decode and comparison with the re-encoding accepts, for every version.
func FuzzDecodePayload(f *testing.F) {
	for _, s := range []*tamperSet{newTamperSet(f), newTamperSetV3(f)} {
		for _, r := range s.rs {
			parts, err := splitJWS(decodeReceipt(f, r).JWS)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(parts.payload, uint8(0))
		}
	}
	specs := []string{SpecV1, SpecV2, SpecV3}
	f.Fuzz(func(t *testing.T, payload []byte, v uint8) {
		spec := specs[int(v)%len(specs)]
		c, err := decodePayload(payload, spec)
		var ref Claims
		var refErr error
		if spec == SpecV3 {
			var w claimsV3
			refErr = slowPayloadCheck(payload, spec, &w, func() ([]byte, error) { return json.Marshal(&w) })
			ref = fromV3(&w)
		} else {
			refErr = slowPayloadCheck(payload, spec, &ref, func() ([]byte, error) { return json.Marshal(&ref) })
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%s: decoder %v, reference %v", spec, err, refErr)
		}
		if err == nil && !reflect.DeepEqual(c, ref) {
			t.Fatalf("%s: decoded %+v, reference %+v", spec, c, ref)
		}
	})
}

// FuzzDecodeLeafV4: the 4.0.0 payload decoder (one fast decode, one
// re-encoding, a byte comparison) accepts exactly the payloads that a
// strict decode reads as 4.0.0 claims and json.Marshal writes back byte for
// byte, with the same claims; and whatever it accepts begins as IsLeafV4
// says, so the log's leaves divide cleanly into 4.0.0 payloads and others.
func FuzzDecodeLeafV4(f *testing.F) {
	for _, r := range newTamperSetV4(f).rs {
		f.Add(payloadOf(f, decodeReceipt(f, r)))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		c, err := decodeLeafV4(p)
		var w claimsV3
		canonical := false
		if slowPayloadCheck(p, SpecV4, &w, func() ([]byte, error) { return json.Marshal(&w) }) == nil {
			m, merr := json.Marshal(&w)
			canonical = merr == nil && bytes.Equal(m, p) && w.Spec == SpecV4
		}
		if (err == nil) != canonical {
			t.Fatalf("decoder %v, canonical %v: %q", err, canonical, p)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(c, fromV3(&w)) {
			t.Fatalf("decoded %+v, reference %+v", c, fromV3(&w))
		}
		if !IsLeafV4(p) {
			t.Fatalf("accepted a payload IsLeafV4 does not recognise: %q", p)
		}
	})
}

// FuzzNewVerifier: any key set and log key text either make a Verifier or
// fail with a *VerifyError at the jwks or log-key step; never a panic.
func FuzzNewVerifier(f *testing.F) {
	fx := newFixture(f)
	f.Add(fx.jwks(f), fx.log.vkey)
	f.Add([]byte(`{"keys":[]}`), "")
	f.Add(fx.jwks(f), "ledger.example/fiscal402+22b2ed1b+AQ")
	f.Fuzz(func(t *testing.T, jwks []byte, vkey string) {
		v, err := NewVerifier(jwks, vkey)
		if err != nil {
			if s := stepOf(err); s != StepJWKS && s != StepLogKey {
				t.Fatalf("step %q (%v)", s, err)
			}
			return
		}
		if v == nil {
			t.Fatal("nil Verifier without error")
		}
	})
}

// FuzzJWSHeader: the header reader of Verify (signerHeader for the form
// signers write, the strict decode otherwise) returns what the strict
// decode alone returns, for every header.
func FuzzJWSHeader(f *testing.F) {
	f.Add([]byte(`{"alg":"Ed25519","kid":"k","typ":"service.receipt.v3+jws"}`))
	f.Add([]byte(`{"alg":"EdDSA","kid":"","typ":"service.receipt+jws"}`))
	f.Add([]byte(`{"alg":"Ed25519","kid":"k\u0041","typ":"t"}`))
	f.Add([]byte(`{"alg":"Ed25519","typ":"t","kid":"k"}`))
	f.Add([]byte(`{"alg":"Ed25519","kid":"k","typ":"t","crit":[]}`))
	f.Add([]byte(`{"alg":"Ed25519","kid":"é","typ":"t"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parseJWSHeader(raw)
		want, wantErr := strictJWSHeader(raw)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("header %q: error %v, strict decode %v", raw, err, wantErr)
		}
		if got != want {
			t.Fatalf("header %q: %+v, strict decode %+v", raw, got, want)
		}
	})
}

// FuzzSameTokens: text that sameTokens finds equal to strict JSON is strict
// JSON with the same value, and delimit ends a valid object or array where
// the strict decode ends it: what lets Verify validate the readable claims
// by their equality with the signed payload.
func FuzzSameTokens(f *testing.F) {
	f.Add([]byte(`{ "a" : [ 1 , true , "x y" ] }`), []byte(`{"a":[1,true,"x y"]}`))
	f.Add([]byte(`{"a":[1 2]}`), []byte(`{"a":[12]}`))
	f.Add([]byte(`{"a":tr ue}`), []byte(`{"a":true}`))
	f.Add([]byte(`{"a":"\\\"",  "b":-1.5e3}`), []byte(`{"a":"\\\"","b":-1.5e3}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 0 && (a[0] == '{' || a[0] == '[') {
			if _, err := decodeStrict(a); err == nil {
				p := &jsonParser{data: a}
				if !p.delimit() || p.pos != len(bytes.TrimRight(a, " \t\r\n")) {
					t.Fatalf("delimit %q: ends at %d", a, p.pos)
				}
			}
		}
		vb, err := decodeStrict(b)
		if err != nil || !sameTokens(a, b) {
			return
		}
		va, err := decodeStrict(a)
		if err != nil {
			t.Fatalf("sameTokens(%q, %q), but the first is not strict JSON: %v", a, b, err)
		}
		if !sameJSON(va, vb) {
			t.Fatalf("sameTokens(%q, %q), but the values differ", a, b)
		}
	})
}
