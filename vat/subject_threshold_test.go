package vat

import "testing"

// TestSubjectToThresholdAgreesWithDetermine: the engine reads a seller's
// Art. 59c running totals only where SubjectToThreshold says so, and
// Determine decides such a seller's cross-border B2C supply on them. The
// two must agree on who is established in one member state only (Art.
// 59c(1)(a) Directive 2006/112/EC): a seller in Monaco, which Art. 7(1)
// treats as France, and a seller listing its own member state again among
// its further establishments are, for Determine, established in one member
// state; the engine must then count their supplies, or the EUR 10,000 is
// never found exceeded and origin VAT goes on being charged after it.
func TestSubjectToThresholdAgreesWithDetermine(t *testing.T) {
	for _, c := range []struct {
		country string
		other   []string
	}{
		{"IE", nil}, {"el", nil}, {"MC", nil}, {"DE", []string{"DE"}}, {"GR", []string{"EL"}},
		{"FR", []string{"MC"}}, {"IE", []string{"DE"}}, {"US", nil}, {"GB", nil}, {"IM", nil}, {"XI", nil},
		{"US", []string{"IE"}}, {"IC", nil},
	} {
		tot := CrossBorderTotals{}
		in := Input{
			Seller: Seller{Country: c.country, OtherEstablishments: c.other, CrossBorder: &tot},
			Buyer:  Buyer{Country: "PL"},
			Supply: Supply{Kind: KindSaaS, Date: day(2026, 9, 1), GrossEUR: dec("123")},
		}
		d := Determine(in)
		decidedOnTotals := d.Threshold != nil
		if got := SubjectToThreshold(c.country, c.other); got != decidedOnTotals {
			t.Errorf("seller %s %v: SubjectToThreshold = %v, but Determine decides on the totals: %v (%s)", c.country, c.other, got, decidedOnTotals, summary(d))
		}
	}
}
