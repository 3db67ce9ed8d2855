package httpserver_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestVerifyPageRefusesEvidenceValueInClear: a 3.0.0 or 4.0.0 receipt
// carries the value of each item of location evidence (an IP address, a
// billing address: personal data, Art. 24f Implementing Regulation (EU) No
// 282/2011) only as a commitment (receipt/doc.go "# Commitments":
// /buyer/location_evidence/<i>/value), and receipt.Verify refuses one that
// shows it in clear (StepSpec). The /verify page, which checks "no personal
// field in clear in 3.0.0 and 4.0.0" as receipt.Verify does, left the
// evidence values out of its list and showed such a receipt as verified.
// The receipt is the service's own, with the value of its first item put
// back in clear and that item's commitment taken out, signed into a
// one-entry log by keys made here; the same receipt unchanged must verify
// in both, so that a refusal is the rule's and not the harness's.
func TestVerifyPageRefusesEvidenceValueInClear(t *testing.T) {
	node := testtool.LookPath(t, "node")
	f := newFixture(t)
	const ip = "203.0.113.7"
	evidence := []any{
		map[string]any{"kind": "ip_address", "country": "DE", "source": "merchant", "value": ip},
		map[string]any{"kind": "billing_address", "country": "DE", "source": "customer", "value": "Hauptstrasse 1, 10115 Berlin"},
	}
	rec := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"locationEvidence": evidence})))
	if rec.status != 201 {
		t.Fatalf("settle: %d %s", rec.status, rec.body)
	}
	var record struct {
		Receipt struct{ ID string } `json:"receipt"`
	}
	json.Unmarshal(rec.body, &record)
	var doc struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(f.do("GET", "/v1/receipts/"+record.Receipt.ID, "", nil).body, &doc); err != nil || doc.Payload == "" {
		t.Fatalf("the receipt has no 4.0.0 payload: %v", err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(doc.Payload)
	if err != nil {
		t.Fatal(err)
	}
	var claims receipt.Claims
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	const field = "/buyer/location_evidence/0/value"
	if len(claims.Buyer.LocationEvidence) != 2 || claims.Buyer.LocationEvidence[0].Value != "" || claims.Commitments[field] == "" {
		t.Fatalf("the service's receipt does not commit the evidence values: %s", payload)
	}

	// Keys of a one-entry log: the log key and a receipt key that cosigns.
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := receipt.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	key, err := receipt.NewKey(pub, time.Unix(claims.IssuedAt, 0).Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(receipt.KeySet{Keys: []receipt.Key{key}})
	skey, vkey, err := note.GenerateKey(rand.Reader, claims.Log.Origin)
	if err != nil {
		t.Fatal(err)
	}
	logSigner, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	// A document of the one-entry log whose leaf is the 4.0.0 payload, or
	// (v3) a JWS of the same claims as 3.0.0, built here without the
	// package's checks, which refuse what this test needs to sign.
	issue := func(payload []byte, v3 bool) []byte {
		leaf, signed := string(payload), "payload"
		var cosigners []note.Signer
		if v3 {
			payload = []byte(strings.Replace(string(payload), `"spec":"`+receipt.SpecV4+`"`, `"spec":"`+receipt.SpecV3+`"`, 1))
			head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"Ed25519","kid":"` + signer.KeyID() + `","typ":"service.receipt.v3+jws"}`))
			input := head + "." + base64.RawURLEncoding.EncodeToString(payload)
			leaf, signed = input+"."+base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(input))), "jws"
		} else {
			cosigners = []note.Signer{signer.NoteSigner()}
		}
		h := tlog.RecordHash([]byte(leaf))
		msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n1\n%s\n", claims.Log.Origin, base64.StdEncoding.EncodeToString(h[:]))}, append([]note.Signer{logSigner}, cosigners...)...)
		if err != nil {
			t.Fatal(err)
		}
		if signed == "payload" {
			leaf = base64.RawURLEncoding.EncodeToString(payload)
		}
		spec := receipt.SpecV4
		if v3 {
			spec = receipt.SpecV3
		}
		doc := `{"spec":"` + spec + `","id":"` + claims.ReceiptID + `","claims":` + string(payload) + `,"` + signed + `":"` + leaf + `","tlog_proof":` + string(mustJSON(t, receipt.FormatTlogProof(0, nil, msg))) + `}`
		return []byte(doc)
	}
	// The value in clear where the package's writer puts it (after the
	// item's country), and the item's commitment out of the sorted
	// commitments.
	item := `{"kind":"ip_address","country":"DE"}`
	commitment := `"` + field + `":"` + claims.Commitments[field] + `",`
	if !strings.Contains(string(payload), item) || !strings.Contains(string(payload), commitment) {
		t.Fatalf("the payload is not spelt as this test expects: %s", payload)
	}
	inClear := strings.Replace(string(payload), item, `{"kind":"ip_address","country":"DE","value":"`+ip+`"}`, 1)
	inClear = strings.Replace(inClear, commitment, "", 1)
	type tcase struct {
		Name    string `json:"name"`
		Receipt string `json:"receipt"`
		want    string
	}
	cases := []tcase{
		{"4.0.0 unchanged", string(issue(payload, false)), ""},
		{"3.0.0 unchanged", string(issue(payload, true)), ""},
		// 4.0.0 claims have no member for the value (the strict decode of
		// the payload refuses it); 3.0.0 claims have one, which the format
		// rules refuse.
		{"4.0.0 evidence value in clear", string(issue([]byte(inClear), false)), receipt.StepPayload},
		{"3.0.0 evidence value in clear", string(issue([]byte(inClear), true)), receipt.StepPayload},
	}
	for _, c := range cases {
		step := ""
		var ve *receipt.VerifyError
		if _, err := receipt.Verify([]byte(c.Receipt), jwks, vkey); errors.As(err, &ve) {
			step = ve.Step
		} else if err != nil {
			t.Fatalf("%s: Go: %v", c.Name, err)
		}
		if step != c.want {
			t.Fatalf("%s: receipt.Verify fails step %q, want %q", c.Name, step, c.want)
		}
	}

	page := string(f.do("GET", "/verify", "", nil).body)
	start := strings.Index(page, "(() => {\n")
	end := strings.Index(page, "\nconst base = location.pathname")
	if start < 0 || end < start {
		t.Fatal("the page's script is not where this test looks for it")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "page.js"), []byte(page[start+len("(() => {\n"):end]), 0o644)
	casesJSON, _ := json.Marshal(cases)
	os.WriteFile(filepath.Join(dir, "cases.json"), casesJSON, 0o644)
	harness := `import { readFileSync } from 'node:fs';
globalThis.document = { getElementById: () => ({}) };
const f = new Function('exports', "'use strict';" + readFileSync(process.argv[2], 'utf8') + "\nexports.verifyReceipt = verifyReceipt;");
const ex = {}; f(ex);
const [jwks, vkey] = [process.argv[4], process.argv[5]];
const out = [];
for (const c of JSON.parse(readFileSync(process.argv[3], 'utf8'))) {
  try { await ex.verifyReceipt(c.receipt, jwks, vkey, []); out.push({ name: c.name, step: '' }); }
  catch (e) { out.push({ name: c.name, step: e.step || ('error: ' + e.message), msg: e.message }); }
}
console.log(JSON.stringify(out));
`
	os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644)
	out, err := exec.Command(node, filepath.Join(dir, "harness.mjs"), filepath.Join(dir, "page.js"), filepath.Join(dir, "cases.json"), string(jwks), vkey).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got []struct{ Name, Step, Msg string }
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	for i, c := range cases {
		if got[i].Step != c.want {
			t.Errorf("%s: the page fails step %q (%s), receipt.Verify %q", c.Name, got[i].Step, got[i].Msg, c.want)
		}
	}
}
