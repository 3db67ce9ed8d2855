package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
)

// The benchmarks of issue 22, in one command:
//
//	FISCAL402_LEDGER_BENCH=huge go test ./ledger -run '^$' -bench . -benchtime 4000x -timeout 60m
//
// BenchmarkRawBolt is the ceiling: bbolt group commit (one write
// transaction per batch of waiting callers, two fdatasyncs per commit) of
// one put per record carrying the bytes of a realistic entry.
// BenchmarkAppendReal is Ledger.Append of realistic entries at 1, 8, 32 and 64
// callers, in the Build form (as the engine appends today, with and
// without its receipt signing in the committer) and the prebuilt form.
// BenchmarkCommitSerial and BenchmarkCommitFloor measure the committer's
// serial section and bbolt's share of it. BenchmarkScale grows one file to
// 1 k, 100 k (FISCAL402_LEDGER_BENCH=long) and 1 M records (=huge) and
// measures throughput, bytes per record, Open and Check at each size.
const benchEnv = "FISCAL402_LEDGER_BENCH"

var benchCallers = []int{1, 8, 32, 64}

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
// Ledger.Append receives for an entry as the engine writes it today (a
// 4.0.0 receipt payload as the leaf, the record, the invoice and the
// openings: ~10.8 KB, testdata/bench/v4), of an entry of a 1.0.0 JWS
// receipt (leaf, record and invoice, ~9.8 KB: the ceiling's bytes up to
// stop 34 of issue 22, kept to compare with its tables), and of 4 KB
// records (the raw measurement). bytes=blob puts the compressed
// blob the ledger stores for such an entry (rawBytes): more than the
// ledger writes per record once it has a dictionary, so a floor of what
// bbolt allows the bytes the ledger actually writes. bbolt's default
// options are the ledger's (the array freelist, synced); the one bucket
// splits half full, where the ledger's append-only buckets split full.
func BenchmarkRawBolt(b *testing.B) {
	for _, size := range []string{"entry", "entry-1.0.0", "4KB", "blob"} {
		for _, callers := range []int{1, 8, 32, 64} {
			b.Run(fmt.Sprintf("bytes=%s/callers=%d", size, callers), func(b *testing.B) {
				value := rawBytes(b, size)
				db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("r")); return err }); err != nil {
					b.Fatal(err)
				}
				gc := newRawGroupCommit(func(batch []rawPut) error {
					return db.Update(func(tx *bolt.Tx) error {
						bk := tx.Bucket([]byte("r"))
						for _, p := range batch {
							if err := bk.Put(p.k, p.v); err != nil {
								return err
							}
						}
						return nil
					})
				})
				defer gc.stop()
				before := db.Stats().TxStats
				cpu := processCPU()
				b.ResetTimer()
				runCallers(b, callers, 0, int64(b.N), func(i int64) error {
					return gc.put(binary.BigEndian.AppendUint64(nil, uint64(i)), value(i))
				})
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(b.N)/float64(gc.commits.Load()), "records/commit")
				reportProcessCPU(b, cpu)
				// bbolt's own count of the commits' page writes and fsyncs,
				// beside the engine's (BenchmarkSettle's io-µs/commit and
				// pages/record).
				after := db.Stats().TxStats
				b.ReportMetric(float64((after.GetWriteTime()-before.GetWriteTime()).Microseconds())/float64(gc.commits.Load()), "io-µs/commit")
				b.ReportMetric(float64(after.GetWrite()-before.GetWrite())/float64(b.N), "pages/record")
			})
		}
	}
}

// BenchmarkRawWAL is BenchmarkRawBolt's group commit appending to a plain
// file instead: one write of the batch's records and one fdatasync per
// commit, where a bbolt commit writes each dirty page with a pwrite of its
// own and syncs twice (data pages, then the meta page). It is not a
// ledger (no index, no tree, nothing to find a record by): it measures
// what a write-ahead log in front of the store, durable with one sync per
// batch, would leave of the commit's cost (issue 22, stop 38). The file
// grows with every batch, so each sync also records its new size: a
// preallocated log would sync less.
func BenchmarkRawWAL(b *testing.B) {
	for _, size := range []string{"entry", "blob"} {
		for _, callers := range []int{1, 8, 32, 64} {
			b.Run(fmt.Sprintf("bytes=%s/callers=%d", size, callers), func(b *testing.B) {
				value := rawBytes(b, size)
				f, err := os.OpenFile(filepath.Join(b.TempDir(), "raw.wal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				var buf []byte
				var ioTime time.Duration
				gc := newRawGroupCommit(func(batch []rawPut) error {
					buf = buf[:0]
					for _, p := range batch { // each record: len(k) k len(v) v
						buf = binary.AppendUvarint(buf, uint64(len(p.k)))
						buf = append(buf, p.k...)
						buf = binary.AppendUvarint(buf, uint64(len(p.v)))
						buf = append(buf, p.v...)
					}
					start := time.Now()
					defer func() { ioTime += time.Since(start) }()
					if _, err := f.Write(buf); err != nil {
						return err
					}
					return fdatasyncFile(f)
				})
				defer gc.stop()
				cpu := processCPU()
				b.ResetTimer()
				runCallers(b, callers, 0, int64(b.N), func(i int64) error {
					return gc.put(binary.BigEndian.AppendUint64(nil, uint64(i)), value(i))
				})
				b.StopTimer()
				gc.stop()
				<-gc.stopped
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(b.N)/float64(gc.commits.Load()), "records/commit")
				b.ReportMetric(float64(ioTime.Microseconds())/float64(gc.commits.Load()), "io-µs/commit")
				reportProcessCPU(b, cpu)
			})
		}
	}
}

// reportProcessCPU reports a benchmark's own CPU since processCPU was
// before, as BenchmarkSettle counts the engine's (the process's user and
// system time): the values' building and copies, the store, the page
// writes and syncs in the kernel, the collector. p-on-cpu-% is its share
// of GOMAXPROCS × the benchmark's time: near 100 % the bound is the CPUs',
// not the disk's.
func reportProcessCPU(b *testing.B, before time.Duration) {
	cpu := processCPU() - before
	if cpu <= 0 {
		return // no process CPU clock (threadcpu_other.go)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/record")
	b.ReportMetric(100*cpu.Seconds()/(b.Elapsed().Seconds()*float64(runtime.GOMAXPROCS(0))), "p-on-cpu-%")
}

// rawBytes returns the bytes BenchmarkRawBolt and BenchmarkRawWAL write for
// record i: "entry" the concatenated leaf, record, invoice and openings of
// a realistic 4.0.0 entry; "entry-1.0.0" those of a 1.0.0 one; "4KB" 4,096
// bytes; "blob" the blob the ledger would store for the 4.0.0 entry before
// its first dictionary (codec.encode without one, ~5.4 KB; a dictionary
// only shrinks it: the ledger's file grew by 2.2-2.8 KB per record in
// BenchmarkSettleScale, every bucket included), 64 blobs made before the
// clock starts, taken in turn, their mean size reported as B/record. The
// entry forms are built in the caller's goroutine, within cpu-µs/record.
func rawBytes(b *testing.B, size string) func(i int64) []byte {
	switch size {
	case "4KB":
		return func(i int64) []byte {
			v := make([]byte, 4096)
			binary.BigEndian.PutUint64(v, uint64(i))
			return v
		}
	case "entry", "entry-1.0.0":
		r := loadRealisticV4(b)
		if size == "entry-1.0.0" {
			r = loadRealistic(b)
		}
		return func(i int64) []byte {
			e := r.entry(i)
			return append(append(append(append([]byte(nil), e.leaf...), e.record...), e.ubl...), e.openings...)
		}
	case "blob":
		r := loadRealisticV4(b)
		c, err := newCodec(nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		var blobs [64][]byte
		total := 0
		for i := range blobs {
			e := r.entry(int64(1000 + i))
			blobs[i] = c.encode(e.leaf, e.docs()).blob
			total += len(blobs[i])
		}
		b.Cleanup(func() { b.ReportMetric(float64(total)/float64(len(blobs)), "B/record") })
		return func(i int64) []byte { return blobs[i%int64(len(blobs))] }
	}
	b.Fatalf("rawBytes: no size %q", size)
	return nil
}

// rawGroupCommit is the committer loop of Ledger.run reduced to one commit
// function over the waiting puts (bbolt puts, or a file append).
type rawGroupCommit struct {
	commit  func([]rawPut) error
	reqs    chan rawPut
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
	commits atomic.Int64
}

type rawPut struct {
	k, v []byte
	done chan error
}

func newRawGroupCommit(commit func([]rawPut) error) *rawGroupCommit {
	g := &rawGroupCommit{commit: commit, reqs: make(chan rawPut), done: make(chan struct{}), stopped: make(chan struct{})}
	go g.run()
	return g
}

func (g *rawGroupCommit) put(k, v []byte) error {
	p := rawPut{k, v, make(chan error, 1)}
	g.reqs <- p
	return <-p.done
}

func (g *rawGroupCommit) stop() { g.once.Do(func() { close(g.done) }) }

func (g *rawGroupCommit) run() {
	defer close(g.stopped)
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
		err := g.commit(batch)
		g.commits.Add(1)
		for _, p := range batch {
			p.done <- err
		}
	}
}

// appendForms are the ways of appending a realistic entry: "seal" is the
// Build form doing what the engine's Build does today (sign the receipt,
// marshal the record) inside the committer; "build" the Build form
// returning ready bytes; "entry" the prebuilt Entry with a Hook that writes
// the index-dependent outbox event (what the engine should do).
var appendForms = []string{"seal", "build", "entry"}

// appendReal appends realistic entry i in the given form.
func appendReal(l *Ledger, r *realistic, form string, i int64) error {
	e := r.entry(i)
	a := Append{Claims: e.claims()}
	switch form {
	case "seal":
		a.Build = e.sealedEntry
	case "build":
		a.Build = func(index int64) (Entry, error) { return e.ledgerEntry(index), nil }
	case "entry":
		en, hook := e.prebuilt()
		a.Entry, a.Hook = &en, hook
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

type committerSnapshot struct{ serial, io, commits, appended, pages int64 }

func (l *Ledger) snapshotProfile() committerSnapshot {
	return committerSnapshot{l.prof.serial.Load(), l.prof.io.Load(), l.prof.commits.Load(), l.prof.appended.Load(), l.prof.pages.Load()}
}

func (s committerSnapshot) minus(o committerSnapshot) committerSnapshot {
	return committerSnapshot{s.serial - o.serial, s.io - o.io, s.commits - o.commits, s.appended - o.appended, s.pages - o.pages}
}

// BenchmarkAppendReal: durable appends of realistic entries (fsync per
// commit) by 1, 8, 32 (the concurrency of the HTTP row) and 64 concurrent callers.
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

// BenchmarkScale grows one ledger of realistic entries (prebuilt form, 64
// callers) to 1 k, 100 k and 1 M records and at each size measures: append
// throughput over the next 20 k appends (64 callers), file bytes per
// record (the bytes per bucket go to stderr), Open with its bounded check
// and with FullCheck, the page walk alone, and Ledger.Check's rate and
// largest heap. 100 k needs FISCAL402_LEDGER_BENCH=long, 1 M =huge (about
// 2 GB of disk and 15 minutes on the 2-CPU development VM).
func BenchmarkScale(b *testing.B) {
	r := loadRealistic(b)
	const measure = 20_000
	// A scenario: run once (the framework calls the benchmark again with a
	// larger b.N), the metrics are per size, not per op.
	scaleOnce.Do(func() { scaleMetrics = runScale(b, r, measure) })
	for _, m := range scaleMetrics {
		b.ReportMetric(m.v, m.unit)
	}
}

type metric struct {
	v    float64
	unit string
}

var (
	scaleOnce    sync.Once
	scaleMetrics []metric
)

func runScale(b *testing.B, r *realistic, measure int64) (ms []metric) {
	report := func(v float64, unit string) { ms = append(ms, metric{v, unit}) }
	{
		l, path, v := testLedger(b)
		s, _, _ := testKey(b, testOrigin, "log key 1")
		at := int64(0)
		for _, size := range []int64{1_000, 100_000, 1_000_000} {
			if os.Getenv(benchEnv) == "" && size > 1_000 || os.Getenv(benchEnv) == "long" && size > 100_000 {
				break
			}
			fillReal(b, l, r, "entry", at, size-at)
			at = size
			label := map[int64]string{1_000: "1k", 100_000: "100k", 1_000_000: "1M"}[size]

			before := l.snapshotProfile()
			start := time.Now()
			fillReal(b, l, r, "entry", at, measure)
			at += measure
			report(float64(measure)/time.Since(start).Seconds(), "appends/s@"+label)
			d := l.snapshotProfile().minus(before)
			report(float64(d.serial)/float64(d.appended)/1e3, "serial-µs@"+label)
			report(float64(d.io)/float64(d.appended)/1e3, "io-µs@"+label)
			report(float64(d.pages)/float64(d.appended), "pages/record@"+label)

			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			report(float64(fi.Size())/float64(at), "bytes/record@"+label)
			if size >= 100_000 {
				fmt.Fprintf(os.Stderr, "--- %d records\n%s\n", at, bucketUsage(b, path, int(at)))
			}
			start = time.Now()
			if err := checkPages(path); err != nil {
				b.Fatal(err)
			}
			report(float64(time.Since(start).Milliseconds()), "pagewalk-ms@"+label)
			for _, full := range []bool{true, false} {
				start = time.Now()
				if l, err = Open(path, Options{Origin: testOrigin, Signer: s, Verifier: v, FullCheck: full}); err != nil {
					b.Fatal(err)
				}
				name := "open-ms@"
				if full {
					name = "open-full-ms@"
					l.Close()
				}
				report(float64(time.Since(start).Milliseconds()), name+label)
			}
			peak := watchHeap()
			start = time.Now()
			if err := l.Check(); err != nil {
				b.Fatal(err)
			}
			report(float64(at)/time.Since(start).Seconds(), "check-records/s@"+label)
			report(float64(peak())/(1<<20), "check-peak-heap-MB@"+label)
		}
		l.Close()
	}
	return ms
}

// bucketUsage reports the bytes of every top-level bucket (and of the
// sub-buckets of the caller-named namespaces) per record, and the free pages.
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
		fmt.Fprintf(&out, "page size %d; file %d B = %.0f B/record; free pages %d (%.0f B/record)\n",
			pageSize, tx.Size(), float64(tx.Size())/float64(records), st.FreePageN, float64(st.FreePageN*pageSize)/float64(records))
		fmt.Fprintf(&out, "%-24s %10s %12s %8s %8s %9s\n", "bucket", "keys", "B/record", "fill %", "leaves", "overflow")
		for _, r := range rows {
			fill := 0.0
			if r.alloc > 0 {
				fill = 100 * float64(r.inuse) / float64(r.alloc)
			}
			fmt.Fprintf(&out, "%-24s %10d %12.1f %8.1f %8d %9d\n", r.name, r.keys, float64(r.alloc)/float64(records), fill, r.leafPages, r.overflows)
		}
		fmt.Fprintf(&out, "%-24s %10s %12.1f\n", "all buckets", "", float64(total)/float64(records))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out.String()
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

// BenchmarkCommitSerial measures the committer's serial section alone:
// batches of 32 realistic appends handed straight to the committer's commit
// on one goroutine (no callers competing for the CPUs). serial-µs/record is
// its wall time per record without the file's page writes and fdatasyncs:
// the time no other append can overlap; cpu-µs/record is the CPU time of
// the thread per record (the page writes' system time included), which
// other processes on a shared machine do not inflate. "bare" appends the
// same entries without the engine's claims, postings and side writes: the
// ledger's own share.
func BenchmarkCommitSerial(b *testing.B) {
	r := loadRealistic(b)
	for _, form := range append(appendForms, "bare") {
		b.Run("form="+form, func(b *testing.B) {
			l := benchLedger(b)
			const batchSize = 32
			// Prepare the requests as Append would, outside the timing.
			n := b.N
			reqs := make([]*request, n)
			for i := range n {
				e := r.entry(int64(i))
				a := Append{Claims: e.claims()}
				switch form {
				case "seal":
					a.Build = e.sealedEntry
				case "build":
					a.Build = func(index int64) (Entry, error) { return e.ledgerEntry(index), nil }
				case "entry":
					en, hook := e.prebuilt()
					a.Entry, a.Hook = &en, hook
				case "bare":
					// The ledger's own writes only: no claims, postings,
					// side writes or hook (the engine's indexes).
					en, _ := e.prebuilt()
					en.Postings, en.Puts = nil, nil
					a.Claims, a.Entry = nil, &en
				}
				reqs[i] = &request{a: a}
				if a.Entry != nil {
					p, err := l.prepare(*a.Entry)
					if err != nil {
						b.Fatal(err)
					}
					reqs[i].prep = p
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			before := l.snapshotProfile()
			cpu := threadCPU()
			b.ResetTimer()
			for i := 0; i < n; i += batchSize {
				batch := reqs[i:min(n, i+batchSize)]
				for j, res := range l.commitDurable(batch) {
					if res.err != nil {
						b.Fatalf("append %d: %v", i+j, res.err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(threadCPU()-cpu)/float64(n)/1e3, "cpu-µs/record")
			reportCommitter(b, l, before)
			d := l.snapshotProfile().minus(before)
			b.ReportMetric(float64(d.pages)/float64(d.appended), "pages/record")
		})
	}
}

// BenchmarkCommitFloor replays the writes the prebuilt form's commits made
// (captured from a first run) into a new file with the bare store commit:
// bbolt's share of the serial section (puts, page spill, page writes) for
// realistic entries, without any of the committer's planning.
func BenchmarkCommitFloor(b *testing.B) {
	r := loadRealistic(b)
	const batchSize = 32
	src := benchLedger(b)
	var captured []*batchWrites
	src.onCommit = func(w *batchWrites) { captured = append(captured, w) }
	for i := 0; i < b.N; i += batchSize {
		var batch []*request
		for j := i; j < min(b.N, i+batchSize); j++ {
			e := r.entry(int64(j))
			en, hook := e.prebuilt()
			p, err := src.prepare(en)
			if err != nil {
				b.Fatal(err)
			}
			batch = append(batch, &request{a: Append{Claims: e.claims(), Entry: &en, Hook: hook}, prep: p})
		}
		for _, res := range src.commitDurable(batch) {
			if res.err != nil {
				b.Fatal(res.err)
			}
		}
	}
	dst := benchLedger(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var io time.Duration
	cpu := threadCPU()
	b.ResetTimer()
	for _, w := range captured {
		st, err := dst.store.commit(nil, func(commitView) (*batchWrites, error) { return w, nil })
		if err != nil {
			b.Fatal(err)
		}
		io += st.io
	}
	b.StopTimer()
	b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/record")
	b.ReportMetric(float64(b.Elapsed()-io)/float64(b.N)/1e3, "serial-µs/record")
}

// benchLedger opens a new ledger for a benchmark; FISCAL402_LEDGER_PAGESIZE
// sets the bbolt page size of the new file (an experiment knob).
func benchLedger(b *testing.B, mutate ...func(*Options)) *Ledger {
	b.Helper()
	s, _, _ := testKey(b, testOrigin, "log key 1")
	opts := Options{Origin: testOrigin, Signer: s}
	for _, m := range mutate {
		m(&opts)
	}
	ps, _ := strconv.Atoi(os.Getenv("FISCAL402_LEDGER_PAGESIZE"))
	l, err := open(filepath.Join(b.TempDir(), "ledger.db"), opts, func(o *bolt.Options) { o.PageSize = ps })
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkCheckRate measures Check on 20 k and 100 k realistic records
// (64 callers, about 31 entries per commit): records/s, the CPU time of
// all threads per record (which other processes on a shared machine do not
// inflate), B/op and allocs/op per check, and the largest heap in use during one more, untimed check
// (peak-heap-MB, sampled every millisecond). check=ledger is Ledger.Check
// on the open ledger (one read transaction); check=file is the
// package-level Check of the closed file, which also walks every page.
// receipt=4.0.0 is a file of what the engine writes today (a receipt
// payload as the leaf, its openings beside the record); receipt=1.0.0 one
// of its first receipts, compact JWS leaves, which Check hashes in their
// base64 form and so encodes again (files written before 4.0.0 hold them).
func BenchmarkCheckRate(b *testing.B) {
	for _, n := range []int64{20_000, 100_000} {
		for _, set := range []struct {
			spec string
			load func(testing.TB) *realistic
		}{{"4.0.0", loadRealisticV4}, {"1.0.0", loadRealistic}} {
			b.Run(fmt.Sprintf("records=%dk/receipt=%s", n/1000, set.spec), func(b *testing.B) {
				benchCheckRate(b, set.load(b), n)
			})
		}
	}
}

func benchCheckRate(b *testing.B, r *realistic, n int64) {
	l, path, v := testLedger(b)
	fillReal(b, l, r, "entry", 0, n)
	measure := func(b *testing.B, check func() error) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			if err := check(); err != nil {
				b.Fatal(err)
			}
		}
		cpu = processCPU() - cpu
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(n)/float64(b.N), "cpu-µs/record")
		// One more check, untimed: the sampler stops the world.
		peak := watchHeap()
		if err := check(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	}
	b.Run("check=ledger", func(b *testing.B) { measure(b, l.Check) })
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("check=file", func(b *testing.B) { measure(b, func() error { return Check(path, v) }) })
}

// BenchmarkCheckFile runs the package-level Check on the file named by
// FISCAL402_CHECK_FILE, first filling it with 100 k realistic records if it
// does not exist: one file for several runs, so that two builds of Check
// can be compared alternately on the same bytes (skipped without the
// variable).
func BenchmarkCheckFile(b *testing.B) {
	path := os.Getenv("FISCAL402_CHECK_FILE")
	if path == "" {
		b.Skip("FISCAL402_CHECK_FILE is not set")
	}
	const n = 100_000
	s, v, _ := testKey(b, testOrigin, "log key 1")
	if _, err := os.Stat(path); err != nil {
		l, err := Open(path, Options{Origin: testOrigin, Signer: s})
		if err != nil {
			b.Fatal(err)
		}
		fillReal(b, l, loadRealistic(b), "entry", 0, n)
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if err := Check(path, v); err != nil {
			b.Fatal(err)
		}
	}
	cpu = processCPU() - cpu
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(n)/float64(b.N), "cpu-µs/record")
}

// BenchmarkAppendFloor is the floor of a settlement on this store: what
// every settlement the engine writes costs, whatever the engine does to
// decide and render it. Each append copies the bytes of a realistic
// 4.0.0 entry (leaf, record, invoice, openings: ~10.8 KB, the least any
// encoder of them costs), hashes the record and the invoice as the format
// commits to them (record_sha256 in the receipt, the invoice's SHA-256 in
// the record), and appends the entry with the engine's two claims, two
// postings and outbox event (Ledger.Append: the leaf hash, an S2 block
// with the log's dictionary, group commit, a checkpoint cosigned by a
// second key as the receipt key cosigns the engine's), by 32 and 64
// callers. accounts=1 is one seller's books, as Engine.Settle's and the
// server's benchmarks write them; accounts=50 spreads the entries over 50
// accounts, as a facilitator's would be (doc.go gives what their postings
// cost). Beside BenchmarkRawBolt's ceiling (a bare put of the same ~10.8
// KB) it says how much of the ceiling is left for the engine's own work
// before any of it is done.
//
// The documents come from a ring of floorRing entries generated before
// the timer; each append gets its own entry ID, claims and postings, as
// cheaply as the engine names a record. Generating every entry up front
// kept ~11 KB per append alive through the run (220 MB at 20,000), which
// made the collector run far less often than in the engine or the
// ceiling, whose live heaps are a few MB.
func BenchmarkAppendFloor(b *testing.B) {
	r := loadRealisticV4(b)
	ring := make([]realEntry, floorRing)
	for i := range ring {
		ring[i] = r.entry(int64(i))
	}
	for _, accounts := range []int{1, 50} {
		for _, callers := range []int{32, 64} {
			b.Run(fmt.Sprintf("accounts=%d/callers=%d", accounts, callers), func(b *testing.B) {
				cosigner, _, _ := testKey(b, "cosigner", "receipt key")
				l, _, _ := testLedger(b, func(o *Options) {
					o.Cosigners = func() []note.Signer { return []note.Signer{cosigner} }
				})
				before := l.snapshotProfile()
				cpu := processCPU()
				b.ResetTimer()
				runCallers(b, callers, 0, int64(b.N), func(i int64) error {
					e := ring[i%floorRing]
					e.id = fmt.Sprintf("x402-%032x", i)
					e.account = fmt.Sprintf("acct_%03d", i%int64(accounts))
					e.txKey = fmt.Sprintf("eip155:8453:0x%064x", i)
					e.idemKey = e.account + "\x00order-" + strconv.FormatInt(i, 10)
					e.leaf, e.record, e.ubl, e.openings = bytes.Clone(e.leaf), bytes.Clone(e.record), bytes.Clone(e.ubl), bytes.Clone(e.openings)
					// The hashes the format commits to; nothing here
					// needs their values (the documents are a template's).
					_, _ = sha256.Sum256(e.record), sha256.Sum256(e.ubl)
					en, hook := e.prebuilt()
					_, err := l.Append(context.Background(), Append{Claims: e.claims(), Entry: &en, Hook: hook})
					return err
				})
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				reportProcessCPU(b, cpu)
				reportCommitter(b, l, before)
			})
		}
	}
}

// floorRing is how many generated entries BenchmarkAppendFloor's appends
// take their documents from: more than a commit's batch and than the
// dictionary's four entries, so that no append finds its own bytes in
// either.
const floorRing = 256
