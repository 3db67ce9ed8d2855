package ratesgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fixture builds a minimal base file (every required country with one
// period) and a corrections file with e-book and e-publication rows for
// each, then lets a test change them.
type fixture struct {
	base map[string]any
	corr map[string]any
}

func newFixture() *fixture {
	items := map[string]any{}
	var rows []any
	for _, cc := range requiredCountries {
		items[cc] = []any{
			map[string]any{"effective_from": "0000-01-01", "rates": map[string]any{"standard": json.Number("20"), "reduced": json.Number("10")}},
		}
		for _, s := range []string{SeriesEbook, SeriesEpublication} {
			rows = append(rows, map[string]any{"country": cc, "series": s, "from": "0000-01-01", "percent": []string{"5"}, "status": "source", "source": "https://example.org/test"})
		}
	}
	return &fixture{
		base: map[string]any{"details": "x", "version": 4, "items": items},
		corr: map[string]any{
			"version":    "test-1",
			"coverage":   map[string]any{"from": "2024-01-01", "to": "2026-12-31", "why": "test"},
			"base":       map[string]any{"repository": "https://example.org/r", "path": "vat-rates.json", "commit": "abc"},
			"exceptions": map[string]any{},
			"rows":       rows,
		},
	}
}

func (f *fixture) period(cc string, p map[string]any) {
	f.base["items"].(map[string]any)[cc] = append(f.base["items"].(map[string]any)[cc].([]any), p)
}

func (f *fixture) row(r map[string]any) { f.corr["rows"] = append(f.corr["rows"].([]any), r) }

func (f *fixture) build(t *testing.T) (*Table, error) {
	t.Helper()
	base, err := json.Marshal(f.base)
	if err != nil {
		t.Fatal(err)
	}
	f.corr["base"].(map[string]any)["sha256"] = sha256Hex(base)
	corr, err := json.Marshal(f.corr)
	if err != nil {
		t.Fatal(err)
	}
	return Build(Input{Name: "base.json", Data: base}, Input{Name: "corr.json", Data: corr})
}

func rowsOf(t *Table, cc, territory, series string) string {
	var s []string
	for _, r := range t.Rows {
		if r.Country == cc && r.Territory == territory && r.Series == series {
			var ps []string
			for _, p := range r.Percents {
				ps = append(ps, p.String())
			}
			s = append(s, fmt.Sprintf("%s:%s:%s", formatDate(r.From), r.Status, strings.Join(ps, "/")))
		}
	}
	return strings.Join(s, " ")
}

func TestBuildMergesTrimsAndSorts(t *testing.T) {
	f := newFixture()
	// Out of order periods, one before the coverage, one no-op, one after it.
	f.period("FI", map[string]any{"effective_from": "2027-01-01", "rates": map[string]any{"standard": json.Number("26")}})
	f.period("FI", map[string]any{"effective_from": "2024-09-01", "rates": map[string]any{"standard": json.Number("25.5"), "reduced1": json.Number("14"), "reduced2": json.Number("10"), "parking": json.Number("14")}})
	f.period("FI", map[string]any{"effective_from": "2023-01-01", "rates": map[string]any{"standard": json.Number("24"), "reduced": json.Number("10")}})
	f.period("FI", map[string]any{"effective_from": "2025-01-01", "rates": map[string]any{"standard": json.Number("25.5"), "reduced": json.Number("10")}})
	// A correction replacing a base period and one adding a period.
	f.row(map[string]any{"country": "FI", "series": "reduced", "from": "2025-01-01", "percent": []string{"13.5", "10"}, "status": "source", "source": "https://example.org/s"})
	f.row(map[string]any{"country": "FI", "series": "ebook", "from": "2026-01-01", "percent": []string{"13.5"}, "status": "unverified", "source": "https://example.org/s", "note": "why"})
	tab, err := f.build(t)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowsOf(tab, "FI", "", "standard"), "2023-01-01:source:24 2024-09-01:source:25.5"; got != want {
		t.Errorf("standard: %s, want %s", got, want)
	}
	if got, want := rowsOf(tab, "FI", "", "reduced"), "0000-01-01:source:10 2024-09-01:source:10/14 2025-01-01:source:10/13.5"; got != want {
		t.Errorf("reduced: %s, want %s", got, want)
	}
	if got, want := rowsOf(tab, "FI", "", "ebook"), "0000-01-01:source:5 2026-01-01:unverified:13.5"; got != want {
		t.Errorf("ebook: %s, want %s", got, want)
	}
	src1, err := Render(tab)
	if err != nil {
		t.Fatal(err)
	}
	tab2, _ := f.build(t)
	src2, _ := Render(tab2)
	if string(src1) != string(src2) {
		t.Error("rendering is not deterministic")
	}
	if !strings.Contains(string(src1), "decimal.New(255, -1)") || !strings.Contains(string(src1), `"base.json"`) {
		t.Errorf("rendered source lacks the expected literals:\n%.600s", src1)
	}
}

// TestBuildConditions: a conditional rate keeps its condition, a period
// that only adds a condition is a change, and the rendered table lists the
// definitions sorted by code.
func TestBuildConditions(t *testing.T) {
	f := newFixture()
	f.corr["conditions"] = map[string]any{
		"z_last":   map[string]any{"description": "last", "source": "https://example.org/z"},
		"fr_press": map[string]any{"description": "recognised press", "source": "https://example.org/c"},
	}
	f.row(map[string]any{"country": "FR", "series": "epublication", "from": "2025-01-01", "percent": []string{"5"}, "status": "source", "source": "https://example.org/s", "condition": "fr_press"})
	tab, err := f.build(t)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tab.Rows {
		if r.Country == "FR" && r.Series == SeriesEpublication {
			got = append(got, formatDate(r.From)+":"+r.Condition)
		}
	}
	if strings.Join(got, " ") != "0000-01-01: 2025-01-01:fr_press" {
		t.Errorf("FR epublication rows %v: the same rate with a condition is a new period", got)
	}
	if len(tab.Conditions) != 2 || tab.Conditions[0].Code != "fr_press" || tab.Conditions[1].Code != "z_last" {
		t.Errorf("conditions %+v, want fr_press then z_last", tab.Conditions)
	}
	src, err := Render(tab)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `condition: "fr_press"`) || !strings.Contains(string(src), `{code: "fr_press", description: "recognised press", source: "https://example.org/c"}`) {
		t.Errorf("rendered table lacks the condition:\n%s", src)
	}
}

func TestCheckCitation(t *testing.T) {
	for _, c := range []struct {
		s       string
		needURL bool
		ok      bool
	}{
		{"https://www.boe.es/buscar/act.php?id=BOE-A-1992-28740 (article 91)", true, true},
		{"Ley 37/1992 article 91", true, false},
		{"Ley 37/1992 article 91", false, true},
		{"https://example.org ; shared/research/vat.md section 2", true, false},
		{"6 % marked [verify] in the research", false, false},
		{"", false, true},
	} {
		if err := CheckCitation(c.s, c.needURL); (err == nil) != c.ok {
			t.Errorf("CheckCitation(%q, %v) = %v, want ok=%v", c.s, c.needURL, err, c.ok)
		}
	}
}

func TestBuildTerritories(t *testing.T) {
	f := newFixture()
	f.period("ES", map[string]any{"effective_from": "2020-01-01", "rates": map[string]any{"standard": json.Number("21")},
		"exceptions": []any{map[string]any{"name": "Canary Islands", "postcode": "35", "standard": json.Number("0")}}})
	f.period("PT", map[string]any{"effective_from": "2020-01-01", "rates": map[string]any{"standard": json.Number("23")},
		"exceptions": []any{map[string]any{"name": "Azores", "postcode": "9", "standard": json.Number("18")}}})
	f.corr["exceptions"] = map[string]any{"Canary Islands": "", "Azores": "Azores"}
	f.row(map[string]any{"country": "PT", "territory": "Azores", "series": "standard", "from": "2021-07-01", "percent": []string{"16"}, "status": "source", "source": "https://example.org/s"})
	tab, err := f.build(t)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(tab, "PT", "Azores", "standard"); got != "2021-07-01:source:16" {
		t.Errorf("Azores: %s", got)
	}
	if got := rowsOf(tab, "ES", "Canary Islands", "standard"); got != "" {
		t.Errorf("an outside-EU exception became a rate: %s", got)
	}
}

func TestBuildRejects(t *testing.T) {
	cases := []struct {
		name   string
		change func(*fixture)
		want   string
	}{
		{"unknown exception", func(f *fixture) {
			f.period("IT", map[string]any{"effective_from": "2020-01-01", "rates": map[string]any{"standard": json.Number("22")},
				"exceptions": []any{map[string]any{"name": "Atlantis", "standard": json.Number("0")}}})
		}, `exception "Atlantis"`},
		{"zero-rate territory mapped as inside", func(f *fixture) {
			f.corr["exceptions"] = map[string]any{"Heligoland": "Heligoland"}
			f.period("DE", map[string]any{"effective_from": "2020-01-01", "rates": map[string]any{"standard": json.Number("19")},
				"exceptions": []any{map[string]any{"name": "Heligoland", "standard": json.Number("0")}}})
		}, "outside EU VAT"},
		{"unknown rate key", func(f *fixture) {
			f.period("SE", map[string]any{"effective_from": "2020-01-01", "rates": map[string]any{"standard": json.Number("25"), "luxury": json.Number("30")}})
		}, `unknown rate key "luxury"`},
		{"country outside the table", func(f *fixture) {
			f.base["items"].(map[string]any)["CH"] = []any{map[string]any{"effective_from": "0000-01-01", "rates": map[string]any{"standard": json.Number("8.1")}}}
		}, `"CH"`},
		{"missing e-book row", func(f *fixture) {
			var rows []any
			for _, r := range f.corr["rows"].([]any) {
				m := r.(map[string]any)
				if !(m["country"] == "HU" && m["series"] == SeriesEbook) {
					rows = append(rows, r)
				}
			}
			f.corr["rows"] = rows
		}, "HU: no ebook rate"},
		{"unverified without a note", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "unverified", "source": "https://example.org/s"})
		}, "needs a note"},
		{"row without a source", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "source"})
		}, "a source is required"},
		{"duplicate correction", func(f *fixture) {
			f.row(map[string]any{"country": "AT", "series": "ebook", "from": "0000-01-01", "percent": []string{"10"}, "status": "source", "source": "https://example.org/s"})
		}, "duplicate row"},
		{"percent out of range", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"101"}, "status": "source", "source": "https://example.org/s"})
		}, "outside 0..100"},
		{"unknown status", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "maybe", "source": "https://example.org/s"})
		}, `unknown status "maybe"`},
		{"sourced streaming rate", func(f *fixture) {
			f.row(map[string]any{"country": "FI", "series": "streaming", "from": "2025-01-01", "percent": []string{"10"}, "status": "source", "source": "https://example.org/s"})
		}, "streaming"},
		{"unknown field", func(f *fixture) { f.corr["surprise"] = true }, "unknown field"},
		{"source beside the repository", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "source", "source": "shared/research/vat.md section 2 (BG e-books)"})
		}, "no public citation"},
		{"source without an address", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "source", "source": "the Bulgarian VAT Act"})
		}, "no public https address"},
		{"note citing the research", func(f *fixture) {
			f.row(map[string]any{"country": "BG", "series": "ebook", "from": "2025-01-01", "percent": []string{"9"}, "status": "unverified", "source": "https://example.org/s", "note": "9 % marked [verify] in the research"})
		}, "no public citation"},
		{"coverage text citing the research", func(f *fixture) {
			f.corr["coverage"].(map[string]any)["why"] = "checked in shared/research/vat.md"
		}, "coverage.why"},
		{"undefined condition", func(f *fixture) {
			f.row(map[string]any{"country": "FR", "series": "epublication", "from": "2025-01-01", "percent": []string{"2.1"}, "status": "source", "source": "https://example.org/s", "condition": "fr_press"})
		}, `condition "fr_press" is not defined`},
		{"condition on an unverified rate", func(f *fixture) {
			f.corr["conditions"] = map[string]any{"fr_press": map[string]any{"description": "d", "source": "https://example.org/c"}}
			f.row(map[string]any{"country": "FR", "series": "epublication", "from": "2025-01-01", "percent": []string{"2.1"}, "status": "unverified", "note": "n", "source": "https://example.org/s", "condition": "fr_press"})
		}, "a condition belongs to a sourced"},
		{"condition without a citation", func(f *fixture) {
			f.corr["conditions"] = map[string]any{"fr_press": map[string]any{"description": "d", "source": "CGI"}}
		}, `condition "fr_press" source`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture()
			c.change(f)
			_, err := f.build(t)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestBuildChecksBaseChecksum(t *testing.T) {
	f := newFixture()
	base, _ := json.Marshal(f.base)
	f.corr["base"].(map[string]any)["sha256"] = strings.Repeat("0", 64)
	corr, _ := json.Marshal(f.corr)
	_, err := Build(Input{Name: "base.json", Data: base}, Input{Name: "corr.json", Data: corr})
	if err == nil || !strings.Contains(err.Error(), "another snapshot") {
		t.Errorf("error %v, want a checksum mismatch", err)
	}
}

// FuzzBuild: any corrections file, however broken, gives a table or an
// error, never a panic.
func FuzzBuild(f *testing.F) {
	fx := newFixture()
	base, _ := json.Marshal(fx.base)
	fx.corr["base"].(map[string]any)["sha256"] = sha256Hex(base)
	corr, _ := json.Marshal(fx.corr)
	f.Add(corr)
	f.Add([]byte(`{"version":"x","coverage":{"from":"2024-01-01","to":"2023-01-01"}}`))
	f.Add([]byte(`{"rows":[{"country":"FI","series":"reduced","from":"0000-01-01","percent":["1e999999999"]}]}`))
	f.Fuzz(func(t *testing.T, c []byte) {
		tab, err := Build(Input{Name: "base.json", Data: base}, Input{Name: "corr.json", Data: c})
		if err != nil {
			return
		}
		if _, err := Render(tab); err != nil {
			t.Fatalf("built table does not render: %v", err)
		}
	})
}
