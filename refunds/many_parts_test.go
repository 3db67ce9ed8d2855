package refunds_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestManyPartialRefundsNeverCreditMoreThanTheInvoice: a settlement with
// its own invoice refunded in many equal parts, then the rest. Each
// credit note reduces the taxable amount and the VAT the invoice charged
// (Art. 90 Directive 2006/112/EC) and is a document amending it (Art.
// 219): together they may never credit more net, VAT or gross than the
// invoice charged, and once the settlement is refunded in full they have
// credited exactly that. A review found each partial credit note rounding
// its own share: refunds of 0.29 USDC (0.2476… EUR, credited as 0.25)
// credited more than the invoice charged well before the last, and the
// last refund, left with a negative remainder, was refused
// (CREDIT_NOTE_REFUSED): the buyer's remaining 0.01 USDC could not be
// refunded at all.
func TestManyPartialRefundsNeverCreditMoreThanTheInvoice(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	for i, step := range []string{"0.29", "0.50", "0.37", "1.13", "0.01"} {
		orig := settleOK(t, b, request(1200+i, "11.90", "DE", "2026-04-10T14:30:00Z"))
		if orig.Invoice == nil || orig.ReviewStatus != fiscal.StatusProcessed {
			t.Fatalf("sale %s: %s, invoice %+v", orig.ID, orig.ReviewStatus, orig.Invoice)
		}
		charged := map[string]decimal.Decimal{"gross": dec(orig.FX.GrossEUR), "net": dec(orig.FX.NetEUR), "vat": dec(orig.FX.VATEUR)}
		credited := map[string]decimal.Decimal{}
		remaining := dec(orig.Settlement.AmountUSDC)
		for n := 1; remaining.IsPositive(); n++ {
			req := refunds.Request{AmountUSDC: step}
			if dec(step).GreaterThan(remaining) {
				req.AmountUSDC = "" // the rest
			}
			res, err := refunds.Create(ctx, b, orig.ID, req, "")
			if err != nil {
				t.Fatalf("step %s: refund %d (%q of %s USDC remaining): %v", step, n, req.AmountUSDC, remaining, err)
			}
			remaining = dec(res.Refund.RemainingUSDC)
			fxr := res.Refund.FX
			for k, v := range map[string]string{"gross": fxr.GrossEUR, "net": fxr.NetEUR, "vat": fxr.VATEUR} {
				credited[k] = credited[k].Sub(dec(v))
				if dec(v).IsPositive() {
					t.Errorf("step %s: refund %d credits a negative %s %s", step, n, k, v)
				}
				if credited[k].GreaterThan(charged[k]) {
					t.Fatalf("step %s: after refund %d the credit notes credited %s EUR %s; the invoice charged %s", step, n, credited[k], k, charged[k])
				}
			}
		}
		for k := range charged {
			if !credited[k].Equal(charged[k]) {
				t.Errorf("step %s: refunded in full, the credit notes credited %s EUR %s; the invoice charged %s", step, credited[k], k, charged[k])
			}
		}
	}
}
