package httpconn

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxHeld bounds the bytes a connection holds for one response: past it
// the response leaves as net/http writes it (one copy of a larger body is
// not worth a system call saved).
const MaxHeld = 64 << 10

// Listener wraps ln so that its connections can hold a whole response.
func Listener(ln net.Listener) net.Listener { return &listener{Listener: ln} }

type listener struct {
	net.Listener
	// bufs lends the connections their buffers while they hold a
	// response: an idle connection keeps none (net/http pools its own
	// buffers the same way).
	bufs sync.Pool
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c, bufs: &l.bufs}, nil
}

// Configure installs on srv the hooks a Listener's connections need: the
// connection in each request's context (ConnContext, for Whole) and the
// flush when a connection turns idle or closes (ConnState). Hooks srv
// already has run too, after these.
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
			case http.StateIdle:
				_ = hc.flush(false)
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

// Whole marks the response being written on the connection of ctx (a
// request's context) as one piece: its writes are held and sent together
// when it is finished. It does nothing for a connection not accepted by a
// Listener of a Configured server.
func Whole(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*Conn); ok {
		c.mu.Lock()
		c.whole = !c.noHold
		c.mu.Unlock()
	}
}

// Conn is a connection accepted by a Listener.
type Conn struct {
	net.Conn
	bufs   *sync.Pool // the listener's (nil: a fresh buffer each time)
	mu     sync.Mutex
	whole  bool   // the response being written is held (Whole)
	noHold bool   // hijacked: never hold again
	held   []byte // its writes so far
	err    error  // a held write failed: the connection is closed
}

// Write holds p while the response is whole, the first write excepted if
// it is smaller than net/http's buffer (then it is the response's last)
// and the whole is within MaxHeld; otherwise it writes what is held and p
// in one system call.
func (c *Conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.whole {
		if len(c.held)+len(p) <= MaxHeld && (len(c.held) > 0 || len(p) >= bufferSize) {
			if c.held == nil {
				c.held = c.buffer()
			}
			c.held = append(c.held, p...)
			return len(p), nil
		}
		c.whole = false // past MaxHeld, or the last write: out as it comes
	}
	if len(c.held) == 0 {
		return c.Conn.Write(p)
	}
	bufs := net.Buffers{c.held, p}
	n, err := bufs.WriteTo(c.Conn)
	held := int64(len(c.held))
	c.release()
	if n < held {
		return 0, err
	}
	return int(n - held), err
}

// buffer is an empty buffer for a response to hold.
func (c *Conn) buffer() []byte {
	if c.bufs != nil {
		if b, ok := c.bufs.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, 2*bufferSize+bufferSize/2)
}

// release gives the held buffer back: a connection keeps none between
// responses, and a large one is not kept at all.
func (c *Conn) release() {
	if c.bufs != nil && cap(c.held) <= 4*bufferSize {
		b := c.held[:0]
		c.bufs.Put(&b)
	}
	c.held = nil
}

// bufferSize is net/http's per-connection write buffer (newBufioWriterSize
// in net/http/server.go, 4<<10): a write of at least that is not a
// response's last when the response is longer.
const bufferSize = 4 << 10

// flush writes what is held and ends the response's holding. With
// nonBlocking it does nothing while another write is under way (a Close
// from another goroutine).
func (c *Conn) flush(nonBlocking bool) error {
	if nonBlocking {
		if !c.mu.TryLock() {
			return nil
		}
	} else {
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	c.whole = false
	if c.err != nil || len(c.held) == 0 {
		return c.err
	}
	_, err := c.Conn.Write(c.held)
	c.release()
	if err != nil {
		// net/http would have seen the error in its own flush and closed
		// the connection instead of reading another request after a cut
		// answer: so does this connection.
		c.err = err
		_ = c.Conn.Close()
	}
	return err
}

func (c *Conn) hijacked() {
	c.mu.Lock()
	c.noHold = true
	c.mu.Unlock()
	_ = c.flush(false)
}

// SetWriteDeadline writes what is held under the deadline in force, then
// sets the new one: net/http sets the zero time right after it has
// finished a response.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if err := c.flush(false); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// SetDeadline is SetWriteDeadline for both directions.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.flush(false); err != nil {
		return err
	}
	return c.Conn.SetDeadline(t)
}

// CloseWrite writes what is held, then shuts the connection's writing
// side (net/http's closeWriteAndWait).
func (c *Conn) CloseWrite() error {
	err := c.flush(false)
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		if e := cw.CloseWrite(); err == nil {
			err = e
		}
	}
	return err
}

// Close writes what is held unless a write is under way (Server.Close
// from another goroutine must not wait for it), then closes.
func (c *Conn) Close() error {
	if err := c.flush(true); err != nil {
		return err // the failed write closed it
	}
	return c.Conn.Close()
}

// ReadFrom writes what is held, then copies r to the connection the way
// the connection itself would (sendfile or splice for a TCP connection):
// net/http hands an io.Copy of a file to it.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.flush(false); err != nil {
		return 0, err
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}
