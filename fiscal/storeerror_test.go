package fiscal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/ledger"
)

// TestUnavailableSaysNothingOfWriting: the answer to a ledger that cannot
// be reached serves reads (a listing, a receipt, the OSS return) as well
// as writes, so it says the ledger is unavailable, not that it "cannot be
// written" to a client that only read; and it says nothing was written.
func TestUnavailableSaysNothingOfWriting(t *testing.T) {
	for _, err := range []error{ledger.ErrUnavailable, fmt.Errorf("read: %w", ledger.ErrUnavailable), ledger.ErrClosed} {
		fe := StoreError(err)
		if fe.Code != CodeDBUnavailable {
			t.Fatalf("%v: code %s", err, fe.Code)
		}
		if strings.Contains(fe.Detail, "cannot be written") || !strings.Contains(fe.Detail, "unavailable") || !strings.Contains(fe.Detail, "nothing was written") {
			t.Fatalf("%v: detail %q", err, fe.Detail)
		}
	}
}
