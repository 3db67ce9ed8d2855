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

// returnEdited writes a copy of the world's return with edit applied to
// its readable "return" member (checked without the keys: the figures are
// recomputed from the receipts, the signature is not).
func returnEdited(t *testing.T, w *returnWorld, edit func(ret map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(w.ret)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc["return"].(map[string]any))
	b, _ := json.MarshalIndent(doc, "", "  ")
	p := filepath.Join(t.TempDir(), "return-edited.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every member state of the lines has its one total: a return that lists
// one state's total twice and leaves another's out has as many totals as
// states, but the left-out state's VAT total is nowhere.
func TestReturnMemberStateTotalsOnePerState(t *testing.T) {
	w := buildReturnWorld(t)
	var dropped string
	edited := returnEdited(t, w, func(ret map[string]any) {
		states := ret["memberStates"].([]any)
		if len(states) < 2 {
			t.Fatalf("fixture: %d member state totals", len(states))
		}
		dropped = states[1].(map[string]any)["memberState"].(string)
		states[1] = states[0] // the first state twice, the second not at all
	})
	var out, errOut bytes.Buffer
	code := Main([]string{"return", edited, "--receipts", w.receipts}, &out, &errOut)
	if code != ExitFailed || !strings.HasPrefix(out.String(), "return NOT verified: member state total") || !strings.Contains(out.String(), dropped) {
		t.Errorf("member state %s's total replaced by a second copy of another's: exit %d, want %d naming %s\n%s%s",
			dropped, code, ExitFailed, dropped, out.String(), errOut.String())
	}
}

// Every figure of the member state totals and of the total is
// recomputed: the part of a state's VAT that comes from corrections, the
// total's difference of VAT, and the presence of a state's VAT at the
// period-end rate, which returns.OSS states whenever the rate is known for
// all of the state's lines and corrections.
func TestReturnTotalsEveryFigure(t *testing.T) {
	w := buildReturnWorld(t)
	cases := []struct {
		name  string
		edit  func(t *testing.T, ret map[string]any) string // returns what the failure must name
		names string
	}{
		{"corrections part of a state's VAT", func(t *testing.T, ret map[string]any) string {
			for _, s := range ret["memberStates"].([]any) {
				st := s.(map[string]any)
				if c, ok := st["correctionsVatEur"].(string); ok {
					st["correctionsVatEur"] = bump(strings.TrimPrefix(c, "-"))
					return "member state total " + st["memberState"].(string)
				}
			}
			t.Fatal("fixture: no member state total has a corrections part")
			return ""
		}, ""},
		{"a state's VAT left out", func(t *testing.T, ret map[string]any) string {
			for _, s := range ret["memberStates"].([]any) {
				st := s.(map[string]any)
				if _, ok := st["vatEur"]; ok {
					delete(st, "vatEur")
					return "member state total " + st["memberState"].(string)
				}
			}
			t.Fatal("fixture: no member state total states VAT at the period-end rate")
			return ""
		}, ""},
		{"the total's difference of VAT", func(t *testing.T, ret map[string]any) string {
			tot := ret["total"].(map[string]any)
			d, ok := tot["differenceVatEur"].(string)
			if !ok {
				t.Fatal("fixture: the total states no difference of VAT")
			}
			tot["differenceVatEur"] = bump(strings.TrimPrefix(d, "-"))
			return "total"
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var names string
			edited := returnEdited(t, w, func(ret map[string]any) { names = c.edit(t, ret) })
			var out, errOut bytes.Buffer
			code := Main([]string{"return", edited, "--receipts", w.receipts}, &out, &errOut)
			if code != ExitFailed || !strings.HasPrefix(out.String(), "return NOT verified: "+names) {
				t.Errorf("exit %d, want %d with a failure naming %q\n%s%s", code, ExitFailed, names, out.String(), errOut.String())
			}
		})
	}
}

// A summary of the sales outside OSS names its country and rate; the
// receipts it sums must be of them, as an OSS line's must be of its
// member state and rate.
func TestReturnNotInOSSSummaryCountryAndRate(t *testing.T) {
	w := buildReturnWorld(t)
	for _, change := range []string{"country", "ratePercent"} {
		t.Run(change, func(t *testing.T) {
			var where string
			edited := returnEdited(t, w, func(ret map[string]any) {
				for i, s := range ret["notInOss"].([]any) {
					sm := s.(map[string]any)
					if sm["country"] == "IE" && sm["ratePercent"] == "23" {
						if change == "country" {
							sm["country"] = "FR"
						} else {
							sm["ratePercent"] = "13.5"
						}
						where = fmt.Sprintf("not-in-OSS summary %d", i+1)
						return
					}
				}
				t.Fatal("fixture: no summary of the domestic Irish sale at 23 %")
			})
			var out, errOut bytes.Buffer
			code := Main([]string{"return", edited, "--receipts", w.receipts}, &out, &errOut)
			if code != ExitFailed || !strings.HasPrefix(out.String(), "return NOT verified: "+where) {
				t.Errorf("%s of the summary changed: exit %d, want %d naming %s\n%s%s", change, code, ExitFailed, where, out.String(), errOut.String())
			}
		})
	}
}

// The return was computed at a checkpoint of the log (return.log): every
// ledger index it sums is in that tree, below its size. A line summing an
// index the checkpoint does not hold sums a record the return could not
// have seen.
func TestReturnIndexesWithinItsCheckpoint(t *testing.T) {
	w := buildReturnWorld(t)
	var size int64
	edited := returnEdited(t, w, func(ret map[string]any) {
		// The log as it was before the first line's last receipt.
		idx := ret["lines"].([]any)[0].(map[string]any)["ledgerIndexes"].([]any)
		size = int64(idx[len(idx)-1].(float64))
		ret["log"].(map[string]any)["size"] = size
	})
	var out, errOut bytes.Buffer
	code := Main([]string{"return", edited, "--receipts", w.receipts}, &out, &errOut)
	if code != ExitFailed || !strings.HasPrefix(out.String(), "return NOT verified: line 1 ") || !strings.Contains(out.String(), fmt.Sprint(size)) {
		t.Errorf("a line sums ledger index %d of a return computed at %d entries: exit %d, want %d naming line 1\n%s%s",
			size, size, code, ExitFailed, out.String(), errOut.String())
	}
}
