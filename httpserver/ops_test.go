package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/time/rate"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
)

const operatorKey = "op_test_operator_key_0123456789abcdef"

// opsFixture is an engine served with an operator key, a JSON request log
// kept in memory, and options the test chooses.
type opsFixture struct {
	*fixture
	handler *httpserver.Server
	logs    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newOpsFixture(t *testing.T, opts httpserver.Options) *opsFixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	now := testNow
	f.now.Store(&now)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	e, err := fiscal.New(fiscal.Config{Dir: f.dir, Accounts: testAccounts(t), Clock: func() time.Time { return *f.now.Load() }, Rand: &detRand{seed: "ops"}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger, opts.RateLimit = logger, rate.Inf
	if opts.OperatorKey == "" {
		opts.OperatorKey = operatorKey
	}
	h := newHandler(t, e, opts)
	f.engine, f.srv = e, httptest.NewServer(h)
	t.Cleanup(f.close)
	return &opsFixture{fixture: f, handler: h, logs: logs}
}

// scrape reads /metrics with the key ("" for none) and parses the
// exposition with the Prometheus text parser.
func (f *opsFixture) scrape(t *testing.T, key string) map[string]*dto.MetricFamily {
	t.Helper()
	var headers []string
	if key != "" {
		headers = []string{"Authorization", "Bearer " + key}
	}
	r := f.do("GET", "/metrics", "", nil, headers...)
	if r.status != 200 {
		t.Fatalf("GET /metrics: %d %s", r.status, r.body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, r.body)
	}
	return fams
}

// metricValue finds the sample of name whose labels include want: a
// counter's or gauge's value, a histogram's sample count.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	fam, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		for k, v := range want {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestHealthAndReadiness: /healthz is always 200; /readyz is 503 naming
// the check while the ECB rates are older than the limit or the ledger is
// closed, and 200 when every check passes.
func TestHealthAndReadiness(t *testing.T) {
	// The fixture's clock is 2026-11-21; the embedded rates end on
	// 2026-04-13: stale by the default limit.
	f := newOpsFixture(t, httpserver.Options{})
	if r := f.do("GET", "/healthz", "", nil); r.status != 200 || !strings.Contains(string(r.body), `"ok"`) {
		t.Fatalf("healthz: %d %s", r.status, r.body)
	}
	r := f.do("GET", "/readyz", "", nil)
	var rd httpserver.Readiness
	if err := json.Unmarshal(r.body, &rd); err != nil {
		t.Fatal(err)
	}
	if r.status != 503 || rd.Status != "not_ready" || !failing(rd, "fx") || failing(rd, "ledger") || failing(rd, "workers") {
		t.Fatalf("readyz with stale rates: %d %+v", r.status, rd)
	}
	if d := check(rd, "fx").Detail; !strings.Contains(d, "2026-04-13") || !strings.Contains(d, "fixed table") {
		t.Errorf("fx detail %q", d)
	}

	// Within the limit (a year), ready.
	g := newOpsFixture(t, httpserver.Options{FXMaxAge: 365 * 24 * time.Hour})
	if r := g.do("GET", "/readyz", "", nil); r.status != 200 {
		t.Fatalf("readyz with fresh enough rates: %d %s", r.status, r.body)
	}
	fams := g.scrape(t, operatorKey)
	if v, ok := metricValue(fams, "fiscal402_ready", map[string]string{"check": "ledger"}); !ok || v != 1 {
		t.Errorf("fiscal402_ready{check=ledger} = %v %v", v, ok)
	}
	// The ledger closed: not ready, and the check says why.
	if err := g.engine.Close(); err != nil {
		t.Fatal(err)
	}
	httpserver.ResetReadiness(g.handler)
	r = g.do("GET", "/readyz", "", nil)
	rd = httpserver.Readiness{}
	_ = json.Unmarshal(r.body, &rd)
	if r.status != 503 || !failing(rd, "ledger") || !strings.Contains(check(rd, "ledger").Detail, "closed") {
		t.Fatalf("readyz with the ledger closed: %d %s", r.status, r.body)
	}
	if r := g.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Errorf("healthz with the ledger closed: %d (liveness reads nothing)", r.status)
	}
}

func check(rd httpserver.Readiness, name string) httpserver.CheckState {
	for _, c := range rd.Checks {
		if c.Name == name {
			return c
		}
	}
	return httpserver.CheckState{Name: name, OK: true, Detail: "absent"}
}

func failing(rd httpserver.Readiness, name string) bool { return !check(rd, name).OK }

// TestReadyHostCheck: a host's readiness check counts like the server's.
func TestReadyHostCheck(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{FXMaxAge: -1, ReadyChecks: []httpserver.ReadyCheck{
		{Name: "accounts", Check: func(context.Context) error { return errors.New("the accounts file does not parse") }},
	}})
	r := f.do("GET", "/readyz", "", nil)
	var rd httpserver.Readiness
	_ = json.Unmarshal(r.body, &rd)
	if r.status != 503 || !failing(rd, "accounts") || failing(rd, "fx") || failing(rd, "ledger") {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
}

// TestMetrics: the exposition parses with the Prometheus text parser; a
// settlement moves the settlements counter (by source, outcome and status)
// and the route's request counter and latency histogram; a refusal counts
// by its code; an unknown path is route "unmatched", never the raw path;
// the queue and rate gauges are there.
func TestMetrics(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	created := map[string]string{"source": "settlements", "outcome": "created", "status": fiscal.StatusProcessed}
	before := f.scrape(t, operatorKey)
	if v, _ := metricValue(before, "fiscal402_settlements_total", created); v != 0 {
		t.Fatalf("settlements before any: %v", v)
	}
	if r := f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)), "Idempotency-Key", "order-1"); r.status != 201 {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	f.do("POST", "/settlements", keyA, mustJSON(t, settlement(nil)), "Idempotency-Key", "order-1")                                   // replay
	f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"amountUsdc": "12.00"})), "Idempotency-Key", "order-1") // conflict
	f.do("POST", "/settlements", keyA, mustJSON(t, settlement(map[string]any{"txHash": txHash(2), "consumerCountry": nil})))         // pending
	f.do("GET", "/no/such/x402-0123456789abcdef0123456789abcdef", "", nil)
	// A fiscal event's resolution counts under source "resolve", as a
	// settlement's does (here refused: a resolution without facts).
	f.do("POST", "/v1/fiscal-events/x402-0123456789abcdef0123456789abcdef/resolve", keyA, []byte(`{"resolvedBy":"ops@example.com"}`))
	httpserver.RefreshState(f.handler) // the state is reused for a few seconds between scrapes
	after := f.scrape(t, operatorKey)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fiscal402_settlements_total", created, 1},
		{"fiscal402_settlements_total", map[string]string{"source": "settlements", "outcome": "replayed", "status": fiscal.StatusProcessed}, 1},
		{"fiscal402_settlements_total", map[string]string{"source": "settlements", "outcome": "created", "status": fiscal.StatusPendingReview}, 1},
		{"fiscal402_settlements_refused_total", map[string]string{"source": "settlements", "code": string(fiscal.CodeIdempotencyConflict)}, 1},
		{"fiscal402_settlements_refused_total", map[string]string{"source": "resolve", "code": string(fiscal.CodeBadRequest)}, 1},
		{"fiscal402_http_requests_total", map[string]string{"route": "POST /settlements", "code": "201"}, 3},
		{"fiscal402_http_requests_total", map[string]string{"route": "POST /settlements", "code": "409"}, 1},
		{"fiscal402_http_request_duration_seconds", map[string]string{"route": "POST /settlements"}, 4},
		{"fiscal402_http_requests_total", map[string]string{"route": "unmatched", "code": "404"}, 1},
		{"fiscal402_ledger_entries", nil, 2},
		{"fiscal402_review_queue", map[string]string{"queue": "fx_wait"}, 0},
		{"fiscal402_review_queue", map[string]string{"queue": "registration_wait"}, 0},
		{"fiscal402_ingest_queue", nil, 0},
		{"fiscal402_webhook_backlog", nil, 0},
	} {
		if got, ok := metricValue(after, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := metricValue(after, "fiscal402_fx_age_seconds", nil); !ok {
		t.Error("no fiscal402_fx_age_seconds")
	}
	// No label anywhere holds a raw path, an account id or a key.
	for name, fam := range after {
		for _, m := range fam.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v := lp.GetValue(); strings.Contains(v, "x402-") || strings.Contains(v, "acct_") || strings.Contains(v, "sk_") {
					t.Errorf("%s has label %s=%q", name, lp.GetName(), v)
				}
			}
		}
	}
	// The commit histograms appear only once a ledger reports commits.
	if _, ok := after["fiscal402_ledger_commit_batch_size"]; ok {
		t.Error("commit histograms shown although nothing reported a commit")
	}
	f.handler.Metrics().ObserveCommit(3, 2*time.Millisecond)
	if v, ok := metricValue(f.scrape(t, operatorKey), "fiscal402_ledger_commit_batch_size", nil); !ok || v != 1 {
		t.Errorf("commit histogram after one commit: %v %v", v, ok)
	}
}

// TestOperatorKey: /metrics and the backup need the operator key as a
// bearer token; an account's key is never one, as a bearer token or as
// X-Service-Key; New refuses an operator key that is an account's.
func TestOperatorKey(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	for _, tc := range []struct {
		name    string
		headers []string
		key     string
	}{
		{"none", nil, ""},
		{"account key as X-Service-Key", nil, keyA},
		{"account key as bearer", []string{"Authorization", "Bearer " + keyA}, ""},
		{"wrong scheme", []string{"Authorization", "Basic " + operatorKey}, ""},
	} {
		for _, path := range []string{"/metrics", "/v1/admin/backup"} {
			r := f.do("GET", path, tc.key, nil, tc.headers...)
			if r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: %d %s", tc.name, path, r.status, r.body)
			}
		}
	}
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER "} { // case-insensitive (RFC 9110 §11.1)
		if r := f.do("GET", "/metrics", "", nil, "Authorization", scheme+operatorKey); r.status != 200 {
			t.Errorf("metrics with the operator key (%q): %d", scheme, r.status)
		}
	}
	pub := newOpsFixture(t, httpserver.Options{MetricsPublic: true})
	if r := pub.do("GET", "/metrics", "", nil); r.status != 200 {
		t.Errorf("public metrics without a key: %d", r.status)
	}
	if r := pub.do("GET", "/v1/admin/backup", "", nil); r.status != 401 {
		t.Errorf("backup without a key on a server with public metrics: %d", r.status)
	}
	file := testAccountsFile()
	keys, _ := file.Keys()
	if _, err := httpserver.New(httpserver.Services{Engine: f.engine, Keys: keys}, httpserver.Options{OperatorKey: keyB}); err == nil || !strings.Contains(err.Error(), "acct_b") {
		t.Errorf("an account key as operator key: %v", err)
	}
}

// TestRequestLog: one JSON line per request with the route pattern, the
// status, the account, the duration and the request id; neither the key
// nor the buyer's personal data (name, VAT number, postal code, wallets)
// appears anywhere in the log.
func TestRequestLog(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	body := settlement(map[string]any{"consumerName": "Erika Mustermann", "consumerPostalCode": "10115", "consumerVatNumber": "DE136695976"})
	r := f.do("POST", "/settlements", keyA, mustJSON(t, body), "X-Request-Id", "trace-42", "Idempotency-Key", "order-secret-7")
	if r.status != 201 {
		t.Fatalf("settle: %d %s", r.status, r.body)
	}
	f.do("GET", "/settlements/"+r.json(t)["id"].(string), keyB, nil) // another account's: 404
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(f.logs.String()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v: %s", err, sc.Bytes())
		}
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request lines, want 2:\n%s", len(lines), f.logs.String())
	}
	first := lines[0]
	for k, want := range map[string]any{"request_id": "trace-42", "method": "POST", "route": "POST /settlements", "status": 201.0, "account": "acct_a", "outcome": "created"} {
		if first[k] != want {
			t.Errorf("request line %s = %v, want %v: %v", k, first[k], want, first)
		}
	}
	if d, ok := first["duration_ms"].(float64); !ok || d <= 0 {
		t.Errorf("duration_ms %v", first["duration_ms"])
	}
	if lines[1]["route"] != "GET /settlements/{id}" || lines[1]["code"] != string(fiscal.CodeNotFound) || lines[1]["account"] != "acct_b" {
		t.Errorf("second line %v", lines[1])
	}
	all := f.logs.String()
	for _, secret := range []string{keyA, keyB, "Erika", "Mustermann", "10115", "136695976", "order-secret-7",
		strings.ToLower(body["payerWallet"].(string)[2:]), strings.ToLower(body["receiverWallet"].(string)[2:]), body["payerWallet"].(string)[2:]} {
		if strings.Contains(strings.ToLower(all), strings.ToLower(secret)) {
			t.Errorf("the log holds %q:\n%s", secret, all)
		}
	}
}

// TestSetKeys: a new key set applies to the requests that follow.
func TestSetKeys(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	file := testAccountsFile()
	file.Accounts[0].KeyHashes = []string{httpserver.HashKey("sk_rotated_key_for_account_a_0001")}
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.handler.SetKeys(keys); err != nil {
		t.Fatal(err)
	}
	if r := f.do("GET", "/settlements", keyA, nil); r.status != 401 {
		t.Errorf("the old key after rotation: %d", r.status)
	}
	if r := f.do("GET", "/settlements", "sk_rotated_key_for_account_a_0001", nil); r.status != 200 {
		t.Errorf("the new key: %d %s", r.status, r.body)
	}
	file.Accounts[1].KeyHashes = []string{httpserver.HashKey(operatorKey)}
	bad, _ := file.Keys()
	if err := f.handler.SetKeys(bad); err == nil {
		t.Error("SetKeys took a key set holding the operator key")
	}
}

// fakeBackup is a test double of LedgerBackup that writes fixed bytes,
// then fails if asked to: it tests the endpoint's HTTP behaviour only (a
// consistent copy is the ledger's business, tested through the binary).
type fakeBackup struct {
	data []byte
	fail bool
}

func (b fakeBackup) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(b.data)
	if err == nil && b.fail {
		err = errors.New("disk read error")
	}
	return int64(n), err
}

// TestBackupEndpoint: the operator gets the source's bytes as an
// attachment; a failure after the first byte cuts the connection instead of
// ending the stream cleanly; a ledger without WriteTo answers 501.
func TestBackupEndpoint(t *testing.T) {
	data := bytes.Repeat([]byte("bbolt page "), 100_000)
	f := newOpsFixture(t, httpserver.Options{Backup: fakeBackup{data: data}})
	r := f.do("GET", "/v1/admin/backup", "", nil, "Authorization", "Bearer "+operatorKey)
	if r.status != 200 || !bytes.Equal(r.body, data) || r.header.Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("backup: %d %d bytes %v", r.status, len(r.body), r.header)
	}
	cut := newOpsFixture(t, httpserver.Options{Backup: fakeBackup{data: data, fail: true}})
	req, _ := http.NewRequest("GET", cut.srv.URL+"/v1/admin/backup", nil)
	req.Header.Set("Authorization", "Bearer "+operatorKey)
	resp, err := cut.srv.Client().Do(req)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("a backup that failed midway read as a whole stream")
	}
	plain := newOpsFixture(t, httpserver.Options{})
	r = plain.do("GET", "/v1/admin/backup", "", nil, "Authorization", "Bearer "+operatorKey)
	switch {
	case httpserver.LedgerCanBackup():
		if r.status != 200 || len(r.body) == 0 {
			t.Fatalf("backup of the ledger: %d", r.status)
		}
	case r.status != 501 || !strings.Contains(string(r.body), "NOT_IMPLEMENTED"):
		t.Fatalf("backup without ledger support: %d %s", r.status, r.body)
	}
}

// TestMetricsPreflightRefusalsKeepTheirRoute: a refusal answered before
// routing (a body over the limit, a repeated query parameter) of a route
// that exists counts under that route, and an ingest route's one as a
// refused payment, as the README's metrics table says; they were counted
// as route "unmatched" ("for unknown paths") and left out of
// fiscal402_settlements_refused_total.
func TestMetricsPreflightRefusalsKeepTheirRoute(t *testing.T) {
	f := newOpsFixture(t, httpserver.Options{})
	big := append([]byte(`{"amountUsdc":"`), bytes.Repeat([]byte("1"), 70000)...)
	if r := f.do("POST", "/settlements", keyA, append(big, `"}`...)); r.status != 413 {
		t.Fatalf("a body over the limit: %d %s", r.status, r.body)
	}
	if r := f.do("POST", "/settlements?x=1&x=2", keyA, mustJSON(t, settlement(nil))); r.status != 400 {
		t.Fatalf("a repeated query parameter: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/v1/receipts/rcpt_x402-0123456789abcdef0123456789abcdef?x=1&x=2", "", nil); r.status != 400 {
		t.Fatalf("a repeated query parameter: %d %s", r.status, r.body)
	}
	f.do("GET", "/no/such/path?x=1&x=2", "", nil)
	after := f.scrape(t, operatorKey)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fiscal402_http_requests_total", map[string]string{"route": "POST /settlements", "code": "413"}, 1},
		{"fiscal402_http_requests_total", map[string]string{"route": "POST /settlements", "code": "400"}, 1},
		{"fiscal402_http_requests_total", map[string]string{"route": "GET /v1/receipts/{id}", "code": "400"}, 1},
		{"fiscal402_http_requests_total", map[string]string{"route": "unmatched", "code": "400"}, 1},
		{"fiscal402_settlements_refused_total", map[string]string{"source": "settlements", "code": "PAYLOAD_TOO_LARGE"}, 1},
		{"fiscal402_settlements_refused_total", map[string]string{"source": "settlements", "code": string(fiscal.CodeBadRequest)}, 1},
	} {
		if got, ok := metricValue(after, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := metricValue(after, "fiscal402_http_requests_total", map[string]string{"route": "unmatched", "code": "413"}); ok {
		t.Error("a 413 of POST /settlements counted as route unmatched")
	}
}
