package webhooks

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ledger"
)

// TestStoreWaitAfterAHalt: a store error that only an operator ends (a
// ledger halted after a failed disk sync, a damaged file) makes the
// dispatcher wait a minute before it looks again, not storeRetry (5 s), so
// that it does not log a line every few seconds; other store errors keep
// storeRetry.
func TestStoreWaitAfterAHalt(t *testing.T) {
	halted := &ledger.HaltedError{Path: "/data/ledger.db", Err: errors.New("fdatasync: input/output error")}
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"halted":                     {fmt.Errorf("webhooks: claim: %w", halted), time.Minute},
		"halted, through the engine": {fiscal.StoreError(halted), time.Minute},
		"unavailable for now":        {ledger.ErrUnavailable, storeRetry},
		"anything else":              {errors.New("boom"), storeRetry},
	} {
		if got := storeWait(c.err); got != c.want {
			t.Errorf("%s: waits %v, want %v", name, got, c.want)
		}
	}
}
