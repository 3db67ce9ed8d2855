package returns_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vies"
)

// hookFX is the embedded ECB table; the first period-end lookup of the
// armed day runs hook first: a deterministic "commit while the return is
// being computed" (OSS asks for the period-end rate after it has read the
// records and before it reads the refunds).
type hookFX struct {
	inner fx.Source
	day   string
	armed atomic.Bool
	hook  func()
}

func (h *hookFX) Rate(ctx context.Context, quote string, at time.Time, p fx.Policy) (fx.Rate, error) {
	if p == fx.PeriodEndOrNext && at.UTC().Format(time.DateOnly) == h.day && h.armed.CompareAndSwap(true, false) {
		h.hook()
	}
	return h.inner.Rate(ctx, quote, at, p)
}

// TestReturnIsOneLedgerState: a sale of the quarter and its full
// refund committed while the quarter's return is computed. Any sequential
// execution gives a return with both (the DE line nets to 0 USDC) or
// neither (no DE line); and every entry of the quarter below the log size
// the return says it was computed at is summed. The return must never
// hold the refund without its sale (a negative line no ledger state has):
// a review found that, the records and the refunds read at two states.
func TestReturnIsOneLedgerState(t *testing.T) {
	now := testNow // 2026-04-13: Q2 is open
	table, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	src := &hookFX{inner: table, day: "2026-06-30"}
	cfg := fiscaltest.Config(t, now, ossSeller())
	cfg.VIES = vies.NewFake()
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	cfg.NoBackground = true
	cfg.FX = src
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	// One earlier sale of the quarter, so the return is not empty.
	settle(t, b, 1, sale{"5.00", "FR", "", "", "2026-04-10T10:00:00Z"})

	var saleIndex, refundIndex int64
	src.hook = func() {
		res, err := b.Settle(ctx, fiscaltest.Request(2, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Error(err)
			return
		}
		r, err := refunds.Create(ctx, b, res.Record.ID, refunds.Request{}, "")
		if err != nil {
			t.Error(err)
			return
		}
		saleIndex, refundIndex = res.Record.Ledger.Index, r.Refund.Ledger.Index
	}
	src.armed.Store(true)
	ret, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	summed := map[int64]bool{}
	for _, l := range ret.Lines {
		for _, i := range l.LedgerIndexes {
			summed[i] = true
		}
		if decimal.RequireFromString(l.AmountUSDC).IsNegative() {
			t.Errorf("line %s %s%%: %s USDC (invoice VAT %s EUR): a refund without its sale", l.MemberState, l.RatePercent, l.AmountUSDC, l.InvoiceVATEUR)
		}
	}
	t.Logf("sale at index %d, its refund at %d; the return (log size %d) sums %v", saleIndex, refundIndex, ret.Log.Size, summed)
	if summed[refundIndex] != summed[saleIndex] {
		t.Errorf("the return sums the refund (index %d): %v, its sale (index %d): %v", refundIndex, summed[refundIndex], saleIndex, summed[saleIndex])
	}
	if ret.Log.Size > saleIndex && !summed[saleIndex] {
		t.Errorf("the return says it was computed at log size %d but leaves out the quarter's sale at index %d", ret.Log.Size, saleIndex)
	}
}

// TestReturnTakesARevisionAsOfItsState: a record appended before the
// return's state and revised after it (resolved) is counted as it was in
// that state: revisionBefore finds the revision the log held below the
// state's size (pending: in no line), and nothing for a record created at
// or after it. The return itself, asked after the resolution, counts the
// resolved supply.
func TestReturnTakesARevisionAsOfItsState(t *testing.T) {
	cfg := fiscaltest.Config(t, testNow, ossSeller())
	cfg.VIES = vies.NewFake()
	cfg.Recheck = fiscal.RecheckPolicy{Interval: -1}
	cfg.NoBackground = true
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	settle(t, b, 1, sale{"5.00", "FR", "", "", "2026-04-10T10:00:00Z"})
	pending := settle(t, b, 2, sale{"7.00", "", "", "", "2026-04-10T11:00:00Z"})[0]
	if pending.ReviewStatus != fiscal.StatusPendingReview {
		t.Fatalf("a sale without the consumer's country: %s", pending.ReviewStatus)
	}
	state := e.Ledger().Size() // the state a return begun now is of
	if _, err := b.Resolve(ctx, pending.ID, fiscal.Resolution{Buyer: &fiscal.ResolutionBuyer{Country: "DE"}, ResolvedBy: "ops@example.com"}, ""); err != nil {
		t.Fatal(err)
	}
	_, current, err := b.Record(ctx, pending.ID)
	if err != nil {
		t.Fatal(err)
	}
	old, err := returns.RevisionBefore(b, current, state)
	if err != nil {
		t.Fatal(err)
	}
	var rec fiscal.Record
	if err := json.Unmarshal(old, &rec); err != nil || rec.ReviewStatus != fiscal.StatusPendingReview || rec.Ledger.Index >= state {
		t.Fatalf("the revision before size %d: %s at index %d (%v), want the pending one", state, rec.ReviewStatus, rec.Ledger.Index, err)
	}
	if young, err := returns.RevisionBefore(b, current, pending.Ledger.Index); young != nil || err != nil {
		t.Fatalf("a record created at the state's size has no revision before it: %s %v", young, err)
	}
	ret, _, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 2}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	de := false
	for _, l := range ret.Lines {
		de = de || l.MemberState == "DE"
	}
	if !de || ret.Excluded.Pending.Records != 0 {
		t.Errorf("the return after the resolution: lines %+v, pending %+v", ret.Lines, ret.Excluded.Pending)
	}
}
