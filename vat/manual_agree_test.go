package vat

import (
	"encoding/json"
	"strings"
	"testing"
)

// manualOf is the manual determination that repeats d.
func manualOf(d Determination) Manual {
	m := Manual{Regime: d.Regime, TaxingCountry: d.TaxingCountry, Reason: "Repeats the rules' answer.", DecidedBy: "reviewer-7"}
	if d.ChargesVAT() {
		m.RatePercent = d.RatePercent.String()
	}
	return m
}

// TestManualAgreesWithDetermine: for every golden input Determine
// determines, the same regime, country and rate are an acceptable manual
// determination, and it is written exactly as Determine wrote it, but for
// the note manual_determination and the legal basis's last clause.
func TestManualAgreesWithDetermine(t *testing.T) {
	n := 0
	for _, in := range allCases() {
		want := Determine(in)
		if !want.Determined() {
			continue
		}
		n++
		got, err := DetermineManually(in, manualOf(want))
		if err != nil {
			t.Errorf("%s\nDetermine: %s\nmanual refused: %v", describe(in), summary(want), err)
			continue
		}
		if len(got.Reasons) == 0 || got.Reasons[0].Code != ReasonManualDetermination {
			t.Errorf("%s: first reason is not %s: %s", describe(in), ReasonManualDetermination, summary(got))
			continue
		}
		suffix := "; determined manually (reason " + ReasonManualDetermination + ")"
		if !strings.HasSuffix(got.LegalBasis, suffix) {
			t.Errorf("%s: legal basis %q lacks %q", describe(in), got.LegalBasis, suffix)
		}
		got.LegalBasis = strings.TrimSuffix(got.LegalBasis, suffix)
		got.Reasons = got.Reasons[1:]
		if len(got.Reasons) == 0 {
			got.Reasons = nil
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Errorf("%s\nDetermine: %s\nmanual:    %s", describe(in), a, b)
		}
	}
	t.Logf("%d determined inputs repeated manually", n)
	if n < 100 {
		t.Fatalf("only %d determined golden inputs", n)
	}
}
