package fiscal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestKeyBoundOnExistingAnswer: an Idempotency-Key first answered with an
// existing record (200) is bound to that answer: the same key with another
// body is IDEMPOTENCY_CONFLICT and nothing is written; the same key with
// the same body answers the same record again.
func TestKeyBoundOnExistingAnswer(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		req := fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z")
		if _, err := b.Settle(ctx, req, ""); err != nil {
			t.Fatal(err)
		}
		dup, err := b.Settle(ctx, req, "key-1")
		if err != nil || dup.Outcome != fiscal.Existing {
			t.Fatalf("duplicate with a new key: %v %v", dup, err)
		}
		size := e.Ledger().Size()
		other := fiscaltest.Request(2, "5.00", "FR", "2026-04-10T14:30:00Z")
		if _, err := b.Settle(ctx, other, "key-1"); fiscaltest.Code(err) != fiscal.CodeIdempotencyConflict {
			t.Fatalf("the bound key with another body: %v", err)
		}
		if e.Ledger().Size() != size {
			t.Fatalf("the conflicting request wrote %d entries", e.Ledger().Size()-size)
		}
		again, err := b.Settle(ctx, req, "key-1")
		if err != nil || again.Outcome != fiscal.Existing || again.Record.ID != dup.Record.ID {
			t.Fatalf("the bound key with its body: %v %v", again, err)
		}
	})
}

// TestDuplicateWithOtherFacts: a second settlement of a recorded (network,
// txHash) with another amount, payer or receiver is PAYMENT_CONFLICT naming
// the record, and writes nothing; identical facts stay a 200 duplicate.
func TestDuplicateWithOtherFacts(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
		b := fiscaltest.Books(t, e, 0)
		ctx := context.Background()
		req := fiscaltest.Request(3, "11.90", "DE", "2026-04-10T14:30:00Z")
		first, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		size := e.Ledger().Size()
		for name, change := range map[string]func(*fiscal.SettlementRequest){
			"amount": func(r *fiscal.SettlementRequest) { r.AmountUSDC = "11.91" },
			"payer":  func(r *fiscal.SettlementRequest) { r.PayerWallet = "0x" + "11223344556677889900aabbccddeeff00112233" },
			"receiver": func(r *fiscal.SettlementRequest) {
				r.ReceiverWallet = "0x" + "11223344556677889900aabbccddeeff00112233"
			},
		} {
			r := req
			change(&r)
			_, err := b.Settle(ctx, r, "")
			var fe *fiscal.Error
			if fiscaltest.Code(err) != fiscal.CodePaymentConflict || !asError(err, &fe) || fe.Field != "/txHash" || !contains(fe.Detail, first.Record.ID) {
				t.Errorf("%s differs: %v", name, err)
			}
		}
		same := req
		same.AmountUSDC = "11.900" // the same amount, written otherwise
		if res, err := b.Settle(ctx, same, ""); err != nil || res.Outcome != fiscal.Existing {
			t.Errorf("identical facts: %v %v", res, err)
		}
		if e.Ledger().Size() != size {
			t.Fatalf("conflicts wrote %d entries", e.Ledger().Size()-size)
		}
	})
}

func asError(err error, target **fiscal.Error) bool { return errors.As(err, target) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
