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

// TestVerifyPageRefusesPersonalDataInClear: a 3.0.0 or 4.0.0 receipt
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
//
// The same holds for every personal field (the buyer's name or postal
// code, the payer's wallet, the record hash) and every member outside the
// format: 3.0.0 and 4.0.0 claims have no member for them, and
// receipt.Verify refuses them at its payload step; and for commitments
// that do not cover exactly the personal fields the receipt has (its spec
// step, receipt/doc.go "# Commitments"). The page accepted them all
// (concealedMutations).
func TestVerifyPageRefusesPersonalDataInClear(t *testing.T) {
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
	cases := []pageCase{
		{"4.0.0 unchanged", string(issue(payload, false)), ""},
		{"3.0.0 unchanged", string(issue(payload, true)), ""},
		// 4.0.0 claims have no member for the value (the strict decode of
		// the payload refuses it); 3.0.0 claims have one, which the format
		// rules refuse.
		{"4.0.0 evidence value in clear", string(issue([]byte(inClear), false)), receipt.StepPayload},
		{"3.0.0 evidence value in clear", string(issue([]byte(inClear), true)), receipt.StepPayload},
	}
	for _, m := range concealedMutations(t, string(payload)) {
		for _, v3 := range []bool{false, true} {
			version := "4.0.0 "
			if v3 {
				version = "3.0.0 "
			}
			cases = append(cases, pageCase{version + m.name, string(issue([]byte(m.payload), v3)), m.want})
		}
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

	pageVerdicts(t, node, f, cases, jwks, vkey)
}

// pageCase is a receipt for the /verify page's script and the step at
// which receipt.Verify refuses it ("" when it verifies).
type pageCase struct {
	Name    string `json:"name"`
	Receipt string `json:"receipt"`
	want    string
}

// pageVerdicts runs the /verify page's own script in Node on cases and
// requires it to fail each at the step receipt.Verify names.
func pageVerdicts(t *testing.T, node string, f *fixture, cases []pageCase, jwks []byte, vkey string) {
	t.Helper()
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

// concealedMutation is a changed 4.0.0 payload and the step at which
// receipt.Verify refuses it.
type concealedMutation struct{ name, payload, want string }

// concealedMutations are changes of the service's 4.0.0 payload p that
// receipt.Verify refuses in 3.0.0 and 4.0.0 claims: a personal field in
// clear or a member outside the format (the payload step), commitments
// that do not cover exactly the personal fields (the spec step; kept in
// the sorted order of the writer, so that only the rule can refuse them).
func concealedMutations(t *testing.T, p string) []concealedMutation {
	t.Helper()
	var ms []concealedMutation
	insert := func(name, want, after, member string) {
		i := strings.Index(p, after)
		if i < 0 {
			t.Fatalf("%s: the payload has no %s: %s", name, after, p)
		}
		i += len(after)
		ms = append(ms, concealedMutation{name, p[:i] + member + p[i:], want})
	}
	insert("buyer name in clear", receipt.StepPayload, `"buyer":{`, `"name":"Erika Mustermann",`)
	insert("buyer postal code in clear", receipt.StepPayload, `"buyer":{`, `"postal_code":"10115",`)
	insert("buyer VAT number in clear", receipt.StepPayload, `"buyer":{`, `"vat_number":"DE123456789",`)
	insert("payer in clear", receipt.StepPayload, `"settlement":{`, `"payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66",`)
	insert("transaction hash in clear", receipt.StepPayload, `"settlement":{`, `"tx_hash":"0x`+strings.Repeat("ab", 32)+`",`)
	insert("record hash in clear", receipt.StepPayload, `"custody":"none"`, `,"record_sha256":"`+strings.Repeat("a3", 32)+`"`)
	insert("member outside the format", receipt.StepPayload, `"custody":"none"`, `,"paid":true`)
	insert("buyer member outside the format", receipt.StepPayload, `"buyer":{`, `"email":"erika@example.com",`)
	insert("empty member the writer omits", receipt.StepPayload, `"custody":"none"`, `,"supersedes":""`)

	start := strings.Index(p, `"commitments":{`) + len(`"commitments":`)
	end := start + strings.IndexByte(p[start:], '}') + 1
	commitments := func(name string, change func(cm map[string]string)) {
		cm := map[string]string{}
		if err := json.Unmarshal([]byte(p[start:end]), &cm); err != nil || len(cm) == 0 {
			t.Fatalf("the payload's commitments %q: %v", p[start:end], err)
		}
		change(cm)
		b, _ := json.Marshal(cm) // members sorted, as the writer sorts them
		ms = append(ms, concealedMutation{name, p[:start] + string(b) + p[end:], receipt.StepSpec})
	}
	const some = "sha256:NfVeraUu7kPBWmXxVEMNdnaWD8H1NyB2Nd5rNiL1ZtA"
	commitments("payer not committed", func(cm map[string]string) { delete(cm, "/settlement/payer") })
	commitments("a commitment of a field outside the personal ones", func(cm map[string]string) { cm["/settlement/timestamp"] = some })
	commitments("a commitment of an evidence item that is not there", func(cm map[string]string) { cm["/buyer/location_evidence/7/value"] = some })
	commitments("a registry number committed without a registry section", func(cm map[string]string) { cm["/buyer/registry/number"] = some })
	return ms
}
