package vat

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// territoryPostcodes gives a postal code inside each territory that has its
// own rates, so that the golden table can reach its rate changes.
var territoryPostcodes = map[string]string{
	"Azores": "9500-123", "Madeira": "9000-018", "Jungholz": "6691", "Mittelberg": "6991",
}

var seriesKind = map[string]string{
	seriesStandard: KindDigitalService, seriesEbook: KindEbook, seriesEpublication: KindEpublication, seriesStreaming: KindStreaming,
}

// changeDays lists, for every series of the table, each day a period
// starts inside the coverage, in a stable order.
func changeDays() []struct {
	key seriesKey
	day int
} {
	keys := make([]seriesKey, 0, len(rates.series))
	for k := range rates.series {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return strings.Compare(a.country+"|"+a.territory+"|"+a.series, b.country+"|"+b.territory+"|"+b.series)
	})
	var out []struct {
		key seriesKey
		day int
	}
	for _, k := range keys {
		for _, r := range rates.series[k] {
			if r.from >= rateTableFrom {
				out = append(out, struct {
					key seriesKey
					day int
				}{k, r.from})
			}
		}
	}
	return out
}

// goldenInputs: every decision-table case, every covered country's
// standard rate on 2026-09-01, and every rate change of a series a
// determination uses, on the day before and the day of the change.
func goldenInputs() []Input {
	var ins []Input
	for _, c := range decisionCases {
		ins = append(ins, c.in)
	}
	for _, cc := range Rates().Countries() {
		ins = append(ins, Input{Seller{Country: "US"}, b2c(cc), Supply{Kind: KindDigitalService, Date: sep1}})
	}
	for _, ch := range changeDays() {
		kind, ok := seriesKind[ch.key.series]
		if !ok {
			continue // the reduced-rate list is not a supply kind; see the rate section
		}
		buyer := b2c(ch.key.country)
		if ch.key.territory != "" {
			buyer.PostalCode = territoryPostcodes[ch.key.territory]
		}
		on := keyTime(ch.day).Add(12 * time.Hour)
		for _, d := range []time.Time{on.AddDate(0, 0, -1), on} {
			ins = append(ins, Input{Seller{Country: "US"}, buyer, Supply{Kind: kind, Date: d}})
		}
	}
	return ins
}

// goldenRateChanges renders every series change, including the reduced
// lists, on the day before and the day of the change.
func goldenRateChanges() []string {
	show := func(k seriesKey, day int) string {
		r, ok := rates.lookup(k, day)
		switch {
		case !rates.covers(day):
			return "not covered"
		case !ok:
			return "none"
		case r.status != statusSource:
			return r.status + " " + candidate(r)
		}
		return join(r.percents)
	}
	var lines []string
	for _, ch := range changeDays() {
		name := ch.key.country
		if ch.key.territory != "" {
			name += "/" + ch.key.territory
		}
		before := keyTime(ch.day).AddDate(0, 0, -1)
		lines = append(lines, fmt.Sprintf("%s %s: %s %s → %s %s", name, ch.key.series,
			before.Format(time.DateOnly), show(ch.key, dayKey(before)), keyTime(ch.day).Format(time.DateOnly), show(ch.key, ch.day)))
	}
	return lines
}

func TestGoldenDeterminations(t *testing.T) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Determinations under %s / %s with rate table %s.\n", RulesetEU, RulesetUK, Rates().Version())
	fmt.Fprintf(&b, "# input → status regime[/scheme] category rate taxing-country pos=place-of-supply vatex buyer-treatment [reasons]\n")
	ins := goldenInputs()
	for _, in := range ins {
		d := Determine(in)
		checkInvariants(t, in, d)
		fmt.Fprintf(&b, "%s → %s\n", describe(in), summary(d))
	}
	writeIssueGolden(t, &b) // golden_cases_test.go
	fmt.Fprintf(&b, "\n# Rate changes inside the coverage: series, day before → day of the change.\n")
	for _, l := range goldenRateChanges() {
		fmt.Fprintln(&b, l)
	}
	writeContextGolden(&b) // golden_context_test.go: local day, Art. 59c totals, registrations, Art. 9a
	if len(ins) < 100 {
		t.Errorf("only %d golden determinations, want at least 100", len(ins))
	}
	compareGolden(t, "determinations.golden", b.Bytes())
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	testtool.Golden(t, filepath.Join("testdata", name), got, *update)
}
