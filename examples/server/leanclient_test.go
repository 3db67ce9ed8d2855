package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// leanClient is the load generator of BenchmarkServerHTTP: one persistent
// HTTP/1.1 connection to the server, requests whose bytes are built before
// the clock starts, and a response parser that reads the status line, the
// headers it needs and the whole body (Content-Length, chunked, or up to
// the connection's close) into a buffer it reuses. It does what net/http's
// client does on the wire for these requests, without the client's own
// allocations, goroutines and header maps: on two cores that the client
// and the server share, every microsecond of the client's CPU is one the
// server does not get.
//
// When the server closes the connection (Connection: close, or a reused
// connection that fails before a byte of the answer arrived: a keep-alive
// the server timed out) it dials again; only that request, which the
// server never began to read, is sent again, as net/http does.
type leanClient struct {
	addr    string
	timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	used    bool // the connection has carried an answer: a failure before the next one's first byte may be a closed keep-alive
	dials   int

	// The last answer; body and location are valid until the next do.
	status   int
	location []byte
	body     []byte
}

func newLeanClient(addr string) *leanClient {
	return &leanClient{addr: addr, timeout: 30 * time.Second, br: bufio.NewReaderSize(nil, 16<<10)}
}

// dial opens the connection.
func (c *leanClient) dial() error {
	conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
	if err != nil {
		return err
	}
	c.conn, c.used = conn, false
	c.br.Reset(conn)
	c.dials++
	return nil
}

// close closes the connection (the next do dials).
func (c *leanClient) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// do sends one complete request and reads its answer into c.status,
// c.location and c.body.
func (c *leanClient) do(req []byte) error {
	for {
		if c.conn == nil {
			if err := c.dial(); err != nil {
				return err
			}
		}
		reused := c.used
		_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
		_, err := c.conn.Write(req)
		started := false
		if err == nil {
			started, err = c.read()
		}
		if err != nil {
			c.close()
			if reused && !started {
				continue // the server closed the idle connection: a new one
			}
			return err
		}
		c.used = true
		return nil
	}
}

var errMalformed = errors.New("lean client: malformed response")

// read reads one answer; started says whether any byte of it arrived.
func (c *leanClient) read() (started bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if len(line) == 0 && err != nil {
		return false, err
	}
	started = true
	for {
		if err != nil {
			return true, err
		}
		// "HTTP/1.1 201 Created\r\n"
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return true, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		if c.status, err = strconv.Atoi(string(line[9:12])); err != nil {
			return true, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		if c.status >= 200 || c.status == 101 {
			break
		}
		// An interim answer (100 Continue, 103 Early Hints): its headers, then the real one.
		if err = c.skipHeaders(); err != nil {
			return true, err
		}
		line, err = c.br.ReadSlice('\n')
	}
	length, chunked, closing := int64(-1), false, false
	c.location = c.location[:0]
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return true, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return true, fmt.Errorf("%w: header line %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return true, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		case bytes.EqualFold(name, []byte("Location")):
			c.location = append(c.location, value...)
		}
	}
	c.body = c.body[:0]
	switch {
	case c.status == 204 || c.status == 304:
	case chunked:
		err = c.readChunked()
	case length >= 0:
		c.body = slices.Grow(c.body, int(length))[:length]
		_, err = io.ReadFull(c.br, c.body)
	default: // the body runs to the connection's close
		var buf bytes.Buffer
		_, err = buf.ReadFrom(c.br)
		c.body, closing = append(c.body, buf.Bytes()...), true
	}
	if err != nil {
		return true, err
	}
	if closing {
		c.close()
	}
	return true, nil
}

// readChunked reads a chunked body (RFC 9112 §7.1) into c.body and its
// trailer section.
func (c *leanClient) readChunked() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";")) // chunk extensions ignored
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			return c.skipHeaders() // the trailer section and its empty line
		}
		at := len(c.body)
		c.body = slices.Grow(c.body, int(n))[:at+int(n)]
		if _, err := io.ReadFull(c.br, c.body[at:]); err != nil {
			return err
		}
		if crlf, err := c.br.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
		}
	}
}

// skipHeaders reads header lines up to and including the empty one.
func (c *leanClient) skipHeaders() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}

// leanRequest is the bytes of one POST of body to path, with the headers
// the benchmark's net/http client sends that the server reads: Host,
// Content-Type, Content-Length and X-Service-Key.
func leanRequest(host, path, key, body string) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Service-Key: %s\r\n\r\n%s",
		path, host, len(body), key, body)
}

// TestLeanClient: the benchmark's client reads answers framed by
// Content-Length, chunked or by the connection's close, follows
// Connection: close, and dials again when the server dropped an idle
// connection, sending that request once more; it never resends a request
// whose answer had begun.
func TestLeanClient(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Location", "/there")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(201)
			_, _ = w.Write(body)
		case "/chunked":
			w.WriteHeader(201)
			for range 3 {
				_, _ = w.Write(body)
				w.(http.Flusher).Flush()
			}
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = w.Write(body)
		case "/eof": // HTTP/1.0 style: no length, the close ends the body
			conn, bufrw, _ := w.(http.Hijacker).Hijack()
			_, _ = bufrw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
			_, _ = bufrw.Write(body)
			_ = bufrw.Flush()
			_ = conn.Close()
		}
	}))
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := newLeanClient(u.Host)
	defer c.close()
	do := func(path, body string, status int, want string) {
		t.Helper()
		if err := c.do(leanRequest(u.Host, path, "k", body)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if c.status != status || string(c.body) != want {
			t.Fatalf("%s: status %d, body of %d bytes (%.40q...), want %d and %d bytes", path, c.status, len(c.body), c.body, status, len(want))
		}
	}
	do("/length", "abc", 201, "abc")
	if string(c.location) != "/there" {
		t.Errorf("Location %q", c.location)
	}
	long := strings.Repeat("x", 40<<10) // more than the reader's buffer
	do("/chunked", long, 201, long+long+long)
	do("/length", "", 201, "")
	do("/close", "bye", 200, "bye")
	if c.conn != nil {
		t.Error("the connection stays open after Connection: close")
	}
	do("/length", "again", 201, "again")
	do("/eof", "to the end", 200, "to the end")
	do("/length", "after eof", 201, "after eof")
	if c.dials != 3 {
		t.Errorf("%d dials, want 3 (first, after close, after eof)", c.dials)
	}
	// The server drops the idle connection: the next request goes out on a
	// new one, once.
	srv.CloseClientConnections()
	before := hits.Load()
	do("/length", "redial", 201, "redial")
	if c.dials != 4 || hits.Load() != before+1 {
		t.Errorf("after the server closed the connection: %d dials, %d requests served, want 4 and 1", c.dials, hits.Load()-before)
	}
}
