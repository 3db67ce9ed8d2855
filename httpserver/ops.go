package httpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/rates"
)

// The operations endpoints are for the people and machines that run the
// service, not for integrators: health and readiness probes, Prometheus
// metrics and the hot backup. They are mounted beside the API but are not
// part of its OpenAPI document or manifest (README "Operations" documents
// them).
//
//	GET /healthz           200 while the process serves requests; no key
//	GET /readyz            200 when every readiness check passes, else 503; no key
//	GET /metrics           Prometheus exposition; the operator key unless Options.MetricsPublic
//	GET /v1/admin/backup   a consistent copy of the ledger file; the operator key
//
// The operator key is sent as "Authorization: Bearer <key>" (what
// Prometheus' scrape configuration sends). It is never an account's key:
// New refuses one that is, and X-Service-Key is never read on these routes.

// Defaults of the readiness checks.
const (
	// DefaultFXMaxAge is how old the newest ECB reference rate may be
	// before the service is not ready. The ECB publishes on TARGET working
	// days at about 16:00 Frankfurt time; the longest regular gap is five
	// days, 120 hours from one publication to the next (Maundy Thursday to
	// the Tuesday after Easter; 24 December on a Wednesday to the Monday
	// after: 2026-04-02 to 04-07 and 2025-12-24 to 12-29 in the ECB data),
	// and the refresh fetches a publication only after 16:00 plus its
	// margin, polling while it is late. Six hours more than that means a
	// publication was missed and new settlements are being stored pending
	// review (fx_rate_unavailable) instead of converted; 120 hours alone
	// took every replica out of service at each Easter's 16:00.
	DefaultFXMaxAge = 126 * time.Hour
	// DefaultBackupStall is how long a download of GET /v1/admin/backup
	// may go without the client taking any bytes before it is cut
	// (Options.BackupStall).
	DefaultBackupStall = time.Minute
	// readyInterval is the least time between two runs of the checks: a
	// probe within it gets the previous answer, so that an unauthenticated
	// caller cannot turn /readyz into a stream of ledger writes.
	readyInterval = time.Second
	// readyTimeout bounds one run of the checks.
	readyTimeout = 5 * time.Second
	// stateTTL is how long the metrics' queue and rate state is reused
	// between scrapes.
	stateTTL = 5 * time.Second
)

// ReadyCheck is a readiness check the host adds to the server's own
// (ledger, fx, workers): Check returns nil when ready.
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// LedgerBackup is what GET /v1/admin/backup needs from the ledger: WriteTo
// writes a consistent copy of the whole ledger file as of one moment to w,
// while appends go on, and returns the bytes written. bbolt's Tx.WriteTo
// in one read transaction is exactly that (its meta page is the
// transaction's, so the copy opens at that commit). *ledger.Ledger must
// implement it for the hot backup to work; until it does, the endpoint
// answers 501 and says so.
type LedgerBackup interface {
	WriteTo(w io.Writer) (int64, error)
}

// ledgerBackup returns the backup source: Options.Backup, else the
// engine's ledger when it implements LedgerBackup.
func (s *Server) ledgerBackup() (LedgerBackup, bool) {
	if s.opts.Backup != nil {
		return s.opts.Backup, true
	}
	if s.engine.Ledger().Shared() {
		return nil, false // PostgreSQL: the database's own backups
	}
	b, ok := any(s.engine.Ledger()).(LedgerBackup)
	return b, ok
}

// LedgerCanBackup reports whether this build's ledger implements
// LedgerBackup (for the tests that need a hot backup, and for hosts that
// want to say so at start).
func LedgerCanBackup() bool {
	_, ok := any((*ledger.Ledger)(nil)).(LedgerBackup)
	return ok
}

// opsRoutes are the operations endpoints (see above).
func (s *Server) opsRoutes() []route {
	return []route{
		{"GET", "/healthz", s.noParams(s.getHealthz), false},
		{"GET", "/readyz", s.noParams(s.getReadyz), false},
		{"GET", "/metrics", s.operatorOnly(s.noParams(s.metrics.Handler().ServeHTTP), s.opts.MetricsPublic), false},
		{"GET", "/v1/admin/backup", s.operatorOnly(s.noParams(s.getBackup), false), false},
	}
}

// operatorOnly requires the operator key (unless public).
func (s *Server) operatorOnly(h http.Handler, public bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !public {
			if err := s.checkOperatorLimited(r); err != nil {
				challenge := `Bearer realm="fiscal402-operator"`
				if fe := (*fiscal.Error)(nil); strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ") && errors.As(err, &fe) && fe.Code == fiscal.CodeAuthenticationFailed {
					challenge += `, error="invalid_token"` // a bearer token was sent and is wrong (RFC 6750 §3.1)
				}
				w.Header().Set("WWW-Authenticate", challenge)
				s.problem(w, r, err)
				return
			}
			requestInfoOf(r).account = "operator"
		}
		h.ServeHTTP(w, r)
	})
}

// checkOperatorLimited is checkOperator under the failure limit of the
// client's address (authFailures).
func (s *Server) checkOperatorLimited(r *http.Request) error {
	addr := s.clientAddr(r)
	now := time.Now()
	if err := s.authFails.blocked(addr, now); err != nil {
		return err
	}
	err := s.checkOperator(r)
	if err != nil && s.operatorHash != nil && r.Header.Get("Authorization") != "" {
		if blockErr := s.authFails.failed(addr, now); blockErr != nil {
			return blockErr
		}
	}
	return err
}

func (s *Server) checkOperator(r *http.Request) error {
	if s.operatorHash == nil {
		return &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Detail: "no operator key is configured (the server's -operator-key-file or FISCAL402_OPERATOR_KEY)"}
	}
	// The scheme is case-insensitive (RFC 9110 §11.1: "bearer", "BEARER").
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Field: "Authorization", Detail: "the operator key is required: Authorization: Bearer <operator key>"}
	}
	h := sha256.Sum256([]byte(strings.TrimSpace(key)))
	if subtle.ConstantTimeCompare(h[:], s.operatorHash) != 1 {
		return &fiscal.Error{Code: fiscal.CodeAuthenticationFailed, Field: "Authorization", Detail: "the operator key is not valid"}
	}
	return nil
}

// getHealthz: the process is alive and serving. It reads nothing: a
// liveness probe that failed on a slow disk would restart a process that
// is only waiting for it.
func (s *Server) getHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
}

// Readiness is the body of GET /readyz.
type Readiness struct {
	Status string       `json:"status"` // "ready" | "not_ready"
	Checks []CheckState `json:"checks"`
}

// CheckState is the outcome of one readiness check.
type CheckState struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// readiness caches the last run of the checks (readyInterval).
type readiness struct {
	mu   sync.Mutex
	at   time.Time
	last Readiness
}

// getReadyz: 200 when the ledger is open and writable, the ECB rates are
// fresh enough and the background workers run (and every host check
// passes); 503 with the failing checks otherwise.
func (s *Server) getReadyz(w http.ResponseWriter, r *http.Request) {
	rd := s.Ready(r.Context())
	raw, err := json.Marshal(rd)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	status := http.StatusOK
	if rd.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, raw)
}

// Ready runs the readiness checks (at most once a second; a call within
// that gets the previous answer).
func (s *Server) Ready(ctx context.Context) Readiness {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if !s.ready.at.IsZero() && time.Since(s.ready.at) < readyInterval {
		return s.ready.last
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	checks := []ReadyCheck{
		{Name: "ledger", Check: s.checkLedger},
		{Name: "fx", Check: s.checkFX},
		{Name: "vat_rates", Check: s.checkVATRates},
		{Name: "workers", Check: s.checkWorkers},
	}
	checks = append(checks, s.opts.ReadyChecks...)
	rd := Readiness{Status: "ready", Checks: []CheckState{}}
	for _, c := range checks {
		st := CheckState{Name: c.Name, OK: true}
		if err := c.Check(ctx); err != nil {
			st.OK, st.Detail, rd.Status = false, err.Error(), "not_ready"
		}
		s.metrics.ObserveReady(c.Name, st.OK)
		rd.Checks = append(rd.Checks, st)
	}
	s.ready.at, s.ready.last = time.Now(), rd
	return rd
}

// bucketOps is the server's side bucket in the ledger file: "ready" holds
// the time of the last readiness write.
const bucketOps = "ops"

// checkLedger: the ledger is open and takes a write (a side-data
// transaction, fsynced like every commit), so a full disk, a read-only
// file system or a closed ledger makes the service not ready before a
// settlement finds out.
func (s *Server) checkLedger(ctx context.Context) error {
	now := s.engine.Now().UTC().Format(time.RFC3339Nano)
	err := s.engine.Ledger().Update(func(tx ledger.Tx) error {
		return tx.Put(bucketOps, []byte("ready"), []byte(now))
	})
	var halted *ledger.HaltedError
	switch {
	case errors.Is(err, ledger.ErrClosed):
		return errors.New("the ledger is closed")
	case errors.As(err, &halted):
		// The whole error (the file's path, what the operator must do) goes
		// to the log with every 5xx answer; /readyz needs no key.
		return errors.New("the ledger stopped after a failed disk sync: an operator must act (the server's log says how)")
	case err != nil:
		// The store's error names the file's path or the database's host
		// and port; it goes to the log, and /readyz (no key) says what
		// failed.
		s.log.Error("readiness: the ledger cannot be written", "err", err)
		return errors.New("the ledger cannot be written (the server's log has the error)")
	}
	return nil
}

// fxReport is the state of the ECB rates, as GET /v1/fx/status shows it.
func (s *Server) fxReport() rates.Report {
	if s.svc.Rates != nil {
		return s.svc.Rates.Report()
	}
	return rates.StaticReport(s.engine)
}

// checkFX: the newest ECB rate is at most FXMaxAge old.
func (s *Server) checkFX(ctx context.Context) error {
	maxAge := s.opts.FXMaxAge
	if maxAge == 0 {
		maxAge = DefaultFXMaxAge
	}
	if maxAge < 0 {
		return nil
	}
	rep := s.fxReport()
	if rep.Newest == "" {
		return errors.New("no ECB rate is known")
	}
	age := time.Duration(rep.AgeSeconds) * time.Second
	if age > maxAge {
		how := "a fixed table: load newer rates (-fx-file) or let the refresh run"
		if rep.Refresh {
			how = fmt.Sprintf("the refresh has failed %d times in a row", rep.Failures)
			if rep.LastError != "" {
				how += ": " + rep.LastError
			}
		}
		return fmt.Errorf("the newest ECB rate (%s) is %s old, more than %s (%s)", rep.Newest, age.Round(time.Minute), maxAge, how)
	}
	return nil
}

// checkVATRates: now (the engine's clock) the local day of every member
// state lies inside the VAT rate table's coverage (the rate is chosen by
// the taxing territory's local day: vat.RateTable.CoveredEverywhere).
// Outside it new settlements wait for review (date_outside_rate_table):
// the table never reuses the nearest known rate, so the service cannot do
// its work until a newer table is loaded.
func (s *Server) checkVATRates(ctx context.Context) error {
	t := s.engine.Settings().Rates
	from, to := t.Coverage()
	start, until := t.CoveredEverywhere()
	now := s.engine.Now().UTC()
	if now.Before(start) || !now.Before(until) {
		return fmt.Errorf("now (%s) the local day of some member state is outside the VAT rate table %s, which covers %s to %s (local days, from %s to %s UTC): new settlements wait for review (date_outside_rate_table); load a newer table (-vat-rates FILE)",
			now.Format(time.RFC3339), t.Version(), from.Format(time.DateOnly), to.Format(time.DateOnly), start.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	return nil
}

// checkWorkers: the engine runs its background work (the ingest queue,
// webhook delivery, registry re-checks, the rate refresh). A backlog is
// not a readiness failure: taking the instance out of a load balancer would
// not work it off. Its age is a metric to alert on instead
// (fiscal402_ingest_queue_oldest_due_seconds,
// fiscal402_webhook_backlog_oldest_due_seconds).
func (s *Server) checkWorkers(ctx context.Context) error {
	if s.engine.Settings().NoBackground {
		return errors.New("the engine runs no background work (Config.NoBackground): queued payments, webhooks and re-checks wait")
	}
	return nil
}

// state reads what the metrics' gauges show.
func (s *Server) state() (metrics.State, error) {
	e := s.engine
	t := e.Settings().Rates
	_, vatEnd := t.CoveredEverywhere()
	st := metrics.State{Now: e.Now(), LedgerEntries: e.Ledger().Size(), VATRatesEnd: vatEnd, VATRatesVersion: t.Version(), VATRatesDigest: t.Digest()}
	eq, err := e.Queues()
	st.VATRecheck, st.FXWait, st.RateTableWait, st.RegistrationWait = eq.Rechecks, eq.WaitingForRates, eq.WaitingForRateTable, eq.WaitingForRegistration
	if err != nil {
		return st, err
	}
	q, err := s.svc.Ingest.QueueStats()
	if err != nil {
		return st, err
	}
	st.IngestQueued, st.IngestOldestDue = q.Queued, q.OldestDue
	wh, err := s.svc.Webhooks.Stats()
	if err != nil {
		return st, err
	}
	st.WebhookPending, st.WebhookOldestDue, st.WebhookFailed = wh.Pending, wh.OldestDue, wh.Failed
	st.WebhookEndpointsOK, st.WebhookEndpointsFailing, st.WebhookEndpointsDisabled = wh.EndpointsOK, wh.EndpointsFailing, wh.EndpointsDisabled
	rep := s.fxReport()
	if rep.Newest != "" {
		st.HasFX = true
		st.FXAge = time.Duration(rep.AgeSeconds) * time.Second
		st.FXBehind, st.FXFailures = rep.Behind, rep.Failures
	}
	return st, nil
}

// getBackup: GET /v1/admin/backup streams a consistent copy of the ledger
// file (LedgerBackup) as application/octet-stream. The copy is the file as
// of one commit: restore it by putting it in place of ledger.db in a data
// directory with the same keys/ (README "Operations"). A failure after the
// first byte aborts the connection, so that a client never takes a cut
// stream for a whole copy (the chunked encoding is left unterminated).
func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) {
	src, ok := s.ledgerBackup()
	if !ok {
		s.problem(w, r, &fiscal.Error{Code: codeNotImplemented, Detail: "this ledger cannot write a hot copy: on PostgreSQL use the database's backups (pg_dump, base backups); a bbolt ledger without WriteTo: stop the server and copy ledger.db"})
		return
	}
	// A large file takes longer than the server's write timeout; a client
	// that stops taking bytes is cut after BackupStall instead. The ledger
	// streams the copy from a spool (its read transaction ends first) where
	// the disk has room, else within one read transaction, which keeps
	// bbolt from reusing the pages every commit frees while it lasts: a
	// stalled download held for ever grew the file without bound (a 7 MB
	// ledger to 1.26 GB over 2,400 settlements, stop 60).
	stall := s.opts.BackupStall
	if stall <= 0 {
		stall = DefaultBackupStall
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(stall))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="fiscal402-ledger-%s.db"`, s.engine.Now().UTC().Format("20060102T150405Z")))
	w.Header().Set("Cache-Control", "no-store")
	cw := &countingWriter{w: w, before: func() { _ = rc.SetWriteDeadline(time.Now().Add(stall)) }}
	n, err := src.WriteTo(cw)
	if err != nil {
		s.log.Error("backup failed", "request_id", requestInfoOf(r).id, "bytes", cw.n, "err", err)
		if cw.n == 0 {
			s.problem(w, r, fiscal.StoreError(err))
			return
		}
		panic(http.ErrAbortHandler)
	}
	s.log.Info("backup written", "request_id", requestInfoOf(r).id, "bytes", n)
}

type countingWriter struct {
	w      io.Writer
	n      int64
	before func() // run before each write (the next write deadline)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.before()
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
