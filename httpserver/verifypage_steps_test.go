package httpserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/fiscal402/fiscal402/receipt"
)

// TestVerifyPageStepsAgreeWithGo runs the /verify page's own verification
// code (its script, without the page around it) in Node on a receipt the
// service issued and on changed copies of it and of its keys, and checks
// that it refuses each with the step receipt.Verify names: the README
// offers the page, receipt.Verify and verify.mjs as the same check, and
// the page says which check failed. (TestVerifyPageInBrowser drives the
// whole page, but needs chromium.)
func TestVerifyPageStepsAgreeWithGo(t *testing.T) {
	node := testtool.LookPath(t, "node")
	f := newFixture(t)
	rec := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if rec.status != 201 {
		t.Fatalf("settle: %d %s", rec.status, rec.body)
	}
	var record struct {
		Receipt struct{ ID string } `json:"receipt"`
	}
	json.Unmarshal(rec.body, &record)
	doc := f.do("GET", "/v1/receipts/"+record.Receipt.ID, "", nil).body
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	logKey := strings.TrimSpace(string(f.do("GET", "/.well-known/log-key", "", nil).body))
	page := string(f.do("GET", "/verify", "", nil).body)

	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) == 0 {
		t.Fatalf("jwks %s: %v", jwks, err)
	}
	withKey := func(change func(k map[string]any)) []byte {
		var s struct {
			Keys []map[string]any `json:"keys"`
		}
		json.Unmarshal(jwks, &s)
		change(s.Keys[0])
		b, _ := json.Marshal(s)
		return b
	}
	x, _ := base64.RawURLEncoding.DecodeString(set.Keys[0]["x"].(string))
	x[0] ^= 1
	otherX := base64.RawURLEncoding.EncodeToString(x)
	var r map[string]any
	json.Unmarshal(doc, &r)
	proof := r["tlog_proof"].(string)
	withReceipt := func(change func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(doc, &m)
		change(m)
		b, _ := json.Marshal(m)
		return b
	}
	type tcase struct {
		Name    string `json:"name"`
		Receipt string `json:"receipt"`
		JWKS    string `json:"jwks"`
		VKey    string `json:"vkey"`
	}
	cases := []tcase{
		{"valid", string(doc), string(jwks), logKey},
		{"amount in the readable claims", string(bytes.Replace(doc, []byte(`"amount_usdc": "11.90"`), []byte(`"amount_usdc": "1.90"`), 1)), string(jwks), logKey},
		{"receipt id", string(withReceipt(func(m map[string]any) { m["id"] = "rcpt_x402-00000000000000000000000000000000" })), string(jwks), logKey},
		{"checkpoint size", string(withReceipt(func(m map[string]any) { m["tlog_proof"] = strings.Replace(proof, "\n1\n", "\n2\n", 1) })), string(jwks), logKey},
		{"key not its thumbprint", string(doc), string(withKey(func(k map[string]any) { k["x"] = otherX })), logKey},
		{"key set without the key", string(doc), `{"keys":[]}`, logKey},
		{"key not yet valid", string(doc), string(withKey(func(k map[string]any) { k["nbf"] = k["nbf"].(float64) + 1e7 })), logKey},
		{"log key malformed", string(doc), string(jwks), logKey[:len(logKey)-2] + "AA"},
	}
	for _, c := range cases {
		if c.Receipt == string(doc) && c.JWKS == string(jwks) && c.VKey == logKey && c.Name != "valid" {
			t.Fatalf("case %q changes nothing", c.Name)
		}
	}

	// The page's verification code: its script from the IIFE's start to
	// the part that drives the page (const base = location...).
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
const out = [];
for (const c of JSON.parse(readFileSync(process.argv[3], 'utf8'))) {
  try { await ex.verifyReceipt(c.receipt, c.jwks, c.vkey, []); out.push({ name: c.name, step: '' }); }
  catch (e) { out.push({ name: c.name, step: e.step || ('error: ' + e.message), msg: e.message }); }
}
console.log(JSON.stringify(out));
`
	os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644)
	out, err := exec.Command(node, filepath.Join(dir, "harness.mjs"), filepath.Join(dir, "page.js"), filepath.Join(dir, "cases.json")).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got []struct{ Name, Step, Msg string }
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	for i, c := range cases {
		want := ""
		_, err := receipt.Verify([]byte(c.Receipt), []byte(c.JWKS), c.VKey)
		var ve *receipt.VerifyError
		if errors.As(err, &ve) {
			want = ve.Step
		} else if err != nil {
			t.Fatalf("%s: Go: %v", c.Name, err)
		}
		if got[i].Step != want {
			t.Errorf("%s: the page fails step %q (%s), receipt.Verify %q", c.Name, got[i].Step, got[i].Msg, want)
		}
	}
}
