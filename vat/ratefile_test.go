package vat

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// tableDoc is a table file as a generic document, so that a test can
// change one member and keep the rest.
type tableDoc map[string]any

func embeddedDoc(t *testing.T) tableDoc {
	t.Helper()
	b, err := Rates().File()
	if err != nil {
		t.Fatal(err)
	}
	var d tableDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d tableDoc) bytes(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (d tableDoc) rows() []any { return d["rows"].([]any) }

// row returns the row of a national series in force last (the greatest from).
func (d tableDoc) lastRow(t *testing.T, country, series string) map[string]any {
	t.Helper()
	var last map[string]any
	for _, r := range d.rows() {
		m := r.(map[string]any)
		if m["country"] == country && m["series"] == series && m["territory"] == nil {
			last = m
		}
	}
	if last == nil {
		t.Fatalf("no %s %s row", country, series)
	}
	return last
}

// TestRateTableFileRoundTrip: the embedded table written as a file reads
// back as the embedded table itself, and a copy under another version
// answers every rate lookup alike on every change day and the day before.
func TestRateTableFileRoundTrip(t *testing.T) {
	b, err := Rates().File()
	if err != nil {
		t.Fatal(err)
	}
	same, err := ParseRateTable(b)
	if err != nil {
		t.Fatalf("ParseRateTable(embedded file): %v", err)
	}
	if same != Rates() {
		t.Errorf("the embedded table's own file did not read back as the embedded table")
	}
	d := embeddedDoc(t)
	d["version"] = "test-copy.1"
	cp, err := ParseRateTable(d.bytes(t))
	if err != nil {
		t.Fatalf("ParseRateTable(copy): %v", err)
	}
	if cp.Version() != "test-copy.1" || cp.Digest() == Rates().Digest() {
		t.Errorf("copy: version %q digest %s (embedded %s)", cp.Version(), cp.Digest(), Rates().Digest())
	}
	cf, ct := cp.Coverage()
	ef, et := Rates().Coverage()
	if !cf.Equal(ef) || !ct.Equal(et) || cp.Why() != Rates().Why() {
		t.Errorf("copy coverage %v..%v %q, embedded %v..%v %q", cf, ct, cp.Why(), ef, et, Rates().Why())
	}
	changes := Rates().Changes()
	if len(changes) == 0 {
		t.Fatal("the embedded table lists no rate change")
	}
	for _, c := range changes {
		if c.Territory != "" || c.Series != seriesStandard && c.Series != seriesReduced {
			continue
		}
		on, _ := time.Parse(time.DateOnly, c.Day)
		for _, at := range []time.Time{on.AddDate(0, 0, -1), on} {
			if c.Series == seriesStandard {
				r1, s1, e1 := Rates().Standard(c.Country, at)
				r2, s2, e2 := cp.Standard(c.Country, at)
				if !r1.Equal(r2) || s1.Source != s2.Source || s1.EffectiveFrom != s2.EffectiveFrom || (e1 == nil) != (e2 == nil) || e2 == nil && s2.Table != "test-copy.1" {
					t.Errorf("Standard(%s, %s): embedded %s %+v %v, copy %s %+v %v", c.Country, at.Format(time.DateOnly), r1, s1, e1, r2, s2, e2)
				}
				continue
			}
			r1, _, _ := Rates().Reduced(c.Country, at)
			r2, _, _ := cp.Reduced(c.Country, at)
			if !slices.EqualFunc(r1, r2, decimal.Decimal.Equal) {
				t.Errorf("Reduced(%s, %s): embedded %v, copy %v", c.Country, at.Format(time.DateOnly), r1, r2)
			}
		}
	}
	if got, want := len(cp.Changes()), len(changes); got != want {
		t.Errorf("copy lists %d changes, embedded %d", got, want)
	}
	if diff := cp.Differences(Rates()); len(diff) != 0 {
		t.Errorf("a copy differs from the embedded table: %+v", diff)
	}
	if got, want := cp.Conditions(), Rates().Conditions(); len(got) != len(want) {
		t.Errorf("copy conditions %v, embedded %v", got, want)
	}
}

// TestRateTableFileExtendsCoverage: a table whose coverage reaches into a
// year the embedded one does not cover decides supplies of that year at
// its own rates and names itself, where the embedded table answers
// date_outside_rate_table; a change it adds applies from its local day.
func TestRateTableFileExtendsCoverage(t *testing.T) {
	_, embeddedTo := Rates().Coverage()
	next := embeddedTo.AddDate(0, 0, 1)            // the first day the embedded table refuses
	change := next.AddDate(0, 2, 0)                // a change inside the new coverage
	end := next.AddDate(1, 0, 0).AddDate(0, 0, -1) // one more year
	d := embeddedDoc(t)
	d["version"] = "test-extended.1"
	cov := d["coverage"].(map[string]any)
	cov["to"] = end.Format(time.DateOnly)
	cov["why"] = "test fixture: the embedded rows carried one year on, with one added change"
	fr := d.lastRow(t, "FR", seriesStandard)
	frRate := fr["percent"].([]any)[0].(string)
	d["rows"] = append(d.rows(), map[string]any{
		"country": "FR", "series": seriesStandard, "from": change.Format(time.DateOnly),
		"percent": []string{"21.5"}, "status": "source", "source": "https://example.invalid/test-fixture (a made-up change)",
	})
	tbl, err := ParseRateTable(d.bytes(t))
	if err != nil {
		t.Fatalf("ParseRateTable: %v", err)
	}
	in := func(at time.Time) Input {
		return Input{Seller{Country: "DE", OverThreshold: true}, b2c("FR"), Supply{Kind: KindDigitalService, Date: at}}
	}
	noon := func(day time.Time) time.Time { return day.Add(12 * time.Hour) }

	if got := Rates().Determine(in(noon(next))); got.Status != StatusManualReview || !hasReason(got, ReasonDateOutsideRateTable) {
		t.Fatalf("embedded table on %s: %s, want date_outside_rate_table", next.Format(time.DateOnly), summary(got))
	}
	got := tbl.Determine(in(noon(next)))
	if got.Status != StatusDetermined || got.RatePercent == nil || got.RatePercent.String() != frRate || got.RateSource == nil || got.RateSource.Table != "test-extended.1" {
		t.Errorf("loaded table on %s: %s source %+v, want %s %% from test-extended.1", next.Format(time.DateOnly), summary(got), got.RateSource, frRate)
	}
	// The change starts at local midnight in Paris (UTC+1 in winter... or
	// summer: the zone decides), so one minute before it is the old rate.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tzdata for Europe/Paris:", err)
	}
	midnight := time.Date(change.Year(), change.Month(), change.Day(), 0, 0, 0, 0, paris)
	before := tbl.Determine(in(midnight.Add(-time.Minute)))
	after := tbl.Determine(in(midnight.Add(time.Minute)))
	if before.RatePercent == nil || before.RatePercent.String() != frRate || after.RatePercent == nil || after.RatePercent.String() != "21.5" {
		t.Errorf("around the added change: before %s, after %s; want %s then 21.5", summary(before), summary(after), frRate)
	}
	if after.RateSource == nil || after.RateSource.EffectiveFrom != change.Format(time.DateOnly) || !strings.Contains(after.RateSource.Source, "example.invalid") {
		t.Errorf("after the change: source %+v", after.RateSource)
	}
	past := end.AddDate(0, 0, 2)
	if got := tbl.Determine(in(noon(past))); !hasReason(got, ReasonDateOutsideRateTable) {
		t.Errorf("loaded table after its own coverage: %s, want date_outside_rate_table", summary(got))
	}
	// A manual determination is checked against the loaded table's rates.
	m := Manual{Regime: RegimeOSSB2C, TaxingCountry: "FR", RatePercent: "21.5", Reason: "checked", DecidedBy: "test"}
	if _, err := tbl.DetermineManually(in(midnight.Add(time.Hour)), m); err != nil {
		t.Errorf("manual 21.5 %% after the loaded change: %v", err)
	}
	if _, err := tbl.DetermineManually(in(midnight.Add(-time.Hour)), m); err == nil {
		t.Errorf("manual 21.5 %% before the loaded change was accepted")
	}
}

// TestRateTableFileRefusals: each rule of a table file, broken once.
func TestRateTableFileRefusals(t *testing.T) {
	cases := []struct {
		name, want string
		edit       func(t *testing.T, d tableDoc) []byte
	}{
		{"not JSON", "invalid character", func(t *testing.T, d tableDoc) []byte { return []byte("not json") }},
		{"unknown member", "unknown field", func(t *testing.T, d tableDoc) []byte { d["extra"] = 1; return nil }},
		{"wrong format", "format", func(t *testing.T, d tableDoc) []byte { d["format"] = "something/2"; return nil }},
		{"empty version", "version", func(t *testing.T, d tableDoc) []byte { d["version"] = ""; return nil }},
		{"version with a space", "version", func(t *testing.T, d tableDoc) []byte { d["version"] = "my table"; return nil }},
		{"embedded version, other rows", "needs a version of its own", func(t *testing.T, d tableDoc) []byte {
			d.lastRow(t, "DE", seriesStandard)["percent"] = []string{"20"}
			return nil
		}},
		{"coverage backwards", "coverage.to", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["coverage"].(map[string]any)["to"] = "2023-01-01"
			return nil
		}},
		{"no why", "coverage.why", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["coverage"].(map[string]any)["why"] = " "
			return nil
		}},
		{"row without https source", "https", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d.lastRow(t, "DE", seriesStandard)["source"] = "my accountant"
			return nil
		}},
		{"source beside the repository", "beside the repository", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d.lastRow(t, "DE", seriesStandard)["source"] = "https://example.invalid and ../shared/research/vat.md"
			return nil
		}},
		{"percent over 100", "outside 0..100", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d.lastRow(t, "DE", seriesStandard)["percent"] = []string{"190"}
			return nil
		}},
		{"a country missing", "no standard rate", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			var keep []any
			for _, r := range d.rows() {
				if r.(map[string]any)["country"] != "SE" {
					keep = append(keep, r)
				}
			}
			d["rows"] = keep
			return nil
		}},
		{"duplicate row", "duplicate", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["rows"] = append(d.rows(), d.lastRow(t, "DE", seriesStandard))
			return nil
		}},
		{"unknown territory", "not a territory with rates of its own", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["rows"] = append(d.rows(), map[string]any{"country": "ES", "territory": "Canary Islands", "series": "standard",
				"from": "2025-01-01", "percent": []string{"7"}, "status": "source", "source": "https://example.invalid/igic"})
			return nil
		}},
		{"territory under another country", "not a territory with rates of its own", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["rows"] = append(d.rows(), map[string]any{"country": "ES", "territory": "Azores", "series": "standard",
				"from": "2025-01-01", "percent": []string{"16"}, "status": "source", "source": "https://example.invalid/x"})
			return nil
		}},
		{"territory without its standard rate", "Madeira", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			var keep []any
			for _, r := range d.rows() {
				if m := r.(map[string]any); m["territory"] != "Madeira" {
					keep = append(keep, r)
				}
			}
			d["rows"] = keep
			return nil
		}},
		{"unknown condition code", "condition", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["conditions"].(map[string]any)["xx_new"] = map[string]any{"description": "A new condition.", "source": "https://example.invalid/law"}
			return nil
		}},
		{"coverage starting after the embedded table's", "coverage.from", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["coverage"].(map[string]any)["from"] = "2025-01-01"
			return nil
		}},
		{"unverified row without a note", "note", func(t *testing.T, d tableDoc) []byte {
			d["version"] = "x.1"
			d["rows"] = append(d.rows(), map[string]any{"country": "DE", "series": "ebook", "from": "2026-06-01",
				"percent": []string{"0"}, "status": "unverified", "source": "https://example.invalid/x"})
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := embeddedDoc(t)
			data := c.edit(t, d)
			if data == nil {
				data = d.bytes(t)
			}
			tbl, err := ParseRateTable(data)
			if err == nil {
				t.Fatalf("accepted (version %s)", tbl.Version())
			}
			if !errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrRateTableFile naming %q", err, c.want)
			}
		})
	}
}

// TestRateTableDifferences: a table that changes one embedded period and
// adds one after the embedded coverage differs from the embedded table by
// that one span only, with both periods named.
func TestRateTableDifferences(t *testing.T) {
	_, to := Rates().Coverage()
	d := embeddedDoc(t)
	d["version"] = "test-diff.1"
	d["coverage"].(map[string]any)["to"] = to.AddDate(1, 0, 0).Format(time.DateOnly)
	de, _, err := Rates().Standard("DE", to)
	if err != nil {
		t.Fatal(err)
	}
	changed := de.Add(decimal.New(1, 0)).String()
	from, end := to.AddDate(0, -3, 0), to.AddDate(0, -1, 0)
	d["rows"] = append(d.rows(),
		map[string]any{"country": "DE", "series": seriesStandard, "from": from.Format(time.DateOnly), "percent": []string{changed}, "status": "source", "source": "https://example.invalid/a"},
		map[string]any{"country": "DE", "series": seriesStandard, "from": end.Format(time.DateOnly), "percent": []string{de.String()}, "status": "source", "source": "https://example.invalid/b"},
		map[string]any{"country": "FR", "series": seriesStandard, "from": to.AddDate(0, 0, 1).Format(time.DateOnly), "percent": []string{"21.5"}, "status": "source", "source": "https://example.invalid/c"})
	tbl, err := ParseRateTable(d.bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	diff := tbl.Differences(Rates())
	if len(diff) != 1 {
		t.Fatalf("differences %+v, want the one DE span", diff)
	}
	x := diff[0]
	if x.Country != "DE" || x.Series != seriesStandard || x.Day != from.Format(time.DateOnly) ||
		len(x.Base.Percents) != 1 || !x.Base.Percents[0].Equal(de) || len(x.This.Percents) != 1 || x.This.Percents[0].String() != changed {
		t.Errorf("difference %+v, want DE standard from %s: %s then %s", x, from.Format(time.DateOnly), de, changed)
	}
	if back := Rates().Differences(tbl); len(back) != 1 || back[0].Base.Percents[0].String() != changed {
		t.Errorf("the other way round: %+v", back)
	}
}

// TestRateTableFileStandardRateIsSourced: every supply's rate is measured
// against the standard rate (an e-book's 7 % is "reduced" because the
// standard rate is 19 %), so a table whose standard series holds an
// unverified or item-dependent row, with no single rate, is refused: it
// would leave the table unable to say what the standard rate is (each
// member state has one, Art. 96 Directive 2006/112/EC), and a lookup of it
// would fail in the middle of a determination.
func TestRateTableFileStandardRateIsSourced(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  string
		percent []string
	}{
		{"unverified, no percent", statusUnverified, []string{}},
		{"unverified, a candidate", statusUnverified, []string{"19"}},
		{"item dependent", statusItemDependent, []string{"19", "21"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := embeddedDoc(t)
			d["version"] = "test-std.1"
			d["rows"] = append(d.rows(), map[string]any{"country": "DE", "series": seriesStandard, "from": "2026-06-01",
				"percent": c.percent, "status": c.status, "note": "not yet published", "source": "https://example.invalid/x"})
			var tbl *RateTable
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("ParseRateTable panicked: %v", p)
					}
				}()
				tbl, err = ParseRateTable(d.bytes(t))
			}()
			if err == nil {
				// Show what the accepted table does with it.
				in := Input{Seller{Country: "FR", OverThreshold: true}, b2c("DE"), Supply{Kind: KindEbook, Date: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Fatalf("accepted; an e-book supply to Germany then panics: %v", p)
						}
					}()
					got := tbl.Determine(in)
					t.Fatalf("accepted; an e-book supply to Germany: %s", summary(got))
				}()
			}
			if !errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), "standard") {
				t.Errorf("error %q, want ErrRateTableFile naming the standard series", err)
			}
		})
	}
}

// TestRateTableFileDuplicateMembers: a JSON object that names a member
// twice reads, in encoding/json, as its last value, where a person
// reviewing the file reads the first: "percent": ["24"] ... "percent":
// ["0"] would be reviewed as 24 % and decided at 0 %. A file is what an
// operator vouches for, so it must mean one thing: such a file is refused,
// naming the member.
func TestRateTableFileDuplicateMembers(t *testing.T) {
	d := embeddedDoc(t)
	d["version"] = "test-dup.1"
	base := string(d.bytes(t))
	for _, c := range []struct{ name, data, want string }{
		{"a row's percent", strings.Replace(base, `"status":"source"`, `"status":"source","percent":["0"]`, 1), `"percent"`},
		{"the version", strings.Replace(base, `"version":"test-dup.1"`, `"version":"test-dup.1","version":"test-dup.2"`, 1), `"version"`},
		{"a condition", strings.Replace(base, `"conditions":{`, `"conditions":{"it_isbn_issn":{"description":"d","source":"https://example.invalid"},`, 1), `"it_isbn_issn"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.data == base {
				t.Fatal("the fixture did not change the file")
			}
			tbl, err := ParseRateTable([]byte(c.data))
			if err == nil {
				t.Fatalf("accepted (version %s)", tbl.Version())
			}
			if !errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), "twice") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want ErrRateTableFile naming %s twice", err, c.want)
			}
		})
	}
}

// TestRateTableFileStandardRateFloor: a member state's standard rate is
// at least 15 % (Art. 97 Directive 2006/112/EC), so a file whose standard
// rate is below it ("0", "1.9" for 19) is a typo the engine would
// otherwise charge on every supply of the country: it is refused, naming
// the country. The UK (no such floor) and the territories with rates of
// their own (Art. 105: the Azores may go lower) are not held to it.
func TestRateTableFileStandardRateFloor(t *testing.T) {
	_, to := Rates().Coverage()
	day := to.AddDate(0, 0, 1).Format(time.DateOnly)
	for _, c := range []struct {
		country, territory, percent string
		refused                     bool
	}{
		{"DE", "", "0", true},
		{"DE", "", "1.9", true},
		{"LU", "", "14.99", true},
		{"LU", "", "15", false},
		{"GB", "", "12", false},
		{"PT", "Azores", "12", false},
	} {
		d := embeddedDoc(t)
		d["version"] = "test-floor.1"
		d["coverage"].(map[string]any)["to"] = to.AddDate(1, 0, 0).Format(time.DateOnly)
		row := map[string]any{"country": c.country, "series": seriesStandard, "from": day,
			"percent": []string{c.percent}, "status": "source", "source": "https://example.invalid/x"}
		if c.territory != "" {
			row["territory"] = c.territory
		}
		d["rows"] = append(d.rows(), row)
		tbl, err := ParseRateTable(d.bytes(t))
		switch {
		case c.refused && err == nil:
			std, _, _ := tbl.Standard(c.country, to.AddDate(0, 0, 2))
			t.Errorf("%s standard %s %%: accepted; the table's standard rate is then %s %%", c.country, c.percent, std)
		case c.refused && (!errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), c.country) || !strings.Contains(err.Error(), "Art. 97")):
			t.Errorf("%s standard %s %%: error %q, want ErrRateTableFile naming the country and Art. 97", c.country, c.percent, err)
		case !c.refused && err != nil:
			t.Errorf("%s %s standard %s %%: %v", c.country, c.territory, c.percent, err)
		}
	}
}

// TestRateTableFileRowAfterCoverage: a row that starts after the file's
// own coverage.to is a rate the file does not vouch for, usually a new
// year's rate added without moving coverage.to: reading it was silent (the
// row was dropped, the new year still answered date_outside_rate_table)
// and is now refused, naming the row and the coverage.
func TestRateTableFileRowAfterCoverage(t *testing.T) {
	_, to := Rates().Coverage()
	next := to.AddDate(0, 0, 1).Format(time.DateOnly)
	d := embeddedDoc(t)
	d["version"] = "test-after.1"
	d["rows"] = append(d.rows(), map[string]any{"country": "FR", "series": seriesStandard, "from": next,
		"percent": []string{"21"}, "status": "source", "source": "https://example.invalid/next-year"})
	tbl, err := ParseRateTable(d.bytes(t))
	if err == nil {
		_, end := tbl.Coverage()
		t.Fatalf("accepted; the table ends %s and has %d changes after %s", end.Format(time.DateOnly), len(tbl.Differences(Rates())), to.Format(time.DateOnly))
	}
	if !errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), next) || !strings.Contains(err.Error(), "coverage.to") {
		t.Errorf("error %q, want ErrRateTableFile naming the row's day and coverage.to", err)
	}
}

// TestRateTableFileHotPathAllocations: a loaded table is there to decide
// the days after the embedded coverage, so a determination on such a day
// costs no more allocations than one inside the embedded coverage (the
// settlement path allocates nothing per settlement for its dates).
func TestRateTableFileHotPathAllocations(t *testing.T) {
	_, to := Rates().Coverage()
	d := embeddedDoc(t)
	d["version"] = "test-allocs.1"
	d["coverage"].(map[string]any)["to"] = to.AddDate(2, 0, 0).Format(time.DateOnly)
	tbl, err := ParseRateTable(d.bytes(t))
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(at time.Time) float64 {
		in := Input{Seller{Country: "DE", OverThreshold: true}, b2c("FI"), Supply{Kind: KindDigitalService, Date: at}}
		if got := tbl.Determine(in); got.Status != StatusDetermined {
			t.Fatalf("%s: %s", at, summary(got))
		}
		return testing.AllocsPerRun(100, func() { _ = tbl.Determine(in) })
	}
	_, end := tbl.Coverage()
	for day := to.AddDate(0, 0, -3); !day.After(end.AddDate(0, 0, 3)); day = day.AddDate(0, 0, 1) {
		if got, want := tbl.dateString(dayKey(day)), day.Format(time.DateOnly); got != want {
			t.Fatalf("the loaded table renders %s as %q", want, got)
		}
	}
	inside := allocs(to.AddDate(0, -6, 0).Add(12 * time.Hour))
	for _, at := range []time.Time{to.AddDate(0, 6, 0).Add(12 * time.Hour), to.AddDate(2, 0, 0).Add(12 * time.Hour)} {
		if n := allocs(at); n > inside {
			t.Errorf("a determination on %s: %v allocations, on %s inside the embedded coverage %v", at.Format(time.DateOnly), n, to.AddDate(0, -6, 0).Format(time.DateOnly), inside)
		}
	}
}

// TestRateTableFileVersionNamespace: every record names the rate table it
// was decided with, and the builds name theirs vat-rates-YYYY.MM.N
// (earlier builds' records hold earlier ones, a later build's table will
// take the next). A file under such a name, other than the embedded
// table's own file, could stand for other rows than the build's table of
// that name (an operator's "vat-rates-2027.01.1" and a later release's),
// so it is refused; a name of the operator's own is accepted.
func TestRateTableFileVersionNamespace(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{"vat-rates-2027.01.1", false},
		{"vat-rates-2025.09.1", false},
		{"acme-vat-rates-2027.01.1", true},
	} {
		d := embeddedDoc(t)
		d["version"] = c.version
		_, err := ParseRateTable(d.bytes(t))
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.version, err)
		}
		if !c.ok && (!errors.Is(err, ErrRateTableFile) || !strings.Contains(err.Error(), c.version)) {
			t.Errorf("%s: error %v, want ErrRateTableFile naming the version", c.version, err)
		}
	}
}
