package metrics_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/metrics"
)

// TestEveryMetricInREADMETable: every fiscal402_ family the server exposes
// (each Observe method called once, the state read) has a row of the
// README's metrics table, so an operator writing alerts from the README
// knows every series (fiscal402_state_errors_total was exposed but not
// listed).
func TestEveryMetricInREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "| metric | what |")
	if start < 0 {
		t.Fatal("the README has no metrics table")
	}
	table := s[start:]
	table = table[:strings.Index(table, "\n\n")]

	m := metrics.New()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m.SetState(func() (metrics.State, error) {
		return metrics.State{Now: now, LedgerEntries: 1, IngestQueued: 1, IngestOldestDue: now, WebhookPending: 1, WebhookOldestDue: now, HasFX: true,
			VATRatesEnd: now.Add(time.Hour), VATRatesVersion: "vat-rates-test", VATRatesDigest: "00"}, nil
	}, time.Hour)
	m.ObserveRequest("POST /settlements", 201, time.Millisecond)
	m.ObserveSettlement("settlements", "created", "PROCESSED")
	m.ObserveRefused("settlements", "BAD_REQUEST")
	m.ObservePruned("webhook_deliveries", 1)
	m.ObserveAccountsReload("applied")
	m.ObserveReady("fx", true)
	m.ObserveCommit(1, time.Millisecond)
	families := regexp.MustCompile(`(?m)^# HELP (fiscal402_\w+) `).FindAllStringSubmatch(scrape(t, m), -1)
	if len(families) < 15 {
		t.Fatalf("only %d fiscal402_ families exposed", len(families))
	}
	for _, f := range families {
		if !strings.Contains(table, "`"+f[1]+"`") && !strings.Contains(table, "`"+f[1]+"{") {
			t.Errorf("%s is exposed but has no row of the README's metrics table", f[1])
		}
	}
}
