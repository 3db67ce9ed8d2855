package fx

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// csvRaw reads the raw USD rate of date straight from the embedded file,
// independently of Table.
func csvRaw(t *testing.T, date string) string {
	t.Helper()
	for line := range strings.SplitSeq(embeddedCSV, "\n") {
		if d, raw, ok := strings.Cut(line, ","); ok && d == date {
			return raw
		}
	}
	t.Fatalf("%s not in the embedded data", date)
	return ""
}

// TestLatestPublishedAtProvenance: issue 16. A reference date counts from
// 16:00 Frankfurt time (ECB: "usually updated at around 16:00 CET"): at 08:00
// Frankfurt time the previous publication applies, at 17:00 the day's, in
// winter (CET, UTC+1) and summer (CEST, UTC+2). The record names the
// publication used and the instant it counts from.
func TestLatestPublishedAtProvenance(t *testing.T) {
	tb := embedded(t)
	for _, tc := range []struct {
		name, at, rateDate, from string
	}{
		{"winter 08:00 CET", "2026-01-14T08:00:00+01:00", "2026-01-13", "2026-01-13T15:00:00Z"},
		{"winter 17:00 CET", "2026-01-14T17:00:00+01:00", "2026-01-14", "2026-01-14T15:00:00Z"},
		{"summer 08:00 CEST", "2025-07-16T08:00:00+02:00", "2025-07-15", "2025-07-15T14:00:00Z"},
		{"summer 17:00 CEST", "2025-07-16T17:00:00+02:00", "2025-07-16", "2025-07-16T14:00:00Z"},
		{"08:00 UTC on a Monday", "2026-04-13T08:00:00Z", "2026-04-10", "2026-04-10T14:00:00Z"},
		{"15:59:59 CEST", "2026-04-13T13:59:59Z", "2026-04-10", "2026-04-10T14:00:00Z"},
		{"16:00:00 CEST", "2026-04-13T14:00:00Z", "2026-04-13", "2026-04-13T14:00:00Z"},
	} {
		at := instant(t, tc.at)
		r, err := tb.Lookup("USD", at, LatestPublishedAt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.RateDate != tc.rateDate || r.Raw != csvRaw(t, tc.rateDate) || r.PublishedFrom != tc.from ||
			r.Policy != LatestPublishedAt || r.Requested != at.UTC().Format(time.RFC3339Nano) {
			t.Errorf("%s: %+v, want %s (%s) from %s", tc.name, r, tc.rateDate, csvRaw(t, tc.rateDate), tc.from)
		}
		// The record proves the publication was out at the event.
		c := ConvertUSDC(dec("100"), r)
		if err := c.Check(); err != nil {
			t.Errorf("%s: Check: %v", tc.name, err)
		}
		b, _ := json.Marshal(r)
		if !strings.Contains(string(b), `"publishedFrom":"`+tc.from+`"`) {
			t.Errorf("%s: JSON %s lacks publishedFrom", tc.name, b)
		}
		// The "rate of the day" policy takes the day's rate at 08:00 and
		// records no publishedFrom.
		d, err := tb.Lookup("USD", at, ForDayOrPrevious)
		if err != nil || d.PublishedFrom != "" {
			t.Errorf("%s: ForDayOrPrevious %+v, %v", tc.name, d, err)
		}
	}
	monday, _ := tb.Lookup("USD", instant(t, "2026-04-13T08:00:00Z"), ForDayOrPrevious)
	if monday.RateDate != "2026-04-13" {
		t.Errorf("rate of the day at 08:00 UTC: %s", monday.RateDate)
	}
}

func TestPublicationInstant(t *testing.T) {
	for date, want := range map[string]string{
		"2026-01-14": "2026-01-14T15:00:00Z", // CET
		"2026-07-16": "2026-07-16T14:00:00Z", // CEST
		"2026-03-27": "2026-03-27T15:00:00Z", // Friday before the switch to CEST
		"2026-03-29": "2026-03-29T14:00:00Z", // the switch day itself (a Sunday)
		"2026-10-25": "2026-10-25T15:00:00Z", // the switch back
		"2026-10-23": "2026-10-23T14:00:00Z",
	} {
		got, err := PublicationInstant(date)
		if err != nil || got.Format(time.RFC3339) != want {
			t.Errorf("PublicationInstant(%s) = %s, %v, want %s", date, got, err, want)
		}
		d, _ := parseISODate(date)
		if lastVisibleDay(got) != d || lastVisibleDay(got.Add(-time.Nanosecond)) != d-1 {
			t.Errorf("%s: lastVisibleDay disagrees around %s", date, got)
		}
	}
	if _, err := PublicationInstant("2026-02-30"); !errors.Is(err, ErrDate) {
		t.Errorf("bad date: %v", err)
	}
	// Every day from 1999 to 2040 round-trips with lastVisibleDay.
	for d := euroStart; d < euroStart+15000; d++ {
		p := publicationInstant(d)
		if lastVisibleDay(p) != d || lastVisibleDay(p.Add(-time.Second)) != d-1 {
			t.Fatalf("%s: publication instant %s", d, p)
		}
	}
}

func TestCheckPublishedFrom(t *testing.T) {
	r, err := embedded(t).Lookup("USD", instant(t, "2026-04-13T17:00:00Z"), LatestPublishedAt)
	if err != nil {
		t.Fatal(err)
	}
	good := ConvertUSDC(dec("1"), r)
	for name, mutate := range map[string]func(*Conversion){
		"earlier instant":     func(c *Conversion) { c.USDPerEUR.PublishedFrom = "2026-04-13T13:00:00Z" },
		"missing":             func(c *Conversion) { c.USDPerEUR.PublishedFrom = "" },
		"event before it":     func(c *Conversion) { c.USDPerEUR.Requested = "2026-04-13T13:59:59Z" },
		"requested not time":  func(c *Conversion) { c.USDPerEUR.Requested = "2026-04-13" },
		"other policy has it": func(c *Conversion) { c.USDPerEUR.Policy = ForDayOrPrevious },
	} {
		c := good
		mutate(&c)
		if err := c.Check(); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: Check = %v, want ErrInconsistent", name, err)
		}
	}
}
