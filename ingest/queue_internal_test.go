package ingest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestPassRetryAfterAHalt: after a pass that met a halted ledger (a failed
// disk sync; only an operator ends it), the queue loop waits a minute, as
// the HTTP answers' Retry-After says, instead of logging the same error
// every second; any other failed pass is retried a second later.
func TestPassRetryAfterAHalt(t *testing.T) {
	halted := &ledger.HaltedError{Path: "/data/ledger.db", Err: errors.New("fdatasync: input/output error")}
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"halted, as the engine answers it": {fiscal.StoreError(halted), time.Minute},
		"halted, as the ledger answers it": {fmt.Errorf("ingest: scan: %w", halted), time.Minute},
		"unavailable for now":              {ledger.ErrUnavailable, time.Second},
		"closed":                           {fiscal.StoreError(ledger.ErrClosed), time.Second},
		"anything else":                    {errors.New("boom"), time.Second},
	} {
		if got := passRetry(c.err); got != c.want {
			t.Errorf("%s: waits %v, want %v", name, got, c.want)
		}
	}
}
