package returns

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/shown"
)

// Period is a calendar quarter, the tax period of the OSS (Art. 364 and
// 369f Directive 2006/112/EC).
type Period struct {
	Year    int
	Quarter int // 1..4
}

var periodText = regexp.MustCompile(`^([0-9]{4})-Q([1-4])$`)

// ParsePeriod reads "2026-Q1". Its errors are *fiscal.Error (bad_request,
// field "period").
func ParsePeriod(s string) (Period, error) {
	m := periodText.FindStringSubmatch(s)
	if m == nil {
		return Period{}, badRequest("period", "is %s; want a calendar quarter as YYYY-Qn, e.g. 2026-Q1", shown.Quote(s))
	}
	y, _ := strconv.Atoi(m[1])
	p := Period{Year: y, Quarter: int(m[2][0] - '0')}
	if err := p.check(); err != nil {
		return Period{}, err
	}
	return p, nil
}

// check refuses a Period that is no calendar quarter ParsePeriod would
// give (a Go caller may build one by hand, the zero Period included).
func (p Period) check() error {
	if p.Year < 2015 || p.Year > 9998 {
		return badRequest("period", "year %d is out of range", p.Year)
	}
	if p.Quarter < 1 || p.Quarter > 4 {
		return badRequest("period", "quarter %d is not 1 to 4", p.Quarter)
	}
	return nil
}

// PeriodOf is the quarter of a date (YYYY-MM-DD).
func PeriodOf(date string) (Period, error) {
	t, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return Period{}, fmt.Errorf("returns: date %q: %w", date, err)
	}
	return Period{Year: t.Year(), Quarter: (int(t.Month())-1)/3 + 1}, nil
}

func (p Period) String() string { return fmt.Sprintf("%04d-Q%d", p.Year, p.Quarter) }

// Start is 00:00 UTC of the quarter's first day.
func (p Period) Start() time.Time {
	return time.Date(p.Year, time.Month(3*(p.Quarter-1)+1), 1, 0, 0, 0, 0, time.UTC)
}

// End is 00:00 UTC of the day after the quarter's last day.
func (p Period) End() time.Time { return p.Start().AddDate(0, 3, 0) }

// FirstDay and LastDay are the quarter's first and last calendar days.
func (p Period) FirstDay() string { return p.Start().Format(time.DateOnly) }
func (p Period) LastDay() string  { return p.End().AddDate(0, 0, -1).Format(time.DateOnly) }

// Contains reports whether the calendar day date (YYYY-MM-DD) lies in p.
func (p Period) Contains(date string) bool {
	return date >= p.FirstDay() && date <= p.LastDay()
}

// DueDate is the last day (YYYY-MM-DD) to submit the quarter's OSS return
// and pay its VAT: the end of the month following the quarter (Art. 364,
// 367, 369f and 369i Directive 2006/112/EC). End is the first day of that
// month; a month later, less a day, is its last.
func (p Period) DueDate() string { return p.End().AddDate(0, 1, -1).Format(time.DateOnly) }

// Next is the following quarter.
func (p Period) Next() Period {
	if p.Quarter == 4 {
		return Period{Year: p.Year + 1, Quarter: 1}
	}
	return Period{Year: p.Year, Quarter: p.Quarter + 1}
}

// localMargin bounds how far the local day of a supply in any taxing
// territory can be from its UTC day: EU clocks run from UTC-1 (Azores) to
// UTC+3 (summer time in Cyprus, Greece, Finland, the Baltic states,
// Bulgaria, Romania). A day is a generous bound that no zone approaches.
const localMargin = 24 * time.Hour

// ended reports whether the quarter is over everywhere at now: its last
// local day has ended in every taxing territory.
func (p Period) ended(now time.Time) bool { return !now.Before(p.End().Add(localMargin)) }

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}
