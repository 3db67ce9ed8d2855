package returns_test

import (
	"bytes"
	"context"
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

// TestExportHasRefundRecordedLongAfterItsTransfer: Export selects the
// refunds recorded (createdAt) in its range. A refund whose transfer was
// mined on 20 March and that the merchant recorded on 15 May is dated by
// its block (RefundDate 2026-03-20) and recorded in May: the export of May
// must have its line, as the export of every month before does not. It
// looked for refunds dated from the day before the range only, so the
// refund was in the export of no range at all: the accountant's books
// lacked a correction the ledger holds.
func TestExportHasRefundRecordedLongAfterItsTransfer(t *testing.T) {
	ctx := context.Background()
	saleAt := time.Date(2026, 2, 10, 10, 0, 0, 0, time.UTC)
	refundAt := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	req := fiscaltest.Request(1, "119.00", "DE", saleAt.Format(time.RFC3339))
	refundTx := fiscaltest.TxHash(2)
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
	recorded := time.Date(2026, 5, 15, 12, 0, 0, 0, time.UTC)
	set(recorded)
	rf, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{AmountUSDC: "19.00",
		Transaction: &refunds.Transaction{Network: evmverify.NetworkBase, TxHash: refundTx}}, "refund")
	if err != nil {
		t.Fatal(err)
	}
	if rf.Refund.RefundDate != "2026-03-20" {
		t.Fatalf("refund dated %s, want the block's day", rf.Refund.RefundDate)
	}
	for _, c := range []struct {
		name     string
		from, to time.Time
		want     bool
	}{
		{"May", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 5, 31, 23, 59, 59, 0, time.UTC), true},
		{"the day it was recorded", recorded.Add(-time.Hour), recorded.Add(time.Hour), true},
		{"March, when it was mined", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC), false},
	} {
		var buf bytes.Buffer
		if err := returns.Export(ctx, b, returns.ExportQuery{Format: returns.FormatCSV, From: c.from, To: c.to}, &buf); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), rf.Refund.ID); got != c.want {
			t.Errorf("export of %s: refund %s recorded %s (dated %s) listed %t, want %t:\n%s", c.name, rf.Refund.ID, rf.Refund.CreatedAt, rf.Refund.RefundDate, got, c.want, buf.String())
		}
	}
}
