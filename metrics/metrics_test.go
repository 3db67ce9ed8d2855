package metrics_test

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fiscal402/fiscal402/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes())); err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	return body
}

// TestCommitHistogramsOnceReported: the commit histograms are absent until
// a ledger reports a commit, then count it.
func TestCommitHistogramsOnceReported(t *testing.T) {
	m := metrics.New()
	if strings.Contains(scrape(t, m), "fiscal402_ledger_commit") {
		t.Fatal("commit histograms before any commit")
	}
	var obs metrics.CommitObserver = m
	obs.ObserveCommit(7, 3*time.Millisecond)
	body := scrape(t, m)
	for _, want := range []string{"fiscal402_ledger_commit_batch_size_count 1", "fiscal402_ledger_commit_batch_size_sum 7", `fiscal402_ledger_commit_batch_size_bucket{le="8"} 1`, `fiscal402_ledger_commit_fsync_seconds_bucket{le="0.005"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
}

// TestStateGauges: the state is read at scrape time and reused within its
// ttl; a failed read leaves the gauges out and counts the error.
func TestStateGauges(t *testing.T) {
	m := metrics.New()
	reads := 0
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m.SetState(func() (metrics.State, error) {
		reads++
		return metrics.State{Now: now, LedgerEntries: 5, IngestQueued: 2, IngestOldestDue: now.Add(-90 * time.Second), WebhookPending: 1, HasFX: true, FXAge: time.Hour,
			VATRatesEnd: now.Add(48 * time.Hour), VATRatesVersion: "acme-vat-rates-2027.01.1", VATRatesDigest: "ab12"}, nil
	}, time.Hour)
	body := scrape(t, m)
	for _, want := range []string{`fiscal402_vat_rate_table_info{sha256="ab12",version="acme-vat-rates-2027.01.1"} 1`, "fiscal402_vat_rate_table_remaining_seconds 172800", "fiscal402_ledger_entries 5", "fiscal402_ingest_queue 2", "fiscal402_ingest_queue_oldest_due_seconds 90", "fiscal402_webhook_backlog 1", "fiscal402_fx_age_seconds 3600", "fiscal402_state_errors_total 0"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	scrape(t, m)
	if reads != 1 {
		t.Errorf("%d reads within the ttl, want 1", reads)
	}
	m.SetState(func() (metrics.State, error) { reads++; return metrics.State{}, errors.New("ledger closed") }, time.Hour)
	body = scrape(t, m)
	if strings.Contains(body, "fiscal402_ledger_entries") || !strings.Contains(body, "fiscal402_state_errors_total 1") {
		t.Errorf("after a failed read:\n%s", body)
	}
}

// TestObserveRequestAllocs: counting a request allocates nothing once its
// route and status have been seen, and the status label is its decimal
// code, in range or not.
func TestObserveRequestAllocs(t *testing.T) {
	m := metrics.New()
	for _, code := range []int{200, 201, 404, 599} {
		m.ObserveRequest("POST /v1/settlements", code, 3*time.Millisecond)
		if n := testing.AllocsPerRun(100, func() { m.ObserveRequest("POST /v1/settlements", code, 3*time.Millisecond) }); n != 0 {
			t.Errorf("status %d: %v allocations per request, want 0", code, n)
		}
	}
	// 102 each: one before, AllocsPerRun's warm-up run and its 100.
	m.ObserveRequest("GET /healthz", 99, time.Millisecond)
	m.ObserveRequest("GET /healthz", 600, time.Millisecond)
	body := scrape(t, m)
	for _, want := range []string{
		`fiscal402_http_requests_total{code="201",route="POST /v1/settlements"} 102`,
		`fiscal402_http_requests_total{code="599",route="POST /v1/settlements"} 102`,
		`fiscal402_http_requests_total{code="99",route="GET /healthz"} 1`,
		`fiscal402_http_requests_total{code="600",route="GET /healthz"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
}

func BenchmarkObserveRequest(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRequest("POST /v1/settlements", 201, 3*time.Millisecond)
	}
}
