package fiscalevent_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestRetryAfterProfileChangeReplays: a fiscal event of the account's own
// sale is recorded with an Idempotency-Key; the operator then changes the
// seller's profile (renamed, a registration added, another item name). The same
// request sent again with the same key is a retry of it, not a different
// request: it replays the first answer, byte for byte, and writes nothing.
// A review found it answered IDEMPOTENCY_CONFLICT (409): the key's
// fingerprint hashed the account's whole profile, not the request. A
// different request under the key is still a conflict.
func TestRetryAfterProfileChangeReplays(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := request(1, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	retry := request(1, "11.9", strings.ToUpper(fiscaltest.IrishSeller.LegalName), "IE", "DE") // the same request, spelled otherwise
	first, err := events.Record(ctx, acct, req, "event-key-1")
	if err != nil {
		t.Fatal(err)
	}
	changed := fiscaltest.IrishOSSSeller()
	changed.ItemName, changed.LegalName = "API calls", "Renamed Digital Holdings Ltd"
	if err := e.SetAccounts(fiscaltest.Accounts(changed)); err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	again, err := events.Record(ctx, acct, retry, "event-key-1")
	if err != nil {
		t.Fatalf("the same request with its key after a profile change: %v, want its replay", err)
	}
	if again.Outcome != fiscal.Replayed || !bytes.Equal(again.JSON, first.JSON) {
		t.Errorf("outcome %v, same answer %t; want the first answer replayed", again.Outcome, bytes.Equal(again.JSON, first.JSON))
	}
	if e.Ledger().Size() != size {
		t.Errorf("the replay wrote %d entries", e.Ledger().Size()-size)
	}
	other := request(1, "12.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	if _, err := events.Record(ctx, acct, other, "event-key-1"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
		t.Errorf("another request under the key: %v, want IDEMPOTENCY_CONFLICT", err)
	}
}
