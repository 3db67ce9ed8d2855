package receipt

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

// issueRaw logs payload as issued by the fixture's keys, without the
// package's checks (which refuse what these tests need signed): a 3.0.0
// JWS over payload (v3), or payload itself as a 4.0.0 leaf under a
// checkpoint the receipt key cosigns. The readable claims are payload.
func (f *fixture) issueRaw(t testing.TB, payload []byte, v3 bool) []byte {
	t.Helper()
	spec, id := SpecV4, ""
	c, err := fastScanID(payload)
	if err != nil {
		t.Fatal(err)
	}
	id = c
	leaf := payload
	if v3 {
		spec = SpecV3
		head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"Ed25519","kid":"` + f.signer.KeyID() + `","typ":"` + TypeV3 + `"}`))
		input := head + "." + base64.RawURLEncoding.EncodeToString(payload)
		leaf = []byte(input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(seedKey(1), []byte(input))))
	}
	idx := f.log.append(t, leaf)
	saved := f.log.cosigners
	if !v3 {
		f.log.cosigners = []note.Signer{f.signer.NoteSigner()}
	}
	cp := f.log.checkpoint(t)
	f.log.cosigners = saved
	r := Receipt{Spec: spec, ID: id, Claims: payload, TlogProof: FormatTlogProof(idx, f.log.prove(t, idx), cp)}
	if v3 {
		r.JWS = string(leaf)
	} else {
		r.Payload = base64.RawURLEncoding.EncodeToString(payload)
	}
	return encodeReceipt(t, r)
}

func fastScanID(p []byte) (string, error) {
	s := string(p)
	i := strings.Index(s, `"receipt_id":"`)
	s = s[i+len(`"receipt_id":"`):]
	return s[:strings.IndexByte(s, '"')], nil
}

// personalCases are payloads that break the shape or the commitments of
// 3.0.0 and 4.0.0 claims (doc.go "# Version 3.0.0", "# Commitments"), made
// from the issuer's own payload p, each with the step at which Go's Verify
// refuses it ("" for p itself).
func personalCases(t testing.TB, p string) (names []string, payloads []string, steps []string) {
	t.Helper()
	add := func(name, step, old, new string) {
		if !strings.Contains(p, old) {
			t.Fatalf("%s: the payload has no %s", name, old)
		}
		names, payloads, steps = append(names, name), append(payloads, strings.Replace(p, old, new, 1)), append(steps, step)
	}
	const buyer, amount, custody = `"buyer":{"country":"PL"`, `"amount_usdc":"12.100000","timestamp"`, `"custody":"none"`
	add("unchanged", "", custody, custody)
	// Personal fields in clear: 3.0.0 and 4.0.0 claims have no member for them.
	add("buyer name in clear", StepPayload, buyer, buyer+`,"name":"Jan Kowalski"`)
	add("buyer postal code in clear", StepPayload, buyer, buyer+`,"postal_code":"00-950"`)
	add("payer in clear", StepPayload, amount, `"amount_usdc":"12.100000","payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66","timestamp"`)
	add("block number in clear", StepPayload, `"verification":"verified"`, `"verification":"verified","block_number":41234567`)
	add("record hash in clear", StepPayload, custody, custody+`,"record_sha256":"a3c1f2b95d4e8f607182939a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e"`)
	add("invoice hash in clear", StepPayload, `"invoice":{"id":"x402-7c1e9a40d2b35f86a0c4e1b7d9f20301"`, `"invoice":{"id":"x402-7c1e9a40d2b35f86a0c4e1b7d9f20301","ubl_sha256":"5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"`)
	add("evidence value in clear", StepPayload, `{"kind":"ip_address","country":"PL"}`, `{"kind":"ip_address","country":"PL","value":"203.0.113.7"}`)
	// Members outside the format.
	add("unknown member", StepPayload, custody, custody+`,"paid":true`)
	add("unknown buyer member", StepPayload, buyer, buyer+`,"email":"jan@example.com"`)
	add("unknown commitment-like member", StepPayload, `"log":{"origin"`, `"log":{"index":1,"origin"`)
	// Members of the wrong type, or empty where the writer omits them.
	add("confirmations as a string", StepPayload, `"confirmations":12`, `"confirmations":"12"`)
	add("empty optional member", StepPayload, `"scheme":"exact"`, `"scheme":""`)
	// Commitments that do not cover exactly the personal fields.
	i := strings.Index(p, `"/settlement/payer":"`)
	j := i + strings.Index(p[i:], `",`) + 2
	add("payer not committed", StepSpec, p[i:j], "")
	add("commitment without its section", StepSpec, `"/invoice/ubl_sha256":`, `"/buyer/registry/request_identifier":"sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA","/invoice/ubl_sha256":`)
	add("commitment of an evidence item that is not there", StepSpec, `"/buyer/name":`, `"/buyer/location_evidence/2/value":"sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA","/buyer/name":`)
	add("commitment of a field in clear", StepSpec, `"/settlement/tx_hash":`, `"/settlement/timestamp":"sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA","/settlement/tx_hash":`)
	return names, payloads, steps
}

// TestGoAndNodeAgreeOnConcealedClaims: Go's Verify refuses a 3.0.0 or
// 4.0.0 receipt whose payload shows a personal field in clear or a member
// outside the format (StepPayload: the payload must decode to the claims
// the issuer writes, which have no member for a personal field), or whose
// commitments do not cover exactly the personal fields it has (StepSpec;
// doc.go "# Commitments"). testdata/verify.mjs accepted all of them,
// showing a receipt as verified that carries the buyer's name, the payer's
// wallet or an IP address in clear (personal data, Art. 4(1) GDPR), or
// hides a committed field. Each receipt here is signed and logged by the
// fixture's keys, so only these rules can refuse it; both verifiers now
// give the same verdict at the same step.
func TestGoAndNodeAgreeOnConcealedClaims(t *testing.T) {
	var cases []agreementCase
	var want []string
	for _, v3 := range []bool{true, false} {
		f := newFixture(t)
		var p string
		version := "4.0.0"
		if v3 {
			version = "3.0.0"
			public, _ := conceal(t, sampleClaimsV3Clear(1), 40)
			public.Log = LogRef{Origin: f.log.origin}
			jws, err := f.signer.Sign(public)
			if err != nil {
				t.Fatal(err)
			}
			b, err := base64.RawURLEncoding.DecodeString(strings.Split(jws, ".")[1])
			if err != nil {
				t.Fatal(err)
			}
			p = string(b)
		} else {
			public, _ := conceal(t, asV4(sampleClaimsV3Clear(1)), 40)
			public.Log = LogRef{Origin: f.log.origin}
			b, err := Seal(public)
			if err != nil {
				t.Fatal(err)
			}
			p = string(b)
		}
		names, payloads, steps := personalCases(t, p)
		for i := range names {
			doc := f.issueRaw(t, []byte(payloads[i]), v3)
			_, err := Verify(doc, f.jwks(t), f.log.vkey)
			if stepOf(err) != steps[i] {
				t.Fatalf("%s %s: Go fails at %q (%v), want %q", version, names[i], stepOf(err), err, steps[i])
			}
			cases = append(cases, agreementCase{Name: version + " " + names[i], Receipt: doc, JWKS: f.jwks(t), VKey: f.log.vkey})
			want = append(want, steps[i])
		}
	}
	rs := nodeVerdicts(t, cases)
	for i, c := range cases {
		switch {
		case want[i] == "" && !rs[i].OK:
			t.Errorf("%s: node refuses at %s (%s) what Go accepts", c.Name, rs[i].Step, rs[i].Error)
		case want[i] != "" && rs[i].OK:
			t.Errorf("%s: node accepts what Go refuses at %s", c.Name, want[i])
		case want[i] != "" && rs[i].Step != want[i]:
			t.Errorf("%s: node refuses at %s (%s), Go at %s", c.Name, rs[i].Step, rs[i].Error, want[i])
		}
	}
}
