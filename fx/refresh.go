package fx

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Feeds are the ECB feed URLs a Refresher reads (or a mirror of them).
type Feeds struct {
	Daily   string // the latest publication: URLDaily
	Hist90d string // the last ~64 publications, to catch up: URLHist90d
	Hist    string // every publication since 1999, fetched at most once per process to fill an older hole; "" never
}

// DefaultFeeds are the ECB's own feeds.
func DefaultFeeds() Feeds { return Feeds{Daily: URLDaily, Hist90d: URLHist90d, Hist: URLHist} }

// hist90dReach is how many missing publications the 90-day feed is trusted
// to cover; it holds about 64.
const hist90dReach = 60

// Clock is the time source of a Refresher; tests inject a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Refresher defaults.
const (
	// DefaultPublicationMargin is added to 16:00 Frankfurt time before the
	// first attempt of a day: the ECB publishes "around 16:00 CET".
	DefaultPublicationMargin = 10 * time.Minute
	DefaultRetryMin          = 1 * time.Minute
	DefaultRetryMax          = 1 * time.Hour
)

// RefresherConfig configures NewRefresher. Live is required; everything
// else has a default.
type RefresherConfig struct {
	Live   *LiveTable   // the table the engine reads; the Refresher extends it
	Store  Store        // durable copy of the fetched documents; nil keeps nothing across restarts
	Client *http.Client // nil: a client with a 30 s timeout
	Feeds  Feeds        // zero: DefaultFeeds()
	Clock  Clock        // nil: the system clock
	Rand   *rand.Rand   // jitter source; nil: math/rand/v2's global source. Used by one goroutine at a time.
	Logger *slog.Logger // nil: slog.Default()

	// OnUpdate is called after every merge that added rates (after Restore
	// too), with the table now served, once the documents are saved. The
	// engine re-processes the records left pending for a missing rate
	// there. It runs on the Refresher's goroutine: return promptly or hand
	// the work off.
	OnUpdate func(ctx context.Context, t *Table)

	PublicationMargin time.Duration // after 16:00 Frankfurt; 0: DefaultPublicationMargin
	RetryMin          time.Duration // first retry delay; 0: DefaultRetryMin
	RetryMax          time.Duration // cap of the exponential backoff; 0: DefaultRetryMax
}

// Refresher keeps a LiveTable current from the ECB feeds (issue 14): it
// restores the documents kept in its Store (so a restart works offline),
// then, after each day's publication (16:00 Frankfurt time plus a margin),
// fetches the daily feed, or the 90-day feed when more than one publication
// is missing, or the full history once when an older hole remains; merges
// the result; saves the document; and calls OnUpdate. A failed fetch is
// retried with exponential backoff and jitter; a publication that is late
// (the feed does not have the expected day yet) is polled the same way. A
// feed that contradicts a known rate is never merged: Merge refuses it, the
// Refresher logs an error and keeps the old table, and retries only at the
// next publication. It is deterministic given its Clock and Rand.
//
// Use: NewRefresher, Restore before serving, then go Run(ctx). Status is
// safe to call at any time.
type Refresher struct {
	cfg    RefresherConfig
	clock  Clock
	log    *slog.Logger
	client *http.Client

	run sync.Mutex // serialises Restore and RunOnce

	// Guarded by run.
	docs         []Document // every document restored or fetched, in merge order
	unsaved      bool       // docs changed since the last successful Save
	storeBroken  bool       // the stored blob was unreadable: never overwrite it
	histFetched  bool       // the full history was fetched once in this process
	backfill     bool       // publications before a daily one lack its currencies: fetch the 90-day feed (lacksCurrencies)
	failures     int        // consecutive failed fetches
	lateAttempts int        // consecutive attempts that found the expected day missing

	mu     sync.Mutex // guards status
	status Status
}

// Status is the Refresher's state for /readyz and metrics.
type Status struct {
	Newest          string        `json:"newest"`          // the newest reference date in the table served
	NewestPublished time.Time     `json:"newestPublished"` // 16:00 Frankfurt time on Newest
	Age             time.Duration `json:"age"`             // now − NewestPublished
	Expected        string        `json:"expected"`        // the newest reference date that should be out now
	Behind          bool          `json:"behind"`          // Newest is older than Expected
	LastAttempt     time.Time     `json:"lastAttempt"`
	LastSuccess     time.Time     `json:"lastSuccess"`
	NextAttempt     time.Time     `json:"nextAttempt"`
	Failures        int           `json:"failures"`            // consecutive failed attempts
	LastError       string        `json:"lastError,omitempty"` // what the last attempt failed at, naming no network address (describeFailure; the log has the error); "" after a success
	Conflict        string        `json:"conflict,omitempty"`  // the last contradicting publication refused
	Restored        int           `json:"restored"`            // documents merged from the Store at start
	Documents       int           `json:"documents"`           // documents kept (and stored)
}

// NewRefresher checks cfg and returns a Refresher. It does no I/O.
func NewRefresher(cfg RefresherConfig) (*Refresher, error) {
	if cfg.Live == nil || cfg.Live.Table() == nil {
		return nil, errors.New("fx: refresher: RefresherConfig.Live is required (NewLiveTable)")
	}
	if cfg.Feeds == (Feeds{}) {
		cfg.Feeds = DefaultFeeds()
	}
	if cfg.Feeds.Daily == "" || cfg.Feeds.Hist90d == "" {
		return nil, errors.New("fx: refresher: Feeds.Daily and Feeds.Hist90d are required")
	}
	if cfg.PublicationMargin <= 0 {
		cfg.PublicationMargin = DefaultPublicationMargin
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.RetryMax < cfg.RetryMin {
		return nil, fmt.Errorf("fx: refresher: RetryMax %s < RetryMin %s", cfg.RetryMax, cfg.RetryMin)
	}
	r := &Refresher{cfg: cfg, clock: cfg.Clock, log: cfg.Logger, client: cfg.Client}
	if r.clock == nil {
		r.clock = systemClock{}
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.client == nil {
		r.client = &http.Client{Timeout: fetchTimeout}
	}
	r.updateStatus(func(s *Status) {})
	return r, nil
}

// Restore merges the documents kept in the Store onto the live table, in the
// order they were first merged, and calls OnUpdate if that added rates. It
// needs no network. A stored document that contradicts the table (e.g. an
// operator's -fx-file) is skipped and logged, and kept in the Store. An
// unreadable blob is an error wrapping ErrStoreFormat, and the Refresher
// then never overwrites it. A nil Store restores nothing.
func (r *Refresher) Restore(ctx context.Context) error {
	r.run.Lock()
	defer r.run.Unlock()
	if r.cfg.Store == nil {
		return nil
	}
	blob, err := r.cfg.Store.Load(ctx)
	if err != nil {
		r.log.Error("fx: loading the stored ECB documents failed", "err", err)
		r.fail(&storeFailure{"loading", err})
		return err
	}
	docs, err := DecodeDocuments(blob)
	if err != nil {
		r.storeBroken = true
		r.log.Error("fx: stored ECB documents unreadable; they will not be overwritten", "err", err)
		r.fail(err)
		return err
	}
	before := r.cfg.Live.Table()
	restored := 0
	var last *Table // the last document merged, and its URL
	var lastURL string
	for _, d := range docs {
		t, err := d.Table()
		if err != nil {
			r.log.Error("fx: stored ECB document does not parse; skipped", "url", d.URL, "sha256", d.SHA256, "err", err)
			continue
		}
		if _, err := r.cfg.Live.Merge(t); err != nil {
			r.log.Error("fx: stored ECB document contradicts the rates in use; skipped", "url", d.URL, "sha256", d.SHA256, "err", err)
			r.updateStatus(func(s *Status) { s.Conflict = err.Error() })
			continue
		}
		restored++
		last, lastURL = t, d.URL
	}
	if lastURL == r.cfg.Feeds.Daily && lacksCurrencies(r.cfg.Live.Table(), last) {
		// Saved before the 90-day feed that fills the publication before
		// it came in (RunOnce): fetch it at the next attempt.
		r.backfill = true
	}
	// Another writer of the store (a replica sharing it) may have saved
	// without the documents this refresher holds: keep them, and save
	// them again.
	have := make(map[string]bool, len(docs))
	for _, d := range docs {
		have[d.SHA256] = true
	}
	for _, d := range r.docs {
		if !have[d.SHA256] {
			docs = append(docs, d)
			have[d.SHA256], r.unsaved = true, true
		}
	}
	r.docs = docs
	r.updateStatus(func(s *Status) { s.Restored, s.Documents = restored, len(docs) })
	if after := r.cfg.Live.Table(); grew(before, after) {
		r.log.Info("fx: ECB rates restored from the store", "documents", restored, "newest", newestDate(after))
		r.notify(ctx, after)
	}
	return nil
}

// RunOnce makes one attempt: if a publication that should be out is missing
// from the table, it fetches the feed that covers the gap, merges, saves and
// notifies. It returns when to attempt next and the attempt's error (nil when
// nothing was due or the fetch succeeded, even if the day's publication was
// still missing). Errors: transport, *StatusError and *ParseError (retried
// with backoff), *ConflictError (retried at the next publication).
func (r *Refresher) RunOnce(ctx context.Context) (next time.Time, err error) {
	r.run.Lock()
	defer r.run.Unlock()
	now := r.clock.Now()
	expected := expectedPublication(now, r.cfg.PublicationMargin)
	scheduled := publicationInstant(nextBusinessDay(expected)).Add(r.cfg.PublicationMargin)

	r.saveIfNeeded(ctx)
	tbl := r.cfg.Live.Table()
	url := r.feedFor(tbl, expected)
	if url == "" {
		r.failures, r.lateAttempts = 0, 0
		r.finish(now, scheduled, nil)
		return scheduled, nil
	}
	r.updateStatus(func(s *Status) { s.LastAttempt = now })
	merged, t, err := r.fetchMerge(ctx, url, now, tbl)
	if err == nil && url == r.cfg.Feeds.Daily && lacksCurrencies(merged, t) {
		// The daily feed brought currencies the publication before it
		// lacks (a table of USD only: the embedded series, an operator's
		// file), and no later daily feed carries that publication: the
		// 90-day feed does, now.
		r.backfill = true
		r.log.Info("fx: the publication before the daily one lacks its currencies; fetching the 90-day feed", "newest", newestDate(merged))
		url = r.cfg.Feeds.Hist90d
		merged, _, err = r.fetchMerge(ctx, url, now, merged)
	}
	var ce *ConflictError
	if err != nil && url == r.cfg.Feeds.Hist && !errors.As(err, &ce) {
		// The history failed (down, too large for a proxy, absent from a
		// mirror): the 90-day feed still brings the recent publications,
		// so that the payments of the last months need not wait for it.
		// The history is retried with backoff all the same.
		failures := r.failures
		if _, _, err90 := r.fetchMerge(ctx, r.cfg.Feeds.Hist90d, now, tbl); err90 != nil {
			r.log.Warn("fx: ECB 90-day feed failed too", "url", r.cfg.Feeds.Hist90d, "err", err90)
		}
		r.failures = failures
	}
	switch {
	case errors.As(err, &ce):
		// Published values are never overwritten. Retrying soon would only
		// repeat the contradiction; a person has to look. A backfill
		// refused stays refused: the daily feed serves the next days.
		r.backfill = false
		r.log.Error("fx: ECB publication contradicts a rate already in use; keeping the old table",
			"url", url, "err", err)
		r.updateStatus(func(s *Status) { s.Conflict = err.Error() })
		r.finish(now, scheduled, err)
		return scheduled, err
	case err != nil:
		r.failures++
		next = now.Add(r.backoff(r.failures))
		// A server that said when to come back (429 or 503 with
		// Retry-After) is not asked sooner.
		if se := (*StatusError)(nil); errors.As(err, &se) && now.Add(se.RetryAfter).After(next) {
			next = now.Add(se.RetryAfter)
		}
		r.log.Warn("fx: ECB fetch failed; retrying", "url", url, "attempt", r.failures, "retryAt", next, "err", err)
		r.finish(now, next, err)
		return next, err
	}
	r.updateStatus(func(s *Status) { s.LastSuccess = now })
	if d, ok := parseISODate(newestDate(merged)); !ok || d < expected {
		// The feed answered but the day's publication is not in it yet.
		r.lateAttempts++
		next = now.Add(r.backoff(r.lateAttempts))
		r.log.Info("fx: ECB publication not out yet; polling", "expected", expected.String(), "retryAt", next)
		r.finish(now, next, nil)
		return next, nil
	}
	r.lateAttempts = 0
	r.finish(now, scheduled, nil)
	return scheduled, nil
}

// fetchMerge fetches url, merges it onto the live table (tbl, the table
// served before) and keeps the document if it added rates. It returns the
// table served after and the document's own. A transport, status or parse
// error counts as a failed fetch; a *ConflictError changes nothing.
func (r *Refresher) fetchMerge(ctx context.Context, url string, now time.Time, tbl *Table) (merged, t *Table, err error) {
	body, err := fetchBody(ctx, r.client, url)
	if err == nil {
		t, err = parseData(body, "fetch", url)
	}
	if err != nil {
		return nil, nil, err
	}
	r.failures = 0
	merged, err = r.cfg.Live.Merge(t)
	if err != nil {
		return nil, nil, err
	}
	switch url {
	case r.cfg.Feeds.Hist:
		r.histFetched, r.backfill = true, false
	case r.cfg.Feeds.Hist90d:
		r.backfill = false
	}
	if grew(tbl, merged) {
		r.docs = append(r.docs, newDocument(url, now, body))
		r.unsaved = true
		ndocs := len(r.docs)
		r.updateStatus(func(s *Status) { s.Documents = ndocs })
		r.saveIfNeeded(ctx)
		r.log.Info("fx: ECB rates updated", "url", url, "newest", newestDate(merged))
		r.notify(ctx, merged)
	}
	return merged, t, nil
}

// lacksCurrencies reports whether the publication merged lists just
// before the first one of doc lacks a currency that one has in merged.
// The ECB publishes every currency every day (a currency it stopped, such
// as the lev from 2026, is absent from the newer day, not the older), so
// a lack there is a table that never had them: the embedded series holds
// USD only.
func lacksCurrencies(merged, doc *Table) bool {
	if merged == nil || doc == nil || len(doc.days) == 0 {
		return false
	}
	first := doc.days[0].day
	k := merged.search(func(x day) bool { return x >= first })
	if k == 0 || k >= len(merged.days) || merged.days[k].day != first {
		return false
	}
	prev := merged.dayRates(k - 1)
	for _, e := range merged.dayRates(k) {
		q := merged.names[e.quote]
		if !slices.ContainsFunc(prev, func(p rateEntry) bool { return merged.names[p.quote] == q }) {
			return true
		}
	}
	return false
}

// Run calls RunOnce until ctx is done, sleeping on the Clock in between, and
// returns ctx's error. Call Restore first.
func (r *Refresher) Run(ctx context.Context) error {
	for {
		next, _ := r.RunOnce(ctx)
		wait := max(next.Sub(r.clock.Now()), 0)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.clock.After(wait):
		}
	}
}

// Status returns the current state, with Age and Behind computed for now.
func (r *Refresher) Status() Status {
	r.updateStatus(func(*Status) {})
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// feedFor picks the feed that covers what t lacks up to expected, or "".
func (r *Refresher) feedFor(t *Table, expected day) string {
	if r.backfill {
		return r.cfg.Feeds.Hist90d
	}
	first, _ := t.Range()
	from, _ := parseISODate(first)
	u, missing := t.firstUnknown(from, expected)
	if !missing {
		return ""
	}
	n := businessDaysBetween(u, expected)
	switch {
	case n == 1:
		return r.cfg.Feeds.Daily
	case n <= hist90dReach || r.cfg.Feeds.Hist == "" || r.histFetched:
		// An older hole the 90-day feed cannot reach stays a hole: lookups
		// there answer ErrNotYetPublished and the engine reviews them.
		return r.cfg.Feeds.Hist90d
	default:
		return r.cfg.Feeds.Hist
	}
}

// backoff is the delay before retry n (1-based): RetryMin × 2^(n−1), capped
// at RetryMax, with "equal jitter": half of it fixed, half random, so that
// many servers do not poll the ECB in step.
func (r *Refresher) backoff(n int) time.Duration {
	d := r.cfg.RetryMin
	for i := 1; i < n && d < r.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, r.cfg.RetryMax)
	var f float64
	if r.cfg.Rand != nil {
		f = r.cfg.Rand.Float64()
	} else {
		f = rand.Float64()
	}
	return d/2 + time.Duration(f*float64(d/2))
}

func (r *Refresher) saveIfNeeded(ctx context.Context) {
	if !r.unsaved || r.cfg.Store == nil || r.storeBroken {
		return
	}
	blob, err := EncodeDocuments(r.docs)
	if err == nil {
		err = r.cfg.Store.Save(ctx, blob)
	}
	if err != nil {
		r.log.Error("fx: saving the ECB documents failed; the rates are served but not yet durable", "err", err)
		r.fail(&storeFailure{"saving", err})
		return
	}
	r.unsaved = false
}

func (r *Refresher) notify(ctx context.Context, t *Table) {
	if r.cfg.OnUpdate != nil {
		r.cfg.OnUpdate(ctx, t)
	}
}

func (r *Refresher) fail(err error) {
	r.updateStatus(func(s *Status) { s.LastError = describeFailure(err) })
}

// storeFailure is an error of the Store, with what the refresher asked of
// it ("loading", "saving").
type storeFailure struct {
	op  string
	err error
}

func (e *storeFailure) Error() string {
	return "fx: refresher: " + e.op + " the store: " + e.err.Error()
}
func (e *storeFailure) Unwrap() error { return e.err }

// describeFailure is what Status.LastError says of err: what failed, in
// words that name no network address. The status is served to anyone
// (GET /v1/fx/status, /readyz), and Go's network errors name the feed's
// and the resolver's IP and port, a proxy's, a database's host; the
// refresher's log keeps the whole error for the operator.
func describeFailure(err error) string {
	var (
		se   *StatusError
		dns  *net.DNSError
		op   *net.OpError
		sf   *storeFailure
		cert *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		ne   net.Error
		pe   *ParseError
	)
	switch {
	case errors.As(err, &sf):
		return sf.op + " the stored ECB documents failed"
	case errors.As(err, &se):
		return fmt.Sprintf("the rate feed answered HTTP status %d", se.StatusCode)
	case errors.As(err, &dns):
		return "the rate feed's host name could not be resolved"
	case errors.As(err, &cert), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci):
		return "the rate feed's TLS certificate was refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "the rate feed did not answer in time"
	case errors.As(err, &op) && op.Op == "dial":
		return "the rate feed could not be reached"
	case errors.As(err, &op):
		return "the connection to the rate feed failed"
	case errors.As(err, &pe):
		return "the rate feed's document did not parse"
	}
	return "the refresh failed (the server's log has the error)"
}

func (r *Refresher) finish(now, next time.Time, err error) {
	failures := r.failures
	r.updateStatus(func(s *Status) {
		s.NextAttempt = next
		s.Failures = failures
		s.LastError = ""
		if err != nil {
			s.LastError = describeFailure(err)
		}
	})
	st := r.Status()
	r.log.Info("fx: ECB rate age", "newest", st.Newest, "age", st.Age.Round(time.Minute), "behind", st.Behind, "next", next)
}

// updateStatus applies f and refreshes the derived fields.
func (r *Refresher) updateStatus(f func(*Status)) {
	now := r.clock.Now()
	t := r.cfg.Live.Table()
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.status)
	r.status.Newest = newestDate(t)
	exp := expectedPublication(now, r.cfg.PublicationMargin)
	r.status.Expected = exp.String()
	if d, ok := parseISODate(r.status.Newest); ok {
		r.status.NewestPublished = publicationInstant(d)
		r.status.Age = now.Sub(r.status.NewestPublished)
		r.status.Behind = d < exp
	}
}

// expectedPublication is the newest reference date whose publication should
// be out at now: the Frankfurt date of now if it is past 16:00 + margin there,
// else the day before, moved back over TARGET closing days.
func expectedPublication(now time.Time, margin time.Duration) day {
	d := lastVisibleDay(now.Add(-margin))
	for targetClosingDay(d) {
		d--
	}
	return d
}

// nextBusinessDay is the first day after d that is not a TARGET closing day.
func nextBusinessDay(d day) day {
	d++
	for targetClosingDay(d) {
		d++
	}
	return d
}

// businessDaysBetween counts the TARGET business days in [a, b].
func businessDaysBetween(a, b day) int {
	n := 0
	for d := a; d <= b; d++ {
		if !targetClosingDay(d) {
			n++
		}
	}
	return n
}

func newestDate(t *Table) string {
	_, last := t.Range()
	return last
}

// grew reports whether after holds rates or coverage that before lacks
// (after is before merged with something, so it never holds less).
func grew(before, after *Table) bool {
	if before == after {
		return false
	}
	return after.size() != before.size() || !slices.Equal(after.coverage, before.coverage)
}

// size is the number of (date, quote) rates in t.
func (t *Table) size() int {
	return len(t.rates)
}
