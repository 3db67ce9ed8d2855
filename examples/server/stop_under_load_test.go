package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// TestStopUnderLoad: SIGTERM while 8 clients post settlements. The server
// exits 0, leaves a closed ledger (no journal to replay: check passes
// without -recover), and every settlement it answered 201 is there after
// the restart.
func TestStopUnderLoad(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	acked := map[int][]byte{}
	next := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				status, body := p.post(n)
				mu.Lock()
				if status == 201 {
					acked[n] = body
				}
				mu.Unlock()
				if status == 0 {
					return // the server is going
				}
			}
		}()
	}
	time.Sleep(400 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("no stop within 30s of SIGTERM")
	}
	cancel()
	wg.Wait()
	if ps := p.cmd.ProcessState; !ps.Success() {
		t.Errorf("stopped with %v", ps)
	}
	if needs, err := ledger.NeedsRecovery(filepath.Join(dir, "ledger.db")); err != nil || needs {
		t.Errorf("after SIGTERM the ledger needs recovery: %v %v", needs, err)
	}
	if out, errOut, err := runCommand(t, nil, "check", "-data", dir); err != nil || !strings.Contains(out, "ledger.Check passed") {
		t.Errorf("check after SIGTERM: %v\n%s%s", err, out, errOut)
	}
	if len(acked) == 0 {
		t.Fatal("no settlement acknowledged before the stop")
	}
	q := startServer(t, dir)
	verifyAcknowledged(t, q, acked)
	t.Logf("%d settlements acknowledged before SIGTERM", len(acked))
}
