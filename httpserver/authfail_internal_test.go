package httpserver

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestAuthFailureBackoff: each wrong key over the bucket doubles the block,
// up to the maximum; a quiet address starts again from one second.
func TestAuthFailureBackoff(t *testing.T) {
	l := newAuthFailures(rate.Limit(0.01), 2, 8*time.Second) // a token every 100 s
	a := netip.MustParseAddr("198.51.100.7")
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 2; i++ {
		if err := l.failed(a, now); err != nil {
			t.Fatalf("failure %d within the burst: %v", i, err)
		}
	}
	var blocks []time.Duration
	for i := 0; i < 6; i++ {
		err := l.failed(a, now)
		if err == nil {
			t.Fatalf("failure %d over the burst was not blocked", i)
		}
		until := l.byAddr[a].blockedUntil
		blocks = append(blocks, until.Sub(now))
		if l.blocked(a, until.Add(-time.Millisecond)) == nil || l.blocked(a, until) != nil {
			t.Fatalf("block %d does not end at %v", i, until)
		}
		now = until
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	for i := range want {
		if blocks[i] != want[i] {
			t.Fatalf("blocks %v, want %v", blocks, want)
		}
	}
	// Quiet until the bucket is full again: the backoff starts over.
	now = now.Add(time.Hour)
	for i := 0; i < 2; i++ {
		if err := l.failed(a, now); err != nil {
			t.Fatalf("after a quiet hour, failure %d: %v", i, err)
		}
	}
	if l.failed(a, now); l.byAddr[a].blockedUntil.Sub(now) != time.Second {
		t.Errorf("after a quiet hour the block is %v, want 1s", l.byAddr[a].blockedUntil.Sub(now))
	}
	// A flood of made-up addresses stays bounded.
	for i := 0; i < maxAuthFailureAddrs+10; i++ {
		var b [4]byte
		b[0], b[1], b[2], b[3] = 10, byte(i>>16), byte(i>>8), byte(i)
		l.failed(netip.AddrFrom4(b), now)
	}
	if len(l.byAddr) > maxAuthFailureAddrs {
		t.Errorf("%d addresses remembered, bound %d", len(l.byAddr), maxAuthFailureAddrs)
	}
}
