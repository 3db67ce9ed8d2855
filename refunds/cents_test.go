package refunds_test

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestCreditNotesOfAFullRefundGiveBackWhatTheInvoiceCharged: a settlement
// refunded in two parts is cancelled by its credit notes to the cent: the
// VAT (BT-110) and net (BT-109) they credit add up to exactly what the
// invoice charged, never a cent more or less (Art. 90 Directive
// 2006/112/EC: the taxable amount is reduced by the refund, and the VAT
// with it). The exact figures cancelling (TestRefundPartialThenFull) is
// not enough: each credit note rounds its own share, and the last one
// rounding the exact remainder may credit a cent the invoice never
// charged. The partial amount is chosen so that the rounding shows.
func TestCreditNotesOfAFullRefundGiveBackWhatTheInvoiceCharged(t *testing.T) {
	e := testEngine(t, refundNow, irishSeller)
	b := fiscaltest.Books(t, e, 0)
	ctx := context.Background()
	orig := settleOK(t, b, request(1, "11.90", "DE", "2026-04-10T14:30:00Z"))
	vatExact := dec(orig.FX.VATEURExact)
	// A partial refund whose VAT and the remainder's round apart.
	var part decimal.Decimal
	for c := int64(1); c < 1190; c++ {
		p := decimal.New(c, -2)
		_, v := fx.SplitGross(fx.ConvertUSDCExact(p, *orig.FX.USDPerEUR).GrossEURExact, dec("19"))
		if !fx.RoundEUR(v).Add(fx.RoundEUR(vatExact.Sub(v))).Equal(fx.RoundEUR(vatExact)) {
			part = p
			break
		}
	}
	if part.IsZero() {
		t.Fatal("no partial amount rounds apart")
	}
	first, err := refunds.Create(ctx, b, orig.ID, refunds.Request{AmountUSDC: part.String()}, "")
	if err != nil {
		t.Fatal(err)
	}
	rest, err := refunds.Create(ctx, b, orig.ID, refunds.Request{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name        string
		inv, c1, c2 string
	}{
		{"VAT", orig.FX.VATEUR, first.Refund.FX.VATEUR, rest.Refund.FX.VATEUR},
		{"net", orig.FX.NetEUR, first.Refund.FX.NetEUR, rest.Refund.FX.NetEUR},
		{"gross", orig.FX.GrossEUR, first.Refund.FX.GrossEUR, rest.Refund.FX.GrossEUR},
	} {
		if sum := dec(f.inv).Add(dec(f.c1)).Add(dec(f.c2)); !sum.IsZero() {
			t.Errorf("%s: invoice %s, credit notes %s and %s (refund of %s USDC, then the rest): %s left", f.name, f.inv, f.c1, f.c2, part, sum)
		}
	}
}
