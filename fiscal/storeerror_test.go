package fiscal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/evmverify"
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

// TestNotFinalDetailSaysWhatIsAwaited: a transfer with the confirmations
// the policy asks but whose block the node does not yet call finalized
// (RequireFinalized) is answered "not yet finalized", not "4 of 1
// confirmations", which reads as if it had more than it needs and still
// failed; one short of its confirmations says how many it has.
func TestNotFinalDetailSaysWhatIsAwaited(t *testing.T) {
	for _, tc := range []struct {
		err        *evmverify.NotFinalError
		want, bans string
	}{
		{&evmverify.NotFinalError{Confirmations: 4, Required: 1, RequireFinalized: true}, "not yet finalized", "4 of 1"},
		{&evmverify.NotFinalError{Confirmations: 1, Required: 3}, "1 of 3 confirmations", "finalized"},
	} {
		fe := chainError(tc.err).(*Error)
		if fe.Code != CodeChainUnavailable || !strings.Contains(fe.Detail, tc.want) || strings.Contains(fe.Detail, tc.bans) {
			t.Errorf("%+v: %s %q, want it to say %q and not %q", tc.err, fe.Code, fe.Detail, tc.want, tc.bans)
		}
	}
}
