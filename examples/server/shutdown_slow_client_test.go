package main

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/ledger"
)

// TestStopWithASlowClient: SIGTERM lets in-flight requests finish, but for
// a bounded time; a client that never finishes sending its request (a
// stalled upload, a slow-loris) outlasted that bound, and the server then
// returned "context deadline exceeded" with exit status 1 (a failed stop
// to a service manager) and without closing the engine and its ledger.
// The server cuts what is still open at the bound, closes the ledger and
// exits 0; the file it leaves needs no journal replay and checks, with
// every settlement it answered.
func TestStopWithASlowClient(t *testing.T) {
	dir := t.TempDir()
	p := startServer(t, dir)
	for n := range 3 {
		if status, raw := p.post(n); status != 201 {
			t.Fatalf("settlement %d: %d %s", n, status, raw)
		}
	}
	u, err := url.Parse(p.base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := settlementBody(99)
	// The headers and half the body: the request is in flight, and stays so.
	fmt.Fprintf(conn, "POST /settlements HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Service-Key: %s\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, demoKey, len(body), body[:len(body)/2])
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		t.Fatal("the server did not stop within 40s of SIGTERM")
	}
	if ps := p.cmd.ProcessState; !ps.Success() {
		t.Errorf("the server stopped with %v after %s", ps, time.Since(start).Round(time.Second))
	}
	needs, err := ledger.NeedsRecovery(filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	if needs {
		t.Error("the ledger was left unclosed: its journal holds commits the file does not")
	}
	out, stderr, err := runCommand(t, nil, "check", "-data", dir)
	if err != nil || !strings.Contains(out, "log size 3") {
		t.Errorf("check after the stop: %v\n%s%s", err, out, stderr)
	}
}
