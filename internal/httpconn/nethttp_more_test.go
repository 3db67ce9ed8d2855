package httpconn

// Paths of net/http (go1.26 server.go) where a third review found the
// wired server differing from a plain one (a passed write deadline, a
// CloseWrite, a hijack, each with a write held), and a differential run of
// raw request scripts: the same bytes, plain and wired.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawRead reads everything the server sends on c until EOF (or d).
func rawRead(c net.Conn, d time.Duration) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	return io.ReadAll(c)
}

// The WriteTimeout (or a ResponseController.SetWriteDeadline) passes
// between the answer's first write (the full 4 KB buffer) and its rest.
// Plain: the first 4 KB went out when written; the rest fails; the client
// gets a cut answer. Wired, it did get a connection closed before any
// byte (the held 4 KB went out with the rest, in one write that failed at
// once); now the held bytes go out within closeWriteTimeout.
func TestWriteDeadlinePassedWhileHeld(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			w.Header().Set("Content-Length", "8000")
			_, _ = w.Write(body(5000))
			time.Sleep(500 * time.Millisecond) // past WriteTimeout
			_, _ = w.Write(body(3000))
		})
		_, addr := start(t, h, wired, false, func(s *http.Server) { s.WriteTimeout = 300 * time.Millisecond })
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		got, err := rawRead(c, 3*time.Second)
		t.Logf("client got %d bytes, then %v", len(got), err)
		if len(got) == 0 {
			t.Errorf("the connection closed before any byte of the answer")
		}
	})
}

// The same seen by Go's Transport on a reused connection: a connection
// closed before any byte is taken for a server that closed an idle
// connection, and a replayable request (GET, or a POST with an
// Idempotency-Key header) is sent again: the handler runs twice.
func TestWriteDeadlinePassedServesOnce(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		var runs atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/warm", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
			Whole(r.Context())
			w.Header().Set("Content-Length", "8000")
			_, _ = w.Write(body(5000))
			time.Sleep(500 * time.Millisecond)
			_, _ = w.Write(body(3000))
		})
		_, addr := start(t, mux, wired, false, func(s *http.Server) {
			s.WriteTimeout = 300 * time.Millisecond
		})
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		res, err := cl.Get("http://" + addr + "/warm")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		req, _ := http.NewRequest("POST", "http://"+addr+"/slow", strings.NewReader(`{"x":1}`))
		req.Header.Set("Idempotency-Key", "k1")
		res, err = cl.Do(req)
		if err == nil {
			b, berr := io.ReadAll(res.Body)
			res.Body.Close()
			t.Logf("/slow: %d, %d body bytes, then %v", res.StatusCode, len(b), berr)
		} else {
			t.Logf("/slow: no answer: %v", err)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("the handler ran %d times for one client request, want 1", n)
		}
	})
}

// An answer cut exactly at the buffer (the handler wrote less than its
// Content-Length) to a request whose body (> 256 KB) the handler did not
// read: net/http ends with closeWriteAndWait, i.e. CloseWrite before
// Close. Conn.CloseWrite shuts the writing side with the write still
// held; Close's write of it then failed. Plain: the client gets the cut
// answer; wired, it got nothing (now CloseWrite sends it first).
func TestCloseWriteSendsTheHeldWrite(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBufferClosing(w) // net/http adds "Connection: close" (body too big)
		})
		_, addr := start(t, h, wired, false, nil)
		c := dial(t, addr)
		go func() {
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
			_, _ = c.Write(make([]byte, 300<<10)) // part of the body; never all of it
		}()
		got, err := rawRead(c, 3*time.Second)
		t.Logf("client got %d bytes, then %v", len(got), err)
		if len(got) < bufferSize {
			t.Errorf("the cut answer did not arrive: %d bytes", len(got))
		}
	})
}

// stallListener's connections take no byte while stalled (a client whose
// receive window is full), honouring write deadlines as a socket does.
type stallListener struct {
	net.Listener
	stalled atomic.Bool
}

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, l: l, closed: make(chan struct{})}, nil
}

type stallConn struct {
	net.Conn
	l      *stallListener
	mu     sync.Mutex
	wdl    time.Time
	once   sync.Once
	closed chan struct{}
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *stallConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *stallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (c *stallConn) Write(p []byte) (int, error) {
	for c.l.stalled.Load() {
		c.mu.Lock()
		dl := c.wdl
		c.mu.Unlock()
		if !dl.IsZero() && !time.Now().Before(dl) {
			return 0, os.ErrDeadlineExceeded
		}
		select {
		case <-c.closed:
			return 0, net.ErrClosed
		case <-time.After(10 * time.Millisecond):
		}
	}
	return c.Conn.Write(p)
}

// A marked answer that fills net/http's buffer exactly, then a Hijack,
// to a client that reads nothing for now. Plain: Hijack's flush writes the
// buffer under the WriteTimeout and fails with it; Hijack returns. Wired:
// that flush is held; hijackLocked clears the deadlines, and the
// StateHijacked hook wrote the held bytes with no deadline, inside
// Hijack (under net/http's conn.mu): Hijack did not return until the
// client read. Now within closeWriteTimeout.
func TestHijackSendsTheHeldWriteWithinABound(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		sl := &stallListener{Listener: listen(t)}
		hijacked := make(chan error, 1)
		srv := &http.Server{WriteTimeout: 300 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBuffer(w)
			sl.stalled.Store(true) // the client stops reading
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			hijacked <- err
		})}
		addr := serve(t, srv, sl, wired)
		t.Cleanup(func() { sl.stalled.Store(false) })
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		select {
		case err := <-hijacked:
			t.Logf("Hijack returned: %v", err)
		case <-time.After(2 * time.Second):
			t.Errorf("Hijack did not return within 2s (WriteTimeout 300ms)")
		}
	})
}

// diffHandler answers per path, always marked whole, Date fixed.
func diffHandler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
	q := r.URL.Query()
	n := atoiDefault(q.Get("n"), 5000)
	if q.Get("nowhole") == "" {
		Whole(r.Context())
	}
	if p := atoiDefault(q.Get("pad"), 0); p > 0 {
		h.Set("X-Pad", strings.Repeat("p", p))
	}
	if q.Get("read") != "" {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	if cl := q.Get("cl"); cl != "" {
		h.Set("Content-Length", cl)
	} else if q.Get("nocl") == "" {
		h.Set("Content-Length", fmt.Sprint(n))
	}
	if s := atoiDefault(q.Get("status"), 0); s > 0 {
		w.WriteHeader(s)
	}
	for _, part := range splitN(n, atoiDefault(q.Get("chunk"), n)) {
		_, _ = w.Write(body(part))
	}
	if q.Get("abort") != "" {
		panic(http.ErrAbortHandler)
	}
}

func atoiDefault(s string, d int) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		return d
	}
	return n
}

func splitN(n, chunk int) []int {
	var out []int
	for n > 0 {
		c := min(chunk, n)
		out = append(out, c)
		n -= c
	}
	return out
}

// Raw request scripts, each on its own connection, read to EOF: the bytes
// a client gets must be the same, plain and wired.
func TestRawScriptsSameBytes(t *testing.T) {
	scripts := map[string]string{
		"http10":           "GET /?n=5000 HTTP/1.0\r\n\r\n",
		"http10-keepalive": "GET /?n=5000 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /?n=6000 HTTP/1.0\r\n\r\n",
		"pipelined-second-marked": "GET /?n=5000&nowhole=1 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=7000 HTTP/1.1\r\nHost: x\r\n\r\n" +
			"GET /?n=9000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"body-4096-small-header": "GET /?n=4096 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"more-than-cl":           "GET /?n=9000&cl=8000&chunk=3000 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"less-than-cl":           "GET /?n=6000&cl=8000 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"304":                    "GET /?n=0&cl=8000&status=304 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"204":                    "GET /?n=0&cl=8000&status=204 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"abort":                  "GET /?n=5000&cl=9000&abort=1 HTTP/1.1\r\nHost: x\r\n\r\n",
		"abort-at-buffer":        "GET /?n=3977&cl=9000&abort=1 HTTP/1.1\r\nHost: x\r\n\r\n",
		"expect-read": "POST /?n=5000&read=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\nabcd" +
			"GET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"big-body-unread": "POST /?n=5000 HTTP/1.1\r\nHost: x\r\nContent-Length: 400000\r\n\r\n" + strings.Repeat("b", 400000),
	}
	for pad := 3950; pad <= 4010; pad++ {
		for _, m := range []string{"GET", "HEAD"} {
			scripts[fmt.Sprintf("%s-pad%d", m, pad)] = fmt.Sprintf("%s /?n=1000&pad=%d HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", m, pad)
		}
	}
	for _, n := range []int{3970, 3977, 3978, 4000, 4096, 8000, 8192, 8250, 60000, 65536, 65537} {
		scripts[fmt.Sprintf("n%d", n)] = fmt.Sprintf("GET /?n=%d HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", n)
		scripts[fmt.Sprintf("n%d-chunk1000", n)] = fmt.Sprintf("GET /?n=%d&chunk=1000 HTTP/1.1\r\nHost: x\r\n\r\nGET /?n=10 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", n)
	}
	run := func(wired bool, script string) []byte {
		_, addr := start(t, http.HandlerFunc(diffHandler), wired, false, func(s *http.Server) { s.ErrorLog = nil })
		c := dial(t, addr)
		go func() { _, _ = io.WriteString(c, script) }()
		got, _ := rawRead(c, 3*time.Second)
		_ = c.Close()
		return got
	}
	for name, script := range scripts {
		plain, wired := run(false, script), run(true, script)
		if strings.HasPrefix(name, "n8000") || strings.HasPrefix(name, "abort") || name == "big-body-unread" || name == "HEAD-pad3990" {
			t.Logf("%s: %d bytes", name, len(plain))
		}
		if string(plain) != string(wired) {
			t.Errorf("%s: plain %d bytes, wired %d bytes", name, len(plain), len(wired))
		}
	}
}

// The write deadline has already passed when net/http makes the answer's
// first write (a handler slower than WriteTimeout, the bundled server's
// 30 s). Plain: that first write fails at once and the client gets no
// byte. Wired, a re-review found, the first write was held, the next one
// failed with the deadline, and the held 4 KB then went out within
// closeWriteTimeout: bytes a plain connection never sent. A write is now
// held only before the write deadline net/http set.
func TestWriteDeadlinePassedBeforeTheFirstWrite(t *testing.T) {
	got := map[bool]int{}
	both(t, func(t *testing.T, wired bool) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(400 * time.Millisecond) // past WriteTimeout, before any write
			Whole(r.Context())
			w.Header().Set("Content-Length", "8000")
			_, _ = w.Write(body(8000))
		})
		_, addr := start(t, h, wired, false, func(s *http.Server) { s.WriteTimeout = 200 * time.Millisecond })
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		b, err := rawRead(c, 3*time.Second)
		t.Logf("client got %d bytes, then %v", len(b), err)
		got[wired] = len(b)
	})
	if got[false] != got[true] {
		t.Errorf("plain sent %d bytes, wired sent %d: the wired server sends an answer the plain one never sent", got[false], got[true])
	}
}

// A handler streams a whole answer (its first 4 KB held, wired) to a
// client that does not read, while a watchdog goroutine of its own keeps
// lifting the write deadline (ResponseController.SetWriteDeadline from
// another goroutine, as TestConcurrentSetWriteDeadline does). Plain:
// Server.Close closes the socket and returns at once; wired too. (A
// review found a Close that waited for the write in flight, its bound
// lifted by the watchdog: Server.Close waited for the client. Close no
// longer waits.)
func TestServerCloseWhileAWatchdogLiftsTheDeadline(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		writing := make(chan struct{})
		written := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(written)
			rc := http.NewResponseController(w)
			go func() { // the watchdog: the stream may take its time
				for {
					select {
					case <-written:
						return
					case <-time.After(5 * time.Millisecond):
						_ = rc.SetWriteDeadline(time.Now().Add(time.Minute))
					}
				}
			}()
			Whole(r.Context())
			n := MaxHeld - 1000
			w.Header().Set("Content-Length", strconv.Itoa(n))
			close(writing)
			_, err := w.Write(body(n))
			t.Logf("handler's write: %v", err)
		})
		srv, addr := start(t, h, wired, true, nil)
		c, err := dialSmall(addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		<-writing
		time.Sleep(300 * time.Millisecond) // the write is blocked
		done := make(chan struct{})
		t0 := time.Now()
		go func() { _ = srv.Close(); close(done) }()
		select {
		case <-done:
			t.Logf("Server.Close returned after %v", time.Since(t0).Round(time.Millisecond))
		case <-time.After(2 * time.Second):
			t.Errorf("Server.Close did not return within 2s (closeWriteTimeout is %v)", closeWriteTimeout)
		}
		_ = c.Close() // the client goes away: the write fails, Close returns
		<-done
		<-written
	})
}

// panicListener's connections panic, once armed, in the first Write whose
// bytes panicsOn (a net.Conn underneath that fails by panicking; net/http
// recovers a panic in its connection goroutine and closes the connection).
type panicListener struct {
	net.Listener
	armed    atomic.Bool
	panicsOn func(p []byte) bool
}

func (l *panicListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &panicConn{Conn: c, l: l}, nil
}

type panicConn struct {
	net.Conn
	l *panicListener
}

func (c *panicConn) Write(p []byte) (int, error) {
	if c.l.panicsOn(p) && c.l.armed.CompareAndSwap(true, false) {
		panic("write failed")
	}
	return c.Conn.Write(p)
}

// largerThan5000 arms a panicListener for a write of more than 5000 bytes
// (a combined write); ofTheBuffer, for one of exactly net/http's buffer (a
// held write sent alone).
func largerThan5000(p []byte) bool { return len(p) > 5000 }
func ofTheBuffer(p []byte) bool    { return len(p) == bufferSize }

// A panic of the connection underneath inside the combined write: net/http
// recovers it and closes the connection. Plain: the client gets the first
// 4 KB, then the connection closes; wired too (the held bytes are sent
// before the panic goes on), and promptly (a review found a version of
// Close that waited for the write in flight for ever).
func TestPanicInsideTheCombinedWrite(t *testing.T) {
	got := map[bool]int{}
	both(t, func(t *testing.T, wired bool) {
		pl := &panicListener{Listener: listen(t), panicsOn: largerThan5000}
		pl.armed.Store(true)
		srv := &http.Server{ErrorLog: nil, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			w.Header().Set("Content-Length", "12000")
			_, _ = w.Write(body(12000)) // 4 KB through the buffer, then ~8 KB direct
		})}
		addr := serve(t, srv, pl, wired)
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		b, err := rawRead(c, 2*time.Second)
		t.Logf("client got %d bytes, then %v", len(b), err)
		got[wired] = len(b)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("the connection was not closed within 2s of the handler's panic")
		}
	})
	if got[false] != got[true] {
		t.Errorf("plain: %d bytes; wired: %d bytes", got[false], got[true])
	}
}

// Twenty connections, each blocked in the write of a whole answer to a
// client that does not read: Server.Close returns at once, plain and
// wired. A review found a version of Close that waited (bounded) for each
// write in flight, one connection after another under Server.mu: 2 s for
// twenty.
func TestServerCloseWithManyBlockedWholeAnswers(t *testing.T) {
	const conns = 20
	both(t, func(t *testing.T, wired bool) {
		var writing atomic.Int32
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			n := MaxHeld - 1000
			w.Header().Set("Content-Length", strconv.Itoa(n))
			writing.Add(1)
			_, _ = w.Write(body(n))
		})
		srv, addr := start(t, h, wired, true, nil)
		var cs []net.Conn
		for range conns {
			c, err := dialSmall(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cs = append(cs, c)
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		}
		for end := time.Now().Add(3 * time.Second); writing.Load() < conns && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // the writes are blocked
		t0 := time.Now()
		_ = srv.Close()
		d := time.Since(t0)
		t.Logf("Server.Close with %d blocked answers took %v", conns, d.Round(time.Millisecond))
		if d > time.Second {
			t.Errorf("Server.Close took %v (closeWriteTimeout %v per connection)", d.Round(time.Millisecond), closeWriteTimeout)
		}
	})
}

// A whole answer written by two helpers, each marking it (the pattern
// TestWholeWhileHeldMarksNoOtherAnswer endorses), whose first part is
// large: net/http's bufio.Writer sends it straight through (the held 4 KB
// with the rest, in one write), leaving its buffer empty. The second
// helper's Whole comes after the answer's last write; it writes nothing
// more, so finishRequest's Flush makes no write. A seventh review found
// the mark then outlived the answer: the next answer on the connection,
// whose handler never called Whole (a download of known length that
// flushes exactly at the buffer), was held past its Flush. Each request
// now starts without a mark (Configure's StateActive).
func TestSecondWholeAfterTheLastWriteMarksNoOtherAnswer(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		twoPartThenDownload(t, wired, 12000, "a twice-marked answer", func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			w.Header().Set("Content-Length", "12000")
			_, _ = w.Write(body(12000)) // 4 KB held, the rest sent with it
			Whole(r.Context())          // the second helper: nothing left to write
			_, _ = w.Write(nil)
		})
	})
}

// Twenty handlers each between the held first write of a whole answer and
// its next write (Server.Close while it ran: doc.go's own case of a write
// still held), to clients that take no byte for now. Plain: Server.Close
// closes each socket and returns at once; wired too. A seventh review
// found Close sending each held write within closeWriteTimeout, one
// connection after another, under Server.mu (2 s for twenty); a goroutine
// of each connection's own sends it now.
func TestServerCloseWithManyHeldWholeAnswers(t *testing.T) {
	const conns = 20
	both(t, func(t *testing.T, wired bool) {
		sl := &stallListener{Listener: listen(t)}
		release := make(chan struct{})
		defer close(release)
		held := make(chan struct{}, conns)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBuffer(w)
			_, _ = w.Write(body(3000)) // reaches the full buffer: held, wired
			held <- struct{}{}
			<-release // the rest is being computed
			_, _ = w.Write(body(8000 - (bufferSize - len(fillHeader)) - 3000))
		})}
		addr := serve(t, srv, sl, wired)
		for range conns {
			c := dial(t, addr)
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		for range conns {
			<-held
		}
		sl.stalled.Store(true) // the clients take no byte for now
		defer sl.stalled.Store(false)
		t0 := time.Now()
		_ = srv.Close()
		d := time.Since(t0)
		t.Logf("Server.Close with %d held answers took %v", conns, d.Round(time.Millisecond))
		if d > time.Second {
			t.Errorf("Server.Close took %v (closeWriteTimeout %v per connection, in turn)", d.Round(time.Millisecond), closeWriteTimeout)
		}
	})
}

// heldThenWaitOnContext serves one whole answer whose first write (the
// full buffer) is held, wired, then waits for the rest to be computed by
// work that honours the request's context (a query with r.Context()).
// Server.Close closes the connection: on a plain server net/http's
// background read fails at once and cancels the request's context. The
// client takes no byte (stallListener); it sends the first byte of a
// pipelined request, if sendByte, right after Server.Close returned.
// It returns how long after Server.Close the handler's context ended
// (or -1 when it had not within 2 s).
func heldThenWaitOnContext(t *testing.T, wired, sendByte bool) time.Duration {
	sl := &stallListener{Listener: listen(t)}
	held := make(chan struct{})
	closedAt := make(chan time.Time, 1)
	result := make(chan time.Duration, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Whole(r.Context())
		fillBuffer(w)
		_, _ = w.Write(body(3000)) // reaches the full buffer: held, wired
		close(held)
		select { // the rest is being computed, under the request's context
		case <-r.Context().Done():
			result <- time.Since(<-closedAt)
		case <-time.After(2 * time.Second):
			result <- -1
		}
	})}
	addr := serve(t, srv, sl, wired)
	c := dial(t, addr)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-held
	time.Sleep(50 * time.Millisecond) // the background read is waiting
	sl.stalled.Store(true)            // the client takes no byte for now
	defer sl.stalled.Store(false)
	t0 := time.Now()
	_ = srv.Close()
	closedAt <- t0
	if sendByte {
		_, _ = io.WriteString(c, "G") // a pipelining client's next request begins
	}
	return <-result
}

// Server.Close ends the context of a handler that is between the held
// write and the next one (doc.go's own case) at once, plain and wired. An
// eighth review found the wired background read waiting on the connection
// underneath until Close's goroutine closed it (closeWriteTimeout against
// a client that takes no byte); Close now fails reads at once.
func TestServerCloseCancelsTheHandlersContextAtOnce(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		d := heldThenWaitOnContext(t, wired, false)
		t.Logf("the handler's context ended %v after Server.Close", d.Round(time.Millisecond))
		if d < 0 || d > 50*time.Millisecond {
			t.Errorf("the handler's context ended %v after Server.Close (plain: at once)", d.Round(time.Millisecond))
		}
	})
}

// The same, with a byte from the client while Close's goroutine still
// sends the held write: the review found net/http's background read, which
// Server.Close made fail at once on a plain server, reading that byte from
// the open connection underneath instead (hasByte, no error), and nothing
// cancelled the handler's context any more.
func TestServerCloseCancelsTheHandlersContextDespiteAByte(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		d := heldThenWaitOnContext(t, wired, true)
		if d < 0 {
			t.Errorf("the handler's context did not end within 2s of Server.Close (plain: at once)")
		} else {
			t.Logf("the handler's context ended %v after Server.Close", d.Round(time.Millisecond))
		}
	})
}

// cutAnswerBigBodyServerClose: a whole answer to a request whose large body
// the handler never reads (net/http adds Connection: close and ends with
// closeWriteAndWait), its first write (the full buffer) held, wired; a
// Server.Close while the handler computes the rest (doc.go's own case),
// whose computation ends then. It returns how many bytes the client got.
func cutAnswerBigBodyServerClose(t *testing.T, wired bool, sent int) int {
	release := make(chan struct{})
	held := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Whole(r.Context())
		fillBufferClosing(w)       // net/http adds "Connection: close" (body too big)
		_, _ = w.Write(body(3000)) // the full buffer is written: held, wired
		close(held)
		<-release // the rest is being computed
	})
	srv, addr := start(t, h, wired, false, func(s *http.Server) { s.ErrorLog = nil })
	c := dial(t, addr)
	go func() {
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
		_, _ = c.Write(make([]byte, sent)) // part of the body; never all of it
	}()
	<-held
	_ = srv.Close()
	close(release)
	got, err := rawRead(c, 3*time.Second)
	t.Logf("client got %d bytes, then %v", len(got), err)
	return len(got)
}

// Plain: the full buffer left when net/http wrote it; Server.Close cuts the
// answer after it. Wired, a ninth review found, Close handed the held
// write to a goroutine and returned; the handler's goroutine then reached
// closeWriteAndWait, whose CloseWrite found nothing held (Close took it)
// and shut the writing side before that goroutine had written: the client
// got a connection closed before any byte (GOMAXPROCS 1 orders it so every
// time; with more Ps it was a race). A CloseWrite after Close now leaves
// the connection to Close's goroutine.
func TestServerCloseThenCloseWriteKeepsTheCutAnswer(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	both(t, func(t *testing.T, wired bool) {
		if n := cutAnswerBigBodyServerClose(t, wired, 300<<10); n < bufferSize {
			t.Errorf("the cut answer did not arrive: %d bytes (want the %d written)", n, bufferSize)
		}
	})
}

// The same with the Ps the machine has, 20 times: how often it happens.
func TestServerCloseThenCloseWriteKeepsTheCutAnswerRace(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		lost := 0
		for range 20 {
			if cutAnswerBigBodyServerClose(t, wired, 300<<10) < bufferSize {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("the cut answer was lost %d times in 20", lost)
		}
	})
}

// The same with only 10 bytes of the body sent (net/http's read buffer
// takes them: no unread byte in the socket, its close is a FIN).
func TestServerCloseThenCloseWriteKeepsTheCutAnswerSmallSent(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		lost := 0
		for range 20 {
			if cutAnswerBigBodyServerClose(t, wired, 10) < bufferSize {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("the cut answer was lost %d times in 20", lost)
		}
	})
}
