package ubl

import (
	"testing"
	"time"
)

// dateCases are FuzzDateOnly's seeds: leap days of
// leap and common centuries, month and day bounds, year 0000, signs,
// spaces and short fields, which time.Parse refuses or accepts.
var dateCases = []string{
	"2026-12-03", "2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2100-02-28",
	"0000-01-01", "0000-02-29", "9999-12-31", "2026-04-31", "2026-04-30", "2026-00-10",
	"2026-13-01", "2026-01-00", "2026-01-32", "2026-1-01", "+026-01-01", "2026-01-1 ",
	"2026/01/01", "20260101", "", "2026-01-011", " 2026-01-01", "2026-0a-01", "-001-01-01",
}

// FuzzDateOnly: dateOnly accepts exactly what time.Parse(time.DateOnly)
// accepts, with its year.
func FuzzDateOnly(f *testing.F) {
	for _, s := range dateCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		year, ok := dateOnly(s)
		want, err := time.Parse(time.DateOnly, s)
		if ok != (err == nil) || ok && year != want.Year() {
			t.Errorf("dateOnly(%q) = %d, %t; time.Parse: %v, %v", s, year, ok, want, err)
		}
	})
}
