package httpserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHTTPSettle measures POST /settlements end to end over loopback
// HTTP (strict decoding, auth, engine, durable append, encoding) with 1, 8
// and 64 concurrent clients.
func BenchmarkHTTPSettle(b *testing.B) {
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			f := newFixture(b)
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			client := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			// The request bodies are made before the clock starts: building
			// them (a map marshalled per request) is the test's work, not
			// the server's, and shares the CPU with it.
			bodies := make([][]byte, b.N+1)
			for n := 1; n <= b.N; n++ {
				bodies[n] = mustJSON(b, settlement(map[string]any{"txHash": txHash(n)}))
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						req, _ := http.NewRequest("POST", f.srv.URL+"/settlements", bytes.NewReader(bodies[n]))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("X-Service-Key", keyA)
						resp, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusCreated {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}
