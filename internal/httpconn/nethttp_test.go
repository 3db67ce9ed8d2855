package httpconn

// Paths of net/http around an answer marked whole: each test runs the same
// scenario on a plain net/http server ("plain", the control) and on one
// wired with Listener and Configure ("httpconn"); the wiring must change
// nothing a client sees. A review of the first design (which sent held
// bytes when net/http cleared the write deadline) found each of these
// broken by it.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// smallBufListener makes the server side's socket send buffer small, so
// that a client that does not read makes the server's writes block.
type smallBufListener struct{ net.Listener }

func (l smallBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		_ = c.(*net.TCPConn).SetWriteBuffer(4096)
	}
	return c, err
}

// start serves h, wired with httpconn when wired; small makes the server's
// send buffers small.
func start(t *testing.T, h http.Handler, wired, small bool, configure func(*http.Server)) (*http.Server, string) {
	t.Helper()
	ln := listen(t)
	if small {
		ln = smallBufListener{ln}
	}
	srv := &http.Server{Handler: h}
	if configure != nil {
		configure(srv)
	}
	return srv, serve(t, srv, ln, wired)
}

// listen is a loopback listener for a server of the test.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serve serves srv on ln (serveOn); the server closes when the test ends.
// It returns the address to dial.
func serve(t *testing.T, srv *http.Server, ln net.Listener, wired bool) string {
	serveOn(srv, ln, wired)
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// serveOn serves srv on ln, wired with httpconn (Listener, Configure) when
// wired.
func serveOn(srv *http.Server, ln net.Listener, wired bool) {
	if wired {
		ln = Listener(ln)
		Configure(srv)
	}
	go func() { _ = srv.Serve(ln) }()
}

// dial connects to addr; the connection closes when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func both(t *testing.T, f func(t *testing.T, wired bool)) {
	t.Run("plain", func(t *testing.T) { f(t, false) })
	t.Run("httpconn", func(t *testing.T) { f(t, true) })
}

// wholeNoBodyRead answers 5000 bytes marked whole without reading the
// request body (an early answer: an error, a GET that ignores a body).
func wholeNoBodyRead(w http.ResponseWriter, r *http.Request) {
	Whole(r.Context())
	w.Header().Set("Content-Length", "5000")
	_, _ = w.Write(body(5000))
}

// readAnswer reads one response from c within d.
func readAnswer(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	start := time.Now()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil || len(b) != 5000 {
		t.Fatalf("answer body: %d bytes, %v", len(b), err)
	}
}

// A client that sends Expect: 100-continue waits for the final answer
// before sending its body; net/http sends the answer when the handler
// returns, and only then (finishRequest's reqBody.Close) reads what is
// left of the body. An answer still held at that read would deadlock until
// the client's expect timeout or the server's ReadTimeout.
func TestExpectContinueEarlyAnswer(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		_, addr := start(t, http.HandlerFunc(wholeNoBodyRead), wired, false, nil)
		c := dial(t, addr)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
		readAnswer(t, c, 2*time.Second)
	})
}

// The same when the handler answers with Connection: close (or the server
// is shutting down: keep-alives off) while the request body is still on
// its way: net/http answers, then reads up to 256 KB of the rest of the
// body (closeAfterReply skips the discard before the header).
func TestConnectionCloseEarlyAnswer(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		h := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			wholeNoBodyRead(w, r)
		}
		_, addr := start(t, http.HandlerFunc(h), wired, false, nil)
		c := dial(t, addr)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
		readAnswer(t, c, 2*time.Second)
	})
}

// A held answer whose write fails (here: WriteTimeout against a client
// that does not read) must fail where net/http sees it, so that it closes
// the connection instead of serving a request already in its read buffer
// (pipelined) after a cut answer.
func TestPipelinedRequestAfterFailedHeldWrite(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		var ran atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			n := MaxHeld - 1000
			w.Header().Set("Content-Length", strconv.Itoa(n))
			_, err := w.Write(body(n))
			t.Logf("/big: handler's write: %v", err)
		})
		mux.HandleFunc("/side-effect", func(w http.ResponseWriter, r *http.Request) { ran.Add(1) })
		_, addr := start(t, mux, wired, true, func(s *http.Server) { s.WriteTimeout = 300 * time.Millisecond })
		c, err := dialSmall(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Both requests in one write: net/http's first read takes both.
		fmt.Fprintf(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\nPOST /side-effect HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		time.Sleep(1500 * time.Millisecond) // the client does not read
		if n := ran.Load(); n != 0 {
			t.Errorf("the request after the failed answer was served (%d): net/http would have closed the connection", n)
		}
	})
}

// dialSmall connects with a small receive buffer, set before the
// handshake so that the window the client offers stays small.
func dialSmall(addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// With unencrypted HTTP/2 enabled on the server, ConnContext hands the
// *Conn to the HTTP/2 streams' contexts too: Whole must not hold HTTP/2
// frames (they are not an HTTP/1 answer's first bytes).
func TestUnencryptedHTTP2(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		_, addr := start(t, http.HandlerFunc(whole), wired, false, func(s *http.Server) {
			s.Protocols = new(http.Protocols)
			s.Protocols.SetHTTP1(true)
			s.Protocols.SetUnencryptedHTTP2(true)
		})
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: p}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 2 * time.Second}
		for _, n := range []int{5000, 4096, 8192, 16000, 16384, 20000, 40000, 60000} {
			res, err := cl.Get("http://" + addr + "/" + strconv.Itoa(n))
			if err != nil {
				t.Fatalf("%d: %v", n, err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || len(b) != n || res.ProtoMajor != 2 {
				t.Fatalf("%d: %s: %d bytes, %v", n, res.Proto, len(b), err)
			}
		}
	})
}

// net.Conn's deadlines apply to a write already blocked, from any
// goroutine: a watchdog can cut a stream to a client that stopped reading
// (ResponseController.SetWriteDeadline; WriteTimeout 0). The first design
// overrode SetWriteDeadline behind the lock a write held; Conn now leaves
// deadlines to the connection, and this keeps it so.
func TestConcurrentSetWriteDeadline(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		result := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			go func() {
				time.Sleep(300 * time.Millisecond)
				_ = rc.SetWriteDeadline(time.Now()) // the watchdog
			}()
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				_, err = w.Write(body(64 << 10)) // a stream, not Whole
			}
			result <- err
		})
		_, addr := start(t, h, wired, true, nil)
		c, err := dialSmall(addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		select {
		case err := <-result:
			t.Logf("the stream ended: %v", err)
		case <-time.After(2 * time.Second):
			t.Errorf("the watchdog's SetWriteDeadline did not end the blocked write within 2s")
		}
		_ = c.Close()
	})
}

// The delay a Go client sees (Transport.ExpectContinueTimeout 1s, as in
// http.DefaultTransport) for an early answer to a request with a body and
// Expect: 100-continue.
func TestExpectContinueGoClientDelay(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		_, addr := start(t, http.HandlerFunc(wholeNoBodyRead), wired, false, nil)
		tr := &http.Transport{ExpectContinueTimeout: time.Second}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader("0123456789"))
		req.Header.Set("Expect", "100-continue")
		t0 := time.Now()
		res, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if d := time.Since(t0); d > 500*time.Millisecond {
			t.Errorf("answer after %v", d.Round(time.Millisecond))
		}
	})
}

// Paths that write around a held answer, plain and wired alike: pipelined
// GET, HEAD and GET answered in order and intact; an io.Copy of a file
// (sendfile through Conn.ReadFrom) after held bytes; a hijack after held
// bytes; panic(http.ErrAbortHandler) leaves a cut answer.
func TestPipelinedHeadFileHijackAbort(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", whole)
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		Whole(r.Context())
		w.Header().Set("Content-Length", "5000")
		_, _ = w.Write(body(5000))
		c, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		_ = bw.Flush()
		Whole(r.Context())
		_, _ = c.Write(body(5000)) // after the hijack: not held
		time.Sleep(300 * time.Millisecond)
	})
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, body(20000), 0o600); err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		Whole(r.Context())
		f, _ := os.Open(file)
		defer f.Close()
		w.Header().Set("Content-Length", "25000")
		_, _ = w.Write(body(5000))
		_, _ = io.Copy(w, f) // response.ReadFrom -> Conn.ReadFrom (sendfile)
	})
	mux.HandleFunc("/abort", func(w http.ResponseWriter, r *http.Request) {
		Whole(r.Context())
		w.Header().Set("Content-Length", "10000")
		_, _ = w.Write(body(5000))
		panic(http.ErrAbortHandler)
	})
	for _, wired := range []bool{false, true} {
		t.Run(fmt.Sprintf("wired=%v", wired), func(t *testing.T) {
			_, addr := start(t, mux, wired, false, func(s *http.Server) { s.WriteTimeout = 5 * time.Second })
			c := dial(t, addr)
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			br := bufio.NewReader(c)
			// Pipelined: three answers, in order, intact; HEAD answers a header.
			fmt.Fprintf(c, "GET /5000 HTTP/1.1\r\nHost: x\r\n\r\nHEAD /7000 HTTP/1.1\r\nHost: x\r\n\r\nGET /9000 HTTP/1.1\r\nHost: x\r\n\r\n")
			for _, want := range []struct {
				method string
				n      int
			}{{"GET", 5000}, {"HEAD", 7000}, {"GET", 9000}} {
				res, err := http.ReadResponse(br, &http.Request{Method: want.method})
				if err != nil {
					t.Fatalf("%s %d: %v", want.method, want.n, err)
				}
				b, err := io.ReadAll(res.Body)
				if err != nil || res.ContentLength != int64(want.n) {
					t.Fatalf("%s %d: %d bytes, CL %d, %v", want.method, want.n, len(b), res.ContentLength, err)
				}
				if want.method == "GET" && !bytes.Equal(b, body(want.n)) {
					t.Fatalf("GET %d: wrong bytes", want.n)
				}
			}
			// sendfile after held bytes.
			fmt.Fprintf(c, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(res.Body)
			if err != nil || !bytes.Equal(b, append(body(5000), body(20000)...)) {
				t.Fatalf("/file: %d bytes, %v", len(b), err)
			}
			// Hijack after held bytes: the answer, then the raw bytes.
			fmt.Fprintf(c, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
			res, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := io.ReadAll(res.Body); err != nil || !bytes.Equal(b, body(5000)) {
				t.Fatalf("/hijack answer: %d bytes, %v", len(b), err)
			}
			raw := make([]byte, 5000)
			if _, err := io.ReadFull(br, raw); err != nil || !bytes.Equal(raw, body(5000)) {
				t.Fatalf("/hijack raw bytes: %v", err)
			}
			// ErrAbortHandler: the client sees a cut answer.
			c2 := dial(t, addr)
			_ = c2.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c2, "GET /abort HTTP/1.1\r\nHost: x\r\n\r\n")
			res, err = http.ReadResponse(bufio.NewReader(c2), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err = io.ReadAll(res.Body)
			if err != io.ErrUnexpectedEOF {
				t.Fatalf("/abort: %d bytes, %v, want a cut answer", len(b), err)
			}
			t.Logf("/abort: %d bytes then %v", len(b), err)
		})
	}
}

// fillHeader is the exact header net/http writes for an answer whose
// handler sets these three headers (Date set: net/http adds none).
const fillHeader = "HTTP/1.1 200 OK\r\nContent-Length: 8000\r\nContent-Type: text/plain\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n"

// fillBuffer starts an 8000-byte answer and writes exactly as many body
// bytes as fill net/http's 4 KB connection buffer with its header, so
// that the buffer's first write is the full buffer.
func fillBuffer(w http.ResponseWriter) { fillBufferLess(w, 0) }

// fillBufferClosing is fillBuffer for an answer to which net/http adds
// "Connection: close" (a request body too big to read): header and body
// fill the buffer exactly, 8000 bytes promised.
func fillBufferClosing(w http.ResponseWriter) { fillBufferLess(w, len("Connection: close\r\n")) }

func fillBufferLess(w http.ResponseWriter, less int) {
	h := w.Header()
	h.Set("Content-Length", "8000")
	h.Set("Content-Type", "text/plain")
	h.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
	_, _ = w.Write(body(bufferSize - len(fillHeader) - less))
}

// readFilled reads, within d, the answer fillBuffer started up to what
// Flush must have sent.
func readFilled(t *testing.T, c net.Conn, br *bufio.Reader, d time.Duration, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: the header of a flushed answer did not arrive within %v: %v", what, d, err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, bufferSize-len(fillHeader))); err != nil {
		t.Fatalf("%s: the flushed body bytes did not arrive: %v", what, err)
	}
}

// A Whole that comes after its answer ended (a handler run by
// http.TimeoutHandler goes on after the 503) must not mark the next answer
// on the connection: an answer with a Content-Length that flushes exactly
// at the buffer (a download of known length) would be held past its Flush.
func TestLateWholeHoldsNothing(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		late := make(chan struct{})
		mux := http.NewServeMux()
		mux.Handle("/slow", http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			time.Sleep(200 * time.Millisecond)
			Whole(r.Context())
			close(late)
			w.Header().Set("Content-Length", "1")
			_, _ = w.Write([]byte("x"))
		}), 50*time.Millisecond, "timeout"))
		release := make(chan struct{})
		defer close(release)
		mux.HandleFunc("/download", slowDownload(late, release))
		_, addr := start(t, mux, wired, false, nil)
		c := dial(t, addr)
		br := bufio.NewReader(c)
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		fmt.Fprintf(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		fmt.Fprintf(c, "GET /download HTTP/1.1\r\nHost: x\r\n\r\n")
		readFilled(t, c, br, 2*time.Second, "/download after a late Whole")
	})
}

// A Whole made while the answer's first write is held is used up by the
// answer's next write: the answer after it on the connection, whose
// handler never called Whole, is not held.
func TestWholeWhileHeldMarksNoOtherAnswer(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		twoPartThenDownload(t, wired, 6000, "a doubly marked answer", func(w http.ResponseWriter, r *http.Request) {
			// A whole answer written by two helpers, each marking it.
			Whole(r.Context())
			w.Header().Set("Content-Length", "6000")
			_, _ = w.Write(body(5000)) // the first 4096 bytes are held
			Whole(r.Context())
			_, _ = w.Write(body(1000))
		})
	})
}

// slowDownload answers a download of known length that never calls Whole:
// once start is closed (nil: at once), it flushes exactly net/http's
// buffer, and the rest is slow to come (until release, or 5 s).
func slowDownload(start, release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if start != nil {
			<-start
		}
		fillBuffer(w)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		_, _ = w.Write(body(8000 - (bufferSize - len(fillHeader))))
	}
}

// twoPartThenDownload serves /two-part (an answer of size bytes, from
// twoPart) and then, on the same connection, /download, whose handler
// never calls Whole and flushes exactly net/http's buffer before the rest
// is slow to come: that flush must reach the client (no mark left over).
func twoPartThenDownload(t *testing.T, wired bool, size int, what string, twoPart http.HandlerFunc) {
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/two-part", twoPart)
	mux.HandleFunc("/download", slowDownload(nil, release))
	_, addr := start(t, mux, wired, false, nil)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	fmt.Fprintf(c, "GET /two-part HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(res.Body); err != nil || len(b) != size {
		t.Fatalf("/two-part: %d bytes, %v; want %d", len(b), err, size)
	}
	fmt.Fprintf(c, "GET /download HTTP/1.1\r\nHost: x\r\n\r\n")
	readFilled(t, c, br, 2*time.Second, "/download after "+what)
}

// An answer marked whole that is cut (here panic(http.ErrAbortHandler)
// after less than its Content-Length) exactly at net/http's buffer: its
// only write is held, and Close must send it. Dropped, the client would
// see the connection close before any byte, which Go's Transport takes on
// a reused connection for a server that closed an idle connection: it
// sends the request again, and the handler runs twice.
func TestCutAnswerAtTheBufferArrivesCut(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		var cutRuns atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/warm", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
			cutRuns.Add(1)
			Whole(r.Context())
			fillBuffer(w)               // 8000 promised, 4096 - header written
			panic(http.ErrAbortHandler) // a failure after the first byte
		})
		_, addr := start(t, mux, wired, false, func(s *http.Server) {
			s.ErrorLog = nil
		})
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr, Timeout: 3 * time.Second}
		res, err := cl.Get("http://" + addr + "/warm")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()

		res, err = cl.Get("http://" + addr + "/cut")
		if err == nil {
			b, berr := io.ReadAll(res.Body)
			res.Body.Close()
			t.Logf("/cut: %d, %d body bytes, then %v", res.StatusCode, len(b), berr)
		} else {
			t.Logf("/cut: no answer: %v", err)
		}
		if n := cutRuns.Load(); n != 1 {
			t.Errorf("the /cut handler ran %d times for one client request, want 1", n)
		}
		if err != nil {
			t.Errorf("the cut answer's header never reached the client: %v", err)
		}
	})
}

// Server.Close while a handler runs with the first write of its answer
// held (the client not reading) returns at once, and the client gets the
// answer's bytes written so far, cut, as from a plain server.
func TestServerCloseWithAHeldWrite(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		release := make(chan struct{})
		var once sync.Once
		defer once.Do(func() { close(release) })
		written := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBuffer(w)
			// More than the handler's own 2 KB buffer: it reaches the
			// connection's full buffer, which net/http writes (held).
			_, _ = w.Write(body(3000))
			close(written)
			<-release
		})
		srv, addr := start(t, h, wired, false, nil)
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		<-written
		done := make(chan struct{})
		go func() { _ = srv.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatal("Server.Close did not return within 2s")
		}
		once.Do(func() { close(release) })
		_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("the cut answer's header did not arrive: %v", err)
		}
		got, err := io.ReadAll(res.Body)
		if err != io.ErrUnexpectedEOF || !bytes.Equal(got, body(bufferSize-len(fillHeader))) {
			t.Fatalf("the cut answer: %d body bytes, %v; want the %d written, then a cut", len(got), err, bufferSize-len(fillHeader))
		}
	})
}

// Server.Close while a stream's write is blocked (a client that does not
// read) returns at once: no lock of Conn is held across a write.
func TestServerCloseDuringABlockedWrite(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		blocked := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var once sync.Once
			go func() { time.Sleep(300 * time.Millisecond); once.Do(func() { close(blocked) }) }()
			for i := 0; i < 1000; i++ {
				if _, err := w.Write(body(64 << 10)); err != nil {
					break
				}
			}
			once.Do(func() { close(blocked) })
		})
		srv, addr := start(t, h, wired, true, nil)
		c, err := dialSmall(addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		<-blocked
		done := make(chan struct{})
		go func() { _ = srv.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Error("Server.Close did not return within 2s of a blocked write")
		}
		_ = c.Close()
		<-done
	})
}
