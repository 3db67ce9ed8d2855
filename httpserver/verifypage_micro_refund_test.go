package httpserver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

// TestVerifyPageTellsAMicroRefund: the /verify page says what a refund's
// receipt is (an amount refunded, a correction in euros, the credit note
// and the receipt it corrects), as "audit receipt" does. It told a refund
// by the sign of gross_eur alone, and a refund of part of a micropayment
// (0.000001 USDC of a 0.001 USDC call, less than half a euro cent) has
// gross_eur "0.00": the page showed it as an amount paid with its invoice,
// a sale. Its exact gross (gross_eur_exact) is negative. The page's own
// code (its script, without the page around it) runs in Node on the
// receipt the service issued.
func TestVerifyPageTellsAMicroRefund(t *testing.T) {
	node := testtool.LookPath(t, "node")
	f := newFixture(t)
	rec := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "0.001"})))
	if rec.status != 201 {
		t.Fatalf("settle: %d %s", rec.status, rec.body)
	}
	var settled struct {
		ID      string                    `json:"id"`
		Receipt struct{ ID string }       `json:"receipt"`
		Invoice struct{ ID string }       `json:"invoice"`
		FX      struct{ GrossEUR string } `json:"fx"`
	}
	if err := json.Unmarshal(rec.body, &settled); err != nil {
		t.Fatal(err)
	}
	rf := f.do("POST", "/settlements/"+settled.ID+"/refunds", keyA, []byte(`{"amountUsdc":"0.000001"}`))
	var refund struct {
		Receipt    struct{ ID string } `json:"receipt"`
		CreditNote struct{ ID string } `json:"creditNote"`
		FX         struct {
			GrossEUR      string `json:"grossEur"`
			GrossEURExact string `json:"grossEurExact"`
		} `json:"fx"`
	}
	if err := json.Unmarshal(rf.body, &refund); err != nil || rf.status != 201 {
		t.Fatalf("refund: %d %s", rf.status, rf.body)
	}
	if refund.FX.GrossEUR != "0.00" || !strings.HasPrefix(refund.FX.GrossEURExact, "-") {
		t.Fatalf("the refund's gross %s, exact %s: the test needs a credit of less than half a cent", refund.FX.GrossEUR, refund.FX.GrossEURExact)
	}
	doc := f.do("GET", "/v1/receipts/"+refund.Receipt.ID, "", nil).body
	jwks := f.do("GET", "/.well-known/jwks.json", "", nil).body
	logKey := strings.TrimSpace(string(f.do("GET", "/.well-known/log-key", "", nil).body))
	page := string(f.do("GET", "/verify", "", nil).body)

	start := strings.Index(page, "(() => {\n")
	end := strings.Index(page, "\nconst base = location.pathname")
	if start < 0 || end < start {
		t.Fatal("the page's script is not where this test looks for it")
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in, _ := json.Marshal(map[string]string{"receipt": string(doc), "jwks": string(jwks), "vkey": logKey})
	harness := `import { readFileSync } from 'node:fs';
const shown = [];
globalThis.document = {
  getElementById: () => ({ replaceChildren() {}, append(...els) { shown.push(...els); } }),
  createElement: () => ({}),
};
const f = new Function('exports', "'use strict';" + readFileSync(process.argv[2], 'utf8') + "\nexports.verifyReceipt = verifyReceipt; exports.facts = facts;");
const ex = {}; f(ex);
const c = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const res = await ex.verifyReceipt(c.receipt, c.jwks, c.vkey, []);
ex.facts(res);
console.log(JSON.stringify(shown.map((e) => e.textContent !== undefined ? e.textContent : e.innerHTML)));
`
	out, err := exec.Command(node, write("harness.mjs", harness), write("page.js", page[start+len("(() => {\n"):end]), write("in.json", string(in))).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var cells []string
	if err := json.Unmarshal(out, &cells); err != nil || len(cells) == 0 {
		t.Fatalf("node said %s (%v)", out, err)
	}
	facts := strings.Join(cells, "\n")
	for _, bad := range []string{"Amount paid", "\nIn euros\n", "\nInvoice\n", "\nReplaces\n"} {
		if strings.Contains("\n"+facts+"\n", bad) {
			t.Errorf("the micro refund's receipt is shown as a sale (%q):\n%s", strings.TrimSpace(bad), facts)
		}
	}
	for _, want := range []string{"Amount refunded", "0.000001 USDC", "Correction in euros", "Credit note", refund.CreditNote.ID, "Corrects", "receipt " + settled.Receipt.ID} {
		if !strings.Contains(facts, want) {
			t.Errorf("the facts lack %q:\n%s", want, facts)
		}
	}
}
