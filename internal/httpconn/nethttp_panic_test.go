package httpconn

// The sends of held bytes other than writeCombined's (Close's goroutine,
// CloseWrite) against a connection underneath that panics in a write,
// which a tenth review found leaving the connection's lock held (a Close
// waiting for ever) and ending the process; and a Server.Close that waits,
// at most closeWriteTimeout, behind CloseWrite's bounded send.

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The answer of TestCloseWriteSendsTheHeldWrite (cut exactly at the
// buffer, a large request body unread: closeWriteAndWait) over a
// connection that panics in the write of that buffer. Plain: the panic
// comes out of finalFlush; conn.serve recovers it and closes the
// connection (its close flushes the buffer again). Wired, the review
// found, the write of the held buffer (CloseWrite's) was made with c.mu
// locked and no deferred unlock: the panic left c.mu locked, conn.serve's
// deferred Close waited on it for ever, and Server.Close never returned.
func TestCloseWritePanicLeavesNothingLocked(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		pl := &panicListener{Listener: listen(t), panicsOn: ofTheBuffer}
		pl.armed.Store(true)
		srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBufferClosing(w) // net/http adds "Connection: close" (body too big)
		})}
		addr := serve(t, srv, pl, wired)
		c := dial(t, addr)
		go func() {
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
			_, _ = c.Write(make([]byte, 300<<10))
		}()
		got, err := rawRead(c, 2*time.Second)
		t.Logf("client got %d bytes, then %v", len(got), err)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("the connection was not closed within 2s of the panic")
		}
		done := make(chan struct{})
		go func() { _ = srv.Close(); close(done) }() // leaks, wired: it never returns
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Errorf("Server.Close did not return within 1s")
		}
	})
}

// Server.Close with a write held (TestServerCloseWithAHeldWrite) over a
// connection that panics in a write of the buffer. Plain: the panic comes
// out of the handler's Write, net/http recovers it, the process goes on.
// Wired: the held buffer is written by Close's goroutine, which recovers
// nothing: the panic kills the process. Run in a child process.
func TestServerCloseHeldWritePanicKeepsTheProcess(t *testing.T) {
	if mode := os.Getenv("HTTPCONN_PANIC_CHILD"); mode != "" {
		serverCloseHeldWritePanicChild(mode == "wired")
		return
	}
	both(t, func(t *testing.T, wired bool) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServerCloseHeldWritePanicKeepsTheProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("HTTPCONN_PANIC_CHILD=%s", map[bool]string{false: "plain", true: "wired"}[wired]))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "child alive") {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			t.Errorf("the server's process died: %v; first lines:\n%s", err, strings.Join(lines[:min(len(lines), 6)], "\n"))
		}
	})
}

func serverCloseHeldWritePanicChild(wired bool) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	pl := &panicListener{Listener: raw, panicsOn: ofTheBuffer}
	pl.armed.Store(true)
	reached := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { reached <- struct{}{} }()
		Whole(r.Context())
		fillBuffer(w)
		_, _ = w.Write(body(3000)) // the full buffer: held (wired), or the panic (plain)
		reached <- struct{}{}
		<-release
	})}
	serveOn(srv, pl, wired)
	c, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	go func() { _, _ = io.Copy(io.Discard, c) }()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	<-reached
	_ = srv.Close()
	close(release)
	time.Sleep(500 * time.Millisecond)
	fmt.Println("child alive")
}

// A Server.Close while net/http's closeWriteAndWait sends a held cut
// answer to a client that takes no byte: plain, it returns at once; wired,
// it waits for that send, which is bounded (closeWriteTimeout), as doc.go
// says (a review found doc.go saying Close never waits).
func TestServerCloseBehindCloseWriteIsBounded(t *testing.T) {
	both(t, func(t *testing.T, wired bool) {
		sl := &stallListener{Listener: listen(t)}
		returning := make(chan struct{})
		srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Whole(r.Context())
			fillBufferClosing(w)   // net/http adds "Connection: close" (body too big)
			sl.stalled.Store(true) // the client takes no byte for now
			close(returning)
		})}
		addr := serve(t, srv, sl, wired)
		defer sl.stalled.Store(false)
		c := dial(t, addr)
		go func() {
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
			_, _ = c.Write(make([]byte, 300<<10))
		}()
		<-returning
		time.Sleep(10 * time.Millisecond) // closeWriteAndWait: CloseWrite's send is blocked
		t0 := time.Now()
		_ = srv.Close()
		d := time.Since(t0)
		t.Logf("Server.Close took %v", d.Round(time.Millisecond))
		if d > closeWriteTimeout+200*time.Millisecond {
			t.Errorf("Server.Close took %v, waiting on CloseWrite's send (closeWriteTimeout %v)", d.Round(time.Millisecond), closeWriteTimeout)
		}
	})
}
