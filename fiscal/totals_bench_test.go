package fiscal_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/vat"
)

// BenchmarkThresholdDecision: the determination of an account's sale with
// its Art. 59c running-total lookup, as Prepare makes it: two point reads
// of the side bucket (this year and last) plus vat.Determine on the
// result. No ledger scan: the cost does not grow with the records (the
// ledger holds 2,000 here). Target: within 5 µs.
func BenchmarkThresholdDecision(b *testing.B) {
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	fill(b, e, 2000)
	seller := smallIrishSeller
	at := time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC)
	gross := decimal.RequireFromString("10.17")
	determine := func(cb *vat.CrossBorderTotals) {
		d := vat.Determine(vat.Input{
			Seller: vat.Seller{Country: seller.Country, VATNumber: seller.VATNumber, CrossBorder: cb, Registrations: seller.Registrations},
			Buyer:  vat.Buyer{Country: "DE"},
			Supply: vat.Supply{Kind: vat.KindSaaS, Date: at, GrossEUR: gross},
		})
		if !d.Determined() || d.Threshold == nil {
			b.Fatalf("%+v", d.Reasons)
		}
	}
	cb, err := e.ThresholdInputs(fiscaltest.AccountID(0), seller, at)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for i := 0; i < b.N; i++ {
			if _, err := e.ThresholdInputs(fiscaltest.AccountID(0), seller, at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("determine", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for i := 0; i < b.N; i++ {
			determine(cb)
		}
	})
	b.Run("lookup+determine", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b, cpuTime())
		for i := 0; i < b.N; i++ {
			cb, err := e.ThresholdInputs(fiscaltest.AccountID(0), seller, at)
			if err != nil {
				b.Fatal(err)
			}
			determine(cb)
		}
	})
}

// fill settles n sales to German and French consumers with 64 concurrent
// callers (the ledger groups them into commits).
func fill(tb testing.TB, e *fiscal.Engine, n int) {
	tb.Helper()
	books := fiscaltest.Books(tb, e, 0)
	var next atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				req := fiscaltest.Request(0, "0.50", []string{"DE", "FR"}[i%2], "2026-04-10T14:30:00Z")
				req.TxHash = fmt.Sprintf("0x%064x", 1_000_000+i)
				if _, err := books.Settle(context.Background(), req, ""); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRebuildTotals: the running totals built again from the ledger,
// as New does once for a ledger written before the engine kept them: one
// pass over the account-time index reading each record. Records from
// FISCAL402_BENCH_RECORDS (default 10,000); ns/op is one whole rebuild,
// records/s its rate.
func BenchmarkRebuildTotals(b *testing.B) {
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("FISCAL402_BENCH_RECORDS")); err == nil && v > 0 {
		n = v
	}
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller))
	start := time.Now()
	fill(b, e, n)
	b.Logf("%d records written in %s", n, time.Since(start).Round(time.Millisecond))
	books := fiscaltest.Books(b, e, 0)
	kept, err := books.Totals(context.Background())
	if err != nil || len(kept) != 1 {
		b.Fatalf("%+v %v", kept, err)
	}
	key := []byte(fiscaltest.AccountID(0) + "\x002026")
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.RebuildTotals(context.Background(), key); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// CPU time as well as wall time: on a shared machine the wall time
	// measures the other processes too.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	rebuilt, err := books.Totals(context.Background())
	if err != nil || len(rebuilt) != 1 || rebuilt[0] != kept[0] {
		b.Fatalf("rebuilt %+v, kept %+v (%v)", rebuilt, kept, err)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per iteration since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
