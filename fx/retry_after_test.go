package fx

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestRefresherHonoursRetryAfter: a feed that answers 429 or 503 with
// Retry-After (RFC 9110 §10.2.3) is not asked again sooner than it said,
// in seconds or as an HTTP-date read against the answer's own Date (not
// this machine's clock); a shorter wait than the backoff's, a header on
// another status, or one that does not parse leave the backoff as it is; a
// wait beyond a day is cut to a day.
func TestRefresherHonoursRetryAfter(t *testing.T) {
	backoff := func(d time.Duration) bool { return d >= DefaultRetryMin/2 && d <= DefaultRetryMin }
	for _, c := range []struct {
		name   string
		code   int
		header http.Header
		want   func(time.Duration) bool
		wantRA time.Duration
	}{
		{"503 seconds", 503, http.Header{"Retry-After": {"7200"}}, func(d time.Duration) bool { return d == 2*time.Hour }, 2 * time.Hour},
		{"429 HTTP-date against the answer's Date", 429, http.Header{
			"Date":        {"Tue, 14 Apr 2026 10:00:00 GMT"},
			"Retry-After": {"Tue, 14 Apr 2026 13:00:00 GMT"},
		}, func(d time.Duration) bool { return d == 3*time.Hour }, 3 * time.Hour},
		{"shorter than the backoff", 503, http.Header{"Retry-After": {"5"}}, backoff, 5 * time.Second},
		{"beyond a day", 503, http.Header{"Retry-After": {"99999999999"}}, func(d time.Duration) bool { return d == 24*time.Hour }, 24 * time.Hour},
		{"on a 502", 502, http.Header{"Retry-After": {"7200"}}, backoff, 0},
		{"not a delay", 503, http.Header{"Retry-After": {"soon"}}, backoff, 0},
		{"a date already past", 503, http.Header{
			"Date":        {"Tue, 14 Apr 2026 10:00:00 GMT"},
			"Retry-After": {"Tue, 14 Apr 2026 09:00:00 GMT"},
		}, backoff, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-14")...)
			ecb.set(func(f *fakeECB) { f.failNext, f.failCode, f.header = 1, c.code, c.header })
			clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
			g := newRig(t, ecb, clock, &MemoryStore{})
			next, err := g.r.RunOnce(context.Background())
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != c.code {
				t.Fatalf("err = %v, want HTTP status %d", err, c.code)
			}
			if se.RetryAfter != c.wantRA {
				t.Errorf("StatusError.RetryAfter = %s, want %s", se.RetryAfter, c.wantRA)
			}
			if d := next.Sub(clock.Now()); !c.want(d) {
				t.Errorf("next attempt in %s", d)
			}
			clock.set(next)
			if _, err := g.r.RunOnce(context.Background()); err != nil {
				t.Fatalf("once the server answers: %v", err)
			}
		})
	}
}
