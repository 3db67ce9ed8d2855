package vat

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/vat/internal/tzgen"
)

// dayIn is the calendar day of at in z as yyyymmdd (the rules keep the
// date of the supply instead: rules.localDate).
func dayIn(at time.Time, z *zone) int {
	y, m, d := z.civil(at)
	return localDate{y, m, d}.key()
}

func utc(y int, m time.Month, d, hh, mm int) time.Time {
	return time.Date(y, m, d, hh, mm, 0, 0, time.UTC)
}

// TestLocalDayEstonia is the example: Estonia's 24 % applies from
// 1 July 2025 in Tallinn (UTC+3 in summer), i.e. from 21:00 UTC on 30 June.
func TestLocalDayEstonia(t *testing.T) {
	cases := []struct {
		at         time.Time
		rate, date string
	}{
		{utc(2025, time.June, 30, 20, 30), "22", "2025-06-30"},
		{utc(2025, time.June, 30, 21, 30), "24", "2025-07-01"},
		{time.Date(2025, time.June, 30, 20, 59, 59, 999999999, time.UTC), "22", "2025-06-30"},
		{utc(2025, time.June, 30, 21, 0), "24", "2025-07-01"}, // local midnight belongs to the new day
	}
	for _, c := range cases {
		d := Determine(Input{Seller{Country: "US"}, b2c("EE"), Supply{Kind: KindDigitalService, Date: c.at}})
		if d.RatePercent == nil || d.RatePercent.String() != c.rate || d.SupplyDate != c.date || d.TimeZone != "Europe/Tallinn" {
			t.Errorf("EE at %s: %s on %s (%s), want %s on %s (Europe/Tallinn)", c.at.Format(time.RFC3339Nano), summary(d), d.SupplyDate, d.TimeZone, c.rate, c.date)
		}
	}
}

// TestLocalDayZoneChoice checks whose clock dates the supply in each
// regime (localday.go): expectations written from the rules, one case each.
func TestLocalDayZoneChoice(t *testing.T) {
	// 2025-12-31 23:30 UTC: 2026-01-01 in Berlin, Helsinki; 2025-12-31 in
	// Dublin, London, Lisbon and (22:30) the Azores.
	at := utc(2025, time.December, 31, 23, 30)
	s := Supply{Kind: KindDigitalService, Date: at}
	cases := []struct {
		name       string
		in         Input
		zone, date string
	}{
		{"destination: the consumer's state", Input{Seller{Country: "IE", OverThreshold: true}, b2c("DE"), s}, "Europe/Berlin", "2026-01-01"},
		{"origin (Art. 59c): the seller's state", Input{Seller{Country: "IE"}, b2c("DE"), s}, "Europe/Dublin", "2025-12-31"},
		{"domestic", Input{Seller{Country: "FI"}, b2c("FI"), s}, "Europe/Helsinki", "2026-01-01"},
		{"Azores by postal code", Input{Seller{Country: "US"}, Buyer{Country: "PT", PostalCode: "9500-123"}, s}, "Atlantic/Azores", "2025-12-31"},
		{"Madeira by postal code", Input{Seller{Country: "US"}, Buyer{Country: "PT", PostalCode: "9000-018"}, s}, "Atlantic/Madeira", "2025-12-31"},
		{"mainland Portugal", Input{Seller{Country: "US"}, b2c("PT"), s}, "Europe/Lisbon", "2025-12-31"},
		{"Jungholz keeps Austrian time", Input{Seller{Country: "US"}, Buyer{Country: "AT", PostalCode: "6691"}, s}, "Europe/Vienna", "2026-01-01"},
		{"Monaco is taxed as France", Input{Seller{Country: "US"}, b2c("MC"), s}, "Europe/Paris", "2026-01-01"},
		{"reverse charge: the customer's state", Input{Seller{Country: "IE"}, Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627")}, s}, "Europe/Vienna", "2026-01-01"},
		{"UK consumer", Input{Seller{Country: "DE"}, b2c("XI"), s}, "Europe/London", "2025-12-31"},
		{"UK reverse charge", Input{Seller{Country: "DE"}, Buyer{Country: "GB", VATNumber: "GB980780684", Registry: confirmed("HMRC", "GB980780684")}, s}, "Europe/London", "2025-12-31"},
		{"outside scope: the seller's state", Input{Seller{Country: "DE"}, b2c("US"), s}, "Europe/Berlin", "2026-01-01"},
		{"outside scope, non-European seller: UTC", Input{Seller{Country: "US"}, b2c("CH"), s}, "UTC", "2025-12-31"},
		{"open B2B claim: the customer's location", Input{Seller{Country: "IE"}, Buyer{Country: "FI", VATNumber: "FI20774740"}, s}, "Europe/Helsinki", "2026-01-01"},
	}
	for _, c := range cases {
		d := Determine(c.in)
		if d.TimeZone != c.zone || d.SupplyDate != c.date {
			t.Errorf("%s: %s %s, want %s %s (%s)", c.name, d.TimeZone, d.SupplyDate, c.zone, c.date, summary(d))
		}
		checkInvariants(t, c.in, d)
	}
}

// TestLocalDayCoverage: the rate table's first and last day are local days.
func TestLocalDayCoverage(t *testing.T) {
	cases := []struct {
		cc     string
		at     time.Time
		review bool
	}{
		{"FI", utc(2023, time.December, 31, 21, 59), true},  // 23:59 in Helsinki
		{"FI", utc(2023, time.December, 31, 22, 1), false},  // 00:01 on 2024-01-01
		{"PT", utc(2023, time.December, 31, 23, 59), true},  // 23:59 in Lisbon
		{"FI", utc(2026, time.December, 31, 21, 59), false}, // 23:59 on the last day
		{"FI", utc(2026, time.December, 31, 22, 1), true},   // 00:01 on 2027-01-01
		{"GB", utc(2026, time.December, 31, 23, 59), false}, // still 2026 in London
		{"DE", utc(2023, time.December, 31, 12, 0), true},   // outside in every zone
	}
	for _, c := range cases {
		d := Determine(Input{Seller{Country: "US"}, b2c(c.cc), Supply{Kind: KindSaaS, Date: c.at}})
		got := hasReason(d, ReasonDateOutsideRateTable)
		if got != c.review {
			t.Errorf("%s at %s: date_outside_rate_table %t, want %t (%s)", c.cc, c.at.Format(time.RFC3339), got, c.review, summary(d))
		}
	}
}

func hasReason(d Determination, code string) bool {
	return slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == code })
}

// TestLocalMidnightRateChanges: every change of a series a determination
// uses, one minute before and after local midnight in that series' zone,
// takes the rate of the day before and of the day of the change.
func TestLocalMidnightRateChanges(t *testing.T) {
	// The standard-rate changes of 2024-2026 in the rate table (vat/ratedata:
	// the ibericode/vat-rates snapshot and corrections.json, each row with its
	// source) must be among them.
	seen := map[string]bool{}
	for _, c := range localMidnightCases() {
		seen[c.key.country+" "+c.key.series+" "+keyTime(c.day).Format(time.DateOnly)] = true
		d := Determine(c.in)
		checkInvariants(t, c.in, d)
		if d.TimeZone != c.zone || d.SupplyDate != keyTime(c.day).Format(time.DateOnly) {
			t.Errorf("%s: dated %s %s, want %s in %s", describe(c.in), d.SupplyDate, d.TimeZone, keyTime(c.day).Format(time.DateOnly), c.zone)
		}
		row, ok := rates.lookup(c.key, c.day)
		switch {
		case !rates.covers(c.day):
			if !hasReason(d, ReasonDateOutsideRateTable) {
				t.Errorf("%s: %s, want date_outside_rate_table", describe(c.in), summary(d))
			}
		case !ok || row.status != statusSource:
			if d.Determined() {
				t.Errorf("%s: determined, but the table has no confirmed rate that day", describe(c.in))
			}
		case d.RatePercent == nil || !d.RatePercent.Decimal().Equal(row.percents[0]):
			t.Errorf("%s: %s, want %s", describe(c.in), summary(d), row.percents[0])
		}
	}
	for _, want := range []string{"FI standard 2024-09-01", "SK standard 2025-01-01", "EE standard 2025-07-01", "RO standard 2025-08-01", "LU standard 2024-01-01"} {
		if !seen[want] {
			t.Errorf("no local-midnight case for %s", want)
		}
	}
}

type midnightCase struct {
	in   Input
	key  seriesKey
	zone string
	day  int // expected local day
}

// localMidnightCases builds, for each change day of changeDays with a
// supply kind, a US seller's sale to a consumer in the series' territory
// one minute before and one minute after local midnight.
func localMidnightCases() []midnightCase {
	var out []midnightCase
	for _, ch := range changeDays() {
		kind, ok := seriesKind[ch.key.series]
		if !ok {
			continue
		}
		buyer := b2c(ch.key.country)
		var terr *territory
		if ch.key.territory != "" {
			buyer.PostalCode = territoryPostcodes[ch.key.territory]
			terr = &territory{name: ch.key.territory, parent: ch.key.country}
		}
		z := placeZone(ch.key.country, terr)
		midnight := time.Date(ch.day/10000, time.Month(ch.day/100%100), ch.day%100, 0, 0, 0, 0, z.loc)
		before := keyTime(ch.day).AddDate(0, 0, -1)
		out = append(out,
			midnightCase{Input{Seller{Country: "US"}, buyer, Supply{Kind: kind, Date: midnight.Add(-time.Minute).UTC()}}, ch.key, z.name, dayKey(before)},
			midnightCase{Input{Seller{Country: "US"}, buyer, Supply{Kind: kind, Date: midnight.Add(time.Minute).UTC()}}, ch.key, z.name, ch.day})
	}
	return out
}

// TestZoneOffsetBounds checks minZoneOffset and maxZoneOffset against
// every embedded zone, hour by hour over the coverage and a day around it,
// and that both bounds are reached (so they are tight).
func TestZoneOffsetBounds(t *testing.T) {
	from, to := Rates().Coverage()
	lo, hi := time.Duration(1<<62), time.Duration(-1<<62)
	for _, z := range zones {
		for at := from.Add(-48 * time.Hour); at.Before(to.Add(48 * time.Hour)); at = at.Add(time.Hour) {
			_, off := at.In(z.loc).Zone()
			d := time.Duration(off) * time.Second
			lo, hi = min(lo, d), max(hi, d)
		}
	}
	if lo != minZoneOffset || hi != maxZoneOffset {
		t.Errorf("zone offsets range over [%s, %s], constants say [%s, %s]", lo, hi, minZoneOffset, maxZoneOffset)
	}
}

// TestZoneTables: every country the rate table covers has a zone, every
// mapped zone is embedded, and nothing else is embedded.
func TestZoneTables(t *testing.T) {
	used := map[string]bool{}
	for _, cc := range Rates().Countries() {
		name, ok := countryZones[cc]
		if !ok {
			t.Errorf("no time zone for %s", cc)
		}
		used[name] = true
	}
	for _, name := range territoryZones {
		used[name] = true
	}
	if len(countryZones) != len(Rates().Countries()) {
		t.Errorf("countryZones has %d entries, the rate table %d countries", len(countryZones), len(Rates().Countries()))
	}
	var embedded []string
	for _, z := range tzdataZones {
		embedded = append(embedded, z.name)
		if !used[z.name] {
			t.Errorf("zone %s is embedded but not used", z.name)
		}
	}
	for name := range used {
		if _, ok := zones[name]; !ok || !slices.Contains(embedded, name) {
			t.Errorf("zone %s is used but not embedded", name)
		}
	}
	// Spot checks against the zones' published offsets (IANA tzdata):
	// summer and winter time of Directive 2000/84/EC.
	for _, c := range []struct {
		zone string
		at   time.Time
		off  int
	}{
		{"Europe/Tallinn", utc(2025, time.July, 1, 12, 0), 3 * 3600},
		{"Europe/Tallinn", utc(2025, time.January, 1, 12, 0), 2 * 3600},
		{"Atlantic/Azores", utc(2025, time.January, 1, 12, 0), -3600},
		{"Atlantic/Azores", utc(2025, time.July, 1, 12, 0), 0},
		{"Europe/Lisbon", utc(2025, time.July, 1, 12, 0), 3600},
		{"Europe/London", utc(2025, time.March, 30, 0, 59), 0},   // before 01:00 UTC on the last Sunday of March
		{"Europe/London", utc(2025, time.March, 30, 1, 0), 3600}, // summer time from 01:00 UTC
	} {
		if _, off := c.at.In(zones[c.zone].loc).Zone(); off != c.off {
			t.Errorf("%s at %s: offset %d, want %d", c.zone, c.at, off, c.off)
		}
	}
}

func TestThresholdYear(t *testing.T) {
	at := utc(2025, time.December, 31, 23, 30)
	for _, c := range []struct {
		country string
		want    int
	}{{"IE", 2025}, {"DE", 2026}, {"EL", 2026}, {"PT", 2025}, {"US", 2025}, {"", 2025}, {"IM", 2025}} {
		if got := (Seller{Country: c.country}).ThresholdYear(at); got != c.want {
			t.Errorf("ThresholdYear(%q, %s) = %d, want %d", c.country, at, got, c.want)
		}
	}
}

// TestTZDataIsFresh regenerates tzdata_gen.go from ratedata/tzdata and
// fails when it is stale (run go generate ./vat), and checks the embedded
// bytes against the recorded checksums.
func TestTZDataIsFresh(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(tzgen.Dir, tzgen.SourceName))
	if err != nil {
		t.Fatal(err)
	}
	src, err := tzgen.ParseSource(raw)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, z := range src.Zones {
		data, err := os.ReadFile(filepath.Join(tzgen.Dir, filepath.FromSlash(z)))
		if err != nil {
			t.Fatal(err)
		}
		files[z] = data
	}
	gen, err := tzgen.Generate(src, files)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("tzdata_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gen, committed) {
		t.Fatal("tzdata_gen.go is stale: run go generate ./vat")
	}
	for _, z := range tzdataZones {
		data, err := tzdataFS.ReadFile(z.file)
		if err != nil || tzgen.SHA256(data) != z.sha256 {
			t.Errorf("embedded %s: %v, sha256 differs from tzdata_gen.go", z.name, err)
		}
	}
	if TZDataRelease() != src.TZData {
		t.Errorf("TZDataRelease() = %q, source.json says %q", TZDataRelease(), src.TZData)
	}
}

// TestTZDataMatchesToolchain compares the committed zones with the
// toolchain's zoneinfo.zip when both name the same tzdata release; with
// another release it says how to refresh and skips.
func TestTZDataMatchesToolchain(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not on PATH; cannot locate GOROOT's zoneinfo.zip")
	}
	out, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "lib", "time")
	zipData, err1 := os.ReadFile(filepath.Join(dir, "zoneinfo.zip"))
	script, err2 := os.ReadFile(filepath.Join(dir, "update.bash"))
	if err1 != nil || err2 != nil {
		t.Skipf("toolchain tz data not readable: %v %v", err1, err2)
	}
	release, err := tzgen.ReleaseFromUpdateScript(script)
	if err != nil {
		t.Fatal(err)
	}
	if release != tzdataRelease {
		t.Skipf("the toolchain ships tzdata %s, the embedded zones are %s: refresh with go run ./internal/tzgen/cmd/gentz -refresh %s and review", release, tzdataRelease, filepath.Join(dir, "zoneinfo.zip"))
	}
	names := make([]string, len(tzdataZones))
	for i, z := range tzdataZones {
		names[i] = z.name
	}
	files, err := tzgen.Extract(zipData, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range tzdataZones {
		if tzgen.SHA256(files[z.name]) != z.sha256 {
			t.Errorf("%s differs from the toolchain's tzdata %s", z.name, release)
		}
	}
}

// TestZoneCivilMatchesIn checks the precomputed offsets against
// time.Time.In: hour by hour over the spans, one second around every
// change, and outside the spans (where civil falls back to In).
func TestZoneCivilMatchesIn(t *testing.T) {
	check := func(z *zone, at time.Time) {
		t.Helper()
		y, m, d := z.civil(at)
		wy, wm, wd := at.In(z.loc).Date()
		if y != wy || m != wm || d != wd {
			t.Fatalf("%s at %s: civil %d-%d-%d, In %d-%d-%d", z.name, at.UTC(), y, m, d, wy, wm, wd)
		}
	}
	changes := 0
	for _, z := range zones {
		for sec := spanStart; sec < spanEnd; sec += 3600 {
			check(z, time.Unix(sec, 0))
		}
		for _, sp := range z.spans[1:] {
			changes++
			for _, d := range []int64{-1, 0, 1} {
				check(z, time.Unix(sp.start+d, 0))
			}
		}
		check(z, time.Unix(spanStart-1, 0))
		check(z, time.Unix(spanEnd, 0))
		check(z, time.Date(2031, 7, 1, 22, 30, 0, 0, time.UTC))
	}
	// Every embedded zone keeps summer time (Directive 2000/84/EC): two
	// changes a year over 2024–2026; UTC none.
	if want := 6 * len(tzdataZones); changes != want {
		t.Errorf("%d offset changes found, want %d", changes, want)
	}
}

// TestRateChangesMatchCases: the exported list of changes is the one the
// local-midnight cases are built from.
func TestRateChangesMatchCases(t *testing.T) {
	chs := Rates().Changes()
	if len(chs) != len(changeDays()) {
		t.Fatalf("%d changes, %d change days", len(chs), len(changeDays()))
	}
	for i, c := range chs {
		k := changeDays()[i]
		if c.Country != k.key.country || c.Territory != k.key.territory || c.Series != k.key.series || c.Day != keyTime(k.day).Format(time.DateOnly) {
			t.Errorf("change %d: %+v, want %+v", i, c, k)
		}
		if got := dayIn(c.Midnight, zones[c.Zone]); got != k.day {
			t.Errorf("%+v: midnight falls on %d", c, got)
		}
		if got := dayIn(c.Midnight.Add(-time.Second), zones[c.Zone]); got == k.day {
			t.Errorf("%+v: a second before midnight is already the day", c)
		}
	}
}

// TestDateString: every day of the coverage, the days around it and far
// dates render as time.Format does; a covered day needs no allocation.
func TestDateString(t *testing.T) {
	from, to := rates.Coverage()
	for d := from.AddDate(0, 0, -40); !d.After(to.AddDate(0, 0, 40)); d = d.AddDate(0, 0, 1) {
		if got, want := dateString(dayKey(d)), d.Format(time.DateOnly); got != want {
			t.Fatalf("dateString(%d) = %q, want %q", dayKey(d), got, want)
		}
	}
	for _, k := range []int{10101, 19991231, 20240229, 99991231} {
		if got, want := dateString(k), keyTime(k).Format(time.DateOnly); got != want {
			t.Errorf("dateString(%d) = %q, want %q", k, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = dateString(20260410) }); n != 0 {
		t.Errorf("dateString of a covered day: %v allocations", n)
	}
}

// TestCoversSomewhere: the test in Unix seconds agrees with the days of
// the instant shifted by the extreme offsets, around both ends of the
// coverage (whole and fractional seconds) and far away.
func TestCoversSomewhere(t *testing.T) {
	byDay := func(at time.Time) bool {
		return dayKey(at.Add(maxZoneOffset)) >= rates.from && dayKey(at.Add(minZoneOffset)) <= rates.to
	}
	from, to := rates.Coverage()
	var instants []time.Time
	for _, edge := range []time.Time{from, to.AddDate(0, 0, 1)} {
		for d := -5 * time.Hour; d <= 5*time.Hour; d += 30 * time.Second {
			instants = append(instants, edge.Add(d), edge.Add(d-time.Nanosecond), edge.Add(d+time.Nanosecond))
		}
	}
	instants = append(instants, time.Time{}, time.Unix(0, 0), from.AddDate(-100, 0, 0), to.AddDate(100, 0, 0), from.AddDate(1, 0, 0))
	for _, at := range instants {
		if got, want := rates.coversSomewhere(at), byDay(at); got != want {
			t.Fatalf("coversSomewhere(%s) = %v, by day %v", at.Format(time.RFC3339Nano), got, want)
		}
	}
}
