package receipt

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestVerifyMessages is issue 24: each failure an auditor meets says what
// happened and what to do, naming the field and both values where there
// are two, the endpoint to fetch a missing key from, and the environment
// mix-up when there is one. Messages are for people; Step stays the
// machine-readable part (the other tests branch on it).
func TestVerifyMessages(t *testing.T) {
	v1 := readTestdata(t, "receipt-v1.json")
	v3 := readTestdata(t, "receipt-v3.json")
	v4 := readTestdata(t, "receipt-v4.json")
	sandboxV4 := readTestdata(t, "receipt-v4-sandbox.json")
	sandbox := readTestdata(t, "receipt-sandbox.json")
	jwks, sbJWKS := readTestdata(t, "jwks.json"), readTestdata(t, "jwks-sandbox.json")
	vkey := strings.TrimSpace(string(readTestdata(t, "log.vkey")))
	sbVKey := strings.TrimSpace(string(readTestdata(t, "log-sandbox.vkey")))
	r := decodeReceipt(t, v1)
	h, p, sig := jwsSegments(r.JWS)
	payloadFlipped := r
	payloadFlipped.JWS = h + "." + flipB64(p, 200, len(p)*3/4, b64URLAlphabet) + "." + sig

	for _, tc := range []struct {
		name          string
		receipt, jwks []byte
		vkey          string
		step, field   string
		want          []string
	}{
		{"changed amount in the readable claims",
			[]byte(strings.Replace(string(v1), `"gross_eur": "10.33"`, `"gross_eur": "1.33"`, 1)), jwks, vkey,
			StepClaimsMismatch, "/fx/gross_eur",
			[]string{`/fx/gross_eur is "1.33"`, `signed payload says "10.33"`, "changed after signing", "Trust only the signed values"}},
		{"readable member added", []byte(strings.Replace(string(v1), `"custody": "none",`, `"custody": "none", "paid": true,`, 1)), jwks, vkey,
			StepClaimsMismatch, "/paid", []string{"readable claims have /paid (true), which the signed payload does not have"}},
		{"change inside the signed part", encodeReceipt(t, payloadFlipped), jwks, vkey,
			StepSignature, "", []string{"altered after signing", "signed by another key", "get it again from its issuer"}},
		{"empty log key", v1, jwks, "", StepLogKey, "",
			[]string{"no log verifier key was given", "GET /.well-known/log-key", "GET /sandbox/v1/log-key"}},
		{"malformed log key", v1, jwks, "ledger.example", StepLogKey, "",
			[]string{`"ledger.example" is not a log verifier key`, "origin+hash+base64", "GET /.well-known/log-key"}},
		{"sandbox receipt, production key set", sandbox, jwks, sbVKey, StepKid, "",
			[]string{"sandbox receipt", "GET /sandbox/v1/jwks.json", "never at GET /.well-known/jwks.json", "GET /sandbox/v1/log-key"}},
		{"production receipt, sandbox key set", v1, sbJWKS, vkey, StepKid, "",
			[]string{"production receipt", "GET /.well-known/jwks.json", "not the sandbox one, GET /sandbox/v1/jwks.json"}},
		{"production receipt, sandbox log key", v3, jwks, sbVKey, StepCheckpointSignature, "",
			[]string{"not signed by the log key you gave (ledger.example/fiscal402-sandbox+", "it is signed by ledger.example/fiscal402+", "GET /.well-known/log-key"}},
		{"4.0.0 sandbox receipt, production key set", sandboxV4, jwks, sbVKey, StepKid, "",
			[]string{"no signature by a key of this key set", "cosigns under its kid", "sandbox receipt", "GET /sandbox/v1/jwks.json", "never at GET /.well-known/jwks.json"}},
		{"4.0.0 production receipt, sandbox key set", v4, sbJWKS, vkey, StepKid, "",
			[]string{"no signature by a key of this key set", "production receipt", "GET /.well-known/jwks.json"}},
		{"4.0.0 payload and readable claims changed alike", []byte(strings.Replace(strings.Replace(string(v4), `"legal_name": "Example Digital GmbH"`, `"legal_name": "Example Digital AG"`, 1),
			decodeReceipt(t, v4).Payload, base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payloadOf(t, decodeReceipt(t, v4))), `"legal_name":"Example Digital GmbH"`, `"legal_name":"Example Digital AG"`, 1))), 1)),
			jwks, vkey, StepInclusion, "", []string{"does not lead from this receipt's payload at index 7", "the payload was altered"}},
		{"4.0.0 key window", v4, []byte(strings.Replace(string(jwks), `"nbf": 1789380000`, `"nbf": 1789466401`, 1)), vkey, StepKeyWindow, "",
			[]string{"issued at 2026-09-15T10:00:00Z", "which cosigned its checkpoint, was not valid", "valid from 2026-09-15T10:00:01Z"}},
		{"not a receipt", []byte(`{"receipt":1}`), jwks, vkey, StepParse, "",
			[]string{"not a receipt document", "GET /v1/receipts/{id}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.receipt, tc.jwks, tc.vkey)
			ve, _ := err.(*VerifyError)
			if ve == nil || ve.Step != tc.step || ve.Field != tc.field {
				t.Fatalf("error %v; want step %q field %q", err, tc.step, tc.field)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			for _, bad := range []string{"receipt: receipt:", "go-jose", "receipt: verify: receipt:"} {
				if strings.Contains(msg, bad) || strings.HasPrefix(ve.Err.Error(), "receipt:") {
					t.Errorf("message has %q or a doubled prefix:\n%s", bad, msg)
				}
			}
			t.Logf("%s:\n  %s", tc.name, msg)
		})
	}
}
