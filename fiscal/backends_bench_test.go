package fiscal_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// BenchmarkSettleBackends measures durable settlements per second with 32
// concurrent callers on the bbolt file and on PostgreSQL with 1 and with 3
// replicas (three engines sharing one log and its keys, the callers spread
// over them), in one run, and the cost of a group commit in round trips to
// the database (roundtrips/commit: 2 is one transaction of two pipelined
// round trips).
func BenchmarkSettleBackends(b *testing.B) {
	const callers = 32
	for _, bc := range []struct {
		name     string
		replicas int
	}{{"bbolt", 1}, {"postgres/replicas=1", 1}, {"postgres/replicas=3", 3}} {
		b.Run(bc.name, func(b *testing.B) {
			now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
			seller := fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}
			cfg := fiscaltest.Config(b, now, seller)
			if bc.name != "bbolt" {
				cfg.Store = pgtest.Schema(b)
			}
			books := make([]*fiscal.Books, bc.replicas)
			engines := make([]*fiscal.Engine, bc.replicas)
			for i := range bc.replicas {
				c := cfg
				if i > 0 { // a replica: its own directory with the shared keys
					c.Dir = b.TempDir()
					fiscaltest.CopyKeys(b, filepath.Join(cfg.Dir, "keys"), filepath.Join(c.Dir, "keys"))
				}
				engines[i] = fiscaltest.Engine(b, c)
				books[i] = fiscaltest.Books(b, engines[i], 0)
			}
			var next atomic.Uint64
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := range callers {
				bk := books[c%bc.replicas]
				wg.Go(func() {
					for {
						n := next.Add(1)
						if n > uint64(b.N) {
							return
						}
						if _, err := bk.Settle(context.Background(), benchRequest(n), ""); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			var commits, trips uint64
			var io, serial time.Duration
			for _, e := range engines {
				st := e.Ledger().Stats()
				commits, trips = commits+st.Commits, trips+st.RoundTrips
				io, serial = io+st.CommitterIO, serial+st.CommitterSerial
			}
			if commits > 0 {
				b.ReportMetric(float64(io.Microseconds())/float64(commits), "io-µs/commit")
				b.ReportMetric(float64(serial.Microseconds())/float64(commits), "serial-µs/commit")
				b.ReportMetric(float64(b.N)/float64(commits), "records/commit")
				b.ReportMetric(float64(trips)/float64(commits), "roundtrips/commit")
			}
		})
	}
}
