package webhooks_test

import (
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/webhooks"
)

func TestScheduleNominal(t *testing.T) {
	var s webhooks.Schedule
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, 64 * time.Minute, 128 * time.Minute, 256 * time.Minute, 8 * time.Hour, 8 * time.Hour}
	for i, w := range want {
		if got := s.Nominal(i + 1); got != w {
			t.Errorf("Nominal(%d) = %s, want %s", i+1, got, w)
		}
	}
	if got := s.Nominal(1000); got != 8*time.Hour {
		t.Errorf("Nominal(1000) = %s, want the cap", got)
	}
	custom := webhooks.Schedule{First: time.Second, Max: 10 * time.Second}
	if got := custom.Nominal(5); got != 10*time.Second {
		t.Errorf("custom Nominal(5) = %s", got)
	}
}

func TestScheduleJitterBounds(t *testing.T) {
	var s webhooks.Schedule
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for failed := 1; failed <= 12; failed++ {
		nominal := s.Nominal(failed)
		lo, _ := s.Next(start, start, failed, 0, 0)
		hi, _ := s.Next(start, start, failed, 0, 0.999999)
		mid, _ := s.Next(start, start, failed, 0, 0.5)
		if d := lo.Sub(start); d != time.Duration(float64(nominal)*0.8) {
			t.Errorf("failed %d: lowest delay %s, want 80%% of %s", failed, d, nominal)
		}
		if d := hi.Sub(start); d > time.Duration(float64(nominal)*1.2) || d < nominal {
			t.Errorf("failed %d: highest delay %s, want just under 120%% of %s", failed, d, nominal)
		}
		if d := mid.Sub(start); d != nominal {
			t.Errorf("failed %d: middle delay %s, want %s", failed, d, nominal)
		}
	}
}

func TestScheduleHorizonAndRetryAfter(t *testing.T) {
	var s webhooks.Schedule
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	deadline := start.Add(72 * time.Hour)

	// Retry-After longer than the backoff wins.
	next, ok := s.Next(start, start, 1, 10*time.Minute, 0.5)
	if !ok || next.Sub(start) != 10*time.Minute {
		t.Errorf("Retry-After 10m: next at +%s, ok %v", next.Sub(start), ok)
	}
	// Shorter than the backoff: the backoff wins (never earlier than either).
	next, _ = s.Next(start, start, 3, 5*time.Second, 0.5)
	if next.Sub(start) != 2*time.Minute {
		t.Errorf("Retry-After 5s: next at +%s, want +2m", next.Sub(start))
	}
	// A delay past the horizon is moved to the horizon: one last attempt.
	late := deadline.Add(-time.Hour)
	next, ok = s.Next(start, late, 15, 0, 0.5)
	if !ok || !next.Equal(deadline) {
		t.Errorf("near the horizon: %s %v, want the deadline", next, ok)
	}
	next, ok = s.Next(start, late, 1, 30*24*time.Hour, 0.5)
	if !ok || !next.Equal(deadline) {
		t.Errorf("huge Retry-After: %s %v, want the deadline", next, ok)
	}
	// At or past the horizon: give up.
	if _, ok := s.Next(start, deadline, 19, 0, 0.5); ok {
		t.Error("at the deadline: still retrying")
	}
	// Every attempt of a full round lies within the 3 days, and the round
	// has between 15 and 25 attempts whatever the jitter.
	for _, u := range []float64{0, 0.3, 0.999} {
		now, attempts := start, 1
		for {
			n, ok := s.Next(start, now, attempts, 0, u)
			if !ok {
				break
			}
			if n.Before(now) || n.After(deadline) {
				t.Fatalf("u=%v attempt %d at %s outside [%s, %s]", u, attempts+1, n, now, deadline)
			}
			now = n
			attempts++
		}
		if attempts < 15 || attempts > 25 {
			t.Errorf("u=%v: %d attempts in a round", u, attempts)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"Fri, 10 Apr 2026 12:05:00 GMT", 5 * time.Minute, true},
		{"Fri, 10 Apr 2026 11:00:00 GMT", 0, true}, // in the past
		{"Friday, 10-Apr-26 12:01:00 GMT", time.Minute, true},
		{"99999999999999999999999", 366 * 24 * time.Hour, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range cases {
		got, ok := webhooks.ParseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s %v, want %s %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "Fri, 10 Apr 2026 12:05:00 GMT", "", "-1", "9999999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 4, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := webhooks.ParseRetryAfter(v, now)
		if d < 0 || d > 366*24*time.Hour || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %s %v", v, d, ok)
		}
	})
}

func BenchmarkScheduleNext(b *testing.B) {
	var s webhooks.Schedule
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		s.Next(start, start.Add(time.Hour), 9, 0, 0.42)
	}
}
