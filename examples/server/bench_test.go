package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/fiscal402/fiscal402/fiscal"
)

// BenchmarkServerHTTP posts settlements to the real server binary over
// loopback HTTP with 32 concurrent clients (bench/run.sh). Every 201 is
// durable: the server answers only after the ledger's commit was fsynced.
// It reports settlements per second, the ledger file's bytes per record,
// and, on Linux, the CPU time per record of the server process and of the
// clients (this process), which on a shared machine move less than wall
// time, and the server's peak resident memory.
//
// client=lean is the row bench/run.sh reports: the load generator and the
// server share this machine's cores (2 on the machine of issue 22), so the
// CPU the clients spend is taken from the server, and a heavy client makes
// the server look slow. Go's net/http client spent ~210 µs of CPU per
// request there, a fifth of the machine; the lean client (leanClient: one
// persistent connection per client, each request's bytes built before the
// clock starts, the answer parsed in a reused buffer) sends the same
// requests (method, path, Host, Content-Type, Content-Length,
// X-Service-Key, the same bodies) and reads every answer in full, so the
// server does for it everything it does for any client. It checks every
// status (201) and, every 64th answer, that the body is the record of the
// settlement sent (its transaction) and that Location names it.
// client=nethttp is the net/http client the benchmark used before, kept so
// that the difference stays visible.
//
// FISCAL402_BENCH_SERVER_CPUPROFILE=FILE writes the server's CPU profile
// of each sub-benchmark to FILE.<client> (-cpuprofile; the server is then
// stopped with SIGTERM instead of SIGKILL). FISCAL402_SERVER_BIN runs a
// server built elsewhere (bench/sidebyside.sh).
func BenchmarkServerHTTP(b *testing.B) {
	for _, client := range []string{"lean", "nethttp"} {
		for _, clients := range []int{32} {
			b.Run(fmt.Sprintf("client=%s/clients=%d", client, clients), func(b *testing.B) {
				benchServerHTTP(b, client, clients)
			})
		}
	}
}

func benchServerHTTP(b *testing.B, client string, clients int) {
	dir := b.TempDir()
	var extra []string
	profile := os.Getenv("FISCAL402_BENCH_SERVER_CPUPROFILE")
	if profile != "" {
		extra = append(extra, "-cpuprofile", profile+"."+client)
	}
	// The server's log goes to a file, as a service's would: through a
	// pipe this process would spend its CPU draining a line per request,
	// counted as the clients'.
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	p := startServerWith(b, dir, nil, logFile, extra...)
	var send func(c, n int) error
	hangUp := func() {}
	switch client {
	case "lean":
		send, hangUp = leanSender(b, p, clients)
	case "nethttp":
		send = func(_, n int) error {
			if status, body := p.post(n); status != 201 {
				return fmt.Errorf("status %d %s", status, body)
			}
			return nil
		}
	}
	// The ledger's commits, from the server's own metrics: how many
	// settlements each group commit carried and how long its page writes
	// and fsyncs took (what the ratio to the raw bbolt ceiling turns on).
	commitsBefore, commitsOK := p.commitSumsOf(b, dir)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	serverStart, serverOK := procCPU(p.cmd.Process.Pid)
	clientStart, clientOK := selfCPU()
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				n := int(next.Add(1))
				if n > b.N {
					return
				}
				if err := send(c, n); err != nil {
					b.Errorf("post %d: %v", n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	clientEnd, _ := selfCPU()
	serverEnd, serverEndOK := procCPU(p.cmd.Process.Pid)
	b.StopTimer()
	hangUp()
	b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
	if after, ok := p.commitSumsOf(b, dir); ok && commitsOK {
		if d := after.minus(commitsBefore); d.commits > 0 {
			b.ReportMetric(d.records/d.commits, "records/commit")
			b.ReportMetric(d.seconds/d.commits*1e6, "commit-µs")
		}
	}
	if rss, ok := procPeakRSS(p.cmd.Process.Pid); ok {
		b.ReportMetric(float64(rss)/(1<<20), "server-peak-rss-MiB")
	}
	if profile != "" {
		p.stop(b)
	} else {
		p.kill()
	}
	if fi, err := os.Stat(filepath.Join(dir, "ledger.db")); err == nil {
		b.ReportMetric(float64(fi.Size())/float64(b.N), "bytes/record")
	}
	if raw, err := os.ReadFile(logFile.Name()); err != nil {
		b.Error(err)
	} else if n := bytes.Count(raw, []byte(`route="POST /settlements" status=201 `)); n != b.N {
		b.Errorf("the server logged %d request lines of a 201, want %d", n, b.N)
	}
	if serverOK && serverEndOK {
		b.ReportMetric(float64((serverEnd-serverStart).Microseconds())/float64(b.N), "server-cpu-µs/record")
	}
	if clientOK {
		b.ReportMetric(float64((clientEnd-clientStart).Microseconds())/float64(b.N), "client-cpu-µs/record")
	}
}

// commitSums are the sums of the ledger's commit histograms in a scrape.
type commitSums struct{ commits, records, seconds float64 }

// commitSumsOf reads them from the server's /metrics with the operator key
// of its data directory; ok is false for a server without that key or
// /metrics, and one without those metrics reports no commits (older
// binaries run by bench/sidebyside.sh): their row goes without the two
// columns.
func (p *serverProc) commitSumsOf(b *testing.B, dir string) (c commitSums, ok bool) {
	key, err := operatorKeyIn(dir)
	if err != nil {
		return c, false
	}
	fams, err := p.metrics(b, key)
	if err != nil {
		return c, false
	}
	// Before the first commit the histograms are not exposed yet: zeros.
	if h := histogramOf(fams, "fiscal402_ledger_commit_batch_size"); h != nil {
		c.commits, c.records = float64(h.GetSampleCount()), h.GetSampleSum()
	}
	if h := histogramOf(fams, "fiscal402_ledger_commit_fsync_seconds"); h != nil {
		c.seconds = h.GetSampleSum()
	}
	return c, true
}

func (c commitSums) minus(o commitSums) commitSums {
	return commitSums{c.commits - o.commits, c.records - o.records, c.seconds - o.seconds}
}

// histogramOf is the histogram of the unlabelled family name.
func histogramOf(fams map[string]*dto.MetricFamily, name string) *dto.Histogram {
	if fam, ok := fams[name]; ok && len(fam.GetMetric()) == 1 {
		return fam.GetMetric()[0].GetHistogram()
	}
	return nil
}

// leanSender prepares the lean clients of one run: a connection each,
// dialled, and every request's bytes, before the clock starts. It returns
// what client c does to post settlement n, and what closes the connections.
func leanSender(b *testing.B, p *serverProc, clients int) (send func(c, n int) error, hangUp func()) {
	u, err := url.Parse(p.base)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([][]byte, b.N+1)
	for n := 1; n <= b.N; n++ {
		reqs[n] = leanRequest(u.Host, "/settlements", demoKey, settlementBody(n))
	}
	conns := make([]*leanClient, clients)
	for i := range conns {
		conns[i] = newLeanClient(u.Host)
		if err := conns[i].dial(); err != nil {
			b.Fatal(err)
		}
	}
	hangUp = func() {
		for _, c := range conns {
			c.close()
		}
	}
	b.Cleanup(hangUp)
	return func(c, n int) error {
		lc := conns[c]
		if err := lc.do(reqs[n]); err != nil {
			return err
		}
		if lc.status != 201 {
			return fmt.Errorf("status %d %s", lc.status, lc.body)
		}
		if n%64 == 1 {
			return checkRecord(n, lc.location, lc.body)
		}
		return nil
	}, hangUp
}

// checkRecord checks that body is the record of settlement n and that
// location names it.
func checkRecord(n int, location, body []byte) error {
	var rec fiscal.Record
	if err := json.Unmarshal(body, &rec); err != nil {
		return fmt.Errorf("the answer is not a record: %v: %s", err, body)
	}
	if rec.Object != "settlement" || rec.ID == "" || rec.Settlement.TxHash != crashTx(n) {
		return fmt.Errorf("the answer is not the record of settlement %d (%s): %s", n, crashTx(n), body)
	}
	if want := "/settlements/" + rec.ID; string(location) != want {
		return fmt.Errorf("Location %q, want %q", location, want)
	}
	return nil
}
