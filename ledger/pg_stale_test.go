package ledger

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fiscal402/fiscal402/internal/pgtest"
)

// downProxy forwards TCP connections to the test's PostgreSQL server;
// while down it cuts every connection and refuses new ones (a database
// restarting, or its host gone).
type downProxy struct {
	ln    net.Listener
	down  atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
}

func newDownProxy(t *testing.T, target string) *downProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &downProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.down.Load() {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.setDown(true) })
	return p
}

func (p *downProxy) setDown(down bool) {
	p.down.Store(down)
	if down {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// TestPostgresCheckpointUnreadableIsAnError: replica B cannot reach the
// database while replica A appends. B's Checkpoint (GET /v1/log/checkpoint,
// the head an OSS return is computed at, the checkpoint of a webhook
// event) must not answer the head B last saw as the latest one: that
// head is older than the one A acknowledged (a client that got a receipt
// from A would be shown a log without its entry, and an OSS return built
// at it would leave A's records out without saying so). It is
// ErrUnavailable, like every other read of the unreachable store, and the
// latest head once the database answers again.
func TestPostgresCheckpointUnreadableIsAnError(t *testing.T) {
	direct := pgtest.Schema(t)
	if direct == "" {
		return
	}
	px := newDownProxy(t, "127.0.0.1:5432")
	a := openPG(t, direct)
	b := openPG(t, strings.Replace(direct, "127.0.0.1:5432", px.ln.Addr().String(), 1))
	if _, err := b.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(context.Background(), Append{Build: simpleEntry("by-a")}); err != nil {
		t.Fatal(err)
	}
	want, err := a.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	px.setDown(true)
	cp, err := b.Checkpoint()
	switch {
	case err == nil && cp.Size < want.Size:
		t.Fatalf("B cut off from the database answers the checkpoint of size %d as the latest; A acknowledged size %d", cp.Size, want.Size)
	case err != nil && !errors.Is(err, ErrUnavailable):
		t.Fatalf("B cut off from the database: %v, want ErrUnavailable", err)
	}
	px.setDown(false)
	cp, err = b.Checkpoint()
	if err != nil || cp.Size != want.Size || cp.Root != want.Root {
		t.Fatalf("B once the database answers: size %d, %v; want A's head of size %d", cp.Size, err, want.Size)
	}
}
