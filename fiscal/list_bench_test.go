package fiscal_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
)

// BenchmarkBooksList reads a page of 50 of 1,000 records, unfiltered and
// with a filter that keeps one record in four.
func BenchmarkBooksList(b *testing.B) {
	books := benchEngine(b)
	var wg sync.WaitGroup
	var next atomic.Uint64
	for c := 0; c < 32; c++ { // concurrent callers share commits: a quick setup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= 1000; n = next.Add(1) {
				if _, err := books.Settle(context.Background(), benchRequest(n), ""); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, q := range []fiscal.ListQuery{{Limit: 50}, {Limit: 50, TaxingCountry: "FR"}} {
		b.Run(fmt.Sprintf("taxingCountry=%q", q.TaxingCountry), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := books.List(context.Background(), q)
				if err != nil || len(p.Data) != 50 {
					b.Fatal(err, len(p.Data))
				}
			}
		})
	}
}
