package fx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// histXML is the head of an eurofxref-hist.xml: two days, newest first,
// values as published by the ECB for 2020-01-27/28 (double quotes, as some
// copies of the file have; the daily feed uses single quotes).
const histXML = `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender>
		<gesmes:name>European Central Bank</gesmes:name>
	</gesmes:Sender>
	<Cube>
		<Cube time="2020-01-28">
			<Cube currency="USD" rate="1.1005"/>
			<Cube currency="JPY" rate="120.02"/>
			<Cube currency="GBP" rate="0.84603"/>
			<Cube currency="ISK" rate="137.2"/>
		</Cube>
		<Cube time="2020-01-27">
			<Cube currency="USD" rate="1.1025"/>
			<Cube currency="JPY" rate="120.11"/>
			<Cube currency="GBP" rate="0.84358"/>
			<Cube currency="ISK" rate="137.4"/>
		</Cube>
	</Cube>
</gesmes:Envelope>
`

// tableDump renders a table's content for comparisons.
func tableDump(t *Table) string {
	var b strings.Builder
	for _, f := range t.fixings() {
		b.WriteString(f.date)
		for _, r := range f.rates {
			fmt.Fprintf(&b, " %s=%s", r.quote, r.raw)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "coverage %v\n", t.Coverage())
	return b.String()
}

func TestParseFormats(t *testing.T) {
	const want = "2020-01-27 GBP=0.84358 ISK=137.4 JPY=120.11 USD=1.1025\n" +
		"2020-01-28 GBP=0.84603 ISK=137.2 JPY=120.02 USD=1.1005\n" +
		"coverage [{2020-01-27 2020-01-28}]\n"
	for _, tc := range []struct {
		name  string
		xml   bool
		input string
		want  string
	}{
		{"ecb hist xml", true, histXML, want},
		{"ecb hist csv", false, "Date,USD,JPY,GBP,ISK,\n" +
			"2020-01-28,1.1005,120.02,0.84603,137.2,\n" +
			"2020-01-27,1.1025,120.11,0.84358,137.4,\n", want},
		{"ecb csv with CRLF and BOM", false, "\ufeffDate,USD,JPY,GBP,ISK,\r\n" +
			"2020-01-28,1.1005,120.02,0.84603,137.2,\r\n" +
			"2020-01-27,1.1025,120.11,0.84358,137.4,\r\n", want},
		{"ecb one-day csv", false, "Date, USD, JPY, GBP, ISK, \n28 January 2020, 1.1005, 120.02, 0.84603, 137.2, \n",
			"2020-01-28 GBP=0.84603 ISK=137.2 JPY=120.02 USD=1.1005\ncoverage [{2020-01-28 2020-01-28}]\n"},
		{"ecb csv with N/A", false, "Date,USD,RUB,\n2022-03-02,1.1119,N/A,\n2022-03-01,1.1139,N/A,\n2022-02-28,1.1199,98.7013,\n",
			"2022-02-28 RUB=98.7013 USD=1.1199\n2022-03-01 USD=1.1139\n2022-03-02 USD=1.1119\ncoverage [{2022-02-28 2022-03-02}]\n"},
		{"our csv", false, "date,usd_per_eur\n2020-01-27,1.1025\n2020-01-28,1.1005\n",
			"2020-01-27 USD=1.1025\n2020-01-28 USD=1.1005\ncoverage [{2020-01-27 2020-01-28}]\n"},
		{"our csv, blank lines and no final newline", false, "date,usd_per_eur\n\n2020-01-28,1.1005\n\n2020-01-27,1.1025",
			"2020-01-27 USD=1.1025\n2020-01-28 USD=1.1005\ncoverage [{2020-01-27 2020-01-28}]\n"},
		{"daily xml", true, dailyXML("2026-04-13", "USD", "1.1684"), "2026-04-13 USD=1.1684\ncoverage [{2026-04-13 2026-04-13}]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				tb  *Table
				err error
			)
			if tc.xml {
				tb, err = ParseXML(strings.NewReader(tc.input), "test:x")
			} else {
				tb, err = ParseCSV(strings.NewReader(tc.input), "test:x")
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tableDump(tb); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestParseCoverageSplitsAtMissingBusinessDay: a file that skips a TARGET
// business day is not trusted across the gap, but one that skips only
// closing days is.
func TestParseCoverageSplitsAtMissingBusinessDay(t *testing.T) {
	tb := csvTable(t, "test:x", "2026-04-02,1.1525", "2026-04-07,1.1557", "2026-04-09,1.1685")
	if cov := fmt.Sprint(tb.Coverage()); cov != "[{2026-04-02 2026-04-07} {2026-04-09 2026-04-09}]" {
		t.Errorf("Coverage = %s", cov)
	}
	// Before 2002 the calendar differed, so gaps there are the ECB's.
	old := csvTable(t, "test:x", "2001-12-28,0.8813", "2002-01-02,0.9038")
	if cov := fmt.Sprint(old.Coverage()); cov != "[{2001-12-28 2002-01-02}]" {
		t.Errorf("Coverage across 2001-12-31 = %s", cov)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		xml   bool
		input string
		line  int
		msg   string
	}{
		{"empty", false, "", 0, "empty input"},
		{"header only", false, "date,usd_per_eur\n", 1, "no rates"},
		{"unknown header", false, "day,rate\n2020-01-01,1\n", 1, "unrecognised header"},
		{"bad column", false, "Date,USD,usd,\n", 1, `"usd" is not a currency code`},
		{"column twice", false, "Date,USD,USD,\n", 1, "currency USD twice"},
		{"empty middle column", false, "Date,USD,,JPY,\n", 1, `"" is not a currency code`},
		{"field count", false, "date,usd_per_eur\n2020-01-27,1.1025\n2020-01-28,1.1005,x\n", 3, "3 fields, the header has 2"},
		{"bad date", false, "date,usd_per_eur\n2020-01-27,1.1025\n2020-02-30,1.1\n", 3, `bad date "2020-02-30"`},
		{"long date in our format", false, "date,usd_per_eur\n28 January 2020,1.1005\n", 2, "bad date"},
		{"before the euro", false, "date,usd_per_eur\n1998-12-31,1.1\n", 2, "before the euro"},
		{"N/A in our format", false, "date,usd_per_eur\n2020-01-27,N/A\n", 2, `USD rate "N/A"`},
		{"negative", false, "date,usd_per_eur\n2020-01-27,-1.1\n", 2, "not a plain decimal"},
		{"zero", false, "date,usd_per_eur\n2020-01-27,0.000\n", 2, "not positive"},
		{"exponent", false, "date,usd_per_eur\n2020-01-27,1e0\n", 2, "not a plain decimal"},
		{"leading point", false, "date,usd_per_eur\n2020-01-27,.5\n", 2, "not a plain decimal"},
		{"too long", false, "date,usd_per_eur\n2020-01-27,1." + strings.Repeat("1", 40) + "\n", 2, "not a rate"},
		{"duplicate date", false, "date,usd_per_eur\n2020-01-27,1.1025\n2020-01-28,1.1005\n2020-01-27,1.1025\n", 4, "duplicate reference date 2020-01-27 (also on line 2)"},
		{"ecb bad value", false, "Date,USD,JPY,\n2020-01-28,1.1005,12O.02,\n", 2, `JPY rate "12O.02"`},
		{"ecb row without any rate", false, "Date,USD,JPY,\n2020-01-28,1.1005,120.02,\n2020-01-27,N/A, N/A ,\n", 3, "no rates for 2020-01-27"},
		{"line too long", false, "date,usd_per_eur\n" + strings.Repeat("x", maxLine+1) + "\n", 2, "line longer than"},

		{"xml empty", true, "", 0, "empty input"},
		{"xml syntax", true, "<gesmes:Envelope xmlns:gesmes='" + nsGesmes + "'>\n<Cube>\n</gesmes:Envelope>", 3, "syntax error"},
		{"xml wrong root", true, "<Cube xmlns='" + nsEurofxref + "'><Cube time='2020-01-28'/></Cube>", 1, "want the ECB's gesmes:Envelope"},
		{"xml no rates", true, "<gesmes:Envelope xmlns:gesmes='" + nsGesmes + "'/>", 1, "no rates"},
		{"xml bad time", true, strings.Replace(histXML, `time="2020-01-27"`, `time="2020-1-27"`, 1), 14, `bad Cube time "2020-1-27"`},
		{"xml bad rate", true, strings.Replace(histXML, `rate="120.11"`, `rate="1,2"`, 1), 16, `JPY rate "1,2"`},
		{"xml bad currency", true, strings.Replace(histXML, `currency="GBP" rate="0.84358"`, `currency="gbp" rate="0.84358"`, 1), 17, `bad currency "gbp"`},
		{"xml currency twice", true, strings.Replace(histXML, `currency="GBP" rate="0.84358"`, `currency="JPY" rate="0.84358"`, 1), 17, "currency JPY twice on 2020-01-27"},
		{"xml duplicate day", true, strings.Replace(histXML, `time="2020-01-27"`, `time="2020-01-28"`, 1), 14, "duplicate reference date 2020-01-28 (also on line 8)"},
		{"xml foreign element in Cube", true, strings.Replace(histXML, `<Cube currency="ISK" rate="137.4"/>`, `<Cube currency="ISK" rate="137.4"><x/></Cube>`, 1), 18, "inside a rate"},
		{"xml text in Cube", true, strings.Replace(histXML, `<Cube currency="ISK" rate="137.4"/>`, `<Cube currency="ISK" rate="137.4">137.4</Cube>`, 1), 18, "unexpected text"},
		{"xml wrong namespace", true, strings.Replace(histXML, `xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"`, `xmlns="urn:x"`, 1), 0, "no rates"},
		{"xml day without any rate", true, histXML[:strings.Index(histXML, `<Cube time="2020-01-27">`)] + `<Cube time="2020-01-27"></Cube></Cube></gesmes:Envelope>`, 14, "no rates for 2020-01-27"},
		{"xml two roots", true, histXML + "<gesmes:Envelope xmlns:gesmes='" + nsGesmes + "'/>", 22, "more than one root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.xml {
				_, err = ParseXML(strings.NewReader(tc.input), "test:x")
			} else {
				_, err = ParseCSV(strings.NewReader(tc.input), "test:x")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if (tc.line != 0 || tc.msg != "no rates") && pe.Line != tc.line {
				t.Errorf("Line = %d, want %d (%v)", pe.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), fmt.Sprintf("line %d: ", tc.line)) {
				t.Errorf("error %q does not name line %d", err, tc.line)
			}
		})
	}
}

func TestParseNeedsSnapshot(t *testing.T) {
	if _, err := ParseCSV(strings.NewReader("date,usd_per_eur\n2020-01-27,1.1\n"), ""); err == nil {
		t.Error("ParseCSV with an empty snapshot succeeded")
	}
	if _, err := ParseXML(strings.NewReader(histXML), ""); err == nil {
		t.Error("ParseXML with an empty snapshot succeeded")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseReaderError(t *testing.T) {
	_, err := ParseCSV(failingReader{}, "test:x")
	var pe *ParseError
	if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v: a read error is not a parse error", err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"rates.xml", "\n  " + histXML, "2020-01-28"},
		{"rates.csv", "date,usd_per_eur\n2020-01-27,1.1025\n", "2020-01-27"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(tc.content))
		r, err := tb.Lookup("USD", noon(t, tc.want), ForDayOrPrevious)
		if err != nil {
			t.Fatal(err)
		}
		if want := "file:sha256:" + hex.EncodeToString(sum[:]); r.Snapshot != want {
			t.Errorf("%s: Snapshot = %s, want %s", tc.name, r.Snapshot, want)
		}
	}
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("date,usd_per_eur\n2020-01-27,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(bad)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Name != bad || !strings.Contains(err.Error(), bad+": line 2:") {
		t.Errorf("err = %v, want a ParseError naming %s and line 2", err, bad)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestEmbeddedMatchesData: the embedded series must be the data file, byte
// for byte, with the hash and range recorded by the generator.
func TestEmbeddedMatchesData(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("data", "ecb-eurusd.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, []byte(embeddedCSV)) {
		t.Fatal("the embedded series differs from fx/data/ecb-eurusd.csv")
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != embeddedSHA256 || EmbeddedSnapshot != "embedded:sha256:"+got {
		t.Fatalf("sha256 %s, recorded %s / %s: run go generate ./fx", got, embeddedSHA256, EmbeddedSnapshot)
	}
	tb := embedded(t)
	if first, last := tb.Range(); first != embeddedFirst || last != embeddedLast || tb.Len() != embeddedRows {
		t.Errorf("Range %s..%s, %d rows; recorded %s..%s, %d", first, last, tb.Len(), embeddedFirst, embeddedLast, embeddedRows)
	}
	if cov := tb.Coverage(); len(cov) != 1 || cov[0] != (Span{embeddedFirst, embeddedLast}) {
		t.Errorf("Coverage = %v, want one span", cov)
	}
	if q := tb.Quotes(); !slices.Equal(q, []string{"USD"}) {
		t.Errorf("Quotes = %v", q)
	}
}

// checkInvariants verifies what every parsed or merged table promises.
func checkInvariants(t *testing.T, tb *Table) {
	t.Helper()
	if len(tb.days) == 0 {
		t.Fatal("empty table")
	}
	fixings := tb.fixings()
	for i, f := range fixings {
		if i > 0 && f.day <= fixings[i-1].day {
			t.Fatalf("fixings out of order at %s", f.date)
		}
		if f.date != f.day.String() {
			t.Fatalf("date %q != day %s", f.date, f.day)
		}
		if _, ok := tb.covering(f.day); !ok {
			t.Fatalf("%s not covered", f.date)
		}
		for j, r := range f.rates {
			if j > 0 && r.quote <= f.rates[j-1].quote {
				t.Fatalf("%s: rates out of order", f.date)
			}
			if !r.value.IsPositive() || r.snapshot == "" {
				t.Fatalf("%s %s: value %s snapshot %q", f.date, r.quote, r.value, r.snapshot)
			}
			if _, err := parseRateValue(r.raw); err != nil {
				t.Fatalf("%s %s: raw %q: %v", f.date, r.quote, r.raw, err)
			}
		}
	}
	for i, s := range tb.coverage {
		if s.first > s.last || (i > 0 && s.first <= tb.coverage[i-1].last+1) {
			t.Fatalf("coverage not normalised: %v", tb.Coverage())
		}
	}
}

func FuzzParseCSV(f *testing.F) {
	f.Add("date,usd_per_eur\n2020-01-27,1.1025\n2020-01-28,1.1005\n")
	f.Add("Date,USD,JPY,GBP,ISK,\n2020-01-28,1.1005,120.02,0.84603,137.2,\n2020-01-27,1.1025,N/A,0.84358,137.4,\n")
	f.Add("Date, USD, JPY, \n28 January 2020, 1.1005, 120.02, \n")
	f.Add("\ufeffdate,usd_per_eur\r\n2026-04-10,1.1711\r\n2026-04-13,1.1684\r\n")
	f.Add(embeddedCSV[:2000])
	f.Fuzz(func(t *testing.T, in string) {
		tb, err := ParseCSV(strings.NewReader(in), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			return
		}
		checkInvariants(t, tb)
		again, err := ParseCSV(strings.NewReader(in), "fuzz")
		if err != nil || tableDump(again) != tableDump(tb) {
			t.Fatal("parsing is not deterministic")
		}
		// Merging a table with itself changes nothing.
		m, err := tb.Merge(again)
		if err != nil || tableDump(m) != tableDump(tb) {
			t.Fatalf("self-merge: %v", err)
		}
	})
}

func FuzzParseXML(f *testing.F) {
	f.Add(histXML)
	f.Add(dailyXML("2026-04-13", "USD", "1.1684", "JPY", "186.93"))
	f.Add("<gesmes:Envelope xmlns:gesmes='" + nsGesmes + "'><Cube xmlns='" + nsEurofxref + "'></Cube></gesmes:Envelope>")
	f.Fuzz(func(t *testing.T, in string) {
		tb, err := ParseXML(strings.NewReader(in), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %v", err)
			}
			return
		}
		checkInvariants(t, tb)
		m, err := tb.Merge(tb)
		if err != nil || tableDump(m) != tableDump(tb) {
			t.Fatalf("self-merge: %v", err)
		}
	})
}
