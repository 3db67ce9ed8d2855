package fiscaltest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
)

// SYNTHETIC test data. Nothing below is ECB data: the rates of the
// currencies other than USD are invented by SyntheticRate so that tests can
// state VAT in national currencies (Art. 230) offline; the repository holds
// the ECB's USD series only (fx/data). Each synthetic value ends in digits
// the formula makes, so none can be mistaken for a publication.

// syntheticBase is the starting point of each synthetic series.
var syntheticBase = map[string]string{
	"BGN": "1.9558", "CZK": "24.3", "DKK": "7.46", "GBP": "0.86",
	"HUF": "390.5", "PLN": "4.26", "RON": "5.08", "SEK": "10.9",
}

// SyntheticCurrencies are the currencies SyntheticFX adds.
var SyntheticCurrencies = []string{"BGN", "CZK", "DKK", "GBP", "HUF", "PLN", "RON", "SEK"}

// SyntheticFrom and SyntheticTo bound the days SyntheticFX publishes: the
// embedded series' publication days in that span (it ends on 2026-04-13).
const (
	SyntheticFrom = "2025-12-01"
	SyntheticTo   = "2026-04-13"
)

// SyntheticRate is the SYNTHETIC rate of cur (units per EUR) on date
// (YYYY-MM-DD): the base plus a few ten-thousandths that depend on the
// day.
func SyntheticRate(cur, date string) decimal.Decimal {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		panic(err)
	}
	n := d.Unix() / 86400 % 97
	return decimal.RequireFromString(syntheticBase[cur]).Add(decimal.New(n, -4))
}

var synthetic struct {
	once sync.Once
	t    *fx.Table
	err  error
}

// SyntheticFX is the embedded ECB table (USD, real) merged with a
// SYNTHETIC feed of the other currencies for every day the embedded table
// has a USD publication from SyntheticFrom to SyntheticTo (the lev until
// 31 December 2025: Bulgaria adopted the euro on 1 January 2026).
// Engines in tests take it as Config.FX to state VAT in CZK, DKK, GBP,
// HUF, PLN, RON, SEK or BGN.
func SyntheticFX(t testing.TB) fx.Source {
	t.Helper()
	synthetic.once.Do(func() { synthetic.t, synthetic.err = buildSyntheticFX() })
	if synthetic.err != nil {
		t.Fatal(synthetic.err)
	}
	return synthetic.t
}

func buildSyntheticFX() (*fx.Table, error) {
	emb, err := fx.Embedded()
	if err != nil {
		return nil, err
	}
	from, _ := time.Parse(time.DateOnly, SyntheticFrom)
	to, _ := time.Parse(time.DateOnly, SyntheticTo)
	var days []string
	for d := to; !d.Before(from); d = d.AddDate(0, 0, -1) { // newest first, as the ECB writes
		day := d.Format(time.DateOnly)
		r, err := emb.Lookup("USD", d.Add(12*time.Hour), fx.ForDayOrPrevious)
		if err == nil && r.RateDate == day {
			days = append(days, day)
		}
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!-- SYNTHETIC test feed (internal/fiscaltest): not ECB data -->
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>SYNTHETIC</gesmes:name></gesmes:Sender>
	<Cube>
`)
	for _, day := range days {
		fmt.Fprintf(&b, "\t\t<Cube time='%s'>\n", day)
		for _, cur := range SyntheticCurrencies {
			if cur == "BGN" && day >= "2026-01-01" {
				continue
			}
			fmt.Fprintf(&b, "\t\t\t<Cube currency='%s' rate='%s'/>\n", cur, SyntheticRate(cur, day).String())
		}
		b.WriteString("\t\t</Cube>\n")
	}
	b.WriteString("\t</Cube>\n</gesmes:Envelope>\n")
	feed, err := fx.ParseXML(strings.NewReader(b.String()), "synthetic:fiscaltest")
	if err != nil {
		return nil, err
	}
	return emb.Merge(feed)
}
