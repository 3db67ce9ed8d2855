package httpserver

import (
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
)

// TestRateLimitsDefault: zero options mean DefaultRateLimit with a burst of
// DefaultRateBurst; rate.Inf disables the limit. Time is fixed, so no token
// is refilled during the test.
func TestRateLimitsDefault(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := newRateLimits(0, 0)
	if l.limit != DefaultRateLimit || l.burst != DefaultRateBurst {
		t.Fatalf("defaults %v/%d", l.limit, l.burst)
	}
	for i := 0; i < DefaultRateBurst; i++ {
		if err := l.allow("a", now); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	err := l.allow("a", now)
	var fe *fiscal.Error
	if fe, _ = err.(*fiscal.Error); fe == nil || fe.Code != codeRateLimited || fe.RetryAfter != 10*time.Millisecond {
		t.Fatalf("request %d: %v, want RATE_LIMITED with Retry-After 10ms (one token at 100/s)", DefaultRateBurst+1, err)
	}
	if err := l.allow("b", now); err != nil {
		t.Fatalf("another account: %v", err)
	}
	if err := l.allow("a", now.Add(10*time.Millisecond)); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	off := newRateLimits(rate.Inf, 0)
	for i := 0; i < 10*DefaultRateBurst; i++ {
		if err := off.allow("a", now); err != nil {
			t.Fatalf("rate.Inf limited request %d", i+1)
		}
	}
}

// TestClientAddr: the address the sandbox quota counts against.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"direct client", nil, "203.0.113.7:5555", nil, "203.0.113.7"},
		{"X-Forwarded-For ignored without trusted proxies", nil, "203.0.113.7:5555", []string{"198.51.100.1"}, "203.0.113.7"},
		{"X-Forwarded-For from an untrusted peer", trusted, "203.0.113.7:5555", []string{"198.51.100.1"}, "203.0.113.7"},
		{"one trusted proxy", trusted, "10.0.0.1:443", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged left part is skipped", trusted, "10.0.0.1:443", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of trusted proxies", trusted, "10.0.0.1:443", []string{"198.51.100.1, 10.9.9.9", "10.8.8.8"}, "198.51.100.1"},
		{"all hops trusted", trusted, "10.0.0.1:443", []string{"10.2.2.2"}, "10.2.2.2"},
		{"no header behind a proxy", trusted, "10.0.0.1:443", nil, "10.0.0.1"},
		{"garbage stops at the last proxy", trusted, "10.0.0.1:443", []string{"198.51.100.1, not-an-ip"}, "10.0.0.1"},
		{"an entry with a port", trusted, "10.0.0.1:443", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"IPv6 proxy and client", trusted, "[::1]:443", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped peer", nil, "[::ffff:203.0.113.7]:5555", nil, "203.0.113.7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{opts: Options{TrustedProxies: tc.trusted}}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientAddr(r); got.String() != tc.want {
				t.Errorf("client %s, want %s", got, tc.want)
			}
		})
	}
}

// FuzzClientAddr: whatever X-Forwarded-For holds, the client is the peer or
// one of the listed addresses, and never a trusted proxy unless every hop
// is one.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.1:443", "198.51.100.1, 10.2.2.2")
	f.Add("[::1]:80", "2001:db8::1, ::1, garbage")
	f.Add("203.0.113.9:1", "")
	s := &Server{opts: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := s.clientAddr(r)
		if !got.IsValid() {
			t.Fatalf("invalid address for %q %q", remote, xff)
		}
		peer, err := netip.ParseAddrPort(remote)
		if err != nil {
			if got != netip.IPv6Unspecified() {
				t.Fatalf("no TCP peer, got %s", got)
			}
			return
		}
		if got == peer.Addr().Unmap() {
			return
		}
		if !s.trusted(peer.Addr().Unmap()) {
			t.Fatalf("X-Forwarded-For believed from untrusted peer %s", peer)
		}
		if !strings.Contains(xff, got.String()) && !strings.Contains(strings.ToLower(xff), strings.TrimPrefix(got.String(), "::ffff:")) {
			t.Fatalf("client %s is neither the peer nor in %q", got, xff)
		}
	})
}

// TestDocumentStoreLRU: the document cache keeps the most recently used
// entries and drops the least recently used one when full.
func TestDocumentStoreLRU(t *testing.T) {
	var c documentStore
	key := func(i int) string { return "k" + strconv.Itoa(i) }
	for i := range documentCacheSize {
		c.put(&cachedDocument{key: key(i)})
	}
	if _, ok := c.get(key(0)); !ok { // k0 is now the most recent
		t.Fatal("k0 missing")
	}
	c.put(&cachedDocument{key: "new"})
	if _, ok := c.get(key(1)); ok {
		t.Error("the least recently used entry k1 was kept")
	}
	for _, k := range []string{key(0), "new", key(documentCacheSize - 1)} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.len() != documentCacheSize {
		t.Errorf("len %d", c.len())
	}
}
