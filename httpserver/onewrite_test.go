package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/internal/httpconn"
)

// countingListener counts the writes its connections make to the socket
// and their bytes.
type countingListener struct {
	net.Listener
	writes, bytes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c countingConn) Write(p []byte) (int, error) {
	c.l.writes.Add(1)
	c.l.bytes.Add(int64(len(p)))
	return c.Conn.Write(p)
}

// Wired as the bundled server wires it (internal/httpconn), a settlement's
// answer and a stored invoice leave in one write each although each is
// larger than net/http's 4 KB connection buffer (two writes without it):
// the handlers mark the answers they write whole.
func TestAnswersLeaveInOneWrite(t *testing.T) {
	f := newFixture(t)
	h := f.srv.Config.Handler
	f.srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(h)
	_ = srv.Listener.Close()
	srv.Listener = httpconn.Listener(counted)
	httpconn.Configure(srv.Config)
	srv.Start()
	f.srv = srv

	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if created.status != 201 {
		t.Fatalf("POST /settlements: %d %s", created.status, created.body)
	}
	if w, b := counted.writes.Swap(0), counted.bytes.Swap(0); w != 1 || b <= 4096 {
		t.Errorf("the settlement's answer: %d writes of %d bytes, want one of more than 4096", w, b)
	}
	loc := created.header.Get("Location")
	ubl := f.do("GET", loc+"/ubl", keyA, nil)
	if ubl.status != 200 {
		t.Fatalf("GET %s/ubl: %d %s", loc, ubl.status, ubl.body)
	}
	if w, b := counted.writes.Swap(0), counted.bytes.Swap(0); w != 1 || b <= 4096 {
		t.Errorf("the invoice: %d writes of %d bytes, want one of more than 4096", w, b)
	}
}

// A GET of a settlement (~4.2 KB, marked whole) sent with a body and
// Expect: 100-continue is answered at once, wired or not: net/http answers
// before it reads the body the client holds back, so the answer must not
// wait for that read (the first design of internal/httpconn held it there
// until the client gave up).
func TestWholeAnswerBeforeAnUnreadBody(t *testing.T) {
	f := newFixture(t)
	created := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)))
	if created.status != 201 {
		t.Fatalf("POST /settlements: %d %s", created.status, created.body)
	}
	loc := created.header.Get("Location")
	h := f.srv.Config.Handler
	for _, wired := range []bool{false, true} {
		t.Run(fmt.Sprintf("wired=%v", wired), func(t *testing.T) {
			srv := httptest.NewUnstartedServer(h)
			if wired {
				srv.Listener = httpconn.Listener(srv.Listener)
				httpconn.Configure(srv.Config)
			}
			srv.Start()
			defer srv.Close()
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nX-Service-Key: %s\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n", loc, keyA)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			b, err := io.ReadAll(res.Body)
			if err != nil || res.StatusCode != 200 || len(b) <= 4096 {
				t.Fatalf("%d, %d bytes, %v; want the record (200, more than 4096 bytes)", res.StatusCode, len(b), err)
			}
		})
	}
}
