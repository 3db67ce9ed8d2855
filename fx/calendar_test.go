package fx

import (
	"testing"
	"time"
	_ "time/tzdata" // the reference for the hand-computed CET/CEST offsets
)

func mustDay(t testing.TB, s string) day {
	t.Helper()
	d, ok := parseISODate(s)
	if !ok {
		t.Fatalf("bad date %q", s)
	}
	return d
}

// TestCivilMatchesTimePackage checks the day arithmetic against the time
// package over every day from 1600 to 2400 and sparse days far beyond.
func TestCivilMatchesTimePackage(t *testing.T) {
	check := func(d day) {
		tm := time.Unix(int64(d)*secondsPerDay, 0).UTC()
		y, m, dd := d.civil()
		if y != int64(tm.Year()) || m != int(tm.Month()) || dd != tm.Day() {
			t.Fatalf("day %d: civil = %d-%d-%d, time says %s", d, y, m, dd, tm.Format(time.DateOnly))
		}
		if back := dayFromCivil(y, m, dd); back != d {
			t.Fatalf("dayFromCivil(%d-%d-%d) = %d, want %d", y, m, dd, back, d)
		}
		if d.weekday() != tm.Weekday() {
			t.Fatalf("day %d: weekday %v, want %v", d, d.weekday(), tm.Weekday())
		}
		if got := utcDay(tm.Add(23*time.Hour + 59*time.Minute)); got != d {
			t.Fatalf("utcDay(%s 23:59) = %d, want %d", tm.Format(time.DateOnly), got, d)
		}
		if y >= 0 && y <= 9999 && d.String() != tm.Format(time.DateOnly) {
			t.Fatalf("String = %s, want %s", d, tm.Format(time.DateOnly))
		}
	}
	for d := dayFromCivil(1600, 1, 1); d <= dayFromCivil(2400, 12, 31); d++ {
		check(d)
	}
	for d := day(-3_000_000); d < 3_000_000; d += 997 {
		check(d)
	}
}

func TestUTCDayBeforeEpoch(t *testing.T) {
	at := time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC)
	if got := utcDay(at); got != -1 {
		t.Fatalf("utcDay(1969-12-31T23:59:59) = %d, want -1", got)
	}
}

func TestParseISODate(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"2026-04-13", true},
		{"2024-02-29", true},
		{"2000-02-29", true},
		{"2100-02-29", false},
		{"2025-02-29", false},
		{"2025-04-31", false},
		{"2025-13-01", false},
		{"2025-00-10", false},
		{"2025-01-00", false},
		{"2025-1-01", false},
		{"2025/01/01", false},
		{"+025-01-01", false},
		{"2025-01-01 ", false},
		{"", false},
	} {
		d, ok := parseISODate(tc.in)
		if ok != tc.ok {
			t.Errorf("parseISODate(%q) ok = %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		if ok && d.String() != tc.in {
			t.Errorf("parseISODate(%q) round trip = %s", tc.in, d)
		}
	}
}

// TestEasterSunday uses published Easter dates, including the extremes of
// the Gregorian range (22 March, 25 April).
func TestEasterSunday(t *testing.T) {
	for _, want := range []string{
		"1818-03-22", "1943-04-25", "1999-04-04", "2000-04-23", "2002-03-31",
		"2008-03-23", "2011-04-24", "2019-04-21", "2020-04-12", "2024-03-31",
		"2025-04-20", "2026-04-05", "2027-03-28", "2038-04-25", "2285-03-22",
	} {
		d := mustDay(t, want)
		y, _, _ := d.civil()
		if got := easterSunday(y); got != d {
			t.Errorf("easterSunday(%d) = %s, want %s", y, got, want)
		}
	}
	for y := int64(1583); y <= 4099; y++ {
		e := easterSunday(y)
		if e.weekday() != time.Sunday {
			t.Fatalf("easterSunday(%d) = %s is a %v", y, e, e.weekday())
		}
		if e < dayFromCivil(y, 3, 22) || e > dayFromCivil(y, 4, 25) {
			t.Fatalf("easterSunday(%d) = %s outside 22 March .. 25 April", y, e)
		}
	}
}

func TestTargetClosingDay(t *testing.T) {
	for _, tc := range []struct {
		date    string
		closing bool
	}{
		{"2026-01-01", true},  // New Year's Day (Thursday)
		{"2026-01-02", false}, // Friday
		{"2026-04-02", false}, // Maundy Thursday
		{"2026-04-03", true},  // Good Friday
		{"2026-04-04", true},  // Saturday
		{"2026-04-05", true},  // Easter Sunday
		{"2026-04-06", true},  // Easter Monday
		{"2026-04-07", false},
		{"2026-05-01", true},  // Labour Day
		{"2026-05-14", false}, // Ascension Day is not a TARGET holiday
		{"2025-12-24", false}, // the ECB publishes on 24 December
		{"2025-12-25", true},
		{"2025-12-26", true},
		{"2025-12-31", false}, // and on 31 December
		{"2024-03-29", true},  // Good Friday 2024
		{"2024-04-01", true},  // Easter Monday 2024
		{"2024-04-02", false},
	} {
		if got := targetClosingDay(mustDay(t, tc.date)); got != tc.closing {
			t.Errorf("targetClosingDay(%s) = %v, want %v", tc.date, got, tc.closing)
		}
	}
}

// TestTargetCalendarMatchesData checks the calendar against the embedded ECB
// data: since 2002 a weekday is missing exactly when it is a TARGET closing
// day, and the ECB never published on one. From 2020-01-01 to the end of
// the embedded series (2026-04-13) there are 31 such weekdays, a count taken
// from the ECB file itself (fx/data/ecb-eurusd.csv, see fx/data/SOURCE.md).
func TestTargetCalendarMatchesData(t *testing.T) {
	tb, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	published := map[day]bool{}
	for _, f := range tb.fixings() {
		published[f.day] = true
	}
	last := tb.days[len(tb.days)-1].day
	since2020 := 0
	for d := targetCalendarSince; d <= last; d++ {
		closing := targetClosingDay(d)
		switch {
		case published[d] && closing:
			t.Errorf("%s: the ECB published on a day the calendar says is closed", d)
		case !published[d] && !closing:
			t.Errorf("%s (%v): no publication, but the calendar says TARGET is open", d, d.weekday())
		}
		if !published[d] && d >= mustDay(t, "2020-01-01") && d.weekday() != time.Saturday && d.weekday() != time.Sunday {
			since2020++
		}
	}
	if since2020 != 31 {
		t.Errorf("weekdays without publication 2020-01-01..%s = %d, the ECB file has 31", last, since2020)
	}
	// Before 2002 the calendar differed; these are the known exceptions.
	for _, s := range []string{"1999-04-02", "1999-04-05"} {
		if !published[mustDay(t, s)] {
			t.Errorf("%s: expected the 1999 Easter publication", s)
		}
	}
	for _, s := range []string{"1999-12-31", "2001-12-31"} {
		if published[mustDay(t, s)] {
			t.Errorf("%s: expected no publication", s)
		}
	}
}

// TestFrankfurtOffsetMatchesTZData compares the computed CET/CEST offset with
// the tz database's Europe/Berlin every 30 minutes from 1996 to 2040, and at
// each switch to the second.
func TestFrankfurtOffsetMatchesTZData(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err) // time/tzdata is linked in, so this cannot be missing
	}
	check := func(u int64) {
		_, want := time.Unix(u, 0).In(berlin).Zone()
		if got := frankfurtOffset(u); got != int64(want) {
			t.Fatalf("%s: offset %d, tzdata %d", time.Unix(u, 0).UTC().Format(time.RFC3339), got, want)
		}
	}
	start := time.Date(1996, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	end := time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for u := start; u < end; u += 1800 {
		check(u)
	}
	for y := int64(1996); y < 2040; y++ {
		for _, m := range []int{3, 10} {
			sw := int64(lastSunday(y, m))*secondsPerDay + dstSwitch
			check(sw - 1)
			check(sw)
		}
	}
}

func TestLastVisibleDay(t *testing.T) {
	for _, tc := range []struct {
		at   string
		want string
	}{
		{"2026-04-13T13:59:59Z", "2026-04-12"},      // 15:59:59 CEST
		{"2026-04-13T14:00:00Z", "2026-04-13"},      // 16:00 CEST
		{"2026-04-13T15:59:59+02:00", "2026-04-12"}, // same instant as the first, other zone
		{"2026-01-30T14:59:59.999Z", "2026-01-29"},  // 15:59:59.999 CET
		{"2026-01-30T15:00:00Z", "2026-01-30"},      // 16:00 CET
		{"2026-01-30T23:30:00Z", "2026-01-30"},      // 00:30 CET on the 31st: the 30th is still the latest
		{"2026-03-27T14:30:00Z", "2026-03-26"},      // Friday before the switch: 15:30 CET
		{"2026-03-27T15:00:00Z", "2026-03-27"},      // 16:00 CET
		{"2026-03-30T14:00:00Z", "2026-03-30"},      // Monday after the switch: 16:00 CEST
		{"2026-10-26T14:30:00Z", "2026-10-25"},      // Monday after the switch back: 15:30 CET
		{"2026-10-26T15:00:00Z", "2026-10-26"},      // 16:00 CET
		{"2026-04-13T10:00:00-08:00", "2026-04-13"}, // 18:00Z = 20:00 CEST
		{"1999-01-04T15:00:00+01:00", "1999-01-03"}, // before 16:00 on the first day
		{"1999-01-04T16:00:00+01:00", "1999-01-04"},
	} {
		at, err := time.Parse(time.RFC3339Nano, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := lastVisibleDay(at).String(); got != tc.want {
			t.Errorf("lastVisibleDay(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}
