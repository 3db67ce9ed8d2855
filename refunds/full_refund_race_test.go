package refunds_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestFullRefundRacingPartial: a full refund ("everything that
// remains", no amountUsdc) and partial refunds of the same settlement sent
// at once. In any sequential order the full refund succeeds (the partial
// refunds are a small part of the settlement, so something always remains
// when the full refund runs) and a partial one after it is refused. Under
// concurrency the full refund must never be refused as "more than what
// remains".
func TestFullRefundRacingPartial(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	const settlements, partials = 30, 3
	var failures []string
	for s := 0; s < settlements; s++ {
		res, err := b.Settle(ctx, request(100+s, "100.00", "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		id := res.Record.ID
		var wg sync.WaitGroup
		var fullErr error
		start := make(chan struct{})
		for i := 0; i < partials; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _ = refunds.Create(ctx, b, id, refunds.Request{AmountUSDC: "1.00"}, "")
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, fullErr = refunds.Create(ctx, b, id, refunds.Request{}, fmt.Sprintf("full-%d", s))
		}()
		close(start)
		wg.Wait()
		if fullErr != nil {
			failures = append(failures, fmt.Sprintf("%s: full refund: %v (code %s)", id, fullErr, fiscaltest.Code(fullErr)))
			continue
		}
		list, err := refunds.List(ctx, b, id)
		if err != nil {
			t.Fatal(err)
		}
		last := list[len(list)-1]
		if last.RemainingUSDC != "0.000000" || !last.Full {
			failures = append(failures, fmt.Sprintf("%s: last refund %s remaining %s full=%v", id, last.ID, last.RemainingUSDC, last.Full))
		}
	}
	if len(failures) > 0 {
		t.Fatalf("%d of %d full refunds that a sequential run always commits failed:\n%v", len(failures), settlements, failures)
	}
}
