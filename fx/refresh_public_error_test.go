package fx

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestRefreshStatusNamesNoAddress: the refresh's status is served to
// anyone (GET /v1/fx/status, /readyz), so a failed fetch's LastError says
// what failed (the feed could not be reached, its host not resolved, it
// answered an HTTP status) without the error's network addresses: the
// resolver's and the feed's IP and port, a proxy's. The log, read by the
// operator, keeps the whole error.
func TestRefreshStatusNamesNoAddress(t *testing.T) {
	// A port nobody listens on: the dial is refused, and Go's error names
	// 127.0.0.1 and the port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct{ name, url, want string }{
		{"refused", "http://" + addr + "/daily.xml", "could not be reached"},
		{"unresolved", "http://ecb-feed.invalid/daily.xml", "could not be resolved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logBuffer{}
			clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
			r, err := NewRefresher(RefresherConfig{
				Live: NewLiveTable(embedded(t)), Store: &MemoryStore{}, Client: &http.Client{},
				Feeds: Feeds{Daily: tc.url, Hist90d: tc.url}, Clock: clock, Rand: rand.New(rand.NewPCG(1, 2)),
				Logger: slog.New(slog.NewTextHandler(logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.RunOnce(context.Background()); err == nil {
				t.Fatal("the fetch succeeded")
			}
			st := r.Status()
			if !strings.Contains(st.LastError, tc.want) {
				t.Errorf("LastError %q does not say %q", st.LastError, tc.want)
			}
			for _, leak := range []string{"127.0.0.1", ":" + port, ":53", "dial tcp", "lookup "} {
				if strings.Contains(st.LastError, leak) {
					t.Errorf("LastError %q names %q", st.LastError, leak)
				}
			}
			if tc.name == "refused" && !strings.Contains(logs.String(), addr) {
				t.Errorf("the log lost the whole error: %s", logs.String())
			}
		})
	}
}
