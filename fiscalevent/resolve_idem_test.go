package fiscalevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fiscalevent"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestFiscalEventResolveKeyUsedBefore: an Idempotency-Key already used
// with another request (here bound to the event it answered, when the
// event's payment was posted again under it with 200) is an
// IDEMPOTENCY_CONFLICT on a resolution, as on any request: also when the
// event the resolution names is no longer pending, and the key's first
// request resolved nothing. Not RECORD_NOT_PENDING, which would tell the
// client its resolution's state rather than that its key is taken.
func TestFiscalEventResolveKeyUsedBefore(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	events := fiscalevent.New(e)
	ctx, acct := context.Background(), fiscaltest.AccountID(0)
	req := request(1, "11.90", fiscaltest.IrishSeller.LegalName, "IE", "DE")
	res, err := events.Record(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	const key = "reused-1"
	if again, err := events.Record(ctx, acct, req, key); err != nil || again.Outcome != fiscal.Existing {
		t.Fatalf("the payment posted again under the key: %v", err)
	}
	_, err = events.Resolve(ctx, acct, res.Event.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{BusinessStatus: "B2C"}, ResolvedBy: "ops-1"}, key)
	if code := fiscaltest.Code(err); code != fiscal.CodeIdempotencyConflict {
		t.Fatalf("a resolution under a key used before: %v (%s), want IDEMPOTENCY_CONFLICT", err, code)
	}
}
