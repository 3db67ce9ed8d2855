package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// TestReplicaPartitionedHoldingTheSequencer: replica A's host is cut off
// from the database (no FIN, no RST: a partition, a host that lost power)
// in the middle of a commit, after its transaction took the log_head row
// lock, the sequencer every writer queues on. The database notices a dead
// client only when TCP keepalive gives up (hours by default), so the lock
// stayed held and replica B could not record anything: every settlement
// on B waited for the lock until lock_timeout, longer than any client
// waits. A writer's transaction may stay idle holding the sequencer only
// briefly (ledger doc.go, "Storage backends"): B answers within seconds,
// and A's unfinished commit is rolled back, never acknowledged.
func TestReplicaPartitionedHoldingTheSequencer(t *testing.T) {
	direct := pgtest.Schema(t)
	if direct == "" {
		return
	}
	px := pgtest.NewProxy(t, direct)
	app := fmt.Sprintf("partition_%d", time.Now().UnixNano())
	viaProxy := px.URL() + "&application_name=" + app
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startServerWith(t, dirA, nil, replicaLog(t, 0), "-store", viaProxy)
	copyDir(t, dirA, dirB)
	b := startServerWith(t, dirB, nil, replicaLog(t, 1), "-store", direct)

	var next atomic.Int64
	next.Store(50_000)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 { // A is busy committing
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				a.post(int(next.Add(1)))
			}
		})
	}
	defer func() { close(stop); px.SetFrozen(false); a.kill(); wg.Wait() }()
	time.Sleep(time.Second)
	db, err := pgx.Connect(context.Background(), pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	// Cut A off at a moment its transaction holds the sequencer, waiting
	// for A's next round trip.
	for try := 0; ; try++ {
		px.SetFrozen(true)
		time.Sleep(20 * time.Millisecond)
		var n int
		if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) JOIN pg_class c ON c.oid = l.relation
			WHERE a.application_name = $1 AND c.relname = 'log_head' AND l.mode = 'RowShareLock' AND a.state = 'idle in transaction'`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if try == 500 {
			t.Fatal("never caught replica A holding the sequencer")
		}
		px.SetFrozen(false)
		time.Sleep(time.Duration(try%7) * time.Millisecond)
	}
	t0 := time.Now()
	answered, slowest := 0, time.Duration(0)
	for time.Since(t0) < 12*time.Second {
		s0 := time.Now()
		status, body := b.post(int(next.Add(1)))
		took := time.Since(s0)
		slowest = max(slowest, took)
		if status != 201 {
			t.Fatalf("replica B, %v after A was cut off: %d %s (after %v)", time.Since(t0).Round(time.Millisecond), status, body, took.Round(time.Millisecond))
		}
		answered++
	}
	t.Logf("replica B answered %d settlements while A was cut off holding the sequencer; slowest %v", answered, slowest.Round(time.Millisecond))
}

// TestDatabaseUnreachableIsAnswered: the database stops answering (the
// network between it and the replica drops everything: no FIN, no RST).
// A settlement and a read must be answered 503 DB_UNAVAILABLE with
// Retry-After (README "Errors") while the server can still write its
// answer: a store operation bounded at 1 minute outlived the server's
// 30 s write timeout, so the client got its connection closed after a
// minute instead of an answer. Once the database answers again the
// replica serves without a restart.
func TestDatabaseUnreachableIsAnswered(t *testing.T) {
	direct := pgtest.Schema(t)
	if direct == "" {
		return
	}
	px := pgtest.NewProxy(t, direct)
	p := startServerWith(t, t.TempDir(), nil, replicaLog(t, 0), "-store", px.URL())
	if status, body := p.post(60_000); status != 201 {
		t.Fatalf("before: %d %s", status, body)
	}
	px.SetFrozen(true)
	patient := &http.Client{Timeout: 70 * time.Second}
	var wg sync.WaitGroup
	for i, r := range []struct{ method, path, body string }{
		{"POST", "/settlements", settlementBody(60_001)},
		{"GET", "/settlements?limit=1", ""},
	} {
		wg.Go(func() {
			req, _ := http.NewRequest(r.method, p.base+r.path, strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Service-Key", demoKey)
			t0 := time.Now()
			resp, err := patient.Do(req)
			took := time.Since(t0).Round(time.Millisecond)
			if err != nil {
				t.Errorf("%d: %s %s while the database does not answer: no answer after %v (%v)", i, r.method, r.path, took, err)
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 503 || !strings.Contains(string(raw), `"DB_UNAVAILABLE"`) || resp.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s while the database does not answer: %d %s (after %v)", r.method, r.path, resp.StatusCode, raw, took)
			}
			t.Logf("%s %s answered %d after %v", r.method, r.path, resp.StatusCode, took)
		})
	}
	wg.Wait()
	px.SetFrozen(false)
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body := p.post(60_002)
		if status == 201 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the database answers again: %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
