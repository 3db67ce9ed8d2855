package fx

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	waiting chan struct{} // receives once per After call
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(t *testing.T, at string) *fakeClock {
	return &fakeClock{now: instant(t, at), waiting: make(chan struct{}, 16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	c.mu.Unlock()
	c.waiting <- struct{}{}
	return ch
}

// set moves the clock to at and fires the waiters that are due.
func (c *fakeClock) set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(at) {
			w.ch <- at
		} else {
			keep = append(keep, w)
		}
	}
	c.waiters = keep
}

// logBuffer captures a Refresher's log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type refresherRig struct {
	ecb     *fakeECB
	clock   *fakeClock
	live    *LiveTable
	store   *MemoryStore
	logs    *logBuffer
	r       *Refresher
	updates []*Table
}

// newRig is a refresher over the table a running one has: the embedded USD
// series (to 2026-04-13) and every currency of the (synthetic)
// publications of 2026 to that day, as earlier fetches left it.
func newRig(t *testing.T, ecb *fakeECB, clock *fakeClock, store *MemoryStore) *refresherRig {
	t.Helper()
	return newRigThrough(t, "2026-04-13", ecb, clock, store)
}

// newRigThrough is newRig with every currency through last only (USD alone
// after it, to 2026-04-13).
func newRigThrough(t *testing.T, last string, ecb *fakeECB, clock *fakeClock, store *MemoryStore) *refresherRig {
	t.Helper()
	earlier, err := ParseXML(strings.NewReader(synthFeed(businessDays("2026-01-02", last), nil)), "test:earlier")
	if err != nil {
		t.Fatal(err)
	}
	base, err := embedded(t).Merge(earlier)
	if err != nil {
		t.Fatal(err)
	}
	return newRigOn(t, base, ecb, clock, store)
}

// newRigOn is a refresher serving base.
func newRigOn(t *testing.T, base *Table, ecb *fakeECB, clock *fakeClock, store *MemoryStore) *refresherRig {
	t.Helper()
	g := &refresherRig{ecb: ecb, clock: clock, live: NewLiveTable(base), store: store, logs: &logBuffer{}}
	r, err := NewRefresher(RefresherConfig{
		Live:     g.live,
		Store:    store,
		Client:   ecb.srv.Client(),
		Feeds:    ecb.feeds(),
		Clock:    clock,
		Rand:     rand.New(rand.NewPCG(14, 14)),
		Logger:   slog.New(slog.NewTextHandler(g.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnUpdate: func(_ context.Context, t *Table) { g.updates = append(g.updates, t) },
	})
	if err != nil {
		t.Fatal(err)
	}
	g.r = r
	return g
}

func TestExpectedPublication(t *testing.T) {
	for _, tc := range []struct{ at, want string }{
		{"2026-04-13T10:00:00Z", "2026-04-10"},      // Monday morning: Friday's
		{"2026-04-13T16:09:59+02:00", "2026-04-10"}, // before 16:00 + 10 min
		{"2026-04-13T16:10:00+02:00", "2026-04-13"},
		{"2026-04-12T20:00:00Z", "2026-04-10"},      // Sunday
		{"2026-04-07T15:00:00+02:00", "2026-04-02"}, // Tuesday after Easter, before publication
		{"2026-01-14T16:10:00+01:00", "2026-01-14"}, // winter
	} {
		if got := expectedPublication(instant(t, tc.at), DefaultPublicationMargin).String(); got != tc.want {
			t.Errorf("expectedPublication(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

// TestRefresherLatePublication: the ECB publishes late; the refresher polls
// with backoff, merges the day once it is out, stores the document, and its
// callback re-processes a record that was pending for the missing rate.
func TestRefresherLatePublication(t *testing.T) {
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-13")...)
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00") // 16:00 CEST + margin
	store := &MemoryStore{}
	g := newRigThrough(t, "2026-04-10", ecb, clock, store) // 2026-04-13 in USD only
	ctx := context.Background()

	// A settlement at 16:05 CEST: the day's rate is due but not in the table.
	paidAt := instant(t, "2026-04-14T16:05:00+02:00")
	pending := map[string]time.Time{"rec-1": paidAt}
	if _, err := g.live.Rate(ctx, "USD", paidAt, LatestPublishedAt); !errors.Is(err, ErrNotYetPublished) {
		t.Fatalf("before: %v", err)
	}
	var processed []string
	g.r.cfg.OnUpdate = func(_ context.Context, tb *Table) {
		g.updates = append(g.updates, tb)
		for id, at := range pending {
			if r, err := tb.Lookup("USD", at, LatestPublishedAt); err == nil {
				processed = append(processed, id+"@"+r.RateDate)
				delete(pending, id)
			}
		}
	}

	// The feed still shows yesterday: merged (it brings the other
	// currencies), but the day is late, so poll again soon.
	next, err := g.r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := next.Sub(clock.Now()); d < DefaultRetryMin/2 || d > DefaultRetryMin {
		t.Errorf("late poll after %s, want within [%s, %s]", d, DefaultRetryMin/2, DefaultRetryMin)
	}
	if len(processed) != 0 || len(pending) != 1 {
		t.Errorf("processed %v before the publication", processed)
	}
	st := g.r.Status()
	if !st.Behind || st.Newest != "2026-04-13" || st.Expected != "2026-04-14" || st.LastError != "" {
		t.Errorf("status while late: %+v", st)
	}
	if want := clock.Now().Sub(instant(t, "2026-04-13T16:00:00+02:00")); st.Age != want {
		t.Errorf("age %s, want %s", st.Age, want)
	}

	// Still late at the second poll: the delay grows.
	clock.set(next)
	next2, err := g.r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := next2.Sub(clock.Now()); d < DefaultRetryMin || d > 2*DefaultRetryMin {
		t.Errorf("second late poll after %s", d)
	}

	// The ECB publishes at 16:25; the next poll merges it.
	ecb.publish("2026-04-14")
	clock.set(next2)
	next3, err := g.r.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(processed, []string{"rec-1@2026-04-14"}) {
		t.Errorf("pending records processed: %v", processed)
	}
	if want := instant(t, "2026-04-15T16:10:00+02:00"); !next3.Equal(want) {
		t.Errorf("next attempt %s, want the next publication %s", next3, want)
	}
	st = g.r.Status()
	if st.Behind || st.Newest != "2026-04-14" || st.Failures != 0 || st.Documents != 2 {
		t.Errorf("status after: %+v", st)
	}
	r, err := g.live.Rate(ctx, "PLN", instant(t, "2026-04-14T17:00:00Z"), LatestPublishedAt)
	if err != nil || r.Raw != synthRate("PLN", "2026-04-14") || !strings.HasPrefix(r.Snapshot, "fetch:sha256:") {
		t.Errorf("PLN after the update: %+v, %v", r, err)
	}
	if got := ecb.paths(); !slices.Equal(got, []string{"/daily.xml", "/daily.xml", "/daily.xml"}) {
		t.Errorf("requests %v", got)
	}

	// Nothing is due before the next publication: no request.
	clock.set(instant(t, "2026-04-15T12:00:00Z"))
	if _, err := g.r.RunOnce(ctx); err != nil || len(ecb.paths()) != 3 {
		t.Errorf("idle attempt: %v, requests %v", err, ecb.paths())
	}
}

// TestRefresherRetriesWithBackoff: N failures, each retried later than the
// last (exponential, jittered, capped), then success.
func TestRefresherRetriesWithBackoff(t *testing.T) {
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-14")...)
	ecb.set(func(f *fakeECB) { f.failNext = 9 })
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	g := newRig(t, ecb, clock, &MemoryStore{})
	ctx := context.Background()
	for n := 1; n <= 9; n++ {
		next, err := g.r.RunOnce(ctx)
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 503 {
			t.Fatalf("attempt %d: err = %v", n, err)
		}
		full := min(DefaultRetryMin<<(n-1), DefaultRetryMax)
		if d := next.Sub(clock.Now()); d < full/2 || d > full {
			t.Errorf("attempt %d: retry after %s, want within [%s, %s]", n, d, full/2, full)
		}
		if st := g.r.Status(); st.Failures != n || st.LastError == "" || !st.NextAttempt.Equal(next) {
			t.Errorf("attempt %d: status %+v", n, st)
		}
		clock.set(next)
	}
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if st := g.r.Status(); st.Failures != 0 || st.LastError != "" || st.Newest != "2026-04-14" {
		t.Errorf("after recovery: %+v", st)
	}
	if len(g.updates) != 1 {
		t.Errorf("%d updates", len(g.updates))
	}
	// The jitter is deterministic for a given Rand: the same run twice
	// gives the same schedule.
	again := func() []time.Duration {
		e := newFakeECB(t)
		e.set(func(f *fakeECB) { f.down = true })
		c := newFakeClock(t, "2026-04-14T16:10:00+02:00")
		h := newRig(t, e, c, nil)
		var ds []time.Duration
		for range 5 {
			next, _ := h.r.RunOnce(ctx)
			ds = append(ds, next.Sub(c.Now()))
			c.set(next)
		}
		return ds
	}
	if a, b := again(), again(); !slices.Equal(a, b) {
		t.Errorf("jitter not reproducible: %v vs %v", a, b)
	}
}

// TestRefresherRefusesContradiction: a feed that changes a published value
// is not merged; the error is logged loudly, the table stays, and the next
// attempt waits for the next publication instead of hammering.
func TestRefresherRefusesContradiction(t *testing.T) {
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-14")...)
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	g := newRig(t, ecb, clock, &MemoryStore{})
	ctx := context.Background()
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	before := g.live.Table()
	// Two days later the 90-day feed (two publications missing) carries a
	// different USD value for the 14th.
	ecb.set(func(f *fakeECB) { f.override["2026-04-14/USD"] = "1.2345" })
	ecb.publish("2026-04-15", "2026-04-16")
	clock.set(instant(t, "2026-04-16T16:10:00+02:00"))
	next, err := g.r.RunOnce(ctx)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Date != "2026-04-14" || ce.Quote != "USD" || ce.Overlay != "1.2345" {
		t.Fatalf("err = %v", err)
	}
	if g.live.Table() != before {
		t.Error("the table changed")
	}
	if want := instant(t, "2026-04-17T16:10:00+02:00"); !next.Equal(want) {
		t.Errorf("next attempt %s, want the next publication %s", next, want)
	}
	st := g.r.Status()
	if st.Conflict == "" || st.LastError == "" || !st.Behind || st.Failures != 0 {
		t.Errorf("status: %+v", st)
	}
	if logs := g.logs.String(); !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "contradicts") {
		t.Errorf("no loud log:\n%s", logs)
	}
	if p := ecb.paths(); p[len(p)-1] != "/hist-90d.xml" {
		t.Errorf("requests %v", p)
	}
	if len(g.updates) != 1 {
		t.Errorf("%d updates, want only the first", len(g.updates))
	}
}

// TestRefresherRestartOffline: the documents saved by one refresher are
// restored by the next with the network down; rates keep their snapshots;
// the failing network is retried with backoff while the table serves.
func TestRefresherRestartOffline(t *testing.T) {
	store := &MemoryStore{}
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-14")...)
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	first := newRig(t, ecb, clock, store)
	ctx := context.Background()
	if err := first.r.Restore(ctx); err != nil { // an empty store restores nothing
		t.Fatal(err)
	}
	if _, err := first.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := first.live.Rate(ctx, "SEK", instant(t, "2026-04-14T12:00:00Z"), ForDayOrPrevious)
	if err != nil {
		t.Fatal(err)
	}

	down := newFakeECB(t)
	down.set(func(f *fakeECB) { f.down = true })
	clock.set(instant(t, "2026-04-16T09:00:00Z"))
	second := newRig(t, down, clock, store)
	if err := second.r.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := second.live.Rate(ctx, "SEK", instant(t, "2026-04-14T12:00:00Z"), ForDayOrPrevious)
	if err != nil || got.Raw != want.Raw || got.RateDate != want.RateDate || got.Snapshot != want.Snapshot {
		t.Errorf("after restart: %+v, %v; want %+v", got, err, want)
	}
	if len(second.updates) != 1 {
		t.Errorf("restore notified %d times", len(second.updates))
	}
	if st := second.r.Status(); st.Restored != 1 || st.Documents != 1 || st.Newest != "2026-04-14" || !st.Behind {
		t.Errorf("status after restore: %+v", st)
	}
	next, err := second.r.RunOnce(ctx)
	if err == nil || next.Sub(clock.Now()) > DefaultRetryMin {
		t.Errorf("offline attempt: next %s, %v", next, err)
	}
	if _, err := second.live.Rate(ctx, "USD", instant(t, "2026-04-14T12:00:00Z"), ForDayOrPrevious); err != nil {
		t.Errorf("served offline: %v", err)
	}
}

// TestRefresherCatchesUp: after days offline the 90-day feed fills the gap;
// after months, the full history is fetched once.
func TestRefresherCatchesUp(t *testing.T) {
	ctx := context.Background()
	ecb := newFakeECB(t, businessDays("2026-01-02", "2026-04-24")...)
	clock := newFakeClock(t, "2026-04-24T18:00:00Z")
	g := newRig(t, ecb, clock, &MemoryStore{})
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if p := ecb.paths(); !slices.Equal(p, []string{"/hist-90d.xml"}) {
		t.Errorf("requests %v", p)
	}
	for _, d := range businessDays("2026-04-14", "2026-04-24") {
		if _, err := g.live.Rate(ctx, "USD", instant(t, d+"T12:00:00Z"), ForDayOrPrevious); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}

	long := newFakeECB(t, businessDays("2025-06-02", "2026-09-01")...)
	clock = newFakeClock(t, "2026-09-01T18:00:00Z")
	h := newRig(t, long, clock, &MemoryStore{})
	if _, err := h.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.r.RunOnce(ctx); err != nil { // nothing left to fetch
		t.Fatal(err)
	}
	if p := long.paths(); !slices.Equal(p, []string{"/hist.xml"}) {
		t.Errorf("requests %v", p)
	}
	if st := h.r.Status(); st.Behind || st.Newest != "2026-09-01" {
		t.Errorf("status %+v", st)
	}
	if cov := h.live.Table().Coverage(); len(cov) != 1 {
		t.Errorf("coverage %v", cov)
	}
}

func TestRefresherBrokenStoreIsNotOverwritten(t *testing.T) {
	ctx := context.Background()
	store := &MemoryStore{blob: []byte("not gzip")}
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-14")...)
	g := newRig(t, ecb, newFakeClock(t, "2026-04-14T16:10:00+02:00"), store)
	if err := g.r.Restore(ctx); !errors.Is(err, ErrStoreFormat) {
		t.Fatalf("Restore: %v", err)
	}
	if _, err := g.r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if string(store.blob) != "not gzip" {
		t.Error("the unreadable store was overwritten")
	}
	if g.r.Status().Newest != "2026-04-14" {
		t.Error("the fetched rates are not served")
	}
}

// TestRefresherRun: the loop sleeps on the clock until the next attempt and
// stops with its context.
func TestRefresherRun(t *testing.T) {
	ecb := newFakeECB(t, businessDays("2026-03-30", "2026-04-13")...)
	clock := newFakeClock(t, "2026-04-14T16:10:00+02:00")
	g := newRig(t, ecb, clock, &MemoryStore{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.r.Run(ctx) }()
	<-clock.waiting // first attempt made: late, polling
	if n := len(ecb.paths()); n != 1 {
		t.Fatalf("%d requests", n)
	}
	ecb.publish("2026-04-14")
	clock.set(g.r.Status().NextAttempt)
	<-clock.waiting // second attempt made: published
	if st := g.r.Status(); st.Newest != "2026-04-14" || !st.NextAttempt.Equal(instant(t, "2026-04-15T16:10:00+02:00")) {
		t.Errorf("status %+v", st)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
}

func TestNewRefresherValidates(t *testing.T) {
	if _, err := NewRefresher(RefresherConfig{}); err == nil {
		t.Error("no live table accepted")
	}
	live := NewLiveTable(embedded(t))
	if _, err := NewRefresher(RefresherConfig{Live: live, Feeds: Feeds{Daily: "x"}}); err == nil {
		t.Error("missing 90-day feed accepted")
	}
	if _, err := NewRefresher(RefresherConfig{Live: live, RetryMin: time.Hour, RetryMax: time.Minute}); err == nil {
		t.Error("RetryMax < RetryMin accepted")
	}
	r, err := NewRefresher(RefresherConfig{Live: live})
	if err != nil || r.cfg.Feeds != DefaultFeeds() {
		t.Errorf("defaults: %v %+v", err, r.cfg.Feeds)
	}
}

func TestDocumentsRoundTrip(t *testing.T) {
	at := instant(t, "2026-04-14T14:10:00Z")
	docs := []Document{
		newDocument("https://example.test/daily.xml", at, []byte(synthFeed([]string{"2026-04-14"}, nil))),
		newDocument("https://example.test/hist-90d.xml", at, []byte(synthFeed(businessDays("2026-03-02", "2026-04-14"), nil))),
	}
	blob, err := EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeDocuments(docs)
	if !bytes.Equal(blob, again) {
		t.Error("encoding is not deterministic")
	}
	back, err := DecodeDocuments(blob)
	if err != nil || len(back) != 2 || !bytes.Equal(back[1].Body, docs[1].Body) || !back[0].FetchedAt.Equal(at) {
		t.Fatalf("round trip: %v", err)
	}
	tb, err := back[0].Table()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := tb.Lookup("PLN", at, ForDayOrPrevious)
	if r.Snapshot != "fetch:sha256:"+docs[0].SHA256 {
		t.Errorf("snapshot %s", r.Snapshot)
	}
	// A changed body is detected.
	back[0].Body = append(back[0].Body, ' ')
	tampered, _ := EncodeDocuments(back)
	if _, err := DecodeDocuments(tampered); !errors.Is(err, ErrStoreFormat) {
		t.Errorf("tampered: %v", err)
	}
	if d, err := DecodeDocuments(nil); err != nil || d != nil {
		t.Errorf("empty: %v %v", d, err)
	}
}

func FuzzDecodeDocuments(f *testing.F) {
	good, _ := EncodeDocuments([]Document{newDocument("u", time.Unix(0, 0), []byte("<x/>"))})
	f.Add(good)
	f.Add([]byte("not gzip"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, blob []byte) {
		docs, err := DecodeDocuments(blob)
		if err != nil {
			if !errors.Is(err, ErrStoreFormat) {
				t.Fatalf("error does not wrap ErrStoreFormat: %v", err)
			}
			return
		}
		for _, d := range docs {
			_, _ = d.Table() // must not panic
		}
	})
}
