package httpconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MaxHeld bounds the answers a connection holds the first write of: a
// larger one leaves as net/http writes it (one copy is not worth a system
// call saved on a large body).
const MaxHeld = 64 << 10

// bufferSize is net/http's per-connection write buffer (newBufioWriterSize
// in net/http/server.go, 4<<10). Its writes of an answer are the full
// buffer whenever the buffer fills, then what is left at the end.
const bufferSize = 4 << 10

// Listener wraps ln so that its connections can send an answer marked
// whole in one write.
func Listener(ln net.Listener) net.Listener { return &listener{Listener: ln} }

type listener struct {
	net.Listener
	// bufs lends the connections the buffer of a held write: an idle
	// connection keeps none (net/http pools its own buffers the same way).
	bufs sync.Pool
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c, bufs: &l.bufs}, nil
}

// Configure makes srv put each connection of a Listener in its requests'
// contexts, where Whole finds it, forget a mark left from an answer before
// each request (StateActive: the request's first bytes read, before its
// handler runs), and send a held write when a handler hijacks the
// connection. ConnContext and ConnState hooks srv already has
// run too, after these.
func Configure(srv *http.Server) {
	prevCtx, prevState := srv.ConnContext, srv.ConnState
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if hc, ok := c.(*Conn); ok {
			ctx = context.WithValue(ctx, connKey{}, hc)
		}
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if hc, ok := c.(*Conn); ok {
			switch s {
			case http.StateActive:
				hc.newRequest()
			case http.StateHijacked:
				hc.hijacked()
			}
		}
		if prevState != nil {
			prevState(c, s)
		}
	}
}

type connKey struct{}

// Whole says that the next answer on the connection of ctx (a request's
// context) is written in one piece: a Content-Length, no flush before its
// end. It does nothing for a connection not accepted by a Listener of a
// Configured server.
//
// A Whole whose request has ended (ctx done: the handler returned, or a
// TimeoutHandler answered for it) does nothing, so that it cannot mark the
// connection's next answer; every write of the connection uses the mark
// up.
func Whole(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*Conn); ok && ctx.Err() == nil {
		c.mu.Lock()
		c.whole = true
		c.mu.Unlock()
	}
}

// Conn is a connection accepted by a Listener.
type Conn struct {
	net.Conn
	bufs *sync.Pool // the listener's (nil: a new buffer each time)
	// mu guards the fields below; it is held across a system call only by
	// a bounded write (writeWithin).
	mu    sync.Mutex
	whole bool   // the next answer's first write may be held (Whole)
	held  []byte // that write, until the answer's next one
	// wdl is the write deadline net/http set last (SetDeadline,
	// SetWriteDeadline; zero: none): a write is held only before it, and
	// a bounded write leaves it in force after.
	wdl time.Time
	// closed: Close was called; a write after it fails as on a closed
	// connection.
	closed bool
	// lingering: Close handed a held write to its goroutine, which closes
	// the connection underneath after it (another Close leaves it be);
	// reads fail as on a closed connection from then on, so that
	// net/http's background read ends the request's context at once.
	// Set under mu, read without it by Read.
	lingering atomic.Bool
}

// Read reads from the connection, or fails as a closed connection's read
// once Close has been called with a write held, a read under way included
// (which bytes the client sent meanwhile may have ended instead of Close's
// deadline: a closed connection's read would not have returned them).
func (c *Conn) Read(p []byte) (int, error) {
	if c.lingering.Load() {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	if c.lingering.Load() {
		return 0, net.ErrClosed
	}
	return n, err
}

// newRequest forgets a mark an earlier answer left (a Whole after that
// answer's last write, which no write used up).
func (c *Conn) newRequest() {
	c.mu.Lock()
	c.whole = false
	c.mu.Unlock()
}

// Write holds the first write of an answer marked whole when it is
// net/http's full buffer and the answer's header says more follows (a
// Content-Length beyond it, at most MaxHeld in all); the answer's next
// write, which net/http makes at the latest when it finishes the answer,
// sends both in one system call, and its error is net/http's to see.
// Every other write goes out as it comes.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	held, whole := c.held, c.whole
	c.held, c.whole = nil, false // the mark is one answer's, used by its first write
	if held == nil && whole && (c.wdl.IsZero() || time.Now().Before(c.wdl)) {
		// (Past its write deadline, a write fails on a plain connection:
		// it is not held, and fails here too.)
		if n := answerLen(p); len(p) == bufferSize && n > len(p) && n <= MaxHeld {
			c.held = append(c.buffer(), p...)
			c.mu.Unlock()
			return len(p), nil
		}
	}
	c.mu.Unlock()
	if held == nil {
		return c.Conn.Write(p)
	}
	// One write of both: a copy of p (at most MaxHeld) rather than
	// writev, so that any connection underneath sends them at once.
	h := len(held)
	buf := append(held, p...)
	n, err := c.writeCombined(buf, h)
	if n < h && errors.Is(err, os.ErrDeadlineExceeded) {
		// The write deadline passed while the first write was held (it
		// had not when it was held): a plain connection had sent the
		// held bytes when net/http wrote them, and the client gets the
		// answer cut there rather than a connection closed before any
		// byte (which Go's Transport would take for an idle connection
		// closed, and send the request again).
		c.sendWithin(buf[n:h])
	}
	c.release(buf)
	if n < h {
		if err == nil {
			err = io.ErrShortWrite
		}
		return 0, err
	}
	return n - h, err
}

// writeCombined writes buf, whose first h bytes were held. Should the
// connection underneath panic (net/http recovers, and closes the
// connection), the held bytes are sent first, as a plain connection had
// sent them.
func (c *Conn) writeCombined(buf []byte, h int) (int, error) {
	defer func() {
		if p := recover(); p != nil {
			c.sendWithin(buf[:h])
			panic(p)
		}
	}()
	return c.Conn.Write(buf)
}

// answerLen is the length of the HTTP/1.x answer whose first bytes are p,
// header and body, from its Content-Length; 0 when p does not hold a whole
// header with one (a body in chunks, an HTTP/2 frame, a continuation).
func answerLen(p []byte) int {
	if !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return 0
	}
	end := bytes.Index(p, []byte("\r\n\r\n"))
	if end < 0 || end+4 == len(p) {
		// No header, or no body after it in this write: an answer without
		// one (HEAD, 304) may say a Content-Length it does not send.
		return 0
	}
	header := p[:end+2]
	const name = "\r\nContent-Length: "
	i := bytes.Index(header, []byte(name))
	if i < 0 || bytes.Contains(header, []byte("\r\nTransfer-Encoding:")) {
		return 0
	}
	v := header[i+len(name):]
	v = v[:bytes.IndexByte(v, '\r')]
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 0 {
		return 0
	}
	return end + 4 + n
}

// buffer is an empty buffer for a held write.
func (c *Conn) buffer() []byte {
	if c.bufs != nil {
		if b, ok := c.bufs.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, 2*bufferSize)
}

// release gives a held write's buffer back to the listener.
func (c *Conn) release(b []byte) {
	if c.bufs != nil && cap(b) <= 4*bufferSize {
		b = b[:0]
		c.bufs.Put(&b)
	}
}

// sendHeld writes the held write, if any, and forgets it.
func (c *Conn) sendHeld() error {
	c.mu.Lock()
	held, closed := c.held, c.closed
	c.held = nil
	c.mu.Unlock()
	if closed {
		return net.ErrClosed
	}
	if held == nil {
		return nil
	}
	_, err := c.Conn.Write(held)
	c.release(held)
	return err
}

// ReadFrom sends a held write, then copies r to the connection the way the
// connection itself would (sendfile or splice for TCP): net/http hands an
// io.Copy of a file to it.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.sendHeld(); err != nil {
		return 0, err
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// CloseWrite sends a write still held (within closeWriteTimeout), then
// shuts the connection's writing side: net/http's closeWriteAndWait, after
// an answer to a request whose body it did not read to its end, which may
// be an answer cut exactly at the buffer.
func (c *Conn) CloseWrite() error {
	if c.sendHeldWithin() {
		// Closed (a Server.Close): a held write may still be on its way
		// (Close's goroutine), which closes the connection after it; a
		// half-close now would cut it.
		return net.ErrClosed
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close sends a write still held, then closes the connection. A write is
// still held when its answer was cut exactly at net/http's buffer (a
// handler that panicked or wrote less than its Content-Length, a
// Server.Close while the handler ran): the client then gets the cut
// answer net/http would have sent, not a connection closed before any
// byte, which Go's Transport takes for an idle connection closed and
// answers by sending a GET or an idempotent request again. That write is
// made by a goroutine of its own, within closeWriteTimeout, which then
// closes the connection underneath: Close returns at once, so that a
// Server.Close, which closes one connection after another, never waits on
// a client that does not read; every write after Close fails as on a
// closed connection. Close does not wait for a write in flight either: a
// Server.Close that lands between Write taking the held bytes and its
// system call (nanoseconds, unless the goroutine is preempted exactly
// there) closes before they leave, where a plain connection had sent them
// (doc.go).
func (c *Conn) Close() error {
	c.mu.Lock()
	held, lingering := c.held, c.lingering.Load()
	c.held, c.closed = nil, true
	if held != nil {
		c.lingering.Store(true)
	}
	c.mu.Unlock()
	if lingering {
		return net.ErrClosed // closed already; its sender closes the connection underneath
	}
	if held == nil {
		return c.Conn.Close()
	}
	// A read under way on the connection underneath (net/http's
	// background read) fails now, as on a closed connection, and so does
	// every read after (Read), while the held write is sent.
	_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	go func() {
		defer func() {
			// A panic of the connection underneath in this write would
			// have been net/http's to recover (it made the write, on a
			// plain connection), not this goroutine's to end the process
			// with: the connection is closed, as net/http closes it.
			_ = recover()
			_ = c.Conn.Close()
		}()
		c.sendWithin(held)
		c.release(held)
	}()
	return nil
}

// closeWriteTimeout bounds a write of held bytes that net/http did not
// ask for then (Close, CloseWrite, a hijack, a passed write deadline).
const closeWriteTimeout = 100 * time.Millisecond

// sendHeldWithin sends a write still held, within closeWriteTimeout (it
// does nothing when no write is held), under the lock, so that a write of
// the handler's racing it cannot overtake it; after Close it sends
// nothing and reports closed (Close took what was held). The lock is let
// go even if the connection underneath panics in the write.
func (c *Conn) sendHeldWithin() (closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	if held := c.held; held != nil {
		c.held = nil
		c.writeWithin(held)
		c.release(held)
	}
	return false
}

// sendWithin writes b (bytes of a held write already taken) within
// closeWriteTimeout, under the lock.
func (c *Conn) sendWithin(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeWithin(b)
}

// writeWithin writes b within closeWriteTimeout, then puts back the write
// deadline net/http set last; c.mu is held.
func (c *Conn) writeWithin(b []byte) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(closeWriteTimeout))
	_, _ = c.Conn.Write(b)
	_ = c.Conn.SetWriteDeadline(c.wdl)
}

// SetDeadline sets the connection's deadlines, noting the write one.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	return c.Conn.SetDeadline(t)
}

// SetWriteDeadline sets the connection's write deadline, noting it.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	return c.Conn.SetWriteDeadline(t)
}

// hijacked sends a write still held: a hijacker may read before it writes
// (net/http's Hijack flushes its buffer, which leaves a held write held).
// It runs inside net/http's Hijack, which has just cleared the
// connection's deadlines: within closeWriteTimeout, and none after.
func (c *Conn) hijacked() { _ = c.sendHeldWithin() }
