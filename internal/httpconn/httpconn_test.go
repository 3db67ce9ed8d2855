package httpconn

import (
	"bufio"
	"bytes"
	"context"
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

// serve runs h on a Configured server behind Listener, over a recording
// listener; it returns the server's address and the recorder of each
// accepted connection, in order.
func serve(t *testing.T, h http.Handler, writeTimeout time.Duration) (string, chan *recorder) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan *recorder, 16)
	srv := &http.Server{Handler: h, WriteTimeout: writeTimeout}
	Configure(srv)
	go func() { _ = srv.Serve(Listener(recListener{ln, conns})) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), conns
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
// its bytes intact, on a kept-alive connection; the held bytes are written
// before net/http clears the write deadline, so that WriteTimeout bounds
// them; past MaxHeld the response still arrives whole.
func TestWholeResponseInOneWrite(t *testing.T) {
	addr, conns := serve(t, http.HandlerFunc(whole), time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
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
		// The write comes before the deadline is cleared.
		last := -1
		for i, c := range calls {
			if c == "deadline zero" {
				last = i
			}
		}
		if last < 0 || writes(calls[:last]) != 1 {
			t.Errorf("%d body bytes: the write did not come before the write deadline was cleared: %q", n, calls)
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
// flush is exactly net/http's buffer; and a whole answer before it on the
// connection does not make it held.
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
	addr, _ := serve(t, h, time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
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
	addr, conns := serve(t, http.HandlerFunc(whole), time.Minute)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
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

// The hooks Configure installs flush what is held when the connection
// turns idle, and after a hijack nothing is held; hooks the server had
// still run.
func TestConfigureHooks(t *testing.T) {
	var states []http.ConnState
	var ctxSeen bool
	srv := &http.Server{
		ConnState:   func(_ net.Conn, s http.ConnState) { states = append(states, s) },
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context { ctxSeen = true; return ctx },
	}
	Configure(srv)
	server, client := tcpPair(t)
	rec := &recorder{Conn: server}
	c := &Conn{Conn: rec}
	ctx := srv.ConnContext(context.Background(), c)
	if !ctxSeen {
		t.Error("the server's own ConnContext did not run")
	}
	Whole(ctx)
	if _, err := c.Write(body(bufferSize)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(body(100)); err != nil {
		t.Fatal(err)
	}
	if w := writes(rec.take()); w != 0 {
		t.Fatalf("%d writes before the response ended, want 0 (held)", w)
	}
	srv.ConnState(c, http.StateIdle)
	if w := writes(rec.take()); w != 1 {
		t.Fatalf("%d writes at the idle hook, want 1", w)
	}
	if got := readN(t, client, bufferSize+100); !bytes.Equal(got, append(body(bufferSize), body(100)...)) {
		t.Fatal("the bytes written at the idle hook are not the ones held")
	}
	srv.ConnState(c, http.StateHijacked)
	Whole(ctx)
	if _, err := c.Write(body(bufferSize)); err != nil {
		t.Fatal(err)
	}
	if w := writes(rec.take()); w != 1 {
		t.Errorf("after a hijack a write was held (%d writes, want 1)", w)
	}
	readN(t, client, bufferSize)
	if len(states) != 2 || states[0] != http.StateIdle || states[1] != http.StateHijacked {
		t.Errorf("the server's own ConnState saw %v", states)
	}
}

// Close writes what is held; Whole without a connection does nothing.
func TestCloseWritesHeld(t *testing.T) {
	server, client := tcpPair(t)
	c := &Conn{Conn: server}
	c.whole = true
	if _, err := c.Write(body(bufferSize)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if all, err := io.ReadAll(client); err != nil || !bytes.Equal(all, body(bufferSize)) {
		t.Fatalf("after Close the reader got %d bytes (%v), want %d", len(all), err, bufferSize)
	}
	Whole(context.Background()) // no connection: nothing to do, no panic
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

// A held answer that cannot be written closes the connection, as net/http
// does after a failed write of its own: no request is read after a cut
// answer; later writes fail. A connection keeps no buffer between answers.
func TestFailedHeldWriteClosesTheConnection(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	defer a.Close()
	f := &failing{Conn: a}
	c := &Conn{Conn: f}
	c.whole = true
	if _, err := c.Write(body(bufferSize)); err != nil {
		t.Fatalf("held write: %v", err)
	}
	if err := c.SetWriteDeadline(time.Time{}); err == nil {
		t.Fatal("the failed write of what was held was not reported")
	}
	if !f.closed {
		t.Error("the connection was not closed after the held answer failed")
	}
	if _, err := c.Write([]byte("x")); err == nil || f.writes != 1 {
		t.Errorf("a write after the failure: %v, %d writes reached the connection, want 1", err, f.writes)
	}
	if c.held != nil {
		t.Error("the connection kept its buffer")
	}

	server, client := tcpPair(t)
	ok := &Conn{Conn: server, bufs: new(sync.Pool)}
	ok.whole = true
	_, _ = ok.Write(body(bufferSize))
	_, _ = ok.Write(body(10))
	if err := ok.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	readN(t, client, bufferSize+10)
	if ok.held != nil {
		t.Error("the connection kept its buffer after the answer")
	}
}
