package returns_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/returns"
)

// benchRecords is the size of the benchmark's quarter; FISCAL402_BENCH_RECORDS
// overrides it (a smaller quarter for a quick look).
func benchRecords() int {
	if n, err := strconv.Atoi(os.Getenv("FISCAL402_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// benchBooks opens books holding n Q1 2026 sales in ten member states. The
// ledger is built once (concurrent callers share commits) and kept in the
// temporary directory for later runs of the benchmark (its name says n
// and the format), since recording 100,000 sales takes minutes.
func benchBooks(b *testing.B, n int) *fiscal.Books {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("fiscal402-returns-bench-v1-%d", n))
	cfg := fiscaltest.Config(b, testNow, ossSeller())
	cfg.Dir, cfg.NoBackground = dir, true
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err != nil {
		_ = os.RemoveAll(dir)
		e := fiscaltest.Engine(b, cfg)
		books := fiscaltest.Books(b, e, 0)
		countries := []string{"DE", "FR", "IT", "ES", "NL", "AT", "BE", "PL", "SE", "FI"}
		start := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
		step := time.Duration(int64(89*24*time.Hour) / int64(n))
		var next atomic.Int64
		var wg sync.WaitGroup
		for c := 0; c < 64; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1); i <= int64(n); i = next.Add(1) {
					req := fiscaltest.Request(0, fmt.Sprintf("%d.%02d", 1+i%500, i%100), countries[i%10], start.Add(time.Duration(i)*step).Format(time.RFC3339))
					req.TxHash = fmt.Sprintf("0x%064x", i)
					if i%3 == 0 {
						req.SupplyKind = "ebook"
						if countries[i%10] == "IT" {
							req.RateConditions = []string{"it_isbn_issn"}
						}
					}
					if _, err := books.Settle(context.Background(), req, ""); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e := fiscaltest.Engine(b, cfg)
	return fiscaltest.Books(b, e, 0)
}

// BenchmarkOSSReturn100k computes and signs the return of a quarter of
// 100,000 records, reading the ledger a page at a time. It reports the
// peak heap in use while the returns run (the return itself lists 100,000
// ledger indexes) and the CPU time per return beside the allocations.
func BenchmarkOSSReturn100k(b *testing.B) {
	n := benchRecords()
	books := benchBooks(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	// The peak heap while the returns run, sampled every 5 ms: a return
	// that loaded every record would show it.
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		ret, doc, err := returns.OSS(ctx, books, q1, returns.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if ret.Total.Records+ret.Excluded.Pending.Records != n || len(doc.JWS) == 0 {
			b.Fatalf("%d records in the return, want %d", ret.Total.Records+ret.Excluded.Pending.Records, n)
		}
	}
	cpu := cpuTime() - cpu0
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak.Load())/(1<<20), "MiB-peak-heap")
	// The machine may be shared: the process's CPU time per return says
	// what the work costs, whatever the wall clock.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
