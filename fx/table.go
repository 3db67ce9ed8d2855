package fx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Table is an immutable set of ECB reference-rate publications together with
// the spans of days it covers completely. It is safe for concurrent use; Merge
// returns a new Table.
//
// A day inside a covered span either has a publication in the table or had
// none at the ECB. Outside the covered spans the table knows nothing, and only
// TARGET closing days are known to be without publication.
type Table struct {
	// The publications, in memory the collector need not scan: the days
	// and their rates are arrays without pointers, the texts (dates, raw
	// rates) one string, the names (quotes, snapshots) a handful. A table
	// of ECB history holds ~7,000 days; as slices of strings and decimals
	// (a big.Int each) it was ~25,000 objects that every collection
	// marked again, at ~1 ms of CPU per collection per table on the 2-CPU
	// development VM (fiscal's BenchmarkSettle collects every ~85
	// settlements). fixings gives them back as values.
	days     []dayEntry                // ascending, one per publication day
	rates    []rateEntry               // the days' rates, each day's sorted by quote
	text     string                    // the days' dates and the raw rates
	names    []string                  // the quotes and snapshots rateEntry names
	bigs     map[int32]decimal.Decimal // values whose coefficient has more than 18 digits, by rate index
	coverage []span                    // ascending, disjoint, not adjacent
	quotes   []string                  // sorted set of quote currencies with at least one rate
}

// dayEntry is one day's publication in a Table.
type dayEntry struct {
	day     day
	first   int32 // its rates are rates[first:] up to the next day's first
	date    int32 // offset of day.String() in text
	dateLen int32
}

// rateEntry is one rate of a day's publication in a Table: its value as
// coefficient × 10^exp (as the decimal the raw text parses to), its raw
// text in the table's text, its quote and snapshot in its names.
type rateEntry struct {
	coef            int64
	exp             int32
	raw, rawLen     int32
	quote, snapshot uint32
}

// fixing is one day's publication: the rates the table knows for that day.
// Parsing and merging build tables from them (newTable).
type fixing struct {
	day   day
	date  string      // day.String(), kept to avoid formatting on every lookup
	rates []quoteRate // sorted by quote
}

type quoteRate struct {
	quote    string
	raw      string
	value    decimal.Decimal
	snapshot string
}

// span is a closed interval of days.
type span struct{ first, last day }

// Span is a closed range of reference dates, YYYY-MM-DD.
type Span struct {
	First string `json:"first"`
	Last  string `json:"last"`
}

func (f *fixing) rate(quote string) (quoteRate, bool) {
	for _, r := range f.rates {
		if r.quote == quote {
			return r, true
		}
	}
	return quoteRate{}, false
}

// newTable builds a table from fixings (sorted, unique days) and spans
// (sorted, disjoint).
func newTable(fixings []fixing, coverage []span) *Table {
	t := &Table{coverage: normalizeSpans(coverage), days: make([]dayEntry, len(fixings))}
	n, size := 0, 0
	for _, f := range fixings {
		n += len(f.rates)
		size += len(f.date)
		for _, r := range f.rates {
			size += len(r.raw)
		}
	}
	t.rates = make([]rateEntry, 0, n)
	var text strings.Builder
	text.Grow(size)
	index := map[string]uint32{}
	name := func(s string) uint32 {
		i, ok := index[s]
		if !ok {
			i = uint32(len(t.names))
			index[s] = i
			t.names = append(t.names, s)
		}
		return i
	}
	for k, f := range fixings {
		t.days[k] = dayEntry{day: f.day, first: int32(len(t.rates)), date: int32(text.Len()), dateLen: int32(len(f.date))}
		text.WriteString(f.date)
		for _, r := range f.rates {
			e := rateEntry{raw: int32(text.Len()), rawLen: int32(len(r.raw)), quote: name(r.quote), snapshot: name(r.snapshot)}
			text.WriteString(r.raw)
			if r.value.NumDigits() <= 18 {
				e.coef, e.exp = r.value.CoefficientInt64(), r.value.Exponent()
			} else {
				if t.bigs == nil {
					t.bigs = map[int32]decimal.Decimal{}
				}
				t.bigs[int32(len(t.rates))] = r.value
			}
			t.rates = append(t.rates, e)
		}
	}
	t.text = text.String()
	seen := map[string]bool{}
	for _, f := range fixings {
		for _, r := range f.rates {
			if !seen[r.quote] {
				seen[r.quote] = true
				t.quotes = append(t.quotes, r.quote)
			}
		}
	}
	slices.Sort(t.quotes)
	return t
}

// date is day k's date, YYYY-MM-DD.
func (t *Table) date(k int) string {
	d := t.days[k]
	return t.text[d.date : d.date+d.dateLen]
}

// dayRates is day k's rates.
func (t *Table) dayRates(k int) []rateEntry {
	end := len(t.rates)
	if k+1 < len(t.days) {
		end = int(t.days[k+1].first)
	}
	return t.rates[t.days[k].first:end]
}

// quoteRate is rate i of the table as a value (the decimal made again
// from its coefficient: the value the raw text parsed to, bit for bit).
func (t *Table) quoteRate(i int32) quoteRate {
	e := t.rates[i]
	v, ok := t.bigs[i]
	if !ok {
		v = decimal.New(e.coef, e.exp)
	}
	return quoteRate{quote: t.names[e.quote], raw: t.text[e.raw : e.raw+e.rawLen], value: v, snapshot: t.names[e.snapshot]}
}

// rate is day k's rate of quote.
func (t *Table) rate(k int, quote string) (quoteRate, bool) {
	first := t.days[k].first
	for j, e := range t.dayRates(k) {
		if t.names[e.quote] == quote {
			return t.quoteRate(first + int32(j)), true
		}
	}
	return quoteRate{}, false
}

// fixings returns the table's publications as values (for merging and
// tests; lookups read the compact form).
func (t *Table) fixings() []fixing {
	out := make([]fixing, len(t.days))
	for k, d := range t.days {
		f := fixing{day: d.day, date: t.date(k)}
		for j := range t.dayRates(k) {
			f.rates = append(f.rates, t.quoteRate(d.first+int32(j)))
		}
		out[k] = f
	}
	return out
}

// search is the first day index at which after(day) holds (sort.Search).
func (t *Table) search(after func(day) bool) int {
	return sort.Search(len(t.days), func(i int) bool { return after(t.days[i].day) })
}

// normalizeSpans sorts spans and joins overlapping and adjacent ones.
func normalizeSpans(in []span) []span {
	s := slices.Clone(in)
	slices.SortFunc(s, func(a, b span) int {
		switch {
		case a.first < b.first:
			return -1
		case a.first > b.first:
			return 1
		}
		return 0
	})
	var out []span
	for _, sp := range s {
		if n := len(out); n > 0 && sp.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, sp.last)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Range returns the reference dates of the first and last publication in the
// table, YYYY-MM-DD, or two empty strings for an empty table.
func (t *Table) Range() (first, last string) {
	if len(t.days) == 0 {
		return "", ""
	}
	return t.date(0), t.date(len(t.days) - 1)
}

// Coverage returns the spans of days the table covers completely, ascending.
// A table parsed from one file has a single span from its first to its last
// publication (split only where a weekday that is not a TARGET closing day is
// missing from the file); a merged table can have holes, e.g. when a daily
// feed was merged onto an older snapshot. Lookups that need a day in a hole
// fail with ErrNotYetPublished.
func (t *Table) Coverage() []Span {
	out := make([]Span, len(t.coverage))
	for i, s := range t.coverage {
		out[i] = Span{First: s.first.String(), Last: s.last.String()}
	}
	return out
}

// Quotes returns the quote currencies the table has rates for, sorted.
func (t *Table) Quotes() []string { return slices.Clone(t.quotes) }

// Len returns the number of publication days in the table.
func (t *Table) Len() int { return len(t.days) }

// covering returns the covered span containing d.
func (t *Table) covering(d day) (span, bool) {
	i := sort.Search(len(t.coverage), func(i int) bool { return t.coverage[i].last >= d })
	if i < len(t.coverage) && t.coverage[i].first <= d {
		return t.coverage[i], true
	}
	return span{}, false
}

// firstUnknown returns the first day in [from, to] that may have had a
// publication the table does not hold: a day neither covered by the table nor
// a TARGET closing day.
func (t *Table) firstUnknown(from, to day) (day, bool) {
	for d := from; d <= to; {
		if s, ok := t.covering(d); ok {
			d = s.last + 1
			continue
		}
		if !targetClosingDay(d) {
			return d, true
		}
		d++
	}
	return 0, false
}

// Rate implements Source. The lookup is in memory; ctx is only checked for
// cancellation. See Lookup.
func (t *Table) Rate(ctx context.Context, quote string, at time.Time, p Policy) (Rate, error) {
	if err := ctx.Err(); err != nil {
		return Rate{}, err
	}
	return t.Lookup(quote, at, p)
}

// Lookup returns the USD-per-EUR (or quote-per-EUR) reference rate that policy
// p selects for the instant at:
//
//   - ForDayOrPrevious (and the zero Policy): the publication of the UTC date
//     of at, else the latest before it.
//   - LatestPublishedAt: the latest publication made by at, counting a
//     reference date D from 16:00 Frankfurt time (CET/CEST) on D.
//   - PeriodEndOrNext: the publication of the UTC date of at, else the next
//     one after it.
//
// A rate is never interpolated, inverted or carried past a day on which a
// publication could have been missed: falling back from date D to an earlier
// publication P needs every day in (P, D] to be covered by the table or a
// TARGET closing day; otherwise the error wraps ErrNotYetPublished. The
// same holds forwards for PeriodEndOrNext. Dates before the first publication
// and quotes the table lacks give ErrNoRate; an unknown policy gives
// ErrPolicy.
func (t *Table) Lookup(quote string, at time.Time, p Policy) (Rate, error) {
	switch p {
	case "", ForDayOrPrevious:
		return t.onOrBefore(quote, utcDay(at), "", ForDayOrPrevious)
	case LatestPublishedAt:
		requested := at.UTC().Format(time.RFC3339Nano)
		return t.onOrBefore(quote, lastVisibleDay(at), requested, LatestPublishedAt)
	case PeriodEndOrNext:
		return t.onOrAfter(quote, utcDay(at))
	}
	return Rate{}, fmt.Errorf("%w %q", ErrPolicy, string(p))
}

func (t *Table) hasQuote(quote string) bool {
	_, ok := slices.BinarySearch(t.quotes, quote)
	return ok
}

// onOrBefore answers with the latest publication on or before d. An empty
// requested means d itself, formatted only when it differs from the answer's
// date (most lookups are for publication days and then allocate nothing).
func (t *Table) onOrBefore(quote string, d day, requested string, p Policy) (Rate, error) {
	if requested == "" {
		i := t.search(func(x day) bool { return x >= d })
		if i < len(t.days) && t.days[i].day == d {
			requested = t.date(i)
		} else {
			requested = d.String()
		}
	}
	if !t.hasQuote(quote) {
		return Rate{}, fmt.Errorf("%w: %s: quote not in table", ErrNoRate, quote)
	}
	// i is the number of publications on or before d.
	i := t.search(func(x day) bool { return x > d })
	if i == 0 {
		return Rate{}, fmt.Errorf("%w: %s for %s: before the first publication %s", ErrNoRate, quote, requested, t.date(0))
	}
	if f := t.days[i-1].day; f < d {
		if u, ok := t.firstUnknown(f+1, d); ok {
			return Rate{}, t.unknownError(quote, requested, u)
		}
	}
	return t.answer(i-1, quote, requested, p)
}

// onOrAfter answers with the publication of d, else the next one.
func (t *Table) onOrAfter(quote string, d day) (Rate, error) {
	requested := d.String()
	if !t.hasQuote(quote) {
		return Rate{}, fmt.Errorf("%w: %s: quote not in table", ErrNoRate, quote)
	}
	if d < t.days[0].day {
		return Rate{}, fmt.Errorf("%w: %s for %s: before the first publication %s", ErrNoRate, quote, requested, t.date(0))
	}
	// i is the first publication on or after d.
	i := t.search(func(x day) bool { return x >= d })
	if i == len(t.days) {
		// The next publication is not in the table. Nothing can be said,
		// whatever the calendar, because the answer lies in the future.
		return Rate{}, fmt.Errorf("%w: %s for %s: the next publication after the last known one (%s) is not in the table",
			ErrNotYetPublished, quote, requested, t.date(len(t.days)-1))
	}
	if f := t.days[i].day; f > d {
		if u, ok := t.firstUnknown(d, f-1); ok {
			return Rate{}, t.unknownError(quote, requested, u)
		}
	}
	return t.answer(i, quote, requested, PeriodEndOrNext)
}

// unknownError explains why day u blocks an answer.
func (t *Table) unknownError(quote, requested string, u day) error {
	last := len(t.days) - 1
	if u > t.days[last].day {
		return fmt.Errorf("%w: %s for %s: the table ends at %s and %s is a TARGET business day",
			ErrNotYetPublished, quote, requested, t.date(last), u)
	}
	return fmt.Errorf("%w: %s for %s: the table has no data for %s (a TARGET business day in a gap of its coverage)",
		ErrNotYetPublished, quote, requested, u)
}

// answer is day k's rate of quote.
func (t *Table) answer(k int, quote, requested string, p Policy) (Rate, error) {
	r, ok := t.rate(k, quote)
	if !ok {
		return Rate{}, fmt.Errorf("%w: %s for %s: the table has no %s rate for the reference date %s",
			ErrNoRate, quote, requested, quote, t.date(k))
	}
	var from string
	if p == LatestPublishedAt {
		from = publicationInstant(t.days[k].day).Format(time.RFC3339)
	}
	return Rate{
		PublishedFrom: from,
		Base:          "EUR",
		Quote:         quote,
		Raw:           r.raw,
		Value:         r.value,
		RateDate:      t.date(k),
		Requested:     requested,
		Policy:        p,
		Source:        sourceFor(quote),
		Snapshot:      r.snapshot,
	}, nil
}

// ErrConflict means two data sets disagree about a publication. Published
// values are never overwritten, so Merge refuses; the error is a
// *ConflictError.
var ErrConflict = errors.New("fx: conflicting publications")

// published marks, in a ConflictError, the side that has a publication.
const published = "published"

// ConflictError describes the first disagreement Merge found. Base and
// Overlay are the raw values each table holds for Quote on Date. An empty
// Quote means one table has a publication on a day the other covers as a day
// without one: that table's field is "published", the other's is empty.
type ConflictError struct {
	Date    string
	Quote   string
	Base    string
	Overlay string
}

func (e *ConflictError) Error() string {
	if e.Quote == "" {
		which := "overlay"
		if e.Base == "" {
			which = "base"
		}
		return fmt.Sprintf("fx: conflicting publications on %s: the %s covers that day but has no publication for it", e.Date, which)
	}
	return fmt.Sprintf("fx: conflicting publications for %s on %s: base %q, overlay %q", e.Quote, e.Date, e.Base, e.Overlay)
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// Merge returns a new table with the publications and coverage of both t and
// overlay. A value both tables hold for the same quote and date must be
// numerically equal (the ECB trims trailing zeros in some files, so "1.184"
// and "1.1840" agree); t's raw string and snapshot are kept. A different
// value, or a publication on a day the other table covers as a day without
// one, is a *ConflictError: published values are never overwritten.
func (t *Table) Merge(overlay *Table) (*Table, error) {
	if overlay == nil {
		return nil, errors.New("fx: merge: nil overlay")
	}
	if err := checkCoverage(t, overlay, true); err != nil {
		return nil, err
	}
	if err := checkCoverage(overlay, t, false); err != nil {
		return nil, err
	}
	out := make([]fixing, 0, len(t.days)+len(overlay.days))
	a, b := t.fixings(), overlay.fixings()
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].day < b[0].day):
			out = append(out, a[0])
			a = a[1:]
		case len(a) == 0 || b[0].day < a[0].day:
			out = append(out, b[0])
			b = b[1:]
		default:
			f, err := mergeFixing(a[0], b[0])
			if err != nil {
				return nil, err
			}
			out = append(out, f)
			a, b = a[1:], b[1:]
		}
	}
	coverage := append(slices.Clone(t.coverage), overlay.coverage...)
	return newTable(out, coverage), nil
}

// checkCoverage fails if other has a publication on a day that covered covers
// without one.
func checkCoverage(covered, other *Table, coveredIsBase bool) error {
	for k, f := range other.days {
		if _, ok := covered.covering(f.day); !ok {
			continue
		}
		i := covered.search(func(x day) bool { return x >= f.day })
		if i < len(covered.days) && covered.days[i].day == f.day {
			continue
		}
		e := &ConflictError{Date: other.date(k)}
		if coveredIsBase {
			e.Overlay = published
		} else {
			e.Base = published
		}
		return e
	}
	return nil
}

func mergeFixing(base, overlay fixing) (fixing, error) {
	rates := slices.Clone(base.rates)
	for _, o := range overlay.rates {
		if b, ok := base.rate(o.quote); ok {
			if !b.value.Equal(o.value) {
				return fixing{}, &ConflictError{Date: base.date, Quote: o.quote, Base: b.raw, Overlay: o.raw}
			}
			continue
		}
		rates = append(rates, o)
	}
	slices.SortFunc(rates, func(x, y quoteRate) int { return strings.Compare(x.quote, y.quote) })
	return fixing{day: base.day, date: base.date, rates: rates}, nil
}
