package fx

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestRefresherEmptyPublicationIsNotMerged: a feed that names the expected
// reference date but carries no rate for it (an empty <Cube time='…'/>, as
// a feed caught mid-update or cut short can answer) is not a publication.
// Merging it would mark the day as published without rates: the refresher
// would stop polling, no later daily feed would bring that day again, and
// every payment of the day would wait for a rate for ever. It must fail
// like any unusable document (retried with backoff), and the day's rates
// must be merged once the feed carries them.
func TestRefresherEmptyPublicationIsNotMerged(t *testing.T) {
	const day = "2026-04-14"
	var (
		mu    sync.Mutex
		empty = true
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body := synthFeed([]string{day}, nil)
		if empty {
			start := strings.Index(body, "<Cube time=")
			end := strings.Index(body, "\t\t</Cube>")
			body = body[:start] + "<Cube time='" + day + "'>\n" + body[end:]
		}
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	ecb := &fakeECB{srv: srv}
	clock := newFakeClock(t, day+"T16:10:00+02:00")
	g := newRig(t, ecb, clock, &MemoryStore{})
	ctx := context.Background()
	paidAt := instant(t, day+"T17:00:00+02:00")

	next, err := g.r.RunOnce(ctx)
	if err == nil {
		t.Errorf("a feed with no rate for %s was accepted", day)
	}
	if _, err := g.live.Rate(ctx, "USD", paidAt, LatestPublishedAt); !errors.Is(err, ErrNotYetPublished) {
		t.Errorf("after the empty feed: lookup error %v, want ErrNotYetPublished (the day is not published yet)", err)
	}
	if st := g.r.Status(); !st.Behind {
		t.Errorf("status after the empty feed: %+v, want behind", st)
	}
	if d := next.Sub(clock.Now()); d > DefaultRetryMax {
		t.Errorf("next attempt after %s: the day must be polled again soon", d)
	}

	mu.Lock()
	empty = false
	mu.Unlock()
	clock.set(next)
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := g.live.Rate(ctx, "USD", paidAt, LatestPublishedAt)
	if err != nil || r.RateDate != day || r.Raw != synthRate("USD", day) {
		t.Errorf("after the full feed: %+v, %v", r, err)
	}
}
