package vat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/vat/internal/ratesgen"
)

// Rate tables loaded at run time.
//
// The embedded table (Rates) covers a fixed range of days and answers
// date_outside_rate_table after it: member states change rates in their
// budget laws, usually from 1 January, and a build cannot vouch for rates
// nobody has published yet. So that a running service need not wait for a
// new build, a whole table can be read from a table file (ParseRateTable)
// and used in place of the embedded one (RateTable.Determine,
// RateTable.DetermineManually; fiscal.Config.Rates for the engine). The
// file holds every row, each with its public source; it is checked as the
// generated table is (vat/internal/ratesgen, "Table files"), and further:
//   - a territory row names a territory with rates of its own (Azores,
//     Madeira, Jungholz, Mittelberg) under its own country, and each of
//     them has a standard rate on the first covered day;
//   - a condition is one this build knows (a request attests its code, so
//     a new code is an API change that ships with a release); the file may
//     restate its description and source;
//   - the coverage starts no later than the embedded table's: a record
//     pending review from one of those days must stay decidable;
//   - the version is not the embedded table's unless the file is that
//     table, nor any other build's ("vat-rates-..."): every record names
//     the version it was decided with (RateSource.Table), so one version
//     never stands for two tables.
//
// RateTable.File writes a table in this format; the embedded table's file
// is where a new one starts (the server's "vat-rates export").

// embeddedVersionPrefix starts the version of every embedded table
// (vat/ratedata/corrections.json, "vat-rates-2026.12.2"); a table file may
// not take such a name unless it is the embedded table's own file.
const embeddedVersionPrefix = "vat-rates-"

// ErrRateTableFile is wrapped by every refusal of ParseRateTable.
var ErrRateTableFile = errors.New("vat: rate table file refused")

// ParseRateTable reads a table file (the format of RateTable.File). It
// refuses, wrapping ErrRateTableFile and naming the offending member, a
// file that is not a complete, sourced table.
func ParseRateTable(data []byte) (*RateTable, error) {
	refuse := func(format string, args ...any) (*RateTable, error) {
		return nil, fmt.Errorf("%w: %s", ErrRateTableFile, fmt.Sprintf(format, args...))
	}
	t, err := ratesgen.ParseFile(data)
	if err != nil {
		return refuse("%v", err)
	}
	rows := make([]rateRow, len(t.Rows))
	ownStandard := map[string]bool{}
	for i, r := range t.Rows {
		if r.Territory != "" {
			terr := ownRatesTerritory(r.Territory)
			if terr == nil || terr.parent != r.Country {
				return refuse("rows: %s %s %q: not a territory with rates of its own under %s (%s)", r.Country, r.Series, r.Territory, r.Country, ownRatesNames())
			}
			if r.Series == seriesStandard && r.From <= t.From {
				ownStandard[r.Territory] = true
			}
		}
		if r.Condition != "" && !knownCondition(r.Condition) {
			return refuse("rows: %s %s: condition %q is not one this build knows (%s)", r.Country, r.Series, r.Condition, strings.Join(conditionCodes(), ", "))
		}
		rows[i] = rateRow{country: r.Country, territory: r.Territory, series: r.Series, from: r.From, status: r.Status,
			percents: r.Percents, source: r.Source, note: r.Note, condition: r.Condition}
	}
	for _, terr := range ownRatesTerritories {
		if !ownStandard[terr.name] {
			return refuse("rows: %s (%s): no standard rate in force on the first covered day", terr.name, terr.parent)
		}
	}
	conds := make([]rateConditionDef, len(t.Conditions))
	for i, c := range t.Conditions {
		if !knownCondition(c.Code) {
			return refuse("conditions: %q is not a condition this build knows (%s)", c.Code, strings.Join(conditionCodes(), ", "))
		}
		conds[i] = rateConditionDef{code: c.Code, description: c.Description, source: c.Source}
	}
	if t.From > rates.from {
		return refuse("coverage.from %s: a table must cover every day the embedded table covers, from %s, so that records pending review from those days can still be decided (start from the embedded table's file)", dateString(t.From), dateString(rates.from))
	}
	out := buildRateTable(t.Version, t.CoverageWhy, t.From, t.To, conds, rows)
	if out.version != rates.version && strings.HasPrefix(out.version, embeddedVersionPrefix) {
		return refuse("version %q: names starting %q are the builds' own tables (earlier records cite earlier ones, a later build will ship the next): give the file a name of its own, e.g. \"acme-%s\"", out.version, embeddedVersionPrefix, out.version)
	}
	if out.version == rates.version {
		mine, err := out.File()
		if err != nil {
			return nil, err
		}
		embedded, err := rates.File()
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(mine, embedded) {
			return refuse("version %q is the embedded table's, but the file differs from it: a changed table needs a version of its own", out.version)
		}
		return rates, nil
	}
	return out, nil
}

// RateDifference is a span of days on which two tables disagree about a
// series: from Day (YYYY-MM-DD) on, until the next difference or the end
// of the days both cover, Base holds one period and This another.
type RateDifference struct {
	Country, Territory, Series string
	Day                        string
	Base, This                 RatePeriod
}

// Differences lists, ordered by country, territory, series and day, where
// t disagrees with base on the days both cover: a rate, its status or its
// condition. A table made from the embedded one's file lists only what
// its editor changed there.
func (t *RateTable) Differences(base *RateTable) []RateDifference {
	from, to := max(t.from, base.from), min(t.to, base.to)
	if from > to {
		return nil
	}
	// sig is what a difference is about: the percents, status and condition.
	sig := func(p RatePeriod) string {
		var b strings.Builder
		for _, x := range p.Percents {
			b.WriteString(x.String())
			b.WriteByte(' ')
		}
		return b.String() + p.Status + "|" + p.Condition
	}
	var out []RateDifference
	for _, k := range sortedSeriesKeys(t.series, base.series) {
		days := []int{from}
		for _, tb := range []*RateTable{t, base} {
			for _, r := range tb.series[k] {
				if r.from > from && r.from <= to {
					days = append(days, r.from)
				}
			}
		}
		slices.Sort(days)
		days = slices.Compact(days)
		prev := ""
		for _, d := range days {
			pb, pt := base.periodOn(k, d), t.periodOn(k, d)
			b, c := sig(pb), sig(pt)
			if b == c {
				prev = ""
				continue
			}
			if b+"\x00"+c == prev {
				continue // the same difference goes on
			}
			prev = b + "\x00" + c
			out = append(out, RateDifference{Country: k.country, Territory: k.territory, Series: k.series, Day: dateString(d), Base: pb, This: pt})
		}
	}
	return out
}

// File writes the table as a table file (indented JSON), the format
// ParseRateTable reads.
func (t *RateTable) File() ([]byte, error) {
	gt := &ratesgen.Table{Version: t.version, From: t.from, To: t.to, CoverageWhy: t.why}
	for _, c := range t.conditions {
		gt.Conditions = append(gt.Conditions, ratesgen.Condition{Code: c.code, Description: c.description, Source: c.source})
	}
	for _, k := range sortedSeriesKeys(t.series) {
		for _, r := range t.series[k] {
			gt.Rows = append(gt.Rows, ratesgen.Row{Country: r.country, Territory: r.territory, Series: r.series, From: r.from,
				Status: r.status, Percents: r.percents, Source: r.source, Note: r.note, Condition: r.condition})
		}
	}
	return ratesgen.EncodeFile(gt)
}

// Digest is the sha256 (hex) of the table's file: two tables with one
// version and different rows have different digests.
func (t *RateTable) Digest() string {
	t.digestOnce.Do(func() {
		if b, err := t.File(); err == nil {
			s := sha256.Sum256(b)
			t.digest = hex.EncodeToString(s[:])
		}
	})
	return t.digest
}

// Why says why the table vouches for its coverage: what was checked,
// against which sources, as of when.
func (t *RateTable) Why() string { return t.why }

// Determine is the package's Determine on this table (Determine is
// Rates().Determine).
func (t *RateTable) Determine(in Input) Determination { return t.determine(in) }

// DetermineManually is the package's DetermineManually on this table
// (DetermineManually is Rates().DetermineManually).
func (t *RateTable) DetermineManually(in Input, m Manual) (Determination, error) {
	d, e := t.determineManually(in, m)
	if e != nil {
		return Determination{}, e
	}
	return d, nil
}

// ownRatesTerritories are the territories whose rates the table holds.
var ownRatesTerritories = []*territory{tAzores, tMadeira, tJungholz, tMittelberg}

func ownRatesTerritory(name string) *territory {
	for _, t := range ownRatesTerritories {
		if t.name == name {
			return t
		}
	}
	return nil
}

func ownRatesNames() string {
	names := make([]string, len(ownRatesTerritories))
	for i, t := range ownRatesTerritories {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}
