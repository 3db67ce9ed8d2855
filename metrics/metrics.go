package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CommitObserver is what a ledger reports each group commit to: how many
// appends the batch held and how long its commit took (bbolt's
// tx.Commit: page writes, fsync, meta page, fsync). *Metrics is one. The
// ledger package is a leaf and cannot import this package; a ledger option
// of its own interface type with this method set is satisfied by *Metrics
// all the same.
type CommitObserver interface {
	ObserveCommit(batch int, fsync time.Duration)
}

// State is what the service's queues and rates look like at one moment; a
// StateFunc computes it at scrape time.
type State struct {
	LedgerEntries int64 // the log's tree size
	// Review queues: records pending review that the engine will decide
	// again by itself.
	VATRecheck    int // waiting for a VAT-number registry
	FXWait        int // waiting for an ECB rate not yet published
	RateTableWait int // waiting for a VAT rate table that covers their day
	// RegistrationWait: waiting for the account's registrations to cover
	// the day the seller was not registered on (seller_not_registered).
	RegistrationWait int

	IngestQueued    int       // x402 payments queued, not yet recorded
	IngestOldestDue time.Time // zero when the queue is empty

	WebhookPending           int       // deliveries waiting for an attempt (the backlog)
	WebhookOldestDue         time.Time // zero when there is no backlog
	WebhookFailed            int       // retained deliveries that failed for good
	WebhookEndpointsOK       int
	WebhookEndpointsFailing  int // enabled, and the last attempt failed
	WebhookEndpointsDisabled int

	FXAge      time.Duration // now − the newest ECB publication's instant
	FXBehind   bool          // a publication that should be out is missing
	FXFailures int           // consecutive refresh failures
	HasFX      bool          // the FX fields are known

	// VATRatesEnd is the end of the VAT rate table's coverage: the first
	// local midnight, in any member state, after its last day
	// (vat.RateTable.CoveredEverywhere). Zero: unknown.
	VATRatesEnd time.Time
	// VATRatesVersion and VATRatesDigest name the VAT rate table the
	// engine decides with (vat.RateTable.Version, Digest): replicas
	// sharing a log should all show the same, since each record is decided
	// by whichever replica takes it. Empty: unknown.
	VATRatesVersion, VATRatesDigest string

	Now time.Time // the clock the ages are measured with
}

// StateFunc reads the state; an error leaves the state's gauges out of the
// scrape.
type StateFunc func() (State, error)

// Metrics are the collectors of one service and the registry that serves
// them. Create it with New; its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	httpDuration *prometheus.HistogramVec
	httpRequests *prometheus.CounterVec
	settlements  *prometheus.CounterVec
	refused      *prometheus.CounterVec
	pruned       *prometheus.CounterVec
	reloads      *prometheus.CounterVec
	ready        *prometheus.GaugeVec

	commits *commitCollector
	state   *stateCollector

	// codes are the label values of the HTTP statuses 100–599, made once
	// so that counting a request allocates nothing.
	codes [500]string
}

// New returns metrics with a registry of their own, holding the Go runtime
// and process collectors and the service's metrics.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		reg: reg,
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fiscal402_http_request_duration_seconds",
			Help: "Time to answer a request, by route pattern as mounted (unmatched paths are route \"unmatched\").",
			// From 1 ms (a cached document) to 10 s (a chain verification
			// that waits for its timeout); a settlement is one fsync, a few ms.
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fiscal402_http_requests_total",
			Help: "Requests answered, by route pattern and HTTP status code.",
		}, []string{"route", "code"}),
		settlements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fiscal402_settlements_total",
			Help: "Payments accepted over HTTP, by source (settlements, x402, fiscal_events, resolve), outcome (created, replayed, existing, queued) and the record's status (PROCESSED, PENDING_MANUAL_REVIEW, DETERMINED, MANUAL_REVIEW_REQUIRED, queued).",
		}, []string{"source", "outcome", "status"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fiscal402_settlements_refused_total",
			Help: "Payments refused over HTTP, by source and error code (the problem document's code).",
		}, []string{"source", "code"}),
		pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fiscal402_retention_pruned_total",
			Help: "Entries removed by the retention window, by kind (webhook_delivery, ingest_entry). Never a ledger record.",
		}, []string{"kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fiscal402_accounts_reloads_total",
			Help: "Reloads of the accounts file, by result (applied, unchanged, error).",
		}, []string{"result"}),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fiscal402_ready",
			Help: "1 when the readiness check passed at the last probe of GET /readyz, 0 when it failed.",
		}, []string{"check"}),
		commits: newCommitCollector(),
		state:   newStateCollector(),
	}
	reg.MustRegister(m.httpDuration, m.httpRequests, m.settlements, m.refused, m.pruned, m.reloads, m.ready, m.commits, m.state)
	for i := range m.codes {
		m.codes[i] = strconv.Itoa(100 + i)
	}
	return m
}

// Registry is the registry Handler serves; a host may register collectors
// of its own in it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// ObserveRequest counts one answered request and its duration. route is
// the pattern the request matched ("GET /settlements/{id}").
func (m *Metrics) ObserveRequest(route string, code int, d time.Duration) {
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
	m.httpRequests.WithLabelValues(route, m.codeLabel(code)).Inc()
}

// codeLabel is the status code's label value: its decimal digits.
func (m *Metrics) codeLabel(code int) string {
	if code >= 100 && code < 100+len(m.codes) {
		return m.codes[code-100]
	}
	return strconv.Itoa(code)
}

// ObserveSettlement counts one accepted payment.
func (m *Metrics) ObserveSettlement(source, outcome, status string) {
	m.settlements.WithLabelValues(source, outcome, status).Inc()
}

// ObserveRefused counts one refused payment by its error code.
func (m *Metrics) ObserveRefused(source, code string) {
	m.refused.WithLabelValues(source, code).Inc()
}

// ObservePruned counts entries the retention window removed.
func (m *Metrics) ObservePruned(kind string, n int) {
	if n > 0 {
		m.pruned.WithLabelValues(kind).Add(float64(n))
	}
}

// ObserveAccountsReload counts one look at the accounts file: "applied",
// "unchanged" or "error".
func (m *Metrics) ObserveAccountsReload(result string) {
	m.reloads.WithLabelValues(result).Inc()
}

// ObserveReady records the outcome of one readiness check.
func (m *Metrics) ObserveReady(check string, ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.ready.WithLabelValues(check).Set(v)
}

// ObserveCommit records one group commit of the ledger (CommitObserver).
// The two commit histograms appear in the exposition from the first call:
// a ledger that does not report them shows none, rather than a count of 0
// that would read as "no commits".
func (m *Metrics) ObserveCommit(batch int, fsync time.Duration) {
	m.commits.observe(batch, fsync)
}

// SetState sets the function that reads the state at scrape time. Its
// answer is reused for ttl (at least one second), so that frequent scrapes
// do not turn into frequent scans of the ledger's side buckets.
func (m *Metrics) SetState(fn StateFunc, ttl time.Duration) {
	m.state.set(fn, max(ttl, time.Second))
}

// commitCollector holds the commit histograms and reports them once used.
type commitCollector struct {
	used  atomic.Bool
	batch prometheus.Histogram
	fsync prometheus.Histogram
}

func newCommitCollector() *commitCollector {
	return &commitCollector{
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "fiscal402_ledger_commit_batch_size",
			Help: "Appends per group commit of the ledger (one bbolt transaction, one fsync pair).",
			// Powers of two up to ledger.DefaultMaxBatch (256).
			Buckets: prometheus.ExponentialBuckets(1, 2, 9),
		}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fiscal402_ledger_commit_fsync_seconds",
			Help:    "Duration of the ledger's commit of one batch: page writes, fsync, meta page, fsync.",
			Buckets: []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5},
		}),
	}
}

func (c *commitCollector) observe(batch int, fsync time.Duration) {
	c.batch.Observe(float64(batch))
	c.fsync.Observe(fsync.Seconds())
	c.used.Store(true)
}

func (c *commitCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.batch.Desc()
	ch <- c.fsync.Desc()
}

func (c *commitCollector) Collect(ch chan<- prometheus.Metric) {
	if c.used.Load() {
		ch <- c.batch
		ch <- c.fsync
	}
}

// stateCollector turns a State into gauges at scrape time.
type stateCollector struct {
	mu      sync.Mutex
	fn      StateFunc
	ttl     time.Duration
	last    State
	lastAt  time.Time
	lastErr error
	errors  prometheus.Counter

	entries, reviewQueue, ingest, ingestOldest, whBacklog, whOldest, whFailed, whEndpoints, fxAge, fxBehind, fxFailures, vatRatesLeft, vatRatesInfo *prometheus.Desc
}

func newStateCollector() *stateCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &stateCollector{
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fiscal402_state_errors_total",
			Help: "Scrapes whose queue and rate gauges could not be read (the ledger closed or unreadable); those gauges are left out of that scrape.",
		}),
		entries:      d("fiscal402_ledger_entries", "Entries in the ledger: the Merkle log's tree size."),
		reviewQueue:  d("fiscal402_review_queue", "Records pending review that the engine decides again by itself, by queue: vat_recheck (a VAT-number registry did not answer), fx_wait (the ECB rate of the date is not published yet) rate_table_wait (the VAT rate table did not cover the day: decided again at a start with one that does) and registration_wait (the seller was not registered where the sale is taxed: decided again when the account's registrations change).", "queue"),
		ingest:       d("fiscal402_ingest_queue", "x402 payments in the durable ingest queue, not yet recorded."),
		ingestOldest: d("fiscal402_ingest_queue_oldest_due_seconds", "How long the ingest queue's earliest entry has been due (0 when none is due): growing means the queue is not being worked."),
		whBacklog:    d("fiscal402_webhook_backlog", "Webhook deliveries waiting for an attempt."),
		whOldest:     d("fiscal402_webhook_backlog_oldest_due_seconds", "How long the earliest pending webhook delivery has been due (0 when none is due)."),
		whFailed:     d("fiscal402_webhook_deliveries_failed", "Webhook deliveries kept in the retention window that failed for good (retries exhausted, or 410 Gone)."),
		whEndpoints:  d("fiscal402_webhook_endpoints", "Webhook endpoints by state: ok, failing (enabled, last attempt failed), disabled (after a 410).", "state"),
		fxAge:        d("fiscal402_fx_age_seconds", "Age of the newest ECB reference rate: now minus its publication instant (16:00 Frankfurt time)."),
		fxBehind:     d("fiscal402_fx_behind", "1 when an ECB publication that should be out is missing from the table."),
		fxFailures:   d("fiscal402_fx_refresh_failures", "Consecutive failures of the ECB rate refresh."),
		vatRatesLeft: d("fiscal402_vat_rate_table_remaining_seconds", "Time until the VAT rate table's coverage ends (negative after it): from then every new settlement waits for review (date_outside_rate_table) until a newer table is loaded (-vat-rates)."),
		vatRatesInfo: d("fiscal402_vat_rate_table_info", "Always 1, labelled with the version and sha256 of the VAT rate table this server decides with: replicas sharing one ledger showing different labels decide the same day by different tables (a rolling deploy that did not finish).", "version", "sha256"),
	}
}

func (c *stateCollector) set(fn StateFunc, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fn, c.ttl, c.lastAt = fn, ttl, time.Time{}
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.errors.Desc()
	for _, d := range []*prometheus.Desc{c.entries, c.reviewQueue, c.ingest, c.ingestOldest, c.whBacklog, c.whOldest, c.whFailed, c.whEndpoints, c.fxAge, c.fxBehind, c.fxFailures, c.vatRatesLeft, c.vatRatesInfo} {
		ch <- d
	}
}

// read returns the cached state, or reads it again when it is older than
// the ttl.
func (c *stateCollector) read() (State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fn == nil {
		return State{}, false
	}
	if c.lastAt.IsZero() || time.Since(c.lastAt) >= c.ttl {
		c.last, c.lastErr = c.fn()
		c.lastAt = time.Now()
		if c.lastErr != nil {
			c.errors.Inc()
		}
	}
	return c.last, c.lastErr == nil
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.read()
	ch <- c.errors
	if !ok {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	overdue := func(due time.Time) float64 {
		if due.IsZero() || !st.Now.After(due) {
			return 0
		}
		return st.Now.Sub(due).Seconds()
	}
	gauge(c.entries, float64(st.LedgerEntries))
	gauge(c.reviewQueue, float64(st.VATRecheck), "vat_recheck")
	gauge(c.reviewQueue, float64(st.FXWait), "fx_wait")
	gauge(c.reviewQueue, float64(st.RateTableWait), "rate_table_wait")
	gauge(c.reviewQueue, float64(st.RegistrationWait), "registration_wait")
	gauge(c.ingest, float64(st.IngestQueued))
	gauge(c.ingestOldest, overdue(st.IngestOldestDue))
	gauge(c.whBacklog, float64(st.WebhookPending))
	gauge(c.whOldest, overdue(st.WebhookOldestDue))
	gauge(c.whFailed, float64(st.WebhookFailed))
	gauge(c.whEndpoints, float64(st.WebhookEndpointsOK), "ok")
	gauge(c.whEndpoints, float64(st.WebhookEndpointsFailing), "failing")
	gauge(c.whEndpoints, float64(st.WebhookEndpointsDisabled), "disabled")
	if st.HasFX {
		gauge(c.fxAge, st.FXAge.Seconds())
		behind := 0.0
		if st.FXBehind {
			behind = 1
		}
		gauge(c.fxBehind, behind)
		gauge(c.fxFailures, float64(st.FXFailures))
	}
	if !st.VATRatesEnd.IsZero() {
		gauge(c.vatRatesLeft, st.VATRatesEnd.Sub(st.Now).Seconds())
	}
	if st.VATRatesVersion != "" {
		gauge(c.vatRatesInfo, 1, st.VATRatesVersion, st.VATRatesDigest)
	}
}
