package vat

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// RateChange is one day inside the table's coverage on which a rate series
// of a country or territory starts a new period: the rate of a supply
// changes at local midnight of Day in Zone (Art. 63, 65 and 93 Directive
// 2006/112/EC: the rate in force at the chargeable event, on the local day
// the engine dates it by). Tests iterate these to check a determination
// one minute either side of each change without hand-listing them.
type RateChange struct {
	Country   string // ISO 3166-1 alpha-2 (GR for Greece, GB for the UK)
	Territory string // a territory with its own rates ("Azores", "Madeira", ...), or ""
	Series    string // "standard", "reduced", "ebook", "epublication" or "streaming"
	// Kind is the supply kind whose rate the series gives (KindDigitalService
	// for the standard rate, KindEbook, ...); "" for the reduced list, which
	// is no supply kind of its own.
	Kind     string
	Day      string    // YYYY-MM-DD, the first day of the new period
	Zone     string    // IANA zone of the place (embedded), e.g. "Europe/Tallinn"
	Midnight time.Time // local midnight starting Day in Zone, as a UTC instant
	// Before and After are the periods in force the day before and on Day.
	Before, After RatePeriod
}

// RatePeriod is what the table holds for a series on one day.
type RatePeriod struct {
	Covered bool // the day lies inside Coverage
	// Confirmed: the table has a sourced rate (not an unverified candidate
	// or one that depends on the item); only then is a supply determined.
	Confirmed bool
	Percents  []decimal.Decimal // first: the rate a supply of Kind takes
	Source    string
	// Status is the row's status: RateStatusSource, RateStatusUnverified
	// (a candidate no source confirms) or RateStatusItemDependent (the
	// percents are the candidates the item chooses between); "" where
	// the table holds no period.
	Status string
	// Condition is the code of the legal condition the rate depends on
	// (RateTable.Conditions), or "".
	Condition string
}

// Statuses of a RatePeriod.
const (
	RateStatusSource        = statusSource
	RateStatusUnverified    = statusUnverified
	RateStatusItemDependent = statusItemDependent
)

// seriesKinds maps a rate series to the supply kind it prices.
var seriesKinds = map[string]string{
	seriesStandard: KindDigitalService, seriesEbook: KindEbook, seriesEpublication: KindEpublication, seriesStreaming: KindStreaming,
}

// Changes lists every rate change inside the coverage, ordered by country,
// territory, series and day.
func (t *RateTable) Changes() []RateChange {
	keys := sortedSeriesKeys(t.series)
	period := func(k seriesKey, day int) RatePeriod { return t.periodOn(k, day) }
	var out []RateChange
	for _, k := range keys {
		var terr *territory
		if k.territory != "" {
			terr = &territory{name: k.territory, parent: k.country}
		}
		z := placeZone(k.country, terr)
		for _, r := range t.series[k] {
			if r.from < t.from {
				continue
			}
			day := keyTime(r.from)
			midnight := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, z.loc)
			out = append(out, RateChange{
				Country: k.country, Territory: k.territory, Series: k.series, Kind: seriesKinds[k.series],
				Day: day.Format(time.DateOnly), Zone: z.name, Midnight: midnight.UTC(),
				Before: period(k, dayKey(day.AddDate(0, 0, -1))), After: period(k, r.from),
			})
		}
	}
	return out
}

// periodOn is what the table holds for a series on day.
func (t *RateTable) periodOn(k seriesKey, day int) RatePeriod {
	p := RatePeriod{Covered: t.covers(day)}
	if r, ok := t.lookup(k, day); ok {
		p.Confirmed = r.status == statusSource && p.Covered
		p.Percents, p.Source, p.Status, p.Condition = slices.Clone(r.percents), r.source, r.status, r.condition
	}
	return p
}

// sortedSeriesKeys are the keys of the tables' series, without
// duplicates, ordered by country, territory and series.
func sortedSeriesKeys(tables ...map[seriesKey][]rateRow) []seriesKey {
	var keys []seriesKey
	for _, m := range tables {
		for k := range m {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		if c := strings.Compare(a.country, b.country); c != 0 {
			return c
		}
		if c := strings.Compare(a.territory, b.territory); c != 0 {
			return c
		}
		return strings.Compare(a.series, b.series)
	})
	return slices.Compact(keys)
}
