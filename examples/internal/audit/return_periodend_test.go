package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line states figures at the period-end rate (taxable amount, VAT, the
// difference) exactly when the return has that rate: returns.OSS leaves
// them out while the ECB has not published it. A return without the rate
// whose lines state them anyway has figures nothing recomputes: "return
// verified" would vouch for them, and a figure that is not a number at
// all must be named as a failed check, not crash the command.
func TestReturnPeriodEndFiguresNeedTheRate(t *testing.T) {
	w := buildReturnWorld(t)
	raw, err := os.ReadFile(w.ret)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ret := doc["return"].(map[string]any)
	fx := ret["fx"].(map[string]any)
	if fx["usdPerEur"] == nil {
		t.Fatal("fixture: the return has no period-end rate")
	}
	first := ret["lines"].([]any)[0].(map[string]any)
	if first["vatEur"] == nil || first["vatEur"] == "" {
		t.Fatal("fixture: the first line states no VAT at the period-end rate")
	}
	delete(fx, "usdPerEur")
	fx["unavailable"] = "not yet published"
	write := func(name string) string {
		b, _ := json.MarshalIndent(doc, "", "  ")
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(file string) (code int, out string) {
		defer func() {
			if p := recover(); p != nil {
				code, out = -1, fmt.Sprintf("panic: %v", p)
			}
		}()
		var o, e bytes.Buffer
		code = Main([]string{"return", file, "--receipts", w.receipts}, &o, &e)
		return code, o.String() + e.String()
	}
	unrated := write("return-without-rate.json")
	code, out := run(unrated)
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: line 1 ") || !strings.Contains(out, "period-end") {
		t.Errorf("figures at a period-end rate the return does not have: exit %d, want %d naming line 1\n%s", code, ExitFailed, out)
	}
	first["vatEur"] = "not-a-number"
	code, out = run(write("return-without-rate-junk.json"))
	if code != ExitFailed || !strings.HasPrefix(out, "return NOT verified: line 1 ") {
		t.Errorf("a VAT figure that is no number: exit %d, want %d naming line 1\n%s", code, ExitFailed, out)
	}
}
