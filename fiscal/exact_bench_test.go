package fiscal_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
)

// exactWork is the exact arithmetic one settlement does beyond the cent
// figures (issue 15): the gross at fx.ExactScale decimals, the exact
// split into net and VAT, and the three exact strings of the record.
func exactWork(amount decimal.Decimal, rate fx.Rate, pct decimal.Decimal) int {
	gross := fx.DivExact(amount, rate.Value)
	net, vat := fx.SplitGross(gross, pct)
	return len(gross.StringFixed(fx.ExactScale)) + len(net.StringFixed(fx.ExactScale)) + len(vat.StringFixed(fx.ExactScale))
}

// cpuNow is the process's user + system CPU time.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("getrusage:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExactShare: the exact arithmetic of a settlement against the
// CPU a whole settlement costs (one caller, fsynced: the process's CPU
// time per settlement, not the wall time spent waiting for the disk).
// Reports exact-ns/op, settle-cpu-ns/op and exact-%-of-settle (the issue's
// budget is 5 %).
func BenchmarkExactShare(b *testing.B) {
	rate, err := fx.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	r, err := rate.Lookup("USD", time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC), fx.LatestPublishedAt)
	if err != nil {
		b.Fatal(err)
	}
	amount, pct := decimal.RequireFromString("0.040123"), decimal.NewFromInt(19)
	books := benchEngine(b)
	const warm = 50
	for i := 0; i < warm; i++ {
		if _, err := books.Settle(context.Background(), benchRequest(uint64(1<<40+i)), ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	cpu0 := cpuNow(b)
	for i := 0; i < b.N; i++ {
		if _, err := books.Settle(context.Background(), benchRequest(uint64(i)), ""); err != nil {
			b.Fatal(err)
		}
	}
	settleCPU := float64(cpuNow(b)-cpu0) / float64(b.N)
	b.StopTimer()
	const rounds = 20000
	sink := 0
	t0 := time.Now()
	for i := 0; i < rounds; i++ {
		sink += exactWork(amount, r, pct)
	}
	exact := float64(time.Since(t0).Nanoseconds()) / rounds
	if sink == 0 {
		b.Fatal("no work")
	}
	b.ReportMetric(exact, "exact-ns/op")
	b.ReportMetric(settleCPU, "settle-cpu-ns/op")
	b.ReportMetric(100*exact/settleCPU, "exact-%-of-settle")
}
