package refunds_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/refunds"
)

// BenchmarkRefund measures durable partial refunds (credit note rendered,
// numbered and stored, receipt signed, committer check, fsync) of distinct
// settlements with 1 and 8 concurrent callers, and of one settlement with 8
// callers (each refund of it waits for the previous one's state).
func BenchmarkRefund(b *testing.B) {
	for _, c := range []struct {
		callers int
		one     bool
	}{{1, false}, {8, false}, {8, true}} {
		b.Run(fmt.Sprintf("callers=%d/oneSettlement=%v", c.callers, c.one), func(b *testing.B) {
			books := benchEngine(b)
			ctx := context.Background()
			ids := make([]string, b.N)
			for i := range ids {
				req := benchRequest(uint64(i + 1))
				if c.one {
					req.AmountUSDC = "1000000"
				}
				if c.one && i > 0 {
					ids[i] = ids[0]
					continue
				}
				res, err := books.Settle(ctx, req, "")
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = res.Record.ID
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for w := 0; w < c.callers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						if _, err := refunds.Create(ctx, books, ids[n-1], refunds.Request{AmountUSDC: "0.01"}, ""); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "refunds/s")
		})
	}
}
