package fiscaltest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/vat"
)

// RateTableFile is the embedded VAT rate table written as a table file
// (vat.RateTable.File) after edit changed its generic form (version,
// coverage, rows): TEST DATA, whose added rows cite made-up sources.
func RateTableFile(t testing.TB, edit func(doc map[string]any)) []byte {
	t.Helper()
	b, err := vat.Rates().File()
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	edit(d)
	if b, err = json.Marshal(d); err != nil {
		t.Fatal(err)
	}
	return b
}

// NextYearRates is the embedded VAT rate table carried one year past its
// coverage under version, with one made-up change: France's standard rate
// becomes 21.5 % on the first new day (firstNewDay). TEST DATA: the row
// cites a made-up source.
func NextYearRates(t testing.TB, version string) (tbl *vat.RateTable, firstNewDay time.Time) {
	t.Helper()
	_, to := vat.Rates().Coverage()
	first := to.AddDate(0, 0, 1)
	b := RateTableFile(t, func(d map[string]any) {
		d["version"] = version
		cov := d["coverage"].(map[string]any)
		cov["to"] = first.AddDate(1, 0, -1).Format(time.DateOnly)
		cov["why"] = "test fixture: one more year, one made-up change"
		d["rows"] = append(d["rows"].([]any), map[string]any{"country": "FR", "series": "standard", "from": first.Format(time.DateOnly),
			"percent": []string{"21.5"}, "status": "source", "source": "https://example.invalid/test-fixture (made up)"})
	})
	tbl, err := vat.ParseRateTable(b)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, first
}

// SyntheticUSD is the embedded ECB table with a SYNTHETIC USD rate (not
// ECB data) on each weekday of the first fortnight from day but 1 January;
// label names the feed in its provenance.
func SyntheticUSD(t testing.TB, day time.Time, label string) fx.Source {
	t.Helper()
	emb, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- SYNTHETIC test feed: not ECB data -->
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
<gesmes:subject>Reference rates</gesmes:subject><gesmes:Sender><gesmes:name>SYNTHETIC</gesmes:name></gesmes:Sender><Cube>
`)
	for d := day.AddDate(0, 0, 14); !d.Before(day); d = d.AddDate(0, 0, -1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday || d.Month() == time.January && d.Day() == 1 {
			continue
		}
		fmt.Fprintf(&b, "<Cube time='%s'><Cube currency='USD' rate='1.1%03d'/></Cube>\n", d.Format(time.DateOnly), d.Day())
	}
	b.WriteString("</Cube></gesmes:Envelope>\n")
	feed, err := fx.ParseXML(strings.NewReader(b.String()), "synthetic:"+label)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := emb.Merge(feed)
	if err != nil {
		t.Fatal(err)
	}
	return merged
}
