package ingest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestPassRetryAfterAHalt: after a pass that met an error only an operator
// ends (a ledger halted after a failed disk sync, a damaged file), the
// queue loop waits a minute instead of logging the same error every
// second; any other failed pass is retried a second later, whatever
// Retry-After an engine error carries.
func TestPassRetryAfterAHalt(t *testing.T) {
	halted := &ledger.HaltedError{Path: "/data/ledger.db", Err: errors.New("fdatasync: input/output error")}
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"halted, as the engine answers it": {fiscal.StoreError(halted), time.Minute},
		"halted, as the ledger answers it": {fmt.Errorf("ingest: scan: %w", halted), time.Minute},
		"a damaged file":                   {fiscal.StoreError(&ledger.CorruptError{Path: "/data/ledger.db", Reason: "bad page"}), time.Minute},
		"unavailable for now":              {ledger.ErrUnavailable, time.Second},
		"a rate limit's long Retry-After":  {&fiscal.Error{Code: "RATE_LIMITED", RetryAfter: time.Hour}, time.Second},
		"closed":                           {fiscal.StoreError(ledger.ErrClosed), time.Second},
		"anything else":                    {errors.New("boom"), time.Second},
	} {
		if got := passRetry(c.err); got != c.want {
			t.Errorf("%s: waits %v, want %v", name, got, c.want)
		}
	}
}
