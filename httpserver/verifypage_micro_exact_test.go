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

// TestVerifyPageShowsTheExactVATOfAMicropayment: a 0.001 USDC sale bears
// VAT of a fraction of a euro cent, 0.00 to the cent; its receipt signs
// the exact figures as well (vat_eur_exact), which the seller declares
// (the OSS return adds them). The /verify page showed the cent figures
// alone ("0.00 EUR, of which VAT 0.00 EUR"), as if the sale bore no VAT:
// where a cent figure hides a non-zero exact one, it shows the exact
// figures beside it, as "audit receipt" does. The page's script runs in
// Node on the receipt the service issued.
func TestVerifyPageShowsTheExactVATOfAMicropayment(t *testing.T) {
	node := testtool.LookPath(t, "node")
	f := newFixture(t)
	rec := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "0.001"})))
	if rec.status != 201 {
		t.Fatalf("settle: %d %s", rec.status, rec.body)
	}
	var settled struct {
		Receipt struct{ ID string } `json:"receipt"`
		FX      struct {
			VATEUR        string `json:"vatEur"`
			VATEURExact   string `json:"vatEurExact"`
			GrossEURExact string `json:"grossEurExact"`
		} `json:"fx"`
	}
	if err := json.Unmarshal(rec.body, &settled); err != nil {
		t.Fatal(err)
	}
	if settled.FX.VATEUR != "0.00" || strings.Trim(settled.FX.VATEURExact, "0.") == "" {
		t.Fatalf("VAT %s, exact %s: the test needs VAT that rounds to 0.00", settled.FX.VATEUR, settled.FX.VATEURExact)
	}
	doc := f.do("GET", "/v1/receipts/"+settled.Receipt.ID, "", nil).body
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
	for _, want := range []string{settled.FX.VATEURExact, settled.FX.GrossEURExact} {
		if !strings.Contains(facts, want) {
			t.Errorf("the page does not show the exact figure %s (VAT %s to the cent):\n%s", want, settled.FX.VATEUR, facts)
		}
	}
}
