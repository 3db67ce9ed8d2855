package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkOpenKeys measures what the IDs and claims of a large log cost
// at Open and in memory: a file of FISCAL402_BENCH_OPEN bare entries
// (default 100 k; each a small leaf, an ID, two claims of 40-byte keys
// and no documents), filled once by direct commits of 1,000 entries,
// then opened and closed three times: ms/open (the median), and the heap Open leaves
// in use (heap-MB, after a collection; for schema 3 the in-memory index of
// IDs and claims). check-rec/s and check-peak-MB are one package-level
// Check of the same file.
func BenchmarkOpenKeys(b *testing.B) {
	n := int64(100_000)
	if v, err := strconv.ParseInt(os.Getenv("FISCAL402_BENCH_OPEN"), 10, 64); err == nil && v > 0 {
		n = v
	}
	s, v, _ := testKey(b, testOrigin, "log key 1")
	path := filepath.Join(b.TempDir(), "ledger.db")
	l, err := Open(path, Options{Origin: testOrigin, Signer: s})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	for i := int64(0); i < n; i += batch {
		var reqs []*request
		for j := i; j < min(n, i+batch); j++ {
			id := fmt.Sprintf("entry-%012d", j)
			reqs = append(reqs, &request{a: Append{
				Claims: []Claim{
					{Space: "payment", Key: fmt.Sprintf("eip155:8453/0x%038x", j*7919), Fingerprint: []byte("fp")},
					{Space: "idem", Key: fmt.Sprintf("acct-%04d/%030d", j%1000, j), Fingerprint: []byte("fp")},
				},
				Build: func(int64) (Entry, error) { return Entry{ID: id, Leaf: []byte("leaf " + id)}, nil },
			}})
		}
		for _, res := range l.commitDurable(reqs) {
			if res.err != nil {
				b.Fatal(res.err)
			}
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Three opens, whatever b.N: the median's time, the last one's heap.
	var inUse float64
	var took []time.Duration
	for range 3 {
		before := heap()
		start := time.Now()
		l, err := Open(path, Options{Origin: testOrigin, Signer: s})
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		inUse = float64(heap()-before) / (1 << 20)
		if _, err := l.IndexOf(fmt.Sprintf("entry-%012d", n/2)); err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[1].Microseconds())/1e3, "ms/open")
	b.ReportMetric(inUse, "heap-MB")
	peak := watchHeap()
	start := time.Now()
	if err := Check(path, v); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "check-rec/s")
	b.ReportMetric(float64(peak())/(1<<20), "check-peak-MB")
}
