package ledger

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppend measures durable appends (real file, fsync per commit)
// with 1, 8 and 64 concurrent appenders; leaf ~600 bytes (a receipt JWS),
// documents ~4 KB (record JSON + UBL), one claim and one posting each. The
// records/s metric is the throughput; ns/op is per record.
func BenchmarkAppend(b *testing.B) {
	leaf := bytes.Repeat([]byte("j"), 600)
	record := bytes.Repeat([]byte("r"), 1024)
	ubl := bytes.Repeat([]byte("u"), 3072)
	for _, appenders := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("appenders=%d", appenders), func(b *testing.B) {
			l, _, _ := testLedger(b)
			b.ReportAllocs()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range appenders {
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						id := fmt.Sprintf("x402-%016x", i)
						_, err := l.Append(context.Background(), Append{
							Claims: []Claim{{Space: "payment", Key: id, Fingerprint: leaf[:32]}},
							Build: func(int64) (Entry, error) {
								return Entry{
									ID:       id,
									Leaf:     leaf,
									Docs:     map[string][]byte{"record": record, "ubl": ubl},
									Postings: []Posting{{Index: "by_account", Key: []byte("acct\x00" + id)}},
								}, nil
							},
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkInclusionProof measures proof generation on a 4096-leaf log,
// the read behind every receipt and proof request.
func BenchmarkInclusionProof(b *testing.B) {
	l, _, _ := testLedger(b, func(o *Options) { o.MaxBatch = 1024 })
	fillLedger(b, l, 4096)
	size := l.Size()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		p, err := l.InclusionProof(i%size, size)
		if err != nil || len(p) != 12 {
			b.Fatalf("proof of %d: %d hashes, %v", i%size, len(p), err)
		}
		i += 97
	}
}

// BenchmarkCheck measures a full re-verification of a 4096-leaf log
// (ns/op is per file).
func BenchmarkCheck(b *testing.B) {
	l, _, _ := testLedger(b, func(o *Options) { o.MaxBatch = 64 })
	fillLedger(b, l, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Check(); err != nil {
			b.Fatal(err)
		}
	}
}

// fillLedger appends n small entries from 64 goroutines.
func fillLedger(b *testing.B, l *Ledger, n int) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if _, err := l.Append(context.Background(), Append{Build: simpleEntry(fmt.Sprint("f", i))}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if l.Size() != int64(n) {
		b.Fatalf("size %d, want %d", l.Size(), n)
	}
}
