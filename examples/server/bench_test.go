package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkServerHTTP posts settlements to the real server binary over
// loopback HTTP with 32 concurrent clients (bench/run.sh). Every 201 is
// durable: the server answers only after the ledger's commit was fsynced.
// It reports settlements per second, the ledger file's bytes per record,
// and, on Linux, the CPU time per record of the server process and of the
// clients (this process), which on a shared machine move less than wall
// time, and the server's peak resident memory.
func BenchmarkServerHTTP(b *testing.B) {
	for _, clients := range []int{32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			dir := b.TempDir()
			p := startServer(b, dir)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			serverStart, serverOK := procCPU(p.cmd.Process.Pid)
			clientStart, clientOK := selfCPU()
			start := time.Now()
			for range clients {
				wg.Go(func() {
					for {
						n := int(next.Add(1))
						if n > b.N {
							return
						}
						if status, body := p.post(n); status != 201 {
							b.Errorf("post %d: status %d %s", n, status, body)
							return
						}
					}
				})
			}
			wg.Wait()
			el := time.Since(start)
			clientEnd, _ := selfCPU()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
			if rss, ok := procPeakRSS(p.cmd.Process.Pid); ok {
				b.ReportMetric(float64(rss)/(1<<20), "server-peak-rss-MiB")
			}
			p.kill()
			if fi, err := os.Stat(filepath.Join(dir, "ledger.db")); err == nil {
				b.ReportMetric(float64(fi.Size())/float64(b.N), "bytes/record")
			}
			if ps := p.cmd.ProcessState; ps != nil && serverOK {
				total := ps.UserTime() + ps.SystemTime()
				b.ReportMetric(float64((total-serverStart).Microseconds())/float64(b.N), "server-cpu-µs/record")
			}
			if clientOK {
				b.ReportMetric(float64((clientEnd-clientStart).Microseconds())/float64(b.N), "client-cpu-µs/record")
			}
		})
	}
}
