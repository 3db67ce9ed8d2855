package vat

import (
	"slices"
	"testing"
	"time"
)

// TestThresholdOrderInDoubt: a supply dated before one already counted
// that would take the year over EUR 10,000, or dated before the year's
// crossing, is reviewed (Art. 59c(2): "as of that time"); dated at or after
// them, the sums decide as before. A person's determination of either
// place stands, with rule order_decided_manually.
func TestThresholdOrderInDoubt(t *testing.T) {
	feb, mar := day(2026, time.February, 2), day(2026, time.March, 2)
	reasons := func(d Determination) []string {
		var out []string
		for _, r := range d.Reasons {
			out = append(out, r.Code)
		}
		return out
	}
	for _, c := range []struct {
		name         string
		totals       CrossBorderTotals
		at           time.Time
		status, rule string
		inDoubt      bool
	}{
		{"crossing, dated before a counted supply", CrossBorderTotals{CurrentYear: dec("9950"), LatestCounted: mar}, feb, StatusManualReview, "", true},
		{"crossing, dated after every counted supply", CrossBorderTotals{CurrentYear: dec("9950"), LatestCounted: feb}, mar, StatusDetermined, ThresholdCrossed, false},
		{"within, dated before a counted supply", CrossBorderTotals{CurrentYear: dec("100"), LatestCounted: mar}, feb, StatusDetermined, ThresholdWithin, false},
		{"over, dated before the crossing", CrossBorderTotals{CurrentYear: dec("10500"), LatestCounted: mar, CrossedAt: mar}, feb, StatusManualReview, "", true},
		{"over, dated after the crossing", CrossBorderTotals{CurrentYear: dec("10500"), LatestCounted: feb, CrossedAt: feb}, mar, StatusDetermined, ThresholdCurrentYear, false},
		{"over, crossing date not kept", CrossBorderTotals{CurrentYear: dec("10500")}, feb, StatusDetermined, ThresholdCurrentYear, false},
		// A caller keeping dates (DatesKept) whose year holds supplies
		// counted before it did: no date covers them.
		{"crossing, dates kept, the year's supplies undated", CrossBorderTotals{CurrentYear: dec("9950"), DatesKept: true}, feb, StatusManualReview, "", true},
		{"crossing, dates kept, only an opening figure", CrossBorderTotals{CurrentYear: dec("9950"), Opening: dec("9950"), DatesKept: true}, feb, StatusDetermined, ThresholdCrossed, false},
		{"over, dates kept, undated supplies took it over", CrossBorderTotals{CurrentYear: dec("10500"), Opening: dec("4000"), DatesKept: true}, feb, StatusManualReview, "", true},
		{"over, dates kept, crossing bounded by the latest", CrossBorderTotals{CurrentYear: dec("10500"), DatesKept: true, LatestCounted: mar}, feb, StatusManualReview, "", true},
		{"over, dates kept, dated after the latest", CrossBorderTotals{CurrentYear: dec("10500"), DatesKept: true, LatestCounted: feb}, mar, StatusDetermined, ThresholdCurrentYear, false},
		{"over, dates kept, the opening figure over by itself", CrossBorderTotals{CurrentYear: dec("10500"), Opening: dec("10200"), DatesKept: true}, feb, StatusDetermined, ThresholdCurrentYear, false},
		{"over, dates kept as Unix nanoseconds, none", CrossBorderTotals{CurrentYear: dec("10500"), Opening: dec("10200"), DatesKept: true, LatestCounted: time.Unix(0, 0), CrossedAt: time.Unix(0, 0)}, feb, StatusDetermined, ThresholdCurrentYear, false},
		{"previous year over, dated before the crossing", CrossBorderTotals{PreviousYear: dec("10500"), CurrentYear: dec("10500"), CrossedAt: mar}, feb, StatusDetermined, ThresholdPreviousYear, false},
	} {
		tot := c.totals
		d := Determine(Input{Seller{Country: "IE", CrossBorder: &tot}, b2c("DE"), Supply{Kind: KindSaaS, Date: c.at, GrossEUR: dec("1230")}})
		if d.Status != c.status || d.Threshold == nil || d.Threshold.Rule != c.rule || slices.Contains(reasons(d), ReasonThresholdOrderInDoubt) != c.inDoubt {
			t.Errorf("%s: %s, threshold %+v, reasons %v", c.name, d.Status, d.Threshold, reasons(d))
		}
		if !c.inDoubt {
			continue
		}
		for _, m := range []Manual{{Regime: RegimeDomestic, TaxingCountry: "IE", RatePercent: "23", Reason: "r", DecidedBy: "p"}, {Regime: RegimeOSSB2C, TaxingCountry: "DE", RatePercent: "19", Reason: "r", DecidedBy: "p"}} {
			md, err := DetermineManually(Input{Seller{Country: "IE", CrossBorder: &tot}, b2c("DE"), Supply{Kind: KindSaaS, Date: c.at, GrossEUR: dec("1230")}}, m)
			if err != nil || md.TaxingCountry != m.TaxingCountry || md.Threshold == nil || md.Threshold.Rule != ThresholdOrderManual || md.Threshold.Counted == nil {
				t.Errorf("%s, a person's %s %s: %v, %+v", c.name, m.Regime, m.TaxingCountry, err, md.Threshold)
			}
		}
	}
	for _, c := range []struct {
		country string
		other   []string
		want    bool
	}{{"IE", nil, true}, {"el", nil, true}, {"IE", []string{"DE"}, false}, {"US", nil, false}, {"GB", nil, false}} {
		if got := SubjectToThreshold(c.country, c.other); got != c.want {
			t.Errorf("SubjectToThreshold(%q, %v) = %v", c.country, c.other, got)
		}
	}
}
