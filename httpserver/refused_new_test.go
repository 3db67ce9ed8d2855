package httpserver_test

import (
	"errors"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/httpserver"
	"github.com/fiscal402/fiscal402/ingest"
	"github.com/fiscal402/fiscal402/ledger"
	"github.com/fiscal402/fiscal402/metrics"
	"github.com/fiscal402/fiscal402/webhooks"
)

// TestRefusedNewStartsNothing: a New that refuses its services leaves the
// engine as it found it. The program here runs the engine's ingest queue
// itself and forgets to hand that Service over; New, which would make the
// webhook dispatcher and then a second queue runner, is refused, and must
// not have started (or reserved) the dispatcher on the way: the corrected
// New (given the queue's Service), and a program's own webhooks.New, must
// then succeed, and no goroutine is left behind.
func TestRefusedNewStartsNothing(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := fiscal.New(fiscal.Config{Dir: t.TempDir(), Accounts: testAccounts(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	in, err := ingest.Open(e, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := testAccountsFile()
	keys, err := file.Keys()
	if err != nil {
		t.Fatal(err)
	}
	before := settledGoroutines(-1)
	m := metrics.New()
	_, err = httpserver.New(httpserver.Services{Engine: e, Keys: keys}, httpserver.Options{Logger: quiet, Metrics: m})
	if !errors.Is(err, ledger.ErrReserved) {
		t.Fatalf("New beside a running queue, without its Service: %v, want ledger.ErrReserved", err)
	}
	if after := settledGoroutines(before); after != before {
		t.Errorf("the refused New left %d goroutines running (%d before)", after-before, before)
	}
	// The caller's metrics read no state of the refused server (whose
	// services were never made).
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("scraping the metrics given to the refused New: panic %v", r)
			}
		}()
		if _, err := m.Registry().Gather(); err != nil {
			t.Errorf("scraping the metrics given to the refused New: %v", err)
		}
	}()
	// The dispatcher's reservation must be free: a program's own
	// webhooks.New (NoDispatcher off) takes it...
	w, err := webhooks.New(e, webhooks.Options{})
	if err != nil {
		t.Fatalf("webhooks.New after the refused New: %v (the refused New kept the dispatcher)", err)
	}
	// ... and the corrected New, given both running loops, serves.
	if _, err := httpserver.New(httpserver.Services{Engine: e, Keys: keys, Ingest: in, Webhooks: w}, httpserver.Options{Logger: quiet, Metrics: m}); err != nil {
		t.Fatalf("the corrected New: %v", err)
	}
}

// settledGoroutines waits up to a second for the goroutine count to come
// back to want (a count that is still falling), and returns it; want < 0
// waits for it to be steady.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 100 && n != want; i++ {
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if want < 0 && m == n && i > 5 {
			break
		}
		n = m
	}
	return n
}
