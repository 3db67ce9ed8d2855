package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var allSteps = []string{
	StepParse, StepJWKS, StepLogKey, StepJWS, StepAlg, StepTyp, StepKid, StepKeyRevoked, StepSignature,
	StepPayload, StepKeyWindow, StepClaimsMismatch, StepSpec, StepTlogProof, StepCheckpointSignature,
	StepCheckpoint, StepOrigin, StepIndex, StepInclusion,
}

// FuzzVerify mutates receipt documents. Whatever the input, Verify must not
// panic, must fail with a *VerifyError naming a known step, and may succeed
// only for a JWS that the fixture really signed and logged, returning
// exactly the claims that were signed (forging is infeasible, so a success
// on anything else is a verifier bug).
func FuzzVerify(f *testing.F) {
	s := newTamperSet(f)
	jwks, vkey := s.f.jwks(f), s.f.log.vkey
	signed := map[string]Claims{}
	for i, r := range s.rs {
		signed[decodeReceipt(f, r).JWS] = s.claims[i]
		f.Add(r)
	}
	for _, tc := range s.cases(f, 97) {
		f.Add(tc.receipt)
	}
	f.Fuzz(func(t *testing.T, receipt []byte) {
		c, err := Verify(receipt, jwks, vkey)
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
		want, ok := signed[r.JWS]
		if !ok {
			t.Fatalf("Verify accepted a JWS that was never signed: %q", r.JWS)
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

// FuzzParseKeySet: no panics; what parses re-encodes to a key set that
// parses to the same keys.
func FuzzParseKeySet(f *testing.F) {
	fx := newFixture(f)
	f.Add(fx.jwks(f))
	f.Add([]byte(`{"keys":[{"kid":"a","kty":"OKP","nbf":1,"exp":2,"revoked":true}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := ParseKeySet(data)
		if err != nil {
			return
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
