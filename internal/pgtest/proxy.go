package pgtest

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards TCP connections to a test's PostgreSQL server, so that a
// test can take the database away from one client while others still
// reach it. While down it cuts every connection and refuses new ones (a
// database restarting, or its host gone); while frozen it holds every
// byte in both directions without closing anything, as a network
// partition does (nothing arrives, nothing is refused).
type Proxy struct {
	ln     net.Listener
	url    string
	down   atomic.Bool
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

// NewProxy starts a Proxy to the server of u (a URL Schema returned),
// stopped when the test ends; URL is u through it.
func NewProxy(t testing.TB, u string) *Proxy {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		t.Fatalf("pgtest: %q names no server to put a proxy before: %v", u, err)
	}
	target := pu.Host
	if pu.Port() == "" {
		target = net.JoinHostPort(pu.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, url: strings.Replace(u, pu.Host, ln.Addr().String(), 1)}
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
			go p.forward(s, c)
			go p.forward(c, s)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.frozen.Store(false)
		p.SetDown(true)
	})
	return p
}

// URL is the URL NewProxy was given, to the server through the proxy.
func (p *Proxy) URL() string { return p.url }

// SetDown cuts every connection and refuses new ones (down), or accepts
// them again.
func (p *Proxy) SetDown(down bool) {
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

// SetFrozen holds every byte in both directions (frozen), or lets them
// through again.
func (p *Proxy) SetFrozen(frozen bool) { p.frozen.Store(frozen) }

func (p *Proxy) forward(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
