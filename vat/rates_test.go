package vat

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/vat/internal/ratesgen"
	"github.com/shopspring/decimal"
)

// TestStandardRatesSeptember2026 checks every standard rate in force on
// 2026-09-01 against values typed by hand from the sources (the ibericode
// snapshot's periods and the corrections' cited sources), not read from the
// generated table.
func TestStandardRatesSeptember2026(t *testing.T) {
	want := map[string]string{
		"AT": "20", "BE": "21", "BG": "20", "CY": "19", "CZ": "21", "DE": "19", "DK": "25",
		"EE": "24", "GR": "24", "ES": "21", "FI": "25.5", "FR": "20", "HR": "25", "HU": "27",
		"IE": "23", "IT": "22", "LT": "21", "LU": "17", "LV": "21", "MT": "18", "NL": "21",
		"PL": "23", "PT": "23", "RO": "21", "SE": "25", "SI": "22", "SK": "23", "GB": "20",
	}
	got := Rates().Countries()
	if len(got) != len(want) {
		t.Errorf("Countries() = %v, want the %d expected", got, len(want))
	}
	for cc, w := range want {
		r, src, err := Rates().Standard(cc, sep1)
		if err != nil {
			t.Errorf("Standard(%s): %v", cc, err)
			continue
		}
		if r.String() != w {
			t.Errorf("Standard(%s, 2026-09-01) = %s, want %s", cc, r, w)
		}
		if src.Table != Rates().Version() || src.Source == "" {
			t.Errorf("Standard(%s): source %+v", cc, src)
		}
	}
}

// TestKnownRateChanges checks each change the cited sources name on the
// day before and the day it takes effect.
func TestKnownRateChanges(t *testing.T) {
	type want struct{ before, on string }
	standard := []struct {
		cc   string
		date time.Time
		want want
	}{
		{"FI", day(2024, time.September, 1), want{"24", "25.5"}},
		{"SK", day(2025, time.January, 1), want{"20", "23"}},
		{"EE", day(2025, time.July, 1), want{"22", "24"}},
		{"RO", day(2025, time.August, 1), want{"19", "21"}},
	}
	for _, c := range standard {
		before, _, err1 := Rates().Standard(c.cc, c.date.AddDate(0, 0, -1))
		on, src, err2 := Rates().Standard(c.cc, c.date)
		if err1 != nil || err2 != nil || before.String() != c.want.before || on.String() != c.want.on {
			t.Errorf("%s standard around %s: %s, %s (%v, %v); want %s then %s", c.cc, c.date.Format(time.DateOnly), before, on, err1, err2, c.want.before, c.want.on)
		}
		if src.EffectiveFrom != c.date.Format(time.DateOnly) {
			t.Errorf("%s: effective from %q, want %s", c.cc, src.EffectiveFrom, c.date.Format(time.DateOnly))
		}
	}
	// LU 17 % from 2024-01-01, the first covered day: the day before is
	// not vouched for (16 % in 2023 per ibericode).
	lu, src, err := Rates().Standard("LU", day(2024, time.January, 1))
	if err != nil || lu.String() != "17" || src.EffectiveFrom != "2024-01-01" {
		t.Errorf("LU on 2024-01-01: %s %+v %v, want 17 from 2024-01-01", lu, src, err)
	}
	if _, _, err := Rates().Standard("LU", day(2023, time.December, 31)); !errors.Is(err, ErrDateNotCovered) {
		t.Errorf("LU on 2023-12-31: %v, want ErrDateNotCovered", err)
	}

	reduced := []struct {
		cc   string
		date time.Time
		want want
	}{
		{"FI", day(2026, time.January, 1), want{"10 14", "10 13.5"}},
		{"LT", day(2026, time.January, 1), want{"5 9", "5 12"}},
		{"RO", day(2025, time.August, 1), want{"5 9", "9 11"}}, // 9 % kept for transitional housing (rates_2026_test.go)
		{"SK", day(2025, time.January, 1), want{"5 10", "5 19"}},
		{"EE", day(2025, time.January, 1), want{"5 9", "9 13"}},
	}
	for _, c := range reduced {
		before, _, err1 := Rates().Reduced(c.cc, c.date.AddDate(0, 0, -1))
		on, _, err2 := Rates().Reduced(c.cc, c.date)
		if err1 != nil || err2 != nil || join(before) != c.want.before || join(on) != c.want.on {
			t.Errorf("%s reduced around %s: [%s], [%s] (%v, %v); want [%s] then [%s]", c.cc, c.date.Format(time.DateOnly), join(before), join(on), err1, err2, c.want.before, c.want.on)
		}
	}
	// Rates in force through a whole covered period that the ibericode
	// snapshot leaves out of a reduced list (each typed from its source).
	inForce := []struct {
		cc       string
		from, to time.Time
		want     string
		source   string
	}{
		// Slovakia's second reduced rate of 5 % (rental housing, from
		// 2023-01-01) stayed in force beside 10 % until both changed on
		// 2025-01-01: "The second reduced VAT rate of 5% remains in place"
		// (https://taxnews.ey.com/news/2024-1947; Baker McKenzie,
		// https://resourcehub.bakermckenzie.com/en/resources/vatgst-rates--thresholds/european-union/slovakia/topics/vat--gst).
		{"SK", day(2024, time.January, 1), day(2024, time.December, 31), "5 10", "EY 2024-1947"},
		// Cyprus's super-reduced rate of 3 % (books, newspapers and
		// periodicals, also electronic, and other items formerly at 5 %)
		// from 2023-07-21, the day its amending law was published in the
		// Official Gazette (VAT Law N. 95(I)/2000,
		// https://www.cylaw.org/nomoi/enop/non-ind/2000_1_95/full.html;
		// https://www.mondaq.com/cyprus/sales-taxes-vat-gst/1348704/new-vat-rates-as-from-21-july-2023).
		{"CY", day(2024, time.January, 1), day(2026, time.December, 31), "3 5 9", "Cyprus 3 % from 2023-07-21"},
		// Malta's third reduced rate of 12 % from 2024-01-01 (Legal Notice
		// 231 of 2023, Eighth Schedule to the VAT Act, Cap. 406:
		// https://legislation.mt/eli/ln/2023/231/eng).
		{"MT", day(2024, time.January, 1), day(2026, time.December, 31), "5 7 12", "Malta LN 231/2023"},
		// Spain's temporary food rates (Real Decreto-ley 4/2024 extending
		// those of 2023): pasta and seed oils at 5 % until 2024-09-30, then
		// 7.5 %, and basic foods at 2 % from 2024-10-01, all back to 4 % and
		// 10 % on 2025-01-01 (https://www.boe.es/buscar/act.php?id=BOE-A-2024-12944).
		{"ES", day(2024, time.January, 1), day(2024, time.September, 30), "4 5 10", "RDL 4/2024"},
		{"ES", day(2024, time.October, 1), day(2024, time.December, 31), "2 4 7.5 10", "RDL 4/2024"},
		{"ES", day(2025, time.January, 1), day(2026, time.December, 31), "4 10", "RDL 4/2024"},
	}
	for _, c := range inForce {
		for _, d := range []time.Time{c.from, c.to} {
			r, _, err := Rates().Reduced(c.cc, d)
			if err != nil || join(r) != c.want {
				t.Errorf("Reduced(%s, %s) = [%s] (%v), want [%s] (%s)", c.cc, d.Format(time.DateOnly), join(r), err, c.want, c.source)
			}
		}
	}
	if r, _, err := Rates().Reduced("DK", sep1); err != nil || len(r) != 0 {
		t.Errorf("Reduced(DK) = %v, %v; want none", r, err)
	}
	if r, _, _ := Rates().Reduced("IE", sep1); join(r) != "4.8 9 13.5" {
		t.Errorf("Reduced(IE) = [%s], want [4.8 9 13.5] (parking 13.5 once)", join(r))
	}
}

func join(ds []decimal.Decimal) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.String()
	}
	return strings.Join(s, " ")
}

func TestRateTableLookups(t *testing.T) {
	from, to := Rates().Coverage()
	if from != time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) || to != time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC) {
		t.Errorf("Coverage() = %s, %s", from, to)
	}
	if Rates().Version() != "vat-rates-2026.12.3" {
		t.Errorf("Version() = %q", Rates().Version())
	}
	for _, alias := range []struct{ in, same string }{{"EL", "GR"}, {"UK", "GB"}, {"XI", "GB"}} {
		a, _, err1 := Rates().Standard(alias.in, sep1)
		b, _, err2 := Rates().Standard(alias.same, sep1)
		if err1 != nil || err2 != nil || !a.Equal(b) {
			t.Errorf("Standard(%s) = %s %v, Standard(%s) = %s %v", alias.in, a, err1, alias.same, b, err2)
		}
	}
	for _, cc := range []string{"US", "CH", "", "de", "XX"} {
		if _, _, err := Rates().Standard(cc, sep1); !errors.Is(err, ErrCountryNotCovered) {
			t.Errorf("Standard(%q): %v, want ErrCountryNotCovered", cc, err)
		}
	}
	for _, d := range []time.Time{to.Add(24 * time.Hour), from.Add(-time.Nanosecond), {}} {
		if _, _, err := Rates().Standard("DE", d); !errors.Is(err, ErrDateNotCovered) {
			t.Errorf("Standard(DE, %s): %v, want ErrDateNotCovered", d, err)
		}
	}
	// The last covered day is covered, to the last nanosecond.
	if _, _, err := Rates().Standard("DE", to.Add(24*time.Hour-time.Nanosecond)); err != nil {
		t.Errorf("last covered instant: %v", err)
	}
	// Reduced returns a copy.
	r, _, _ := Rates().Reduced("FR", sep1)
	r[0] = decimal.NewFromInt(99)
	if again, _, _ := Rates().Reduced("FR", sep1); again[0].String() == "99" {
		t.Error("Reduced exposes the table's slice")
	}
	if _, src, _ := Rates().Standard("BE", sep1); src.EffectiveFrom != "" || !strings.Contains(src.Source, "ibericode") {
		t.Errorf("BE source %+v: want no start date (before the history) and the ibericode citation", src)
	}
}

// TestRateTableInvariants checks the generated rows: every series sorted,
// every change a real change, sourced rows with a rate, and every country
// covered for every series a determination needs.
func TestRateTableInvariants(t *testing.T) {
	for k, rows := range rates.series {
		for i, r := range rows {
			if r.source == "" {
				t.Errorf("%v from %d: no source", k, r.from)
			}
			if r.status == statusSource && len(r.percents) == 0 {
				t.Errorf("%v from %d: sourced row without a rate", k, r.from)
			}
			if !slices.Contains([]string{statusSource, statusUnverified, statusItemDependent}, r.status) {
				t.Errorf("%v: status %q", k, r.status)
			}
			if i > 0 {
				if rows[i-1].from >= r.from {
					t.Errorf("%v: rows out of order", k)
				}
				if rows[i-1].status == r.status && slices.EqualFunc(rows[i-1].percents, r.percents, decimal.Decimal.Equal) {
					t.Errorf("%v from %d: no change from the previous row", k, r.from)
				}
			}
			if r.from > rateTableTo {
				t.Errorf("%v: row from %d after the coverage", k, r.from)
			}
		}
		if len(rows) > 1 && rows[1].from <= rateTableFrom {
			t.Errorf("%v: more than one row in force at the coverage start", k)
		}
	}
}

// TestRateTableIsFresh regenerates the table in memory from vat/ratedata/ibericode and
// vat/ratedata and fails when rates_table.go is stale: run go generate.
func TestRateTableIsFresh(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("ratedata", "ibericode", "vat-rates.json"))
	if err != nil {
		t.Fatal(err)
	}
	corr, err := os.ReadFile(filepath.Join("ratedata", "corrections.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := ratesgen.Generate(
		ratesgen.Input{Name: ratesgen.BaseName, Data: base},
		ratesgen.Input{Name: ratesgen.CorrectionsName, Data: corr},
	)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("rates_table.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, committed) {
		t.Fatal("rates_table.go is stale: run go generate ./vat")
	}
	if !strings.Contains(string(committed), rateTableBaseSHA256) || rateTableBaseSHA256 != "c94465faf70295eb3033d98c5f6e13d0e9b641acf67fece57ea9108a0f4a8ac1" {
		t.Errorf("the generated file does not record the ibericode snapshot named in its SOURCE.md")
	}
}
