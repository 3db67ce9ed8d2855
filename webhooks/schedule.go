package webhooks

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule is the retry schedule of one delivery: exponential backoff with
// jitter, for a bounded time. The zero value of each field means its
// default (DefaultFirst, DefaultMax, DefaultHorizon).
//
// The nominal delay after the n-th failed attempt is First·2^(n-1), capped
// at Max; the actual delay is drawn uniformly within ±20 % of it (jitter, so
// that deliveries that failed together do not retry together). Retrying
// stops Horizon after the first attempt of the round; the last retry is
// moved to the horizon itself when the next one would fall past it.
type Schedule struct {
	First   time.Duration // delay after the first failure; 0 means DefaultFirst
	Max     time.Duration // cap of a single delay; 0 means DefaultMax
	Horizon time.Duration // retry window from the first attempt; 0 means DefaultHorizon
}

// The default schedule retries for up to 3 days, like Stripe in live mode
// ("for up to three days with an exponential back off",
// https://docs.stripe.com/webhooks, "Retry behavior"; Standard Webhooks
// recommends a schedule "spanning multiple days, with an exponential backoff"
// and jitter, https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md,
// "Deliverability and reliability"). Its nominal delays are
// 30 s, 1 m, 2 m, 4 m, 8 m, 16 m, 32 m, 1 h 4 m, 2 h 8 m, 4 h 16 m, then
// 8 h until the horizon: about 19 attempts in 72 hours.
const (
	DefaultFirst   = 30 * time.Second
	DefaultMax     = 8 * time.Hour
	DefaultHorizon = 72 * time.Hour
)

// jitterFraction is the ± spread of a delay around its nominal value.
const jitterFraction = 0.2

func (s Schedule) withDefaults() Schedule {
	if s.First <= 0 {
		s.First = DefaultFirst
	}
	if s.Max <= 0 {
		s.Max = DefaultMax
	}
	if s.Horizon <= 0 {
		s.Horizon = DefaultHorizon
	}
	if s.Max < s.First {
		s.Max = s.First
	}
	return s
}

// Nominal is the delay after the failed-th failed attempt (1-based) before
// jitter.
func (s Schedule) Nominal(failed int) time.Duration {
	s = s.withDefaults()
	d := s.First
	for i := 1; i < failed && d < s.Max; i++ {
		d *= 2
	}
	return min(d, s.Max)
}

// Next returns when to try again after the failed-th failed attempt of a
// round that began at start, with now the time the failure was seen. u in
// [0, 1) draws the jitter (the caller's injected randomness: Next itself is
// deterministic). retryAfter > 0 is the receiver's Retry-After (on 429 or
// 503): the next attempt is never earlier than that. ok is false when the
// round is over: the horizon has passed.
func (s Schedule) Next(start, now time.Time, failed int, retryAfter time.Duration, u float64) (next time.Time, ok bool) {
	s = s.withDefaults()
	deadline := start.Add(s.Horizon)
	if !now.Before(deadline) {
		return time.Time{}, false
	}
	u = min(max(u, 0), 1)
	nominal := s.Nominal(failed)
	d := time.Duration(float64(nominal) * (1 - jitterFraction + 2*jitterFraction*u))
	d = max(d, retryAfter)
	next = now.Add(d)
	if next.After(deadline) {
		next = deadline
	}
	return next, true
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds or an HTTP-date, which now turns into a delay. ok is false
// for an absent or malformed value; a date in the past is a zero delay.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxRetryAfterSeconds {
			// Overflow or absurd: treat as "much later", bounded.
			return maxRetryAfterSeconds * time.Second, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfterSeconds*time.Second), true
}

// maxRetryAfterSeconds bounds a Retry-After to a year, far past any retry
// horizon, so that the arithmetic cannot overflow.
const maxRetryAfterSeconds = 366 * 24 * 3600
