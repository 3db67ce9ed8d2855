package receipt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func stepOf(err error) string {
	var ve *VerifyError
	if errors.As(err, &ve) {
		return ve.Step
	}
	return ""
}

func TestVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	in := []Claims{sampleClaims(0), sampleClaimsV2(1), sampleClaims(2)}
	pending := sampleClaims(3)
	pending.ReviewStatus, pending.ReviewReasons = ReviewPending, []string{"consumerCountry missing"}
	pending.Buyer, pending.Classification, pending.FX = Buyer{}, nil, nil
	pending.Settlement.Chain = ChainFacts{Verification: ChainNotPerformed}
	pending.Settlement.LogIndex = nil
	in = append(in, pending)

	rs := f.issue(t, in...)
	for i, r := range rs {
		got, err := Verify(r, f.jwks(t), f.log.vkey)
		if err != nil {
			t.Fatalf("receipt %d: %v\n%s", i, err, r)
		}
		want := in[i]
		want.Log = LogRef{Origin: testOrigin, Index: int64(i)}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("receipt %d: verified claims differ from the signed ones:\n got %+v\nwant %+v", i, *got, want)
		}
	}
}

// TestSignDeterministic: Ed25519 is deterministic (RFC 8032 §5.1.6) and the
// payload is json.Marshal of a struct, so equal claims give equal JWS.
func TestSignDeterministic(t *testing.T) {
	a, _ := NewSigner(seedKey(1))
	b, _ := NewSigner(seedKey(1))
	ja, err := a.Sign(sampleClaims(0))
	if err != nil {
		t.Fatal(err)
	}
	jb, _ := b.Sign(sampleClaims(0))
	if ja != jb {
		t.Errorf("two signers of one key gave different JWS")
	}
	c := sampleClaims(0)
	c.IssuedAt++
	if jc, _ := a.Sign(c); jc == ja {
		t.Errorf("different claims gave the same JWS")
	}
}

func TestJWSHeader(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	for _, tc := range []struct {
		c    Claims
		want string
	}{
		{sampleClaims(0), `{"alg":"EdDSA","kid":"` + s.KeyID() + `","typ":"service.receipt+jws"}`},
		{sampleClaimsV2(0), `{"alg":"Ed25519","kid":"` + s.KeyID() + `","typ":"service.receipt.v2+jws"}`},
	} {
		jws, err := s.Sign(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		h, p, _ := jwsSegments(jws)
		hdr, _ := base64.RawURLEncoding.DecodeString(h)
		if string(hdr) != tc.want {
			t.Errorf("%s header %s, want %s", tc.c.Spec, hdr, tc.want)
		}
		payload, _ := base64.RawURLEncoding.DecodeString(p)
		want, _ := json.Marshal(tc.c)
		if !bytes.Equal(payload, want) {
			t.Errorf("%s payload is not json.Marshal(claims)", tc.c.Spec)
		}
	}
}

// TestKeyIDIsRFC7638 recomputes the thumbprint by hand: SHA-256 over the
// required members in lexical order, no white space (RFC 7638 §3.2).
func TestKeyIDIsRFC7638(t *testing.T) {
	s, _ := NewSigner(seedKey(1))
	x := base64.RawURLEncoding.EncodeToString(s.PublicKey())
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	if want := base64.RawURLEncoding.EncodeToString(sum[:]); s.KeyID() != want {
		t.Errorf("kid %s, want %s", s.KeyID(), want)
	}
	// RFC 8037 Appendix A.3: the thumbprint of its example key.
	pub, _ := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	kid, err := Thumbprint(pub)
	if err != nil || kid != "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" {
		t.Errorf("RFC 8037 A.3 thumbprint %q, %v", kid, err)
	}
}

// rawJWS signs arbitrary header and payload bytes, bypassing Sign's checks.
func rawJWS(priv ed25519.PrivateKey, header string, payload []byte) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString(payload)
	return in + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(in)))
}

// rawReceipt logs a hand-made JWS and wraps it without Assemble's checks.
// payload receives the log index the entry will get.
func (f *fixture) rawReceipt(t testing.TB, header string, payload func(index int64) []byte) []byte {
	t.Helper()
	index := f.log.size
	pl := payload(index)
	jws := rawJWS(seedKey(1), header, pl)
	f.log.append(t, []byte(jws))
	readable := json.RawMessage(`{}`)
	var probe map[string]any
	spec, id := SpecV1, ""
	if _, err := decodeStrict(pl); err == nil && json.Unmarshal(pl, &probe) == nil {
		readable = pl
		if s, ok := probe["spec"].(string); ok {
			spec = s
		}
		id, _ = probe["receipt_id"].(string)
	}
	return encodeReceipt(t, Receipt{
		Spec: spec, ID: id, Claims: readable, JWS: jws,
		TlogProof: FormatTlogProof(index, f.log.prove(t, index), f.log.checkpoint(t)),
	})
}

func claimsPayload(mutate func(c *Claims)) func(int64) []byte {
	return func(index int64) []byte {
		c := sampleClaims(0)
		c.Log = LogRef{Origin: testOrigin, Index: index}
		mutate(&c)
		b, _ := json.Marshal(c)
		return b
	}
}

func TestVerifyCraftedJWS(t *testing.T) {
	f := newFixture(t)
	kid := f.signer.KeyID()
	hdr := func(alg, typ string) string {
		return `{"alg":"` + alg + `","kid":"` + kid + `","typ":"` + typ + `"}`
	}
	v1 := claimsPayload(func(*Claims) {})
	v2 := func(index int64) []byte {
		c := sampleClaimsV2(0)
		c.Log = LogRef{Origin: testOrigin, Index: index}
		b, _ := json.Marshal(c)
		return b
	}
	replace := func(old, new string) func(int64) []byte {
		return func(i int64) []byte { return []byte(strings.Replace(string(v1(i)), old, new, 1)) }
	}
	for _, tc := range []struct {
		name    string
		header  string
		payload func(int64) []byte
		step    string // "" = verifies
	}{
		{"v1 as signed by Sign", hdr("EdDSA", TypeV1), v1, ""},
		{"v1 with RFC 9864 alg Ed25519", hdr("Ed25519", TypeV1), v1, ""},
		{"v2 with alg EdDSA", hdr("EdDSA", TypeV2), v2, ""},
		{"header members reordered", `{"typ":"` + TypeV1 + `","kid":"` + kid + `","alg":"EdDSA"}`, v1, ""},
		{"alg none", hdr("none", TypeV1), v1, StepAlg},
		{"alg HS256", hdr("HS256", TypeV1), v1, StepAlg},
		{"alg missing", `{"kid":"` + kid + `","typ":"` + TypeV1 + `"}`, v1, StepAlg},
		{"typ JWT", hdr("EdDSA", "JWT"), v1, StepTyp},
		{"typ missing", `{"alg":"EdDSA","kid":"` + kid + `"}`, v1, StepTyp},
		{"typ in other case", hdr("EdDSA", "Service.Receipt+JWS"), v1, StepTyp},
		{"kid missing", `{"alg":"EdDSA","typ":"` + TypeV1 + `"}`, v1, StepKid},
		{"crit header", `{"alg":"EdDSA","crit":["exp"],"kid":"` + kid + `","typ":"` + TypeV1 + `"}`, v1, StepJWS},
		{"embedded jwk header", `{"alg":"EdDSA","jwk":{},"kid":"` + kid + `","typ":"` + TypeV1 + `"}`, v1, StepJWS},
		{"header duplicate alg", `{"alg":"EdDSA","alg":"none","kid":"` + kid + `","typ":"` + TypeV1 + `"}`, v1, StepJWS},
		{"header not an object", `["EdDSA"]`, v1, StepJWS},
		{"kid not a string", `{"alg":"EdDSA","kid":1,"typ":"` + TypeV1 + `"}`, v1, StepJWS},
		{"payload not JSON", hdr("EdDSA", TypeV1), func(int64) []byte { return []byte("receipt") }, StepPayload},
		{"payload an array", hdr("EdDSA", TypeV1), func(int64) []byte { return []byte("[]") }, StepPayload},
		{"payload unknown member", hdr("EdDSA", TypeV1), replace(`{"spec"`, `{"x":1,"spec"`), StepPayload},
		{"payload member in other case", hdr("EdDSA", TypeV1), replace(`"custody"`, `"Custody"`), StepPayload},
		{"payload duplicate member", hdr("EdDSA", TypeV1), replace(`"custody":"none"`, `"custody":"none","custody":"none"`), StepPayload},
		{"payload explicit empty member", hdr("EdDSA", TypeV1), replace(`"custody"`, `"supersedes":"","custody"`), StepPayload},
		{"payload amount as number", hdr("EdDSA", TypeV1), replace(`"gross_eur":"10.33"`, `"gross_eur":10.33`), StepPayload},
		{"payload iat as float", hdr("EdDSA", TypeV1), replace(`"iat":1789466400`, `"iat":1789466400.0`), StepPayload},
		{"payload lone surrogate", hdr("EdDSA", TypeV1), replace(`"legal_name":"Example`, `"legal_name":"\ud800Example`), StepPayload},
		{"custody held", hdr("EdDSA", TypeV1), claimsPayload(func(c *Claims) { c.Custody = "held" }), StepSpec},
		{"unknown spec", hdr("EdDSA", TypeV1), claimsPayload(func(c *Claims) { c.Spec = "service.receipt/1.1.0" }), StepSpec},
		{"v1 claims with v2 typ", hdr("Ed25519", TypeV2), v1, StepSpec},
		{"v2 claims with v1 typ", hdr("Ed25519", TypeV1), v2, StepSpec},
		{"v1 claims for uk-vat", hdr("EdDSA", TypeV1), claimsPayload(func(c *Claims) {
			c.Jurisdiction, c.Ruleset = JurisdictionUKVAT, "uk-vat-2026.09"
		}), StepSpec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.rawReceipt(t, tc.header, tc.payload)
			_, err := Verify(r, f.jwks(t), f.log.vkey)
			if got := stepOf(err); got != tc.step {
				t.Errorf("step %q, want %q (err: %v)", got, tc.step, err)
			}
		})
	}
}

func TestVerifyMalformedInputs(t *testing.T) {
	f := newFixture(t)
	good := f.issue(t, sampleClaims(0))[0]
	jwks := f.jwks(t)
	r := decodeReceipt(t, good)
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	withDoc := func(mutate func(m map[string]any)) []byte {
		m := map[string]any{}
		for k, v := range doc {
			m[k] = v
		}
		mutate(m)
		return mustJSON(t, m)
	}
	key := f.keys.Keys[0]
	keyJSON := string(mustJSON(t, key))
	for _, tc := range []struct {
		name          string
		receipt, jwks []byte
		vkey          string
		step          string
	}{
		{"receipt not JSON", []byte("rcpt"), jwks, f.log.vkey, StepParse},
		{"receipt an array", []byte("[]"), jwks, f.log.vkey, StepParse},
		{"receipt invalid UTF-8", bytes.Replace(good, []byte("fiscal402.example"), []byte("fiscal402\xffexample"), 1), jwks, f.log.vkey, StepParse},
		{"receipt trailing data", append(append([]byte{}, good...), "{}"...), jwks, f.log.vkey, StepParse},
		{"receipt unknown member", withDoc(func(m map[string]any) { m["verified"] = true }), jwks, f.log.vkey, StepParse},
		{"receipt member missing", withDoc(func(m map[string]any) { delete(m, "tlog_proof") }), jwks, f.log.vkey, StepParse},
		{"receipt claims a string", withDoc(func(m map[string]any) { m["claims"] = "{}" }), jwks, f.log.vkey, StepParse},
		{"receipt jws a number", withDoc(func(m map[string]any) { m["jws"] = 1 }), jwks, f.log.vkey, StepParse},
		{"receipt duplicate member", bytes.Replace(good, []byte(`"spec": "`+SpecV1+`",`), []byte(`"spec": "`+SpecV1+`", "spec": "x",`), 1), jwks, f.log.vkey, StepParse},
		{"receipt too large", append(bytes.Repeat([]byte(" "), MaxInputSize), good...), jwks, f.log.vkey, StepParse},
		{"jwks not JSON", good, []byte("keys"), f.log.vkey, StepJWKS},
		{"jwks without keys", good, []byte(`{}`), f.log.vkey, StepJWKS},
		{"jwks key without kid", good, []byte(`{"keys":[{"kty":"OKP"}]}`), f.log.vkey, StepJWKS},
		{"jwks nbf a string", good, []byte(strings.Replace(`{"keys":[`+keyJSON+`]}`, `"nbf":`, `"nbf":"1",`+`"x-nbf":`, 1)), f.log.vkey, StepJWKS},
		{"jwks nbf missing", good, []byte(strings.Replace(`{"keys":[`+keyJSON+`]}`, `"nbf":`, `"not_before":`, 1)), f.log.vkey, StepJWKS},
		{"jwks nbf fractional", good, []byte(strings.Replace(`{"keys":[`+keyJSON+`]}`, `,"nbf":1789380000`, `,"nbf":1789380000.5`, 1)), f.log.vkey, StepJWKS},
		{"jwks kid twice", good, []byte(`{"keys":[` + keyJSON + `,` + keyJSON + `]}`), f.log.vkey, StepJWKS},
		{"jwks key is X25519", good, []byte(strings.Replace(`{"keys":[`+keyJSON+`]}`, `"Ed25519"`, `"X25519"`, 1)), f.log.vkey, StepJWKS},
		{"jwks key for encryption", good, []byte(strings.Replace(`{"keys":[`+keyJSON+`]}`, `"use":"sig"`, `"use":"enc"`, 1)), f.log.vkey, StepJWKS},
		{"log key garbage", good, jwks, "ledger.example", StepLogKey},
		{"log key empty", good, jwks, "", StepLogKey},
		{"jws two parts", encodeReceipt(t, func() Receipt { x := r; x.JWS = x.JWS[:strings.LastIndex(x.JWS, ".")]; return x }()), jwks, f.log.vkey, StepJWS},
		{"jws four parts", encodeReceipt(t, func() Receipt { x := r; x.JWS += ".e30"; return x }()), jwks, f.log.vkey, StepJWS},
		{"jws with line break", encodeReceipt(t, func() Receipt { x := r; x.JWS = x.JWS[:20] + "\n" + x.JWS[20:]; return x }()), jwks, f.log.vkey, StepJWS},
		{"jws with padding", encodeReceipt(t, func() Receipt { x := r; x.JWS += "=="; return x }()), jwks, f.log.vkey, StepJWS},
		{"tlog-proof empty", encodeReceipt(t, func() Receipt { x := r; x.TlogProof = ""; return x }()), jwks, f.log.vkey, StepTlogProof},
		{"tlog-proof wrong version", encodeReceipt(t, func() Receipt {
			x := r
			x.TlogProof = strings.Replace(x.TlogProof, "@v1", "@v2", 1)
			return x
		}()), jwks, f.log.vkey, StepTlogProof},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.receipt, tc.jwks, tc.vkey)
			if got := stepOf(err); got != tc.step {
				t.Errorf("step %q, want %q (err: %v)", got, tc.step, err)
			}
		})
	}
}

// TestVerifyKeyWindowBoundaries: nbf ≤ iat < exp (Key.ValidAt).
func TestVerifyKeyWindowBoundaries(t *testing.T) {
	s := newTamperSet(t)
	iat := fixedTime.Unix()
	for _, tc := range []struct {
		name     string
		nbf      int64
		exp      *int64
		wantStep string
	}{
		{"nbf = iat", iat, nil, ""},
		{"nbf = iat+1", iat + 1, nil, StepKeyWindow},
		{"exp = iat+1", iat - 10, ptr(iat + 1), ""},
		{"exp = iat", iat - 10, ptr(iat), StepKeyWindow},
		{"exp before nbf", iat, ptr(iat - 1), StepKeyWindow},
	} {
		jwks := s.jwksWith(t, func(k *Key) { k.NotBefore, k.Expires = tc.nbf, tc.exp })
		_, err := Verify(s.rs[1], jwks, s.f.log.vkey)
		if got := stepOf(err); got != tc.wantStep {
			t.Errorf("%s: step %q, want %q (%v)", tc.name, got, tc.wantStep, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestVerifyCheckpointCases(t *testing.T) {
	f := newFixture(t)
	c0, c1 := sampleClaims(0), sampleClaims(1)
	rs := f.issue(t, c0, c1)
	r := decodeReceipt(t, rs[1])
	_, proof, cpNote, err := ParseTlogProof(r.TlogProof)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("witness cosignature is ignored", func(t *testing.T) {
		witness := newMemLog(t, "witness.example", 5)
		n, err := note.Open(cpNote, note.VerifierList(mustVerifier(t, f.log.vkey)))
		if err != nil {
			t.Fatal(err)
		}
		cosigned, err := note.Sign(n, witness.signer)
		if err != nil {
			t.Fatal(err)
		}
		x := r
		x.TlogProof = FormatTlogProof(1, proof, cosigned)
		if _, err := Verify(encodeReceipt(t, x), f.jwks(t), f.log.vkey); err != nil {
			t.Errorf("cosigned checkpoint: %v", err)
		}
	})

	t.Run("signed note that is not a checkpoint", func(t *testing.T) {
		msg, err := note.Sign(&note.Note{Text: testOrigin + "\nsize two\n"}, f.log.signer)
		if err != nil {
			t.Fatal(err)
		}
		x := r
		x.TlogProof = FormatTlogProof(1, proof, msg)
		_, err = Verify(encodeReceipt(t, x), f.jwks(t), f.log.vkey)
		if got := stepOf(err); got != StepCheckpoint {
			t.Errorf("step %q, want %q (%v)", got, StepCheckpoint, err)
		}
	})

	t.Run("checkpoint of another log", func(t *testing.T) {
		// The same leaves in a log with another origin and key: the proof
		// and signature are fine, but the claims name the first log.
		other := newMemLog(t, "other.example/log", 3)
		other.append(t, []byte(decodeReceipt(t, rs[0]).JWS))
		other.append(t, []byte(r.JWS))
		x := r
		x.TlogProof = FormatTlogProof(1, other.prove(t, 1), other.checkpoint(t))
		_, err := Verify(encodeReceipt(t, x), f.jwks(t), other.vkey)
		if got := stepOf(err); got != StepOrigin {
			t.Errorf("step %q, want %q (%v)", got, StepOrigin, err)
		}
	})

	t.Run("checkpoint older than the entry", func(t *testing.T) {
		// A checkpoint of size 1 cannot contain index 1.
		old := newMemLog(t, testOrigin, 7)
		old.append(t, []byte(decodeReceipt(t, rs[0]).JWS))
		x := r
		x.TlogProof = FormatTlogProof(1, nil, old.checkpoint(t))
		_, err := Verify(encodeReceipt(t, x), f.jwks(t), f.log.vkey)
		if got := stepOf(err); got != StepInclusion {
			t.Errorf("step %q, want %q (%v)", got, StepInclusion, err)
		}
	})

	t.Run("later checkpoint with a longer proof", func(t *testing.T) {
		// A receipt stays valid with a proof to any later checkpoint.
		f.issue(t, sampleClaims(2), sampleClaims(3), sampleClaims(4))
		x := r
		x.TlogProof = FormatTlogProof(1, f.log.prove(t, 1), f.log.checkpoint(t))
		if _, err := Verify(encodeReceipt(t, x), f.jwks(t), f.log.vkey); err != nil {
			t.Errorf("proof to size %d: %v", f.log.size, err)
		}
	})
}

func mustVerifier(t testing.TB, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyErrorReport(t *testing.T) {
	s := newTamperSet(t)
	_, err := Verify(s.with(t, func(r *Receipt) { r.TlogProof = s.other.TlogProof }), s.f.jwks(t), s.f.log.vkey)
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T is not a *VerifyError", err)
	}
	if ve.Step != StepIndex || ve.ReceiptID != s.good.ID {
		t.Errorf("step %q id %q", ve.Step, ve.ReceiptID)
	}
	want := "receipt: verify " + s.good.ID + ": index: the proof is for log index 3, but the receipt says it is at index 1: the proof belongs to another entry"
	if err.Error() != want {
		t.Errorf("message\n %q\nwant\n %q", err.Error(), want)
	}
	_, err = Verify([]byte("x"), nil, "")
	if !strings.HasPrefix(err.Error(), "receipt: verify: parse: ") {
		t.Errorf("message without id: %q", err)
	}
}
