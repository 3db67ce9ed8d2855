package fx

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// ParseError reports input that is not a valid ECB rates file. Line is the
// 1-based line of the problem (0 when it concerns the input as a whole).
type ParseError struct {
	Name   string // the file path or URL when known, else ""
	Format string // "csv" or "xml"
	Line   int
	Msg    string
}

func (e *ParseError) Error() string {
	where := e.Format
	if e.Name != "" {
		where = e.Name
	}
	if e.Line > 0 {
		return fmt.Sprintf("fx: parse %s: line %d: %s", where, e.Line, e.Msg)
	}
	return fmt.Sprintf("fx: parse %s: %s", where, e.Msg)
}

const (
	// maxLine bounds one CSV line; the ECB history has 43 short fields.
	maxLine = 64 << 10
	// maxRawLen bounds a rate string; the ECB publishes at most 6
	// significant digits (e.g. "15008.07", "0.84603").
	maxRawLen = 32
	// maxInputSize bounds what LoadFile and Fetch read; the full ECB XML
	// history is a few MB.
	maxInputSize = 64 << 20
)

// euroStart is 1999-01-01: there are no euro reference rates before it.
const euroStart day = 10592

// parseRateValue checks that raw is a plain positive decimal as the ECB
// writes it (digits, optionally a point and digits; no sign, exponent or
// spaces) and returns its value.
func parseRateValue(raw string) (decimal.Decimal, error) {
	if raw == "" || len(raw) > maxRawLen {
		return decimal.Decimal{}, errors.New("not a rate")
	}
	point := false
	for i, c := range []byte(raw) {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !point && i > 0 && i < len(raw)-1:
			point = true
		default:
			return decimal.Decimal{}, errors.New("not a plain decimal")
		}
	}
	v, err := decimal.NewFromString(raw)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if !v.IsPositive() {
		return decimal.Decimal{}, errors.New("not positive")
	}
	return v, nil
}

// builder collects one file's publications.
type builder struct {
	format   string
	snapshot string
	fixings  []fixing
	lines    []int // line of each fixing, for duplicate reports
}

func (b *builder) errorf(line int, format string, args ...any) error {
	return &ParseError{Format: b.format, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// add records one publication; date is d as YYYY-MM-DD (the input's own
// string when it has that form, which saves formatting it again).
func (b *builder) add(line int, d day, date string, rates []quoteRate) {
	b.fixings = append(b.fixings, fixing{day: d, date: date, rates: rates})
	b.lines = append(b.lines, line)
}

// table sorts the publications (the ECB writes its history newest first, our
// file oldest first), rejects duplicate dates and derives the coverage.
//
// A file is taken to list every publication between its first and last
// date, except that a missing weekday that is not a TARGET closing day
// (from 2002, when the calendar took effect) splits the coverage: such a gap
// is more likely a damaged file than an ECB holiday, so lookups that need it
// fail with ErrNotYetPublished rather than fall back to an older rate.
func (b *builder) table(lastLine int) (*Table, error) {
	if len(b.fixings) == 0 {
		return nil, b.errorf(lastLine, "no rates")
	}
	idx := make([]int, len(b.fixings))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case b.fixings[i].day < b.fixings[j].day:
			return -1
		case b.fixings[i].day > b.fixings[j].day:
			return 1
		}
		return 0
	})
	fixings := make([]fixing, len(idx))
	for k, i := range idx {
		fixings[k] = b.fixings[i]
		if k > 0 && fixings[k].day == fixings[k-1].day {
			first, second := b.lines[idx[k-1]], b.lines[i]
			return nil, b.errorf(max(first, second), "duplicate reference date %s (also on line %d)", fixings[k].date, min(first, second))
		}
	}
	var coverage []span
	start := fixings[0].day
	for k := 1; k < len(fixings); k++ {
		prev, next := fixings[k-1].day, fixings[k].day
		for d := prev + 1; d < next; d++ {
			if d >= targetCalendarSince && !targetClosingDay(d) {
				coverage = append(coverage, span{start, prev})
				start = next
				break
			}
		}
	}
	coverage = append(coverage, span{start, fixings[len(fixings)-1].day})
	return newTable(fixings, coverage), nil
}

// checkDate rejects reference dates before the euro.
func (b *builder) checkDate(line int, d day, s string) error {
	if d < euroStart {
		return b.errorf(line, "reference date %s is before the euro (1999-01-01)", s)
	}
	return nil
}

// ParseCSV reads ECB reference rates in either of two CSV layouts:
//
//   - this project's file, header "date,usd_per_eur", one "YYYY-MM-DD,rate"
//     line per publication (data/ecb-eurusd.csv, see data/SOURCE.md);
//   - the ECB's eurofxref-hist.csv (and the one-day eurofxref.csv): header
//     "Date,USD,JPY,...," with one column per currency and a trailing comma,
//     "N/A" where a currency has no rate, newest first, dates as YYYY-MM-DD
//     or "13 April 2026", fields optionally padded with spaces (as in
//     https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip and
//     eurofxref.zip).
//
// Rows may come in any order; a date twice is an error, and so is a date
// without any rate (a publication is its rates: a row of N/A only would
// mark the day as published with nothing in it). Rates are kept as
// the exact strings published. Every rate of the table records snapshot as
// its Snapshot. Errors are *ParseError naming the line, or the reader's error.
func ParseCSV(r io.Reader, snapshot string) (*Table, error) {
	if snapshot == "" {
		return nil, errors.New("fx: parse csv: empty snapshot name")
	}
	b := &builder{format: "csv", snapshot: snapshot}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var (
		line    int
		ecb     bool
		nfields int
		cols    []csvColumn // value columns sorted by quote
	)
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if line == 1 {
			var err error
			ecb, nfields, cols, err = b.csvHeader(strings.TrimPrefix(text, "\ufeff"))
			if err != nil {
				return nil, err
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != nfields {
			return nil, b.errorf(line, "%d fields, the header has %d", len(fields), nfields)
		}
		date := strings.TrimSpace(fields[0])
		d, ok := parseISODate(date)
		iso := date
		if !ok && ecb {
			d, ok = parseLongDate(date)
			iso = d.String()
		}
		if !ok {
			return nil, b.errorf(line, "bad date %q", date)
		}
		if err := b.checkDate(line, d, date); err != nil {
			return nil, err
		}
		rates := make([]quoteRate, 0, len(cols))
		for _, c := range cols {
			raw := strings.TrimSpace(fields[c.index])
			if ecb && (raw == "N/A" || raw == "") {
				continue // the ECB published no rate for this currency that day
			}
			v, err := parseRateValue(raw)
			if err != nil {
				return nil, b.errorf(line, "%s rate %q: %v", c.quote, raw, err)
			}
			rates = append(rates, quoteRate{quote: c.quote, raw: raw, value: v, snapshot: snapshot})
		}
		if len(rates) == 0 {
			return nil, b.errorf(line, "no rates for %s", iso)
		}
		b.add(line, d, iso, rates)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, b.errorf(line+1, "line longer than %d bytes", maxLine)
		}
		return nil, fmt.Errorf("fx: read csv: %w", err)
	}
	if line == 0 {
		return nil, b.errorf(0, "empty input")
	}
	return b.table(line)
}

type csvColumn struct {
	quote string
	index int
}

// csvHeader recognises the header line and returns the layout.
func (b *builder) csvHeader(text string) (ecb bool, nfields int, cols []csvColumn, err error) {
	fields := strings.Split(text, ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	switch {
	case len(fields) == 2 && fields[0] == "date" && fields[1] == "usd_per_eur":
		return false, 2, []csvColumn{{quote: "USD", index: 1}}, nil
	case fields[0] == "Date":
		seen := map[string]bool{}
		for i, f := range fields[1:] {
			if f == "" && i == len(fields)-2 {
				continue // the ECB ends every line with a comma
			}
			if !isCurrencyCode(f) {
				return false, 0, nil, b.errorf(1, "column %d: %q is not a currency code", i+2, f)
			}
			if seen[f] {
				return false, 0, nil, b.errorf(1, "column %d: currency %s twice", i+2, f)
			}
			seen[f] = true
			cols = append(cols, csvColumn{quote: f, index: i + 1})
		}
		if len(cols) == 0 {
			return false, 0, nil, b.errorf(1, "no currency columns")
		}
		slices.SortFunc(cols, func(x, y csvColumn) int { return strings.Compare(x.quote, y.quote) })
		return true, len(fields), cols, nil
	}
	return false, 0, nil, b.errorf(1, "unrecognised header %q: want \"date,usd_per_eur\" or the ECB's \"Date,USD,...\"", truncate(text, 40))
}

// isCurrencyCode reports whether s has the shape of an ISO 4217 code.
func isCurrencyCode(s string) bool {
	if len(s) != 3 {
		return false
	}
	for _, c := range []byte(s) {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// parseLongDate parses the ECB's one-day CSV date, e.g. "13 April 2026".
func parseLongDate(s string) (day, bool) {
	t, err := time.Parse("2 January 2006", s)
	if err != nil {
		return 0, false
	}
	return utcDay(t), true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// XML namespaces of the ECB feeds (e.g.
// https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml): a
// gesmes:Envelope holding Cube > Cube[time] > Cube[currency, rate].
const (
	nsGesmes    = "http://www.gesmes.org/xml/2002-08-01"
	nsEurofxref = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
)

// ParseXML reads the ECB's XML feeds: eurofxref-daily.xml,
// eurofxref-hist-90d.xml and eurofxref-hist.xml. The document must be a
// gesmes:Envelope whose eurofxref Cube holds one Cube per reference date
// (attribute time) holding one Cube per currency (attributes currency and
// rate); a reference date without any rate is an error, not a publication
// (an empty Cube is a feed caught mid-update or cut short: taking it would
// mark the day as published with nothing in it, and no later feed would be
// asked for it). Other envelope children (subject, Sender) are ignored. Rates are
// kept as the exact strings published; every rate records snapshot as its
// Snapshot. Errors are *ParseError naming the line.
func ParseXML(r io.Reader, snapshot string) (*Table, error) {
	if snapshot == "" {
		return nil, errors.New("fx: parse xml: empty snapshot name")
	}
	b := &builder{format: "xml", snapshot: snapshot}
	dec := xml.NewDecoder(r)
	var (
		depth    int
		roots    int
		dayLine  int
		dayDate  day
		dayISO   string
		dayRates []quoteRate
	)
	for {
		tok, err := dec.Token()
		line, _ := dec.InputPos()
		if err == io.EOF {
			if roots == 0 {
				return nil, b.errorf(0, "empty input")
			}
			return b.table(line)
		}
		if err != nil {
			return nil, b.errorf(line, "%v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			cube := el.Name.Space == nsEurofxref && el.Name.Local == "Cube"
			switch depth {
			case 1:
				roots++
				if roots > 1 {
					return nil, b.errorf(line, "more than one root element")
				}
				if el.Name.Space != nsGesmes || el.Name.Local != "Envelope" {
					return nil, b.errorf(line, "root element is {%s}%s, want the ECB's gesmes:Envelope", el.Name.Space, el.Name.Local)
				}
			case 2:
				if !cube {
					if err := dec.Skip(); err != nil {
						line, _ := dec.InputPos()
						return nil, b.errorf(line, "%v", err)
					}
					depth--
				}
			case 3:
				if !cube {
					return nil, b.errorf(line, "unexpected element %s in Cube", el.Name.Local)
				}
				s := attr(el, "time")
				d, ok := parseISODate(s)
				if !ok {
					return nil, b.errorf(line, "bad Cube time %q", s)
				}
				if err := b.checkDate(line, d, s); err != nil {
					return nil, err
				}
				dayLine, dayDate, dayISO, dayRates = line, d, s, nil
			case 4:
				if !cube {
					return nil, b.errorf(line, "unexpected element %s in Cube", el.Name.Local)
				}
				q, raw := attr(el, "currency"), attr(el, "rate")
				if !isCurrencyCode(q) {
					return nil, b.errorf(line, "bad currency %q", q)
				}
				v, err := parseRateValue(raw)
				if err != nil {
					return nil, b.errorf(line, "%s rate %q: %v", q, raw, err)
				}
				for _, r := range dayRates {
					if r.quote == q {
						return nil, b.errorf(line, "currency %s twice on %s", q, dayDate)
					}
				}
				dayRates = append(dayRates, quoteRate{quote: q, raw: raw, value: v, snapshot: snapshot})
			default:
				return nil, b.errorf(line, "unexpected element %s inside a rate", el.Name.Local)
			}
		case xml.EndElement:
			if depth == 3 {
				if len(dayRates) == 0 {
					return nil, b.errorf(dayLine, "no rates for %s", dayISO)
				}
				slices.SortFunc(dayRates, func(x, y quoteRate) int { return strings.Compare(x.quote, y.quote) })
				b.add(dayLine, dayDate, dayISO, dayRates)
			}
			depth--
		case xml.CharData:
			if depth >= 2 && len(bytes.TrimSpace(el)) > 0 {
				return nil, b.errorf(line, "unexpected text in Cube")
			}
		}
	}
}

// attr returns the value of the unqualified attribute name.
func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// parseData parses CSV or XML, recognised by content, and names the
// snapshot "<origin>:sha256:<hex of data>".
func parseData(data []byte, origin, name string) (*Table, error) {
	sum := sha256.Sum256(data)
	snapshot := origin + ":sha256:" + hex.EncodeToString(sum[:])
	var (
		t   *Table
		err error
	)
	if looksLikeXML(data) {
		t, err = ParseXML(bytes.NewReader(data), snapshot)
	} else if origin == "fetch" && cutShort(data) {
		return nil, &ParseError{Name: name, Format: "csv", Line: bytes.Count(data, []byte("\n")) + 1,
			Msg: "the last line has no line end: the body may have been cut short"}
	} else {
		t, err = ParseCSV(bytes.NewReader(data), snapshot)
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.Name = name
	}
	return t, err
}

// cutShort reports whether data is this project's two-column CSV (oldest
// first, every line ended, as data/ecb-eurusd.csv and its generator write
// it) whose last line has no line end. A body delimited by the closing of
// its connection ends without a transport error wherever the connection
// drops; in this layout the cut falls in the newest rate, which would
// still read as a number ("1.1684" as "1.16"). The ECB's own CSV layouts
// (newest first, a comma after the last field) show a cut as a short line.
func cutShort(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	return bytes.HasPrefix(data, []byte("date,usd_per_eur")) && !bytes.HasSuffix(data, []byte("\n"))
}

func looksLikeXML(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '<'
}

// LoadFile reads an ECB rates file in any format ParseCSV or ParseXML
// accepts, recognised by content (XML starts with '<'). Its rates record the
// snapshot "file:sha256:<hex of the file's bytes>", so a record can be traced
// to the exact file an operator loaded (the server's -fx-file flag). Merge
// the result onto Embedded to extend the series.
func LoadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fx: load: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInputSize+1))
	if err != nil {
		return nil, fmt.Errorf("fx: load %s: %w", path, err)
	}
	if len(data) > maxInputSize {
		return nil, fmt.Errorf("fx: load %s: larger than %d bytes", path, maxInputSize)
	}
	return parseData(data, "file", path)
}
