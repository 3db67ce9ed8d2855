package fx

import (
	"fmt"
	"strconv"
	"time"
)

// day is a civil date in the proleptic Gregorian calendar, counted in days
// since 1970-01-01. The package computes with days rather than time.Time so
// that lookups need no time zone database and no allocation.
type day int64

const secondsPerDay = 86400

// floorDiv is integer division rounding towards negative infinity, so that
// instants before 1970 fall on the right day.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// utcDay is the UTC calendar date of t.
func utcDay(t time.Time) day { return day(floorDiv(t.Unix(), secondsPerDay)) }

// dayFromCivil converts a Gregorian date to a day number. Algorithm
// days_from_civil from Howard Hinnant, "chrono-Compatible Low-Level Date
// Algorithms" (exact for every int64 year that does not overflow).
func dayFromCivil(y int64, m, d int) day {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March = 0
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy // [0, 146096]
	return day(era*146097 + doe - 719468)
}

// civil is the inverse of dayFromCivil (Hinnant's civil_from_days).
func (d day) civil() (y int64, m, dd int) {
	z := int64(d) + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11]
	dd = int(doy - (153*mp+2)/5 + 1)
	m = int(mp) + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, dd
}

// weekday of d; 1970-01-01 was a Thursday.
func (d day) weekday() time.Weekday {
	return time.Weekday((int64(d)%7 + 7 + 4) % 7)
}

// String formats d as YYYY-MM-DD (ISO 8601 calendar date).
func (d day) String() string {
	y, m, dd := d.civil()
	if y < 0 || y > 9999 {
		return time.Unix(int64(d)*secondsPerDay, 0).UTC().Format(time.DateOnly)
	}
	var b [10]byte
	b[0] = byte('0' + y/1000)
	b[1] = byte('0' + y/100%10)
	b[2] = byte('0' + y/10%10)
	b[3] = byte('0' + y%10)
	b[4] = '-'
	b[5] = byte('0' + m/10)
	b[6] = byte('0' + m%10)
	b[7] = '-'
	b[8] = byte('0' + dd/10)
	b[9] = byte('0' + dd%10)
	return string(b[:])
}

// daysIn is the length of month m of year y.
func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseISODate parses exactly YYYY-MM-DD with a valid month and day.
func parseISODate(s string) (day, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	y, _ := strconv.Atoi(s[0:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:10])
	if m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) {
		return 0, false
	}
	return dayFromCivil(int64(y), m, d), true
}

// easterSunday is the Gregorian Easter Sunday of year y, by the anonymous
// Gregorian computus (Meeus/Jones/Butcher, in J. Meeus, "Astronomical
// Algorithms", ch. 8). Valid for every Gregorian year.
func easterSunday(y int64) day {
	a := y % 19
	b := floorDiv(y, 100)
	c := y - b*100
	d := b / 4
	e := b % 4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i := c / 4
	k := c % 4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	dom := (h+l-7*m+114)%31 + 1
	return dayFromCivil(y, int(month), int(dom))
}

// targetCalendarSince is the first day on which targetClosingDay is the
// ECB's publication calendar. The harmonised TARGET closing days have applied
// since 2002; before that the ECB published on Good Friday and Easter Monday
// 1999 and skipped 1999-12-31 and 2001-12-31 (ECB press release of
// 14 December 2000, "Long-term calendar for TARGET closing days", from 2002,
// https://www.ecb.europa.eu/press/pr/date/2000/html/pr001214_4.en.html;
// verified on the embedded data by TestTargetCalendarMatchesData).
const targetCalendarSince day = 11688 // 2002-01-01

// targetClosingDay reports whether d is a TARGET closing day, on which the ECB
// publishes no reference rates: Saturdays, Sundays, 1 January, Good Friday,
// Easter Monday, 1 May, 25 and 26 December (ECB, "Long-term calendar for
// TARGET closing days",
// https://www.ecb.europa.eu/press/pr/date/2000/html/pr001214_4.en.html; the
// reference rates are published "every working day, except on TARGET closing
// days", https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html;
// the ECB does publish on 24 and 31 December, as the embedded data shows). The rule is applied to every year; it describes the ECB only
// from targetCalendarSince.
func targetClosingDay(d day) bool {
	switch d.weekday() {
	case time.Saturday, time.Sunday:
		return true
	}
	y, m, dd := d.civil()
	switch {
	case m == 1 && dd == 1, m == 5 && dd == 1, m == 12 && (dd == 25 || dd == 26):
		return true
	case m == 3 || m == 4:
		e := easterSunday(y)
		return d == e-2 || d == e+1 // Good Friday, Easter Monday
	}
	return false
}

// lastSunday is the last Sunday of month m in year y.
func lastSunday(y int64, m int) day {
	last := dayFromCivil(y, m, daysIn(y, m))
	return last - day(last.weekday()-time.Sunday)
}

// Frankfurt is on Central European Time, UTC+1, and on Central European
// Summer Time, UTC+2, from the last Sunday of March 01:00 UTC to the last
// Sunday of October 01:00 UTC (Directive 2000/84/EC, Arts. 2 and 3; the same
// dates have applied since 1996). Computing this here means the package needs
// no tzdata.
const (
	cetOffset  = 1 * 3600
	cestOffset = 2 * 3600
	dstSwitch  = 1 * 3600 // 01:00 UTC
)

// frankfurtOffset is the UTC offset in seconds of Frankfurt am Main at the
// Unix instant u.
func frankfurtOffset(u int64) int64 {
	y, _, _ := day(floorDiv(u, secondsPerDay)).civil()
	start := int64(lastSunday(y, 3))*secondsPerDay + dstSwitch
	end := int64(lastSunday(y, 10))*secondsPerDay + dstSwitch
	if u >= start && u < end {
		return cestOffset
	}
	return cetOffset
}

// publicationHour is the local Frankfurt hour from which a day's reference
// rates count as published: the ECB says the rates are "usually updated at
// around 16:00 CET"
// (https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html; since
// 1 July 2016). Before that date the ECB published earlier; using 16:00 for
// those years too is conservative: it never treats a rate as published
// before it was.
const publicationHour = 16

// publicationInstant is the instant from which reference date d counts as
// published: 16:00 Frankfurt time on d, as a UTC time. The UTC offset is the
// one in force at that hour (the summer-time switches happen at 01:00 UTC,
// far from 16:00 local). lastVisibleDay(publicationInstant(d)) == d.
func publicationInstant(d day) time.Time {
	local := int64(d)*secondsPerDay + publicationHour*3600
	off := frankfurtOffset(local - cetOffset)
	return time.Unix(local-off, 0).UTC()
}

// PublicationInstant returns the instant from which the ECB reference rates
// of date (YYYY-MM-DD) count as published under LatestPublishedAt: 16:00
// Frankfurt time that day, in UTC (14:00Z in summer, 15:00Z in winter). It
// says nothing about whether the ECB published that day. A string that is
// not a date wraps ErrDate.
func PublicationInstant(date string) (time.Time, error) {
	d, ok := parseISODate(date)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %q: want YYYY-MM-DD", ErrDate, date)
	}
	return publicationInstant(d), nil
}

// lastVisibleDay is the latest reference date whose publication counts as
// visible at instant t: the Frankfurt calendar date of t if t is at or after
// 16:00 Frankfurt time, otherwise the day before.
func lastVisibleDay(t time.Time) day {
	u := t.Unix()
	local := u + frankfurtOffset(u)
	d := floorDiv(local, secondsPerDay)
	if local-d*secondsPerDay >= publicationHour*3600 {
		return day(d)
	}
	return day(d - 1)
}
