package refunds_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestSameKeyRetriedConcurrentlyAnswersItsRefund: a client retries a full
// refund with one Idempotency-Key while its first attempt is still being
// committed. Every attempt must answer the one refund the key recorded
// (created once, replayed otherwise). A review found an attempt that
// looked the key up before the first committed, and read the
// settlement's refunds after, answered REFUND_EXCEEDS_REMAINING ("nothing
// remains"): the key's own refund counted against its replay, so the
// client was told its refund was refused although it was recorded.
func TestSameKeyRetriedConcurrentlyAnswersItsRefund(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	for s := 0; s < 30; s++ {
		orig := settleOK(t, b, request(900+s, "11.90", "DE", "2026-04-10T14:30:00Z"))
		key := fmt.Sprintf("full-refund-%d", s)
		res := make([]*refunds.Result, 16)
		errs := make([]error, len(res))
		var wg sync.WaitGroup
		for g := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[g], errs[g] = refunds.Create(ctx, b, orig.ID, refunds.Request{}, key)
			}()
		}
		wg.Wait()
		created, id := 0, ""
		for g, err := range errs {
			if err != nil {
				t.Fatalf("settlement %d, attempt %d with the key %s: %v", s, g, key, err)
			}
			if res[g].Outcome == fiscal.Created {
				created++
			} else if res[g].Outcome != fiscal.Replayed {
				t.Errorf("settlement %d, attempt %d: outcome %v", s, g, res[g].Outcome)
			}
			if id == "" {
				id = res[g].Refund.ID
			}
			if res[g].Refund.ID != id || !res[g].Refund.Full {
				t.Errorf("settlement %d, attempt %d answered refund %s (full %v), another %s", s, g, res[g].Refund.ID, res[g].Refund.Full, id)
			}
		}
		if created != 1 {
			t.Errorf("settlement %d: %d refunds created for one key", s, created)
		}
	}
}

// TestSameKeyRetriedConcurrentlyWithTransferReplays: the same for a
// partial refund paid by a transfer. An attempt that looked the key up
// before the first committed found the transfer backing that refund, and
// answered it as Existing (HTTP 200, "the transfer already backs this
// refund") instead of a replay of the key (201, Idempotent-Replayed): one
// Idempotency-Key, two different answers.
func TestSameKeyRetriedConcurrentlyWithTransferReplays(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	for s := 0; s < 30; s++ {
		orig := settleOK(t, b, request(900+s, "11.90", "DE", "2026-04-10T14:30:00Z"))
		key := fmt.Sprintf("paid-refund-%d", s)
		req := refunds.Request{AmountUSDC: "2.00", Transaction: &refunds.Transaction{Network: orig.Settlement.Network, TxHash: fiscaltest.TxHash(5000 + s)}}
		res := make([]*refunds.Result, 16)
		errs := make([]error, len(res))
		var wg sync.WaitGroup
		for g := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[g], errs[g] = refunds.Create(ctx, b, orig.ID, req, key)
			}()
		}
		wg.Wait()
		created := 0
		for g, err := range errs {
			if err != nil {
				t.Fatalf("settlement %d, attempt %d with the key %s: %v", s, g, key, err)
			}
			switch res[g].Outcome {
			case fiscal.Created:
				created++
			case fiscal.Replayed:
			default:
				t.Errorf("settlement %d, attempt %d with the key %s: outcome %v, want created or replayed", s, g, key, res[g].Outcome)
			}
			if res[g].Refund.ID != res[0].Refund.ID {
				t.Errorf("settlement %d, attempt %d answered refund %s, another %s", s, g, res[g].Refund.ID, res[0].Refund.ID)
			}
		}
		if created != 1 {
			t.Errorf("settlement %d: %d refunds created for one key", s, created)
		}
	}
}
