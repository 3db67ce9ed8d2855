package listing_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/listing"
)

// BenchmarkList reads a page of 50 of 1,000 records, unfiltered and
// with a filter that keeps one record in four.
func BenchmarkList(b *testing.B) {
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC),
		fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}))
	books := fiscaltest.Books(b, e, 0)
	var wg sync.WaitGroup
	var next atomic.Uint64
	for c := 0; c < 32; c++ { // concurrent callers share commits: a quick setup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := next.Add(1); n <= 1000; n = next.Add(1) {
				if _, err := books.Settle(context.Background(), fiscaltest.Request(int(n), "11.90", []string{"DE", "FR", "IT", "ES"}[n%4], "2026-04-10T14:30:00Z"), ""); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, q := range []listing.Query{{Limit: 50}, {Limit: 50, TaxingCountry: "FR"}} {
		b.Run(fmt.Sprintf("taxingCountry=%q", q.TaxingCountry), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := listing.List(context.Background(), books, q)
				if err != nil || len(p.Data) != 50 {
					b.Fatal(err, len(p.Data))
				}
			}
		})
	}
}
