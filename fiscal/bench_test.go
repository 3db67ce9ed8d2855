package fiscal_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// benchEngine returns the books of a seller over the Art. 59c threshold on
// a fresh engine whose clock moves on by a microsecond at every reading, as
// a service's clock does: with fiscaltest's fixed clock every record of a
// run had the same createdAt, so the account-time index (account ‖
// createdAt ‖ record id) was keyed by the random record id, a random
// B-tree insert per record that no running service makes (its keys arrive
// in time order, at the index's right edge), and the pages it dirtied grew
// with the file.
func benchEngine(b testing.TB) *fiscal.Books { return benchAccounts(b, 1)[0] }

// benchAccounts is benchEngine with n sellers, each its own account on the
// one engine (and ledger), as a facilitator's books are: the same seller
// data under n names.
func benchAccounts(b testing.TB, n int) []*fiscal.Books {
	b.Helper()
	start := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	sellers := make([]fiscal.Seller, n)
	for i := range sellers {
		sellers[i] = fiscal.Seller{LegalName: "Bench Ltd", VATNumber: "IE1234567T", LegalID: "IE-CRO-1", Country: "IE", OverThreshold: true}
		if n > 1 { // one seller keeps the name (and the documents' bytes) of the tables before
			sellers[i].LegalName = fmt.Sprintf("Bench %d Ltd", i)
		}
	}
	cfg := fiscaltest.Config(b, start, sellers...)
	var ticks atomic.Int64
	cfg.Clock = func() time.Time { return start.Add(time.Duration(ticks.Add(1)) * time.Microsecond) }
	e := fiscaltest.Engine(b, cfg)
	books := make([]*fiscal.Books, n)
	for i := range books {
		books[i] = fiscaltest.Books(b, e, i)
	}
	return books
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
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) { benchSettle(b, benchAccounts(b, 1), callers) })
	}
}

// BenchmarkSettleAccounts is BenchmarkSettle at 64 callers with settlement
// n booked to account n mod 50 of one engine: a facilitator's books. Each
// account keeps its own postings and running totals, so a commit of ~30
// settlements would dirty pages of up to 30 accounts' indexes where one
// account's appends share a page (the ledger floor's accounts=50 row,
// ledger BenchmarkAppendFloor); the ledger writes those postings behind
// (ledger/doc.go, "Postings written behind"). serial-µs/record is what
// issue 22's "serial section ≤ 30 µs" meets for such books.
func BenchmarkSettleAccounts(b *testing.B) {
	b.Run("accounts=50/callers=64", func(b *testing.B) { benchSettle(b, benchAccounts(b, 50), 64) })
}

// benchSettle runs b.N settlements from callers goroutines, settlement n
// in the books n mod len(books), and reports the rows' metrics.
func benchSettle(b *testing.B, books []*fiscal.Books, callers int) {
	eng := books[0].Engine() // every books' engine: one ledger
	var next atomic.Uint64
	before := eng.Ledger().Stats()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu, ps, gc := time.Now(), cpuNow(b), readPTime(), readGC()
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
				if _, err := books[n%uint64(len(books))].Settle(context.Background(), benchRequest(n), ""); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	used := cpuNow(b) - cpu
	b.ReportMetric(float64(used)/float64(b.N)/1e3, "cpu-µs/record")
	// The Ps' time the scheduler counts busy beside the time the
	// process ran on a CPU: a P held by a goroutine blocked in a
	// system call (the committer's fdatasyncs) is busy but runs
	// nothing, and no other goroutine can use it.
	if busy, total := readPTime().since(ps); total > 0 {
		b.ReportMetric(100*busy/total, "p-busy-%")
		b.ReportMetric(100*used.Seconds()/total, "p-on-cpu-%")
	}
	// How often the collector ran, and the Ps' time it took from
	// the settlements: at Go's default GOGC the cycles follow the
	// settlements in flight more than the bytes each allocates
	// (README, "Throughput benchmarks").
	if now := readGC(); now.ok && gc.ok {
		b.ReportMetric(1e3*(now.cycles-gc.cycles)/float64(b.N), "gc-cycles/1k-records")
		b.ReportMetric(1e6*(now.ps-gc.ps)/float64(b.N), "gc-p-µs/record")
	}
	st := eng.Ledger().Stats()
	if n := st.Appended - before.Appended; n > 0 {
		b.ReportMetric(float64(st.CommitterSerial-before.CommitterSerial)/float64(n)/1e3, "serial-µs/record")
		if cpu := st.CommitterCPU - before.CommitterCPU; cpu > 0 {
			b.ReportMetric(float64(cpu)/float64(n)/1e3, "committer-cpu-µs/record")
		}
		b.ReportMetric(float64(n)/float64(st.Commits-before.Commits), "records/commit")
		b.ReportMetric(float64(st.CommitterIO-before.CommitterIO)/float64(st.Commits-before.Commits)/1e3, "io-µs/commit")
		b.ReportMetric(float64(time.Since(start))/float64(st.Commits-before.Commits)/1e3, "wall-µs/commit")
		b.ReportMetric(float64(st.PagesWritten-before.PagesWritten)/float64(n), "pages/record")
	}
	if hits, misses := fiscal.NumberingStats(eng); hits+misses > 0 {
		b.ReportMetric(100*float64(misses)/float64(hits+misses), "%renumbered")
		b.ReportMetric(100*float64(fiscal.PredictionsRevoked(eng))/float64(hits+misses), "%revoked")
	}
}

// pTime is the scheduler's account of the Ps' time (runtime/metrics'
// /cpu/classes, in P-seconds: GOMAXPROCS × wall time): the total and the
// part the Ps were idle.
type pTime struct{ idle, total float64 }

func readPTime() pTime {
	s := []metrics.Sample{{Name: "/cpu/classes/idle:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 || s[1].Value.Kind() != metrics.KindFloat64 {
		return pTime{}
	}
	return pTime{s[0].Value.Float64(), s[1].Value.Float64()}
}

// since returns the P-seconds busy (not idle) and in all since p.
func (q pTime) since(p pTime) (busy, total float64) {
	total = q.total - p.total
	return total - (q.idle - p.idle), total
}

// gcCount is the collector's cycles so far and the P-seconds it took
// from the program's goroutines by the runtime's account (runtime/metrics
// /cpu/classes/gc: assists, dedicated mark workers and stop-the-world
// pauses, which count every P; not the idle mark workers, which run only
// on Ps with nothing else to do). ok is false where a metric is missing or
// of another kind.
type gcCount struct {
	cycles, ps float64
	ok         bool
}

func readGC() gcCount {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"}, {Name: "/cpu/classes/gc/pause:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return gcCount{}
	}
	c := gcCount{cycles: float64(s[0].Value.Uint64()), ok: true}
	for _, v := range s[1:] {
		if v.Value.Kind() != metrics.KindFloat64 {
			return gcCount{}
		}
		c.ps += v.Value.Float64()
	}
	return c
}

// settleRange settles requests first+1 … first+n with callers goroutines.
func settleRange(b *testing.B, books *fiscal.Books, callers int, first, n uint64) {
	var next atomic.Uint64
	next.Store(first)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > first+n {
					return
				}
				if _, err := books.Settle(context.Background(), benchRequest(i), ""); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkSettleScale grows one engine's ledger through Engine.Settle (64
// callers) to 1 k records, then (FISCAL402_BENCH_SCALE=100k or 1M) to
// 100 k and 1 M, and at each size reports the throughput of the next 10,000
// settlements (2,000 until stop 48: a 0.15 s window, which a background
// sync of the file could halve), the bbolt pages they wrote per record and the ledger file's
// bytes per record. Run it with
// -benchtime 1x: the sizes are the scenario, not b.N.
func BenchmarkSettleScale(b *testing.B) {
	const measure = 10_000
	sizes := []uint64{1_000}
	switch os.Getenv("FISCAL402_BENCH_SCALE") {
	case "100k":
		sizes = append(sizes, 100_000)
	case "1M":
		sizes = append(sizes, 100_000, 1_000_000)
	}
	books := benchEngine(b)
	path := books.Engine().Ledger().Path()
	at := uint64(0)
	for _, size := range sizes {
		settleRange(b, books, 64, at, size-at)
		at = size
		before := books.Engine().Ledger().Stats()
		start := time.Now()
		settleRange(b, books, 64, at, measure)
		at += measure
		label := map[uint64]string{1_000: "1k", 100_000: "100k", 1_000_000: "1M"}[size]
		b.ReportMetric(measure/time.Since(start).Seconds(), "records/s@"+label)
		st := books.Engine().Ledger().Stats()
		b.ReportMetric(float64(st.PagesWritten-before.PagesWritten)/measure, "pages/record@"+label)
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/float64(at), "bytes/record@"+label)
	}
}
