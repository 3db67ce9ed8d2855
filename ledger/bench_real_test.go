package ledger

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The benchmarks of issue 22, in one command:
//
//	FISCAL402_LEDGER_BENCH=long go test ./ledger -run '^$' -bench . -benchtime 2000x
//
// BenchmarkRawBolt is the ceiling: bbolt group commit (one write
// transaction per batch of waiting callers, two fdatasyncs per commit) of
// one put per record carrying the bytes of a realistic entry.
// BenchmarkAppendReal is Ledger.Append of realistic entries at 1, 8 and 64
// callers. The long ones (bytes per record, growth, Check rate) run only
// when FISCAL402_LEDGER_BENCH is "long" (up to 100 k records) or "huge"
// (up to 1 M records, several GB of disk and minutes of time).
const benchEnv = "FISCAL402_LEDGER_BENCH"

// benchScale returns the largest record count the long benchmarks may use,
// skipping the benchmark when it is above what FISCAL402_LEDGER_BENCH allows.
func benchScale(b *testing.B, records int) {
	b.Helper()
	limit := map[string]int{"long": 100_000, "huge": 1_000_000}[os.Getenv(benchEnv)]
	if records > limit {
		b.Skipf("%d records: set %s=long (≤100k) or huge (≤1M)", records, benchEnv)
	}
}

var benchCallers = []int{1, 8, 64}

// runCallers runs n appends from callers goroutines; fn appends entry i.
func runCallers(b *testing.B, callers int, first, n int64, fn func(i int64) error) {
	var next atomic.Int64
	next.Store(first)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= first+n {
					return
				}
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkRawBolt: bbolt group commit of the same bytes per record that
// Ledger.Append receives (leaf, record and invoice of a realistic entry,
// ~10 KB), and of 4 KB records (the raw measurement).
func BenchmarkRawBolt(b *testing.B) {
	r := loadRealistic(b)
	for _, size := range []string{"entry", "4KB"} {
		for _, callers := range benchCallers {
			b.Run(fmt.Sprintf("bytes=%s/callers=%d", size, callers), func(b *testing.B) {
				db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("r")); return err }); err != nil {
					b.Fatal(err)
				}
				gc := newRawGroupCommit(db)
				defer gc.stop()
				b.ResetTimer()
				runCallers(b, callers, 0, int64(b.N), func(i int64) error {
					var v []byte
					if size == "4KB" {
						v = make([]byte, 4096)
						binary.BigEndian.PutUint64(v, uint64(i))
					} else {
						e := r.entry(i)
						v = append(append(append(v, e.leaf...), e.record...), e.ubl...)
					}
					return gc.put(binary.BigEndian.AppendUint64(nil, uint64(i)), v)
				})
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(b.N)/float64(gc.commits.Load()), "records/commit")
			})
		}
	}
}

// rawGroupCommit is the committer loop of Ledger.run reduced to bbolt puts.
type rawGroupCommit struct {
	db      *bolt.DB
	reqs    chan rawPut
	done    chan struct{}
	commits atomic.Int64
}

type rawPut struct {
	k, v []byte
	done chan error
}

func newRawGroupCommit(db *bolt.DB) *rawGroupCommit {
	g := &rawGroupCommit{db: db, reqs: make(chan rawPut), done: make(chan struct{})}
	go g.run()
	return g
}

func (g *rawGroupCommit) put(k, v []byte) error {
	p := rawPut{k, v, make(chan error, 1)}
	g.reqs <- p
	return <-p.done
}

func (g *rawGroupCommit) stop() { close(g.done) }

func (g *rawGroupCommit) run() {
	var batch []rawPut
	for {
		batch = batch[:0]
		select {
		case p := <-g.reqs:
			batch = append(batch, p)
		case <-g.done:
			return
		}
	drain:
		for len(batch) < DefaultMaxBatch {
			select {
			case p := <-g.reqs:
				batch = append(batch, p)
			default:
				break drain
			}
		}
		err := g.db.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket([]byte("r"))
			for _, p := range batch {
				if err := bk.Put(p.k, p.v); err != nil {
					return err
				}
			}
			return nil
		})
		g.commits.Add(1)
		for _, p := range batch {
			p.done <- err
		}
	}
}

// appendForms are the ways of appending a realistic entry: "seal" is the
// Build form doing what the engine's Build does today (sign the receipt,
// marshal the record) inside the committer; "build" the Build form
// returning ready bytes.
var appendForms = []string{"seal", "build"}

// appendReal appends realistic entry i in the given form.
func appendReal(l *Ledger, r *realistic, form string, i int64) error {
	e := r.entry(i)
	a := Append{Claims: e.claims()}
	switch form {
	case "seal":
		a.Build = e.sealedEntry
	case "build":
		a.Build = func(index int64) (Entry, error) { return e.ledgerEntry(index), nil }
	default:
		return fmt.Errorf("unknown form %q", form)
	}
	_, err := l.Append(context.Background(), a)
	return err
}

// reportCommitter reports the committer's serial time per record (its time
// outside the commit's page writes and fdatasyncs) and records per commit
// since the counters were snapshot.
func reportCommitter(b *testing.B, l *Ledger, before committerSnapshot) {
	d := l.snapshotProfile().minus(before)
	if d.appended > 0 {
		b.ReportMetric(float64(d.serial)/float64(d.appended)/1e3, "serial-µs/record")
		b.ReportMetric(float64(d.appended)/float64(d.commits), "records/commit")
	}
}

type committerSnapshot struct{ serial, io, commits, appended int64 }

func (l *Ledger) snapshotProfile() committerSnapshot {
	return committerSnapshot{l.prof.serial.Load(), l.prof.io.Load(), l.prof.commits.Load(), l.prof.appended.Load()}
}

func (s committerSnapshot) minus(o committerSnapshot) committerSnapshot {
	return committerSnapshot{s.serial - o.serial, s.io - o.io, s.commits - o.commits, s.appended - o.appended}
}

// BenchmarkAppendReal: durable appends of realistic entries (fsync per
// commit) by 1, 8 and 64 concurrent callers.
func BenchmarkAppendReal(b *testing.B) {
	r := loadRealistic(b)
	for _, form := range appendForms {
		for _, callers := range benchCallers {
			b.Run(fmt.Sprintf("form=%s/callers=%d", form, callers), func(b *testing.B) {
				l, _, _ := testLedger(b)
				b.ReportAllocs()
				before := l.snapshotProfile()
				b.ResetTimer()
				runCallers(b, callers, 0, int64(b.N), func(i int64) error { return appendReal(l, r, form, i) })
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				reportCommitter(b, l, before)
			})
		}
	}
}

// fillReal appends realistic entries first…first+n-1 with 64 callers.
func fillReal(b *testing.B, l *Ledger, r *realistic, form string, first, n int64) {
	b.Helper()
	runCallers(b, 64, first, n, func(i int64) error { return appendReal(l, r, form, i) })
}

// BenchmarkBytesPerRecord appends 100 k realistic entries with 64 callers
// and reports the file size per record, with the bytes per bucket logged.
func BenchmarkBytesPerRecord(b *testing.B) {
	const n = 100_000
	benchScale(b, n)
	r := loadRealistic(b)
	for range b.N {
		l, path, _ := testLedger(b)
		start := time.Now()
		fillReal(b, l, r, appendForms[len(appendForms)-1], 0, n)
		rate := float64(n) / time.Since(start).Seconds()
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/n, "file-bytes/record")
		b.ReportMetric(rate, "records/s")
		fmt.Fprintln(os.Stderr, bucketUsage(b, path, n))
	}
}

// bucketUsage reports the pages of every top-level bucket (and of the
// sub-buckets of the caller-named namespaces) per record.
func bucketUsage(b *testing.B, path string, records int) string {
	db, err := bolt.Open(path, 0o600, nil) // writable: only then is the freelist loaded
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var out strings.Builder
	err = db.View(func(tx *bolt.Tx) error {
		pageSize := tx.DB().Info().PageSize
		type row struct {
			name                 string
			keys, alloc, inuse   int
			leafPages, overflows int
		}
		var rows []row
		add := func(name string, bk *bolt.Bucket) {
			s := bk.Stats()
			rows = append(rows, row{name, s.KeyN, s.BranchAlloc + s.LeafAlloc, s.BranchInuse + s.LeafInuse, s.LeafPageN, s.LeafOverflowN})
		}
		err := tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			switch string(name) {
			case "claims", "postings", "side":
				return bk.ForEachBucket(func(sub []byte) error {
					add(string(name)+"/"+string(sub), bk.Bucket(sub))
					return nil
				})
			}
			add(string(name), bk)
			return nil
		})
		if err != nil {
			return err
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].alloc > rows[j].alloc })
		total := 0
		for _, r := range rows {
			total += r.alloc
		}
		st := tx.DB().Stats()
		fmt.Fprintf(&out, "page size %d; size %d B = %.0f B/record; free pages %d (%.0f B/record), pending %d\n",
			pageSize, tx.Size(), float64(tx.Size())/float64(records), st.FreePageN, float64(st.FreePageN*pageSize)/float64(records), st.PendingPageN)
		fmt.Fprintf(&out, "%-24s %10s %12s %10s %8s %10s\n", "bucket", "keys", "alloc B/rec", "fill %", "leaves", "overflow")
		for _, r := range rows {
			fill := 0.0
			if r.alloc > 0 {
				fill = 100 * float64(r.inuse) / float64(r.alloc)
			}
			fmt.Fprintf(&out, "%-24s %10d %12.0f %10.1f %8d %10d\n", r.name, r.keys, float64(r.alloc)/float64(records), fill, r.leafPages, r.overflows)
		}
		fmt.Fprintf(&out, "%-24s %10s %12.0f\n", "all buckets", "", float64(total)/float64(records))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out.String()
}

// BenchmarkGrowth measures append throughput (64 callers, realistic
// entries) with 1 k, 100 k and 1 M records already in the file.
func BenchmarkGrowth(b *testing.B) {
	r := loadRealistic(b)
	const measure = 20_000
	for _, size := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", size), func(b *testing.B) {
			benchScale(b, size)
			for range b.N {
				l, _, _ := testLedger(b, func(o *Options) { o.MaxBatch = 1024 })
				fillReal(b, l, r, appendForms[len(appendForms)-1], 0, int64(size))
				before := l.snapshotProfile()
				start := time.Now()
				fillReal(b, l, r, appendForms[len(appendForms)-1], int64(size), measure)
				b.ReportMetric(measure/time.Since(start).Seconds(), "records/s")
				reportCommitter(b, l, before)
				l.Close()
			}
		})
	}
}

// BenchmarkCheckReal measures Ledger.Check on 100 k realistic records
// (records/s) and the largest heap in use while it runs.
func BenchmarkCheckReal(b *testing.B) {
	const n = 100_000
	benchScale(b, n)
	r := loadRealistic(b)
	l, _, _ := testLedger(b)
	fillReal(b, l, r, appendForms[len(appendForms)-1], 0, n)
	b.ResetTimer()
	for range b.N {
		peak := watchHeap()
		start := time.Now()
		if err := l.Check(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(n/time.Since(start).Seconds(), "records/s")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	}
}

// watchHeap samples the heap in use every millisecond until the returned
// function is called, which returns the largest sample.
func watchHeap() func() uint64 {
	runtime.GC()
	stop := make(chan struct{})
	var peak atomic.Uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	return func() uint64 { close(stop); wg.Wait(); return peak.Load() }
}

// BenchmarkOpenCheck measures Open's structural check (page walk, freelist,
// head, newest leaves) and Open with FullCheck on files of 100 k and 1 M
// realistic records; page cache warm (the file was just written).
func BenchmarkOpenCheck(b *testing.B) {
	r := loadRealistic(b)
	for _, size := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d", size), func(b *testing.B) {
			benchScale(b, size)
			l, path, v := testLedger(b, func(o *Options) { o.MaxBatch = 1024 })
			fillReal(b, l, r, appendForms[len(appendForms)-1], 0, int64(size))
			l.Close()
			s, _, _ := testKey(b, testOrigin, "log key 1")
			for _, full := range []bool{false, true} {
				start := time.Now()
				var err error
				for range b.N {
					var l *Ledger
					if l, err = Open(path, Options{Origin: testOrigin, Signer: s, Verifier: v, FullCheck: full}); err != nil {
						b.Fatal(err)
					}
					l.Close()
				}
				name := "open-ms"
				if full {
					name = "open-full-ms"
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), name)
			}
			start := time.Now()
			if err := checkPages(path); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds()), "pagewalk-ms")
			fi, _ := os.Stat(path)
			b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
		})
	}
}
