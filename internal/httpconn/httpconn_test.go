package httpconn

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// recorder is the connection under a Conn: it counts the writes that reach
// the socket and notes every call in order.
type recorder struct {
	net.Conn
	mu    sync.Mutex
	calls []string
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recorder) Write(p []byte) (int, error) {
	r.note("write " + strconv.Itoa(len(p)))
	return r.Conn.Write(p)
}

func (r *recorder) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		r.note("deadline zero")
	} else {
		r.note("deadline")
	}
	return r.Conn.SetWriteDeadline(t)
}

// take returns the calls noted so far and forgets them.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// settled waits until net/http has cleared the write deadline after the
// answer just read (it does so after it wrote the answer) and returns the
// calls noted so far.
func (r *recorder) settled(t *testing.T) []string {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		n := len(r.calls)
		done := n > 0 && r.calls[n-1] == "deadline zero"
		r.mu.Unlock()
		if done {
			return r.take()
		}
	}
	t.Fatalf("net/http did not clear the write deadline: %q", r.take())
	return nil
}

// writes counts the writes among calls.
func writes(calls []string) (n int) {
	for _, c := range calls {
		if len(c) > 6 && c[:6] == "write " {
			n++
		}
	}
	return n
}

type recListener struct {
	net.Listener
	conns chan *recorder
}

func (l recListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	r := &recorder{Conn: c}
	l.conns <- r
	return r, nil
}

// serveRecorded runs h on a Configured server behind Listener, over a
// recording listener; it returns the server's address and the recorder of
// each accepted connection, in order.
func serveRecorded(t *testing.T, h http.Handler, writeTimeout time.Duration) (string, chan *recorder) {
	t.Helper()
	conns := make(chan *recorder, 16)
	srv := &http.Server{Handler: h, WriteTimeout: writeTimeout}
	return serve(t, srv, recListener{listen(t), conns}, true), conns
}

// connect serves h as serveRecorded does and dials it: the client's connection,
// its reader, and the server's recorders.
func connect(t *testing.T, h http.Handler) (net.Conn, *bufio.Reader, chan *recorder) {
	t.Helper()
	addr, conns := serveRecorded(t, h, time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c), conns
}

func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i*7%26)
	}
	return b
}

// whole answers /N with N bytes in one piece, marked whole.
func whole(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Path[1:])
	Whole(r.Context())
	w.Header().Set("Content-Length", strconv.Itoa(n))
	_, _ = w.Write(body(n))
}

// get sends a GET of path on c and reads the answer's body.
func get(t *testing.T, c net.Conn, br *bufio.Reader, path string, hdr string) []byte {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // a lost or cut answer fails, not hangs
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path, hdr); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A whole response leaves in one write whatever its size up to MaxHeld,
// its bytes intact, on a kept-alive connection; past MaxHeld the response
// still arrives whole.
func TestWholeResponseInOneWrite(t *testing.T) {
	c, br, conns := connect(t, http.HandlerFunc(whole))
	rec := <-conns
	for _, n := range []int{0, 1, 3000, 4000, 4096, 4097, 4300, 8192, 9000, 20000, MaxHeld - 200} {
		got := get(t, c, br, "/"+strconv.Itoa(n), "")
		if !bytes.Equal(got, body(n)) {
			t.Fatalf("body of %d bytes: got %d bytes, not the ones written", n, len(got))
		}
		calls := rec.settled(t)
		if w := writes(calls); w != 1 {
			t.Errorf("a whole answer of %d body bytes took %d writes, want 1: %q", n, w, calls)
		}
	}
	for _, n := range []int{MaxHeld + 1, 3 * MaxHeld} {
		if got := get(t, c, br, "/"+strconv.Itoa(n), ""); !bytes.Equal(got, body(n)) {
			t.Fatalf("body of %d bytes: got %d bytes, not the ones written", n, len(got))
		}
		if w := writes(rec.settled(t)); w < 2 {
			t.Errorf("an answer of %d bytes, past MaxHeld, took %d writes: held whole", n, w)
		}
	}
}

// Without Whole, net/http's writes go out as it makes them: a stream that
// flushes reaches the client before the handler goes on, even when the
// flush is exactly net/http's buffer, after a whole answer on the same
// connection (a stream in chunks is never held; TestLateWholeHoldsNothing
// and TestWholeWhileHeldMarksNoOtherAnswer flush an answer with a length).
func TestStreamIsNotHeld(t *testing.T) {
	release := make(chan struct{})
	h := http.NewServeMux()
	h.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(body(bufferSize)) // exactly the connection buffer, with the header before it
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		_, _ = w.Write([]byte("end"))
	})
	h.HandleFunc("/", whole)
	c, br, _ := connect(t, h)
	if got := get(t, c, br, "/5000", ""); len(got) != 5000 {
		t.Fatalf("whole answer: %d bytes", len(got))
	}
	if _, err := fmt.Fprintf(c, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the stream's header did not arrive before the handler went on: %v", err)
	}
	first := make([]byte, bufferSize)
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatalf("the stream's first %d bytes did not arrive before the handler went on: %v", bufferSize, err)
	}
	close(release)
	rest, err := io.ReadAll(res.Body)
	if err != nil || string(rest) != "end" {
		t.Fatalf("rest of the stream: %q, %v", rest, err)
	}
}

// A whole answer on a connection net/http closes after it (Connection:
// close) arrives whole.
func TestWholeResponseBeforeClose(t *testing.T) {
	c, br, conns := connect(t, http.HandlerFunc(whole))
	if got := get(t, c, br, "/6000", "Connection: close\r\n"); !bytes.Equal(got, body(6000)) {
		t.Fatalf("got %d bytes", len(got))
	}
	if w := writes((<-conns).take()); w != 1 {
		t.Errorf("%d writes, want 1", w)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer: %v, want EOF (closed)", err)
	}
}

// tcpPair is a loopback TCP connection's two ends: writes of a few KB
// never wait for the reader.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close(); _ = client.Close() })
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	return server, client
}

// readN reads exactly n bytes from c, or fails.
func readN(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

// answer is the first bytes of an HTTP/1.1 answer with header h and a
// body of n bytes, cut at net/http's buffer.
func answer(h string, n int) []byte {
	a := append([]byte("HTTP/1.1 200 OK\r\n"+h+"\r\n"), body(n)...)
	if len(a) > bufferSize {
		a = a[:bufferSize]
	}
	return a
}

// headerOnly is a header of exactly net/http's buffer, a padding header
// filling it, with a Content-Length but no body after it (HEAD, 304).
func headerOnly() []byte {
	h := "HTTP/1.1 200 OK\r\nContent-Length: 9000\r\nX-Pad: "
	b := append([]byte(h), bytes.Repeat([]byte("p"), bufferSize-len(h)-4)...)
	return append(b, "\r\n\r\n"...)
}

// heldWrites writes first, then rest, on a Conn marked whole over a
// recorder; it returns the writes that reached the recorder after first,
// and after rest.
func heldWrites(t *testing.T, first, rest []byte) (afterFirst, afterRest []string) {
	t.Helper()
	server, client := tcpPair(t)
	go func() { _, _ = io.Copy(io.Discard, client) }()
	rec := &recorder{Conn: server}
	c := &Conn{Conn: rec, bufs: new(sync.Pool)}
	c.whole = true
	if n, err := c.Write(first); n != len(first) || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	afterFirst = rec.take()
	if rest != nil {
		if n, err := c.Write(rest); n != len(rest) || err != nil {
			t.Fatalf("second write: %d, %v", n, err)
		}
	}
	return afterFirst, rec.take()
}

// The first write of a whole answer is held only when it is net/http's
// full buffer, begins an HTTP/1 answer whose Content-Length says more
// follows, and the answer is within MaxHeld; then the answer's next write
// sends both in one.
func TestWhatIsHeld(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first []byte
		held  bool
	}{
		{"more to come", answer("Content-Length: 5000\r\n", 5000), true},
		{"up to MaxHeld", answer("Content-Length: "+strconv.Itoa(MaxHeld-100)+"\r\n", 5000), true},
		{"past MaxHeld", answer("Content-Length: "+strconv.Itoa(MaxHeld)+"\r\n", 5000), false},
		{"the whole answer", answer("Content-Length: "+strconv.Itoa(bufferSize-len("HTTP/1.1 200 OK\r\nContent-Length: 4058\r\n\r\n"))+"\r\n", 5000), false},
		{"no Content-Length (chunks)", answer("Transfer-Encoding: chunked\r\n", 5000), false},
		{"chunked beside a length", answer("Content-Length: 5000\r\nTransfer-Encoding: chunked\r\n", 5000), false},
		{"smaller than the buffer", answer("Content-Length: 5000\r\n", 100), false},
		{"not an HTTP/1 answer", append([]byte("\x00\x00\x10\x00"), body(bufferSize-4)...), false},
		{"header only (HEAD, 304)", headerOnly(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := tc.first
			if len(first) > bufferSize {
				t.Fatalf("test answer of %d bytes", len(first))
			}
			afterFirst, afterRest := heldWrites(t, first, []byte("rest"))
			if held := writes(afterFirst) == 0; held != tc.held {
				t.Fatalf("held %v, want %v (%q)", held, tc.held, afterFirst)
			}
			if tc.held && (writes(afterRest) != 1 || afterRest[0] != "write "+strconv.Itoa(len(first)+4)) {
				t.Errorf("the next write sent %q, want one write of both", afterRest)
			}
		})
	}
	// Without Whole nothing is held, and Whole marks one answer only.
	server, client := tcpPair(t)
	go func() { _, _ = io.Copy(io.Discard, client) }()
	rec := &recorder{Conn: server}
	c := &Conn{Conn: rec}
	_, _ = c.Write(answer("Content-Length: 5000\r\n", 5000))
	if w := writes(rec.take()); w != 1 {
		t.Errorf("not marked whole: %d writes, want 1", w)
	}
	c.whole = true
	_, _ = c.Write(answer("Content-Length: 5000\r\n", 5000))
	_, _ = c.Write([]byte("rest"))
	_, _ = c.Write(answer("Content-Length: 5000\r\n", 5000))
	if w := writes(rec.take()); w != 2 {
		t.Errorf("a whole answer, then one not marked: %d writes, want 2 (the second not held)", w)
	}
}

// holding is a Conn over one end of a loopback pair, holding the first
// write of a whole answer (first); client is the other end.
func holding(t *testing.T) (c *Conn, client net.Conn, first []byte) {
	t.Helper()
	server, client := tcpPair(t)
	c = &Conn{Conn: server}
	c.whole = true
	first = answer("Content-Length: 5000\r\n", 5000)
	if _, err := c.Write(first); err != nil {
		t.Fatal(err)
	}
	return c, client, first
}

// A held write goes out before what ReadFrom copies (net/http hands an
// io.Copy of a file to the connection), in order.
func TestReadFromSendsHeldFirst(t *testing.T) {
	c, client, first := holding(t)
	if _, err := c.ReadFrom(bytes.NewReader(body(900))); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, client, len(first)+900); !bytes.Equal(got, append(append([]byte{}, first...), body(900)...)) {
		t.Fatal("the bytes that arrived are not the held write, then the copy")
	}
}

// Configure keeps a ConnContext the server had; Whole without a Listener's
// connection does nothing.
func TestConfigureKeepsConnContext(t *testing.T) {
	var seen bool
	srv := &http.Server{ConnContext: func(ctx context.Context, _ net.Conn) context.Context { seen = true; return ctx }}
	Configure(srv)
	c := &Conn{}
	ctx := srv.ConnContext(context.Background(), c)
	if !seen {
		t.Error("the server's own ConnContext did not run")
	}
	Whole(ctx)
	if !c.whole {
		t.Error("Whole did not reach the connection through the context")
	}
	Whole(context.Background()) // no connection: nothing to do, no panic
	done, cancel := context.WithCancel(ctx)
	cancel()
	c.whole = false
	Whole(done)
	if c.whole {
		t.Error("Whole of an ended request marked the connection")
	}

	// A hijack sends a held write (the hijacker may read first).
	hc, client, first := holding(t)
	srv.ConnState(hc, http.StateHijacked)
	if got := readN(t, client, len(first)); !bytes.Equal(got, first) {
		t.Error("the hijack did not send the held write")
	}
}

// failing is a connection whose first write fails; it counts the writes
// that reach it and notes its close.
type failing struct {
	net.Conn
	writes int
	closed bool
}

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	if f.writes == 1 {
		return 0, io.ErrClosedPipe
	}
	return len(p), nil
}

func (f *failing) Close() error { f.closed = true; return nil }

// When the write that sends a held answer fails, net/http gets the error
// (and closes the connection); a Close sends what is held (the cut answer
// net/http would have sent), then closes, keeping no buffer.
func TestFailureAndClose(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	f := &failing{Conn: a}
	f.writes = 1 // not 0: failing fails its first write; the held write does not reach it
	c := &Conn{Conn: f}
	c.whole = true
	if _, err := c.Write(answer("Content-Length: 5000\r\n", 5000)); err != nil {
		t.Fatalf("held write: %v", err)
	}
	f.writes = 0
	if n, err := c.Write([]byte("rest")); err == nil || n != 0 {
		t.Fatalf("the failed write of the held answer: %d, %v; want 0 and its error", n, err)
	}

	server, client := tcpPair(t)
	rec := &recorder{Conn: server}
	c = &Conn{Conn: rec}
	c.whole = true
	if _, err := c.Write(answer("Content-Length: 5000\r\n", 5000)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if c.held != nil {
		t.Error("Close kept the held buffer")
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write after Close: %v, want net.ErrClosed", err)
	}
	// The held write is sent by a goroutine of Close's, which then closes
	// the connection: the reader gets it, then the end.
	if all, err := io.ReadAll(client); err != nil || !bytes.Equal(all, answer("Content-Length: 5000\r\n", 5000)[:bufferSize]) {
		t.Errorf("after Close the reader got %d bytes (%v), want the held %d", len(all), err, bufferSize)
	}
	if w := writes(rec.take()); w != 1 {
		t.Errorf("Close wrote %d times, want 1 (what was held)", w)
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a second Close: %v, want net.ErrClosed", err)
	}
}
