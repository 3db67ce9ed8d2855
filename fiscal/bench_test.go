package fiscal_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// benchEngine returns the books of a seller over the Art. 59c threshold on
// a fresh engine.
func benchEngine(b *testing.B) *fiscal.Books {
	b.Helper()
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC),
		fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}))
	return fiscaltest.Books(b, e, 0)
}

func benchRequest(n uint64) fiscal.SettlementRequest {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n)
	sum := sha256.Sum256(buf[:])
	return fiscal.SettlementRequest{
		AmountUSDC: "11.90", TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: []string{"DE", "FR", "IT", "ES"}[n%4],
	}
}

// BenchmarkSettle measures durable settlements (each fsynced before it
// returns) through Engine.Settle with 1, 8 and 64 concurrent callers; the
// ledger groups concurrent appends into one commit.
func BenchmarkSettle(b *testing.B) {
	for _, callers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			e := benchEngine(b)
			var next atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := 0; c < callers; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						n := next.Add(1)
						if n > uint64(b.N) {
							return
						}
						if _, err := e.Settle(context.Background(), benchRequest(n), ""); err != nil {
							b.Error(err)
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
