package vat

import (
	"testing"
	"time"
)

// TestReducedRateSets2026 checks the 2026 changes to the set of reduced
// rates a member state applies (a new rate value, or one that ends), on the
// day before and the day of each change. Each case is typed from its
// source, not read from the generated table.
func TestReducedRateSets2026(t *testing.T) {
	cases := []struct {
		cc            string
		date          time.Time
		before, on    string
		effectiveFrom string
		source        string
	}{
		// Austria: a new reduced rate of 4.9 % for listed basic foods
		// (milk, butter, yoghurt, eggs, listed vegetables and fruit, rice,
		// wheat flour, pasta, bread, salt) from 2026-07-01, beside 10 % and
		// 13 %; until 2026-06-30 those foods stay at 10 %
		// (https://www.lex-press.at/geplante-einfuehrung-eines-neuen-ermaessigten-umsatzsteuersatzes-auf-ausgewaehlte-grundnahrungsmittel;
		// UStG 1994, https://www.ris.bka.gv.at/GeltendeFassung.wxe?Abfrage=Bundesnormen&Gesetzesnummer=10004873).
		{"AT", day(2026, time.July, 1), "10 13", "4.9 10 13", "2026-07-01", "AT 4.9 % from 2026-07-01"},
	}
	for _, c := range cases {
		before, _, err1 := Rates().Reduced(c.cc, c.date.AddDate(0, 0, -1))
		on, src, err2 := Rates().Reduced(c.cc, c.date)
		if err1 != nil || err2 != nil || join(before) != c.before || join(on) != c.on {
			t.Errorf("%s reduced around %s: [%s], [%s] (%v, %v); want [%s] then [%s] (%s)",
				c.cc, c.date.Format(time.DateOnly), join(before), join(on), err1, err2, c.before, c.on, c.source)
			continue
		}
		if src.EffectiveFrom != c.effectiveFrom {
			t.Errorf("%s reduced on %s: effective from %q, want %s", c.cc, c.date.Format(time.DateOnly), src.EffectiveFrom, c.effectiveFrom)
		}
	}
}
