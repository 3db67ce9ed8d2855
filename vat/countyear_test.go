package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestCountYear: a year counted again from its supplies finds the supply
// that took it over EUR 10,000 in the order the supplies were made (by
// date, not as given; the same date in the order given), with the totals
// around it, opening figure included (Art. 59c(2) Directive 2006/112/EC:
// exactly EUR 10,000 does not exceed); a year over on its opening figure
// alone has none.
func TestCountYear(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, d, 10, 0, 0, 0, time.UTC) }
	d := decimal.RequireFromString
	supplies := func() []CountedSupply {
		return []CountedSupply{{day(20), d("3000"), "c"}, {day(5), d("4000"), "a"}, {day(10), d("3000.01"), "b"}, {day(10), d("1"), "b2"}}
	}
	for _, c := range []struct {
		opening, before, after, total string
		crossing                      string
		latest                        int
	}{
		{"0", "7001.01", "10001.01", "10001.01", "c", 20},   // a, b, b2: 7001.01; c crosses
		{"2999.99", "10000", "10001", "10001.01", "b2", 20}, // b takes it to 10000.00, which does not exceed; b2 does
		{"10000.01", "", "", "10001.01", "", 20},            // over before any supply
	} {
		got := CountYear(d(c.opening), supplies())
		if got.Total.String() != d(c.total).String() || !got.Latest.Equal(day(c.latest)) {
			t.Errorf("opening %s: total %s latest %s", c.opening, got.Total, got.Latest)
		}
		if c.crossing == "" {
			if got.Crossing != nil {
				t.Errorf("opening %s: crossing %+v, want none", c.opening, got.Crossing)
			}
			continue
		}
		if got.Crossing == nil || got.Crossing.ID != c.crossing || !got.Before.Equal(d(c.before)) || !got.After.Equal(d(c.after)) {
			t.Errorf("opening %s: crossing %+v %s → %s, want %s %s → %s", c.opening, got.Crossing, got.Before, got.After, c.crossing, c.before, c.after)
		}
	}
}
