package returns_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
)

// TestRefundRecordedAfterItsQuarterIsNamed: a refund whose transfer the
// chain proves is dated by its block (refunds.Refund.RefundDate), which may
// lie in a quarter that ended before the refund was recorded. Here a German
// sale of February is refunded by a transfer of 20 March, recorded on 15
// May, after the return of Q1 was due (30 April, Art. 369f Directive
// 2006/112/EC). The return of Q1, recomputed, has the refund in its DE line
// now, and the return of Q2 has it nowhere (its refunds are those dated in
// Q2): a return of Q1 submitted before 15 May did not declare it, and after
// submission "changes to the figures contained in a VAT return ... shall
// ... be made only by adjustments in a subsequent return" (Art. 61(1)
// Implementing Regulation (EU) No 282/2011). As for a sale recorded after
// its quarter, both returns must say so: Q1's that its figures changed
// after it ended and why, Q2's that the refund is an adjustment of Q1 to
// declare there. Neither said a word, so the refund was declared in no
// return filed on time.
func TestRefundRecordedAfterItsQuarterIsNamed(t *testing.T) {
	ctx := context.Background()
	saleAt := time.Date(2026, 2, 10, 10, 0, 0, 0, time.UTC)
	refundAt := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	req := fiscaltest.Request(1, "119.00", "DE", saleAt.Format(time.RFC3339))
	refundTx := fiscaltest.TxHash(2)

	// A fake Base node: the sale in block 10, dated saleAt; the refund
	// transfer (back from the receiver to the payer) in block 20, dated
	// refundAt (the blocks between are not read).
	node := fakechain.New(saleAt.Add(-10 * fakechain.BlockSeconds * time.Second))
	node.MineTransfer(req.TxHash, 10, req.PayerWallet, req.ReceiverWallet, 119_000_000)
	node.Edit(func(c *fakechain.Chain) { c.Genesis = refundAt.Add(-20 * fakechain.BlockSeconds * time.Second).Unix() })
	node.MineTransfer(refundTx, 20, req.ReceiverWallet, req.PayerWallet, 19_000_000)
	node.Advance(2)
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{node.Serve(t)}, Timeout: 5 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var clock atomic.Pointer[time.Time]
	set := func(at time.Time) { clock.Store(&at) }
	set(saleAt.Add(time.Minute))
	cfg := fiscaltest.Config(t, saleAt, ossSeller())
	cfg.Chain = v
	cfg.NoBackground = true
	cfg.Clock = func() time.Time { return *clock.Load() }
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)

	res, err := b.Settle(ctx, req, "sale")
	if err != nil || res.Record.ReviewStatus != fiscal.StatusProcessed {
		t.Fatalf("sale: %v", err)
	}
	set(time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC))
	rf, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "19.00",
		Transaction: &refunds.Transaction{Network: evmverify.NetworkBase, TxHash: refundTx}}, "refund")
	if err != nil {
		t.Fatal(err)
	}
	if rf.Refund.RefundDate != "2026-03-20" {
		t.Fatalf("refund dated %s, want the block's day 2026-03-20", rf.Refund.RefundDate)
	}
	idx := fmt.Sprint(rf.Refund.Ledger.Index)

	q1Ret, _, err := returns.OSS(ctx, b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(q1Ret.Lines) != 1 || q1Ret.Lines[0].AmountUSDC != "100.000000" {
		t.Fatalf("Q1 lines %+v, want DE 100 USDC (119 less the refund dated in Q1)", q1Ret.Lines)
	}
	if !reviewNames(q1Ret.Review, "2026-Q2", idx) {
		t.Errorf("the return of Q1 has the refund recorded in 2026-Q2 (ledger index %s) in its DE line, and its review does not say so: %q", idx, q1Ret.Review)
	}

	q2Ret, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reviewNames(q2Ret.Review, "2026-Q1", idx) {
		t.Errorf("the return of Q2, the quarter the refund of Q1 was recorded in (ledger index %s), does not name it for the adjustment of 2026-Q1: %q", idx, q2Ret.Review)
	}
}

// reviewNames reports whether one review line names the quarter and the
// ledger index.
func reviewNames(review []string, quarter, index string) bool {
	for _, s := range review {
		if strings.Contains(s, quarter) && strings.Contains(s, "refund") && (strings.Contains(s, "["+index+"]") || strings.Contains(s, "["+index+" ") || strings.Contains(s, " "+index+"]") || strings.Contains(s, " "+index+" ")) {
			return true
		}
	}
	return false
}
