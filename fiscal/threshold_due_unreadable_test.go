package fiscal_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestUnreadableQueuedThresholdEventIsReported: an account.threshold_crossed
// queued in threshold-due that cannot be read (not JSON, or a document
// that does not name the account and year it is queued for) is never
// appended, and the account would never learn that Art. 58 applies to it
// (Art. 59c(2) Directive 2006/112/EC). It used to be skipped without a
// word (the one without an account was even appended, as the event of
// account "" and year 0). The engine must say so, at error level, naming
// the queue entry, and leave it queued for an operator to repair; no event
// is appended from it.
func TestUnreadableQueuedThresholdEventIsReported(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), smallIrishSeller)
	e, err := fiscal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	queued := map[string]string{
		fiscaltest.AccountID(0) + "\x002025": "{not json",
		fiscaltest.AccountID(0) + "\x002026": `{"object":"account_event","type":"account.threshold_crossed"}`,
	}
	if err := e.Ledger().Update(func(tx ledger.Tx) error {
		for k, v := range queued {
			if err := tx.Put("threshold-due", []byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e = fiscaltest.Engine(t, cfg)
	if evs := thresholdEvents(t, e); len(evs) != 0 {
		t.Errorf("events appended from unreadable queue entries: %+v", evs)
	}
	for _, year := range []string{"2025", "2026"} {
		if !slices.ContainsFunc(strings.Split(logs.String(), "\n"), func(l string) bool {
			return strings.Contains(l, "level=ERROR") && strings.Contains(l, fiscaltest.AccountID(0)) && strings.Contains(l, year)
		}) {
			t.Errorf("no error names the unreadable queue entry of %s:\n%s", year, logs.String())
		}
	}
	n := 0
	if err := e.Ledger().View(func(tx ledger.Tx) error {
		return tx.Scan("threshold-due", nil, nil, false, func(_, _ []byte) bool { n++; return true })
	}); err != nil || n != len(queued) {
		t.Errorf("%d entries left queued (%v), want %d", n, err, len(queued))
	}
}
