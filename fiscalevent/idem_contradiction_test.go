package fiscalevent_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestRetryAfterProfileNowContradictedReplays: the account's own sale is
// recorded with an Idempotency-Key and a body stating the facts its profile
// then stated (overThreshold true, optedForDestination false). The operator
// then changes the profile (the seller now leaves the threshold to its
// totals, which are within it, and has opted). The same request with the
// same key, and the same payment posted again without one, are the
// request already answered: they replay its answer (or return the event,
// 200), as a retry after any other profile change does
// (draft-ietf-httpapi-idempotency-key-header: the fingerprint is of the
// request), not a 400 saying the body contradicts today's profile. A new
// payment stating the same facts is still refused.
func TestRetryAfterProfileNowContradictedReplays(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	over, opted := true, false
	req := request(1, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	req.Seller.OverThreshold, req.Seller.OptedForDestination = &over, &opted
	first, err := events.Record(ctx, acct, req, "event-key-1")
	if err != nil {
		t.Fatal(err)
	}
	changed := fiscaltest.IrishSeller
	changed.OverThreshold, changed.OptedForDestination = false, true
	if err := e.SetAccounts(fiscaltest.Accounts(changed)); err != nil {
		t.Fatal(err)
	}
	size := e.Ledger().Size()
	again, err := events.Record(ctx, acct, req, "event-key-1")
	if err != nil {
		t.Fatalf("the same request with its key after a profile change: %v, want its replay", err)
	}
	if again.Outcome != fiscal.Replayed || !bytes.Equal(again.JSON, first.JSON) {
		t.Errorf("outcome %v, same answer %t; want the first answer replayed", again.Outcome, bytes.Equal(again.JSON, first.JSON))
	}
	dup, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatalf("the same payment again without a key: %v, want the event (200)", err)
	}
	if dup.Outcome != fiscal.Existing || dup.Event.ID != first.Event.ID {
		t.Errorf("duplicate: outcome %v, id %s; want the existing %s", dup.Outcome, dup.Event.ID, first.Event.ID)
	}
	if e.Ledger().Size() != size {
		t.Errorf("the replays wrote %d entries", e.Ledger().Size()-size)
	}
	fresh := request(2, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	fresh.Seller.OverThreshold, fresh.Seller.OptedForDestination = &over, &opted
	if _, err := events.Record(ctx, acct, fresh, ""); fiscaltest.Code(err) != fiscal.CodeBadRequest {
		t.Errorf("a new payment contradicting the profile: %v, want BAD_REQUEST", err)
	}
	if e.Ledger().Size() != size {
		t.Errorf("the refusal wrote %d entries", e.Ledger().Size()-size)
	}
}
