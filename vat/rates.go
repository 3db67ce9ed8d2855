package vat

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

//go:generate go run ./internal/ratesgen/cmd/genrates -base ratedata/ibericode/vat-rates.json -corrections ratedata/corrections.json -out rates_table.go

// Errors of the rate table. Each is wrapped with the country and date asked
// for; branch with errors.Is.
var (
	// ErrCountryNotCovered: the table has no rates for the country (it
	// covers the EU-27, Greece as EL or GR, and the United Kingdom as GB,
	// UK or XI).
	ErrCountryNotCovered = errors.New("vat: country not covered by the rate table")
	// ErrDateNotCovered: the date lies outside Coverage; the table does not
	// vouch for it and never reuses the nearest known rate.
	ErrDateNotCovered = errors.New("vat: date outside the rate table's coverage")
)

// RateSource says where a rate comes from. It is embedded in a
// Determination so that a fiscal record names the data it was computed with.
type RateSource struct {
	// Table is the rate-table version (RateTable.Version).
	Table string `json:"table"`
	// EffectiveFrom is the first day (YYYY-MM-DD) of the period the rate
	// belongs to; empty when the period started before the history the
	// source records (ibericode's "0000-01-01").
	EffectiveFrom string `json:"effectiveFrom,omitempty"`
	// Source cites the data: a URL, or the ibericode file, commit and period.
	Source string `json:"source"`
}

// Rate series and row statuses used by the generated table (see package
// internal/ratesgen).
const (
	seriesStandard     = "standard"
	seriesReduced      = "reduced"
	seriesEbook        = "ebook"
	seriesEpublication = "epublication"
	seriesStreaming    = "streaming"

	statusSource        = "source"
	statusUnverified    = "unverified"
	statusItemDependent = "item_dependent"
)

// rateRow is one generated rate period. from and the table bounds are dates
// written as yyyymmdd integers, so that comparing them compares dates.
type rateRow struct {
	country   string
	territory string
	series    string
	from      int
	status    string
	percents  []decimal.Decimal
	source    string
	note      string
	condition string // code of a rateConditionDef the rate depends on (conditions.go), or ""

	effectiveFrom string // from as YYYY-MM-DD, "" for 0; set by buildRateTable
}

// rateConditionDef is a legal condition of a reduced rate, generated from
// the conditions of vat/ratedata/corrections.json.
type rateConditionDef struct{ code, description, source string }

type seriesKey struct{ country, territory, series string }

// RateTable is a table of VAT rates by country and date: the embedded one
// (Rates) or one read from a file (ParseRateTable). It is immutable: every
// method only reads.
type RateTable struct {
	version  string
	why      string // why the table vouches for its coverage
	from, to int
	// conditions are the legal conditions of the table's reduced rates,
	// sorted by code.
	conditions []rateConditionDef
	series     map[seriesKey][]rateRow // each sorted by from, ascending
	// national holds the series without a territory by country (at the
	// index of countryTable) and series (seriesIndex): the same slices as
	// series, found without hashing a key.
	national [26 * 26]*[numSeries][]rateRow
	// fromUnix is the first midnight (UTC) of the coverage, toEndUnix the
	// midnight after its last day.
	fromUnix, toEndUnix int64
	// countries is what Countries returns (a copy of), sorted.
	countries []string
	// laterDates renders the covered days after the embedded coverage,
	// laterFrom to laterLast (laterDatesRange), at dateIndex; nil for the
	// embedded table.
	laterDates           []string
	laterFrom, laterLast int
	// digest is Digest's answer, computed on first use (rendering the
	// file takes milliseconds; a server's metrics ask at each scrape).
	digest     string
	digestOnce sync.Once
}

// seriesIndex numbers the rate series for RateTable.national.
func seriesIndex(series string) (int, bool) {
	switch series {
	case seriesStandard:
		return 0, true
	case seriesReduced:
		return 1, true
	case seriesEbook:
		return 2, true
	case seriesEpublication:
		return 3, true
	case seriesStreaming:
		return 4, true
	}
	return 0, false
}

const numSeries = 5

// rates is built once at package initialisation from the generated rows and
// never modified afterwards.
var rates = buildRateTable(rateTableVersion, rateTableWhy, rateTableFrom, rateTableTo, rateConditionDefs[:], rateRows[:])

func buildRateTable(version, why string, from, to int, conds []rateConditionDef, rows []rateRow) *RateTable {
	t := &RateTable{
		version:    version,
		why:        why,
		from:       from,
		to:         to,
		conditions: conds,
		series:     make(map[seriesKey][]rateRow),
	}
	t.fromUnix, t.toEndUnix = keyTime(t.from).Unix(), keyTime(t.to).AddDate(0, 0, 1).Unix()
	for _, r := range rows {
		if r.from != 0 {
			r.effectiveFrom = keyTime(r.from).Format(time.DateOnly)
		}
		k := seriesKey{r.country, r.territory, r.series}
		t.series[k] = append(t.series[k], r)
	}
	for k, rows := range t.series {
		slices.SortFunc(rows, func(a, b rateRow) int { return a.from - b.from })
		i, okc := countryIndex(k.country)
		s, oks := seriesIndex(k.series)
		if k.territory != "" || !okc || !oks {
			continue
		}
		if t.national[i] == nil {
			t.national[i] = new([numSeries][]rateRow)
		}
		t.national[i][s] = rows
	}
	for k := range t.series {
		if k.territory == "" && k.series == seriesStandard {
			t.countries = append(t.countries, k.country)
		}
	}
	slices.Sort(t.countries)
	if from, last, ok := laterDatesRange(to); ok {
		t.laterDates, t.laterFrom, t.laterLast = renderDates(from, last), from, last
	}
	return t
}

// Rates returns the embedded rate table, generated from the ibericode/vat-rates
// snapshot in vat/ratedata/ibericode and vat/ratedata/corrections.json.
// ParseRateTable reads another one (ratefile.go).
func Rates() *RateTable { return rates }

// Version names the table's data, e.g. "vat-rates-2026.09.1". It changes
// whenever a rate, a date or a source changes.
func (t *RateTable) Version() string { return t.version }

// Coverage returns the first and last day (UTC midnight) the table vouches
// for. Every rate change inside the range is recorded; outside it the table
// answers ErrDateNotCovered.
func (t *RateTable) Coverage() (from, to time.Time) {
	return keyTime(t.from), keyTime(t.to)
}

// Standard returns the standard rate of a country on the UTC calendar day
// of on. country is an ISO 3166-1 alpha-2 code of an EU member state (EL is
// accepted for Greece) or GB (UK and XI are accepted as aliases: Northern
// Ireland uses UK rates for services).
func (t *RateTable) Standard(country string, on time.Time) (decimal.Decimal, RateSource, error) {
	r, err := t.lookupCountry(country, seriesStandard, on)
	if err != nil {
		return decimal.Decimal{}, RateSource{}, err
	}
	return r.percents[0], t.source(r), nil
}

// Reduced returns the reduced, super-reduced and parking rates a country
// applies on the UTC calendar day of on (Art. 98, 99, 110 and 118 Directive
// 2006/112/EC), ascending and without duplicates; an empty list means the
// country has none (Denmark). Which goods or services a reduced rate covers
// is not part of the table.
func (t *RateTable) Reduced(country string, on time.Time) ([]decimal.Decimal, RateSource, error) {
	r, err := t.lookupCountry(country, seriesReduced, on)
	if errors.Is(err, errNoSeries) {
		return []decimal.Decimal{}, RateSource{Table: t.version}, nil
	}
	if err != nil {
		return nil, RateSource{}, err
	}
	return slices.Clone(r.percents), t.source(r), nil
}

// Countries lists the countries the table covers, as ISO 3166-1 alpha-2
// codes (GR for Greece), sorted.
func (t *RateTable) Countries() []string {
	return slices.Clone(t.countries) // the list is built once, with the table
}

var errNoSeries = errors.New("vat: no such rate series")

func (t *RateTable) lookupCountry(country string, series string, on time.Time) (rateRow, error) {
	cc := tableCountry(country)
	if _, ok := t.series[seriesKey{cc, "", seriesStandard}]; !ok {
		return rateRow{}, fmt.Errorf("vat: rate for %q: %w", country, ErrCountryNotCovered)
	}
	day := dayKey(on)
	if !t.covers(day) {
		return rateRow{}, fmt.Errorf("vat: rate for %s on %s: %w", cc, on.UTC().Format(time.DateOnly), ErrDateNotCovered)
	}
	r, ok := t.lookup(seriesKey{cc, "", series}, day)
	if !ok {
		return rateRow{}, errNoSeries
	}
	return r, nil
}

// tableCountry maps the accepted aliases to the table's keys.
func tableCountry(cc string) string {
	switch cc {
	case "EL":
		return "GR"
	case "UK", "XI":
		return "GB"
	}
	return cc
}

func (t *RateTable) covers(day int) bool { return day >= t.from && day <= t.to }

// lookup returns the period of a series in force on day.
func (t *RateTable) lookup(k seriesKey, day int) (rateRow, bool) {
	var rows []rateRow
	i, okc := countryIndex(k.country)
	s, oks := seriesIndex(k.series)
	switch {
	case k.territory == "" && okc && oks:
		if n := t.national[i]; n != nil {
			rows = n[s]
		}
	default:
		rows = t.series[k]
	}
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].from <= day {
			return rows[i], true
		}
	}
	return rateRow{}, false
}

func (t *RateTable) source(r rateRow) RateSource {
	return RateSource{Table: t.version, EffectiveFrom: r.effectiveFrom, Source: r.source}
}

// dayKey is the UTC calendar day of t as yyyymmdd.
func dayKey(t time.Time) int {
	y, m, d := t.UTC().Date()
	return y*10000 + int(m)*100 + d
}

func keyTime(k int) time.Time {
	return time.Date(k/10000, time.Month(k/100%100), k%100, 0, 0, 0, 0, time.UTC)
}
