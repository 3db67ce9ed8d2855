package fx

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkTableLookup: the lookup on the path of every settlement.
func BenchmarkTableLookup(b *testing.B) {
	tb := embedded(b)
	for _, bc := range []struct {
		name string
		at   time.Time
		p    Policy
	}{
		{"ForDayOrPrevious", time.Date(2025, 6, 18, 10, 0, 0, 0, time.UTC), ForDayOrPrevious},
		{"ForDayOrPrevious/weekend", time.Date(2025, 6, 22, 10, 0, 0, 0, time.UTC), ForDayOrPrevious},
		{"LatestPublishedAt", time.Date(2025, 6, 18, 10, 0, 0, 0, time.UTC), LatestPublishedAt},
		{"PeriodEndOrNext", time.Date(2025, 5, 31, 10, 0, 0, 0, time.UTC), PeriodEndOrNext},
		{"NotYetPublished", time.Date(2026, 4, 14, 10, 0, 0, 0, time.UTC), ForDayOrPrevious},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = tb.Lookup("USD", bc.at, bc.p)
			}
		})
	}
}

func BenchmarkConvertUSDC(b *testing.B) {
	r, err := embedded(b).Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), ForDayOrPrevious)
	if err != nil {
		b.Fatal(err)
	}
	amount := dec("1234.567891")
	b.ReportAllocs()
	for b.Loop() {
		_ = ConvertUSDC(amount, r)
	}
}

// BenchmarkEmbedded: the start-up cost of parsing the embedded series.
func BenchmarkEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Embedded(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMergeDaily: merging one day's feed onto the full series, as an
// updater does once a day.
func BenchmarkMergeDaily(b *testing.B) {
	tb := embedded(b)
	daily, err := ParseXML(strings.NewReader(dailyXML("2026-04-14", "USD", "1.1702")), "fetch:bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tb.Merge(daily); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConvertUSDCExact: ConvertUSDC plus the exact 12-place gross, the
// conversion the engine makes per settlement once it keeps exact figures.
func BenchmarkConvertUSDCExact(b *testing.B) {
	r, err := embedded(b).Lookup("USD", time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC), ForDayOrPrevious)
	if err != nil {
		b.Fatal(err)
	}
	amount := dec("1234.567891")
	b.ReportAllocs()
	for b.Loop() {
		_ = ConvertUSDCExact(amount, r)
	}
}

// BenchmarkSplitGross: the exact net/VAT split of one settlement's gross.
func BenchmarkSplitGross(b *testing.B) {
	gross, rate := dec("1056.659270797672"), dec("21")
	b.ReportAllocs()
	for b.Loop() {
		_, _ = SplitGross(gross, rate)
	}
}

// BenchmarkSettlementFX: everything fx does per settlement with exact
// figures: the lookup, the exact conversion and the split.
func BenchmarkSettlementFX(b *testing.B) {
	tb := embedded(b)
	at := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	amount, rate := dec("1234.567891"), dec("21")
	b.ReportAllocs()
	for b.Loop() {
		r, err := tb.Lookup("USD", at, LatestPublishedAt)
		if err != nil {
			b.Fatal(err)
		}
		c := ConvertUSDCExact(amount, r)
		_, _ = SplitGross(c.GrossEURExact, rate)
	}
}
