package refunds_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestPartialRefundsLeaveARemainderTheLastNoteCanCredit: a Polish sale of
// 26.71 USDC (23 %) whose invoice states 22.81 EUR, net 18.55 (its gross
// less its VAT, both rounded once) and VAT 4.26, refunded in two small
// parts and then the rest. The credit notes together must credit exactly
// what the invoice charged once the sale is refunded in full (Art. 90 and
// 219 Directive 2006/112/EC; README "Refunds and credit notes"). A review
// found the second note credit VAT 0.03 on a net of 0.11 (the running
// difference of the exact figures), which left the invoice a remainder,
// net 18.31 and VAT 4.20, whose VAT is more than 0.01 from its net × rate
// (4.2113): the last note, which must be consistent (BR-CO-17, the
// engine's stricter form), credited net 18.30, and a cent of the invoice's
// taxable amount and gross stayed uncredited for ever, with nothing left
// to refund. Each partial note now also leaves a remainder the last one
// can credit.
func TestPartialRefundsLeaveARemainderTheLastNoteCanCredit(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	orig := settleOK(t, b, request(2061, "26.71", "PL", "2026-04-10T14:30:00Z"))
	if orig.ReviewStatus != fiscal.StatusProcessed || orig.Invoice == nil {
		t.Fatalf("sale %s, invoice %+v", orig.ReviewStatus, orig.Invoice)
	}
	charged := map[string]decimal.Decimal{"gross": dec(orig.FX.GrossEUR), "net": dec(orig.FX.NetEUR), "vat": dec(orig.FX.VATEUR)}
	credited := map[string]decimal.Decimal{}
	rate := orig.Classification.RatePercent.Decimal().Shift(-2)
	for _, amount := range []string{"0.185", "0.167", ""} {
		res, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: amount}, "")
		if err != nil {
			t.Fatalf("refund %q: %v", amount, err)
		}
		f := res.Refund.FX
		net, vat := dec(f.NetEUR).Neg(), dec(f.VATEUR).Neg()
		if vat.Sub(net.Mul(rate)).Abs().GreaterThan(decimal.New(1, -2)) {
			t.Errorf("refund %q: credit note VAT %s on net %s at %s", amount, vat, net, rate)
		}
		for k, v := range map[string]string{"gross": f.GrossEUR, "net": f.NetEUR, "vat": f.VATEUR} {
			credited[k] = credited[k].Sub(dec(v))
		}
		if amount == "" && !res.Refund.Full {
			t.Fatalf("the rest left %s USDC", res.Refund.RemainingUSDC)
		}
	}
	for k := range charged {
		if !credited[k].Equal(charged[k]) {
			t.Errorf("refunded in full, the credit notes credited %s EUR %s; the invoice charged %s", credited[k], k, charged[k])
		}
	}
}
