package fx

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
)

// TestFetchTwoColumnCSVCutShort: a body delimited by the connection's close
// (HTTP/1.0 style: no Content-Length, not chunked) ends without a transport
// error wherever the connection drops. In an XML feed the cut breaks the
// document; in this project's two-column CSV (oldest first) it cuts the
// newest rate, "1.1684" read as "1.16", a valid number that a record would
// carry and that would refuse the ECB's own value for that day as a
// conflict. A fetched two-column file must end with its line end, as the
// file (data/ecb-eurusd.csv) and its generator write it.
func TestFetchTwoColumnCSVCutShort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	serve := func(body string) {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = http.ReadRequest(bufio.NewReader(c))
		_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/csv\r\nConnection: close\r\n\r\n" + body))
	}
	url := "http://" + ln.Addr().String() + "/ecb-eurusd.csv"
	ctx := context.Background()

	go serve("date,usd_per_eur\n2026-04-10,1.1702\n2026-04-13,1.16")
	_, err = Fetch(ctx, nil, url)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("a two-column CSV cut inside its last line: err = %v, want a *ParseError", err)
	}

	go serve("date,usd_per_eur\n2026-04-10,1.1702\n2026-04-13,1.1684\n")
	tb, err := Fetch(ctx, nil, url)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := tb.Lookup("USD", noon(t, "2026-04-13"), ForDayOrPrevious); err != nil || r.Raw != "1.1684" {
		t.Errorf("whole file: %+v, %v", r, err)
	}
}
