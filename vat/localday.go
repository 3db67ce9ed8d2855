package vat

import (
	"embed"
	"time"
)

//go:generate go run ./internal/tzgen/cmd/gentz

// The chargeable event and the local day.
//
// VAT becomes chargeable when the service is supplied, or on receipt of a
// payment made before (Art. 63 and 65 Directive 2006/112/EC), and the rate
// is the one in force at that chargeable event (Art. 93). A member state's
// rate law takes effect on a calendar day of that state's legal time: the
// Estonian 24 % applies to supplies from 1 July 2025 in Tallinn, not from
// midnight UTC. So the rate is chosen by the calendar day of Supply.Date in
// the time zone of the taxing territory: the customer's member state (or
// territory with its own rates, such as the Azores) under destination
// taxation and reverse charge, the seller's member state under origin or
// domestic taxation, the UK for the UK ruleset. A supply exactly at local
// midnight belongs to the new day. The same day is the date of supply an
// invoice states (Art. 226(7); EN 16931 BT-72).
//
// Zone offsets and summer time come from the IANA tz database
// (https://www.iana.org/time-zones), whose European rules follow Directive
// 2000/84/EC (summer time from 01:00 UTC on the last Sunday of March to
// 01:00 UTC on the last Sunday of October). The zones are embedded
// (ratedata/tzdata, copied from Go's own zoneinfo.zip; tzdata_gen.go names
// the release and checksums), so no system tz database is read.

//go:embed ratedata/tzdata
var tzdataFS embed.FS

// countryZones is the IANA zone of each country's mainland, for every
// country the rulesets can tax in (EU-27 and the UK). Monaco is taxed as
// France, the Isle of Man and Northern Ireland as the UK (Art. 7 Directive
// 2006/112/EC; VAT Notice 741A), and share those zones' clocks.
var countryZones = map[string]string{
	"AT": "Europe/Vienna", "BE": "Europe/Brussels", "BG": "Europe/Sofia", "CY": "Asia/Nicosia",
	"CZ": "Europe/Prague", "DE": "Europe/Berlin", "DK": "Europe/Copenhagen", "EE": "Europe/Tallinn",
	"ES": "Europe/Madrid", "FI": "Europe/Helsinki", "FR": "Europe/Paris", "GR": "Europe/Athens",
	"HR": "Europe/Zagreb", "HU": "Europe/Budapest", "IE": "Europe/Dublin", "IT": "Europe/Rome",
	"LT": "Europe/Vilnius", "LU": "Europe/Luxembourg", "LV": "Europe/Riga", "MT": "Europe/Malta",
	"NL": "Europe/Amsterdam", "PL": "Europe/Warsaw", "PT": "Europe/Lisbon", "RO": "Europe/Bucharest",
	"SE": "Europe/Stockholm", "SI": "Europe/Ljubljana", "SK": "Europe/Bratislava", "GB": "Europe/London",
}

// territoryZones: territories with their own rates and their own clock.
// The Azores keep UTC-1 (UTC+0 in summer) and Madeira the mainland's time
// (IANA zones Atlantic/Azores and Atlantic/Madeira). Jungholz and
// Mittelberg keep Austrian time.
var territoryZones = map[string]string{
	"Azores":  "Atlantic/Azores",
	"Madeira": "Atlantic/Madeira",
}

// zoneUTC names the zone used when no taxing territory applies and the
// seller is established outside the EU and the UK (an outside-scope supply
// by a non-European seller): the UTC day.
const zoneUTC = "UTC"

// Extreme UTC offsets of the embedded zones during the coverage: the
// Azores in winter (UTC-1) and eastern Europe in summer (UTC+3). A test
// checks them against every zone; checkDate uses them to reject, before
// any rule runs, a date outside the rate table in every zone.
const (
	minZoneOffset = -1 * time.Hour
	maxZoneOffset = 3 * time.Hour
)

// zone is a loaded time zone, its IANA name, and its UTC offsets around
// the rate table's coverage, so that the hot path needs no Location lookup
// (which, past a zone's last listed transition, re-parses its TZ rule).
type zone struct {
	name  string
	loc   *time.Location
	spans []zoneSpan // ascending; the last one ends at spanEnd
}

// zoneSpan: from start (Unix seconds) the zone is offset seconds east of UTC.
type zoneSpan struct {
	start  int64
	offset int64
}

// The spans cover the coverage of the rate table and two days around it.
var (
	spanStart = keyTime(rateTableFrom).AddDate(0, 0, -2).Unix()
	spanEnd   = keyTime(rateTableTo).AddDate(0, 0, 3).Unix()
)

// zones holds every embedded zone, built once at package initialisation
// and never modified afterwards; countryTable holds each country's.
var (
	zones   = loadZones()
	utcZone = zones[zoneUTC]
)

func loadZones() map[string]*zone {
	m := make(map[string]*zone, len(tzdataZones)+1)
	for _, z := range tzdataZones {
		data, err := tzdataFS.ReadFile(z.file)
		if err != nil {
			panic("vat: embedded zone " + z.name + ": " + err.Error())
		}
		loc, err := time.LoadLocationFromTZData(z.name, data)
		if err != nil {
			panic("vat: embedded zone " + z.name + ": " + err.Error())
		}
		m[z.name] = newZone(z.name, loc)
	}
	m[zoneUTC] = newZone(zoneUTC, time.UTC)
	return m
}

func newZone(name string, loc *time.Location) *zone {
	offset := func(sec int64) int64 {
		_, off := time.Unix(sec, 0).In(loc).Zone()
		return int64(off)
	}
	// Scan week by week (offsets in these zones change twice a year) and
	// find each change to the second by bisection. (Time.ZoneBounds is not
	// used: past a zone's last listed transition it can report an end that
	// does not advance.) A test compares civil with time.Time.In hour by
	// hour and around every change.
	const week = 7 * 24 * 3600
	z := &zone{name: name, loc: loc, spans: []zoneSpan{{spanStart, offset(spanStart)}}}
	for prev := spanStart; prev < spanEnd; {
		next := min(prev+week, spanEnd)
		cur := z.spans[len(z.spans)-1].offset
		if off := offset(next); off != cur {
			lo, hi := prev, next // offset(lo) == cur, offset(hi) != cur
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if offset(mid) == cur {
					lo = mid
				} else {
					hi = mid
				}
			}
			z.spans = append(z.spans, zoneSpan{hi, offset(hi)})
			prev = hi
			continue
		}
		prev = next
	}
	return z
}

// placeZone is the zone of a country (ISO 3166-1, GB for the UK) or of a
// territory with its own rates; UTC for a country outside the table.
func placeZone(cc string, t *territory) *zone {
	if t != nil {
		if name, ok := territoryZones[t.name]; ok {
			return zones[name]
		}
		cc = t.parent
	}
	if z := factsOf(cc).zone; z != nil { // countryfacts.go
		return z
	}
	return utcZone
}

// civil is the calendar date of at in z.
func (z *zone) civil(at time.Time) (year int, month time.Month, day int) {
	sec := at.Unix()
	if sec < spanStart || sec >= spanEnd {
		return at.In(z.loc).Date()
	}
	i := len(z.spans) - 1
	for i > 0 && z.spans[i].start > sec {
		i--
	}
	return time.Unix(sec+z.spans[i].offset, 0).UTC().Date()
}

// dateString renders a yyyymmdd day key as YYYY-MM-DD (years 0–9999);
// a day of the rate table's coverage comes from coveredDates.
func dateString(k int) string {
	if i, ok := coveredDateIndex(k); ok && coveredDates[i] != "" {
		return coveredDates[i]
	}
	var b [10]byte
	appendDate(b[:0], k)
	return string(b[:])
}

// appendDate appends the day key k as YYYY-MM-DD.
func appendDate(b []byte, k int) []byte {
	y, m, d := k/10000, k/100%100, k%100
	return append(b, byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10),
		'-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// coveredDates holds the rendering of every day of the embedded rate
// table's coverage at coveredDateIndex ("" between months), as substrings
// of one string; built once at package initialisation and never modified
// afterwards, so that a supply date takes no allocation.
var coveredDates = renderDates(rateTableFrom, rateTableTo)

// renderDates renders the days from..to (day keys) at dateIndex(from, k).
func renderDates(from, to int) []string {
	last, _ := dateIndex(from, to, to)
	out := make([]string, last+1)
	var all []byte
	for t := keyTime(from); dayKey(t) <= to; t = t.AddDate(0, 0, 1) {
		all = appendDate(all, dayKey(t))
	}
	text := string(all)
	for t, at := keyTime(from), 0; dayKey(t) <= to; t, at = t.AddDate(0, 0, 1), at+10 {
		i, _ := dateIndex(from, to, dayKey(t))
		out[i] = text[at : at+10]
	}
	return out
}

// coveredDateIndex is the place of day key k in coveredDates: 31 places a
// month, 372 a year from the first year of the coverage.
func coveredDateIndex(k int) (int, bool) { return dateIndex(rateTableFrom, rateTableTo, k) }

// dateIndex is the place of day key k in the rendering of from..to.
func dateIndex(from, to, k int) (int, bool) {
	if k < from || k > to {
		return 0, false
	}
	y, m, d := k/10000, k/100%100, k%100
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, false
	}
	return (y-from/10000)*372 + (m-1)*31 + d - 1, true
}

// laterDatesYears bounds the days after the embedded coverage a loaded
// table renders in advance (RateTable.laterDates): enough for any table
// a budget law can vouch for, without holding a string for every day of
// a coverage that runs to 9999.
const laterDatesYears = 10

// laterDatesRange is the range of days after the embedded coverage that a
// table covering up to to renders in advance; ok is false when none.
func laterDatesRange(to int) (from, last int, ok bool) {
	if to <= rateTableTo {
		return 0, 0, false
	}
	first := keyTime(rateTableTo).AddDate(0, 0, 1)
	return dayKey(first), min(to, dayKey(first.AddDate(laterDatesYears, 0, -1))), true
}

// dateString renders day key k like the package's dateString, and the
// days after the embedded coverage that t covers without an allocation
// (a supply date on the settlement path).
func (t *RateTable) dateString(k int) string {
	if t.laterDates != nil && k > rateTableTo {
		if i, ok := dateIndex(t.laterFrom, t.laterLast, k); ok && t.laterDates[i] != "" {
			return t.laterDates[i]
		}
	}
	return dateString(k)
}

// coversSomewhere reports whether at falls inside the table's coverage in
// at least one embedded zone.
func (t *RateTable) coversSomewhere(at time.Time) bool {
	// dayKey(at+max) >= from and dayKey(at+min) <= to, in Unix seconds:
	// at+max is not before the first midnight, at+min before the midnight
	// after the last day (offsets are whole seconds; Unix floors).
	s := at.Unix()
	return s >= t.fromUnix-int64(maxZoneOffset/time.Second) && s < t.toEndUnix-int64(minZoneOffset/time.Second)
}

// CoveredEverywhere returns the instants at which the local day of every
// embedded zone lies inside the table's coverage: from the last local
// midnight starting the first covered day (Europe/Helsinki's, UTC+2, is
// before UTC's) to the first local midnight after the last covered day.
// A supply at an instant outside [from, until) is dated outside the table
// for some taxing territory (date_outside_rate_table), although its UTC
// day may still be covered: a service is ready for every member state
// only inside it.
func (t *RateTable) CoveredEverywhere() (from, until time.Time) {
	first, after := keyTime(t.from), keyTime(t.to).AddDate(0, 0, 1)
	for _, z := range zones {
		f := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, z.loc)
		u := time.Date(after.Year(), after.Month(), after.Day(), 0, 0, 0, 0, z.loc)
		if from.IsZero() || f.After(from) {
			from = f
		}
		if until.IsZero() || u.Before(until) {
			until = u
		}
	}
	return from.UTC(), until.UTC()
}

// ThresholdYear is the calendar year of at in the time zone of the
// seller's establishment (UTC for a seller outside the EU and the UK): the
// year whose Art. 59c running total a supply at that instant belongs to.
// The engine reads the totals of this year and of the year before into
// Seller.CrossBorder; Determination.Threshold.Year repeats it.
func (s Seller) ThresholdYear(at time.Time) int {
	loc, _, _ := resolveLocation(normalizeCountry(s.Country), "")
	return thresholdYearOf(loc.country, at)
}

// thresholdYearOf is the calendar year of at in the zone of country.
func thresholdYearOf(country string, at time.Time) int {
	y, _, _ := placeZone(country, nil).civil(at)
	return y
}

// localDate is the calendar date of the supply in z. The rules ask for
// the seller's zone up to three times (threshold year, origin rate, day
// of supply): the last answer is kept.
func (r *rules) localDate(z *zone) localDate {
	if r.dateZone != z {
		r.dateZone = z
		r.date.year, r.date.month, r.date.day = z.civil(r.in.Supply.Date)
	}
	return r.date
}

// localDate is a calendar date (zone.civil).
type localDate struct {
	year  int
	month time.Month
	day   int
}

// key is the date as a yyyymmdd day key (the form of dayKey).
func (d localDate) key() int { return d.year*10000 + int(d.month)*100 + d.day }

// TZDataRelease names the IANA tz database release the embedded zones come
// from (e.g. "2025c"); tzdata_gen.go records the source and checksums.
func TZDataRelease() string { return tzdataRelease }

// fixDay sets the day of supply in zone z, once, records it on the
// determination (supplyDate, timeZone) and reports whether the rate table
// covers it; if not, that is a review reason.
func (r *rules) fixDay(z *zone) bool {
	if r.dayFixed {
		return r.t.covers(r.day)
	}
	r.dayFixed = true
	r.day = r.localDate(z).key()
	r.b.d.SupplyDate = r.t.dateString(r.day)
	r.b.d.TimeZone = z.name
	if r.t.covers(r.day) {
		return true
	}
	from, to := r.t.Coverage()
	r.b.review(ReasonDateOutsideRateTable, "The supply date %s (%s, %s) is outside the period %s to %s that rate table %s and this ruleset vouch for.",
		r.b.d.SupplyDate, r.in.Supply.Date.In(z.loc).Format("15:04 MST"), z.name, from.Format(time.DateOnly), to.Format(time.DateOnly), r.t.version)
	return false
}

// fixDefaultDay dates a supply whose rules charged no rate: reverse charge
// in the customer's state (Art. 196), the seller's state for a supply
// outside the EU (whose invoicing rules apply, Art. 219a(2)(b)), and the
// customer's location while a B2B claim is open.
func (r *rules) fixDefaultDay() {
	if r.dayFixed {
		return
	}
	switch d := &r.b.d; {
	case d.Regime == RegimeUKReverseCharge, d.Regime == RegimeUKB2C, d.Regime == RegimeUKDomestic:
		r.fixDay(placeZone("GB", nil))
	case d.Regime == RegimeOutsideScope:
		r.fixDay(placeZone(r.seller.country, nil))
	case r.buyer.inEU() || r.buyer.inUK():
		r.fixDay(placeZone(r.buyer.country, r.buyer.territory))
	default:
		r.fixDay(placeZone(r.seller.country, nil))
	}
}

// LocalDate is the calendar day (YYYY-MM-DD) of at in the embedded IANA
// zone named zone: the zone a Determination records in TimeZone, so that a
// later event of the same supply (a refund) is dated by the same clock as
// its SupplyDate. ok is false for a zone that is not embedded ("" or
// unknown); the caller then decides (the UTC day is what zoneUTC uses).
func LocalDate(zone string, at time.Time) (date string, ok bool) {
	z, found := zones[zone]
	if !found {
		return "", false
	}
	return at.In(z.loc).Format(time.DateOnly), true
}
