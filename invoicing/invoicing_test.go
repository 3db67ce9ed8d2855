package invoicing_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
)

// TestIssueAMonth: two consumers' payments of March and one resolved from
// review become two summary invoices, numbered in order, issued together
// once March has ended; issuing again returns them; Covering tells each
// record's state, and a sale in a none_b2c account needs no invoice.
func TestIssueAMonth(t *testing.T) {
	var now atomic.Pointer[time.Time]
	set := func(at time.Time) { now.Store(&at) }
	set(time.Date(2026, 3, 31, 20, 0, 0, 0, time.UTC))
	summary, none := fiscaltest.IrishSeller, fiscaltest.IrishSeller
	summary.Invoicing, none.Invoicing = fiscal.InvoicingSummaryMonthly, fiscal.InvoicingNoneB2C
	cfg := fiscaltest.Config(t, *now.Load(), summary, none)
	cfg.Clock = func() time.Time { return *now.Load() }
	e := fiscaltest.Engine(t, cfg)
	b, other := fiscaltest.Books(t, e, 0), fiscaltest.Books(t, e, 1)
	ctx := context.Background()

	wallets := []string{"0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}
	var ids []string
	for i := 0; i < 5; i++ {
		req := fiscaltest.Request(i, "0.05", "DE", "2026-03-1"+string(rune('0'+i))+"T09:00:00Z")
		req.PayerWallet = wallets[i%2]
		res, err := b.Settle(ctx, req, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Record.ID)
	}
	// A payment without the buyer's country waits for review, then is
	// resolved: its revision joins the first wallet's summary.
	pendingReq := fiscaltest.Request(10, "0.05", "", "2026-03-20T09:00:00Z")
	pending, err := b.Settle(ctx, pendingReq, "")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := invoicing.Covering(ctx, b, pending.Record.ID); err != nil || c.Invoice != invoicing.CoveredUnknown {
		t.Fatalf("pending record covered by %+v, %v", c, err)
	}
	if _, err := b.Resolve(ctx, pending.Record.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops@example.com"}, ""); err != nil {
		t.Fatal(err)
	}
	if c, err := invoicing.Covering(ctx, b, ids[0]); err != nil || c.Invoice != invoicing.CoveredLater || c.Period != "2026-03" {
		t.Fatalf("before the summary: %+v, %v", c, err)
	}

	if _, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"}); fiscaltest.Code(err) != fiscal.CodePeriodOpen {
		t.Fatalf("open month: %v", err)
	}
	set(time.Date(2026, 4, 2, 8, 0, 0, 0, time.UTC))
	got, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Summary.Invoice.ID != "F402-2026-000001" || got[1].Summary.Invoice.ID != "F402-2026-000002" ||
		got[0].Summary.Supplied+got[1].Summary.Supplied != 6 {
		t.Fatalf("issued %d summaries: %+v", len(got), got)
	}
	withPending := got[0].Summary
	if strings.ToLower(wallets[1]) == withPending.Buyer {
		withPending = got[1].Summary
	}
	if withPending.Supplied != 4 {
		t.Errorf("the first wallet's summary covers %d supplies, want 3 + the resolved one", withPending.Supplied)
	}
	again, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil || len(again) != 2 || again[0].Outcome != fiscal.Existing || string(again[0].JSON) != string(got[0].JSON) {
		t.Fatalf("again: %v, %+v", err, again)
	}
	for _, id := range append(ids, pending.Record.ID) {
		c, err := invoicing.Covering(ctx, b, id)
		if err != nil || c.Invoice != invoicing.CoveredBySummary || !strings.HasPrefix(c.InvoiceID, "F402-2026-00000") || c.SummaryID == "" {
			t.Errorf("Covering(%s) = %+v, %v", id, c, err)
		}
	}
	if _, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-02"}); err != nil {
		t.Fatalf("a month without summaries: %v", err)
	}

	// The none_b2c account: a consumer under the OSS gets no invoice.
	sale, err := other.Settle(ctx, fiscaltest.Request(20, "0.05", "FR", "2026-04-01T09:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := invoicing.Covering(ctx, other, sale.Record.ID); err != nil || c.Invoice != invoicing.CoveredNone || !strings.Contains(c.Basis, "s. 66(1)(a)") {
		t.Fatalf("none_b2c: %+v, %v", c, err)
	}
}
