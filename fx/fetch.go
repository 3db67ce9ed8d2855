package fx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The ECB's reference-rate feeds, listed on
// https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html.
// The daily file holds the latest publication, the 90-day file the
// last ~64 publications (use it to catch up after downtime), the history
// every publication since 1999.
const (
	URLDaily   = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
	URLHist90d = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"
	URLHist    = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml"
)

// fetchTimeout applies when Fetch is given a nil client.
const fetchTimeout = 30 * time.Second

// StatusError reports an HTTP response other than 200 OK from a feed. A 5xx
// status or a transport error means the feed is unavailable, not that the
// rates are wrong.
type StatusError struct {
	URL        string
	StatusCode int
	// RetryAfter is how long the server asked to wait before the next
	// request, read from the Retry-After header of a 429 or 503 answer
	// (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date taken relative to
	// the answer's own Date header, so that a skewed clock here does not
	// shorten or stretch it); 0 when the answer gave none, or a date
	// already past.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("fx: fetch %s: HTTP status %d", e.URL, e.StatusCode)
}

// Fetch downloads one of the ECB feeds (URLDaily, URLHist90d, URLHist, or a
// mirror of them; CSV is accepted too) and parses it. Its rates record the
// snapshot "fetch:sha256:<hex of the response body>". A nil hc uses a client
// with a 30 s timeout. Fetch never changes a table: Merge the result onto the
// one in use (see LiveTable.Merge), which refuses values that contradict
// what is already known.
//
// Errors: the context's error, a transport error, a *StatusError, or a
// *ParseError naming the URL (also for this project's two-column CSV whose
// last line has no line end: a body cut short where its connection closed).
func Fetch(ctx context.Context, hc *http.Client, url string) (*Table, error) {
	body, err := fetchBody(ctx, hc, url)
	if err != nil {
		return nil, err
	}
	return parseData(body, "fetch", url)
}

// fetchBody is Fetch's HTTP part: the body of a 200 response.
func fetchBody(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	if hc == nil {
		hc = &http.Client{Timeout: fetchTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fx: fetch: %w", err)
	}
	req.Header.Set("Accept", "application/xml, text/xml, text/csv;q=0.9")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fx: fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, &StatusError{URL: url, StatusCode: resp.StatusCode, RetryAfter: retryAfter(resp, time.Now())}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInputSize+1))
	if err != nil {
		return nil, fmt.Errorf("fx: fetch %s: %w", url, err)
	}
	if len(body) > maxInputSize {
		return nil, fmt.Errorf("fx: fetch %s: body larger than %d bytes", url, maxInputSize)
	}
	return body, nil
}

// retryAfter reads the Retry-After header of a 429 (Too Many Requests, RFC
// 6585 §4) or 503 (Service Unavailable, RFC 9110 §15.6.4) answer: a number
// of seconds, or an HTTP-date, which is measured from the answer's Date
// header when it has a valid one (the server's clock, RFC 9110 §6.6.1),
// else from now. Anything else, or another status, is 0.
func retryAfter(resp *http.Response, now time.Time) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 63); err == nil {
		if n > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		now = d
	}
	return min(max(at.Sub(now), 0), maxRetryAfter)
}

// maxRetryAfter bounds a server's Retry-After: a day, so that a wrong or
// hostile header cannot stop the rates from being fetched for longer (the
// refresher polls again at the next publication in any case).
const maxRetryAfter = 24 * time.Hour

// LiveTable is a Source whose table can be extended while it serves, e.g.
// by a goroutine that calls Fetch after each day's publication. Lookups see
// either the old or the new table, never a mix. The zero LiveTable is not
// usable; make one with NewLiveTable.
type LiveTable struct {
	cur atomic.Pointer[Table]
}

// NewLiveTable returns a LiveTable serving t.
func NewLiveTable(t *Table) *LiveTable {
	l := &LiveTable{}
	l.cur.Store(t)
	return l
}

// Table returns the table currently served.
func (l *LiveTable) Table() *Table { return l.cur.Load() }

// Merge merges overlay onto the table currently served (Table.Merge) and
// serves the result. On a conflict nothing changes and the error is a
// *ConflictError: a published value is never replaced.
func (l *LiveTable) Merge(overlay *Table) (*Table, error) {
	for {
		old := l.cur.Load()
		if old == nil {
			return nil, errors.New("fx: live table not initialised (use NewLiveTable)")
		}
		merged, err := old.Merge(overlay)
		if err != nil {
			return nil, err
		}
		if l.cur.CompareAndSwap(old, merged) {
			return merged, nil
		}
	}
}

// Range is Table.Range of the table currently served: the coverage moves
// with every publication merged.
func (l *LiveTable) Range() (first, last string) {
	if t := l.cur.Load(); t != nil {
		return t.Range()
	}
	return "", ""
}

// Rate implements Source with the table currently served.
func (l *LiveTable) Rate(ctx context.Context, quote string, at time.Time, p Policy) (Rate, error) {
	t := l.cur.Load()
	if t == nil {
		return Rate{}, errors.New("fx: live table not initialised (use NewLiveTable)")
	}
	return t.Rate(ctx, quote, at, p)
}
