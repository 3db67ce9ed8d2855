package refunds_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/refunds"
)

// bt111 is a credit note's VAT total in the tax currency (BT-111): the
// TaxTotal whose amount is in that currency.
var bt111 = regexp.MustCompile(`<cac:TaxTotal>\s*<cbc:TaxAmount currencyID="([A-Z]{3})">([0-9.]+)</cbc:TaxAmount>\s*</cac:TaxTotal>`)

// TestPartialRefundsNetToZeroInTheNationalCurrency: a supply whose
// invoice states its VAT in a national currency (Art. 230 Directive
// 2006/112/EC: SEK, DKK, HUF here), refunded in many parts. Its credit
// notes state their VAT in that currency too, at the invoice's rate; once
// the supply is refunded in full, they have credited exactly the VAT and
// taxable amount the invoice stated in it, as they have in euro. A review
// found each credit note converting its own euro cents: 397 refunds of
// 0.03 USDC credited 11.34 DKK of an invoice's 12.10 DKK VAT (0.0746 DKK
// per euro cent, rounded to 0.07 each time). Each credit note's BT-111 is
// the record's national VAT.
func TestPartialRefundsNetToZeroInTheNationalCurrency(t *testing.T) {
	e := lawEngine(t)
	ctx := context.Background()
	n := 3000
	for _, seller := range []string{"dk-full", "hu-full", "se-full"} {
		b := lawBooks(t, e, seller)
		for _, step := range []string{"0.03", "0.37"} {
			n++
			sale := settleOK(t, b, request(n, "11.90", "DE", "2026-04-10T14:30:00Z"))
			nat := sale.FX.National
			if nat == nil || sale.Invoice == nil {
				t.Fatalf("%s: sale %s has no national VAT (%s)", seller, sale.ID, sale.ReviewStatus)
			}
			var vatSum, netSum decimal.Decimal
			for {
				req := refunds.Request{AmountUSDC: step}
				res, err := refunds.Create(ctx, b, sale.ID, req, "")
				if err != nil {
					if res, err = refunds.Create(ctx, b, sale.ID, refunds.Request{}, ""); err != nil {
						t.Fatalf("%s step %s: the rest: %v", seller, step, err)
					}
				}
				rn := res.Refund.FX.National
				vatSum, netSum = vatSum.Sub(dec(rn.VAT)), netSum.Sub(dec(rn.Net))
				cn, _, err := refunds.CreditNote(ctx, b, sale.ID, res.Refund.ID)
				if err != nil {
					t.Fatal(err)
				}
				m := bt111.FindSubmatch(cn)
				if m == nil || string(m[1]) != nat.Currency || !dec(string(m[2])).Equal(dec(rn.VAT).Neg()) {
					t.Fatalf("%s step %s: refund %d: credit note BT-111 %q, the record's national VAT %s %s", seller, step, res.Refund.Sequence, m, rn.VAT, nat.Currency)
				}
				if res.Refund.Full {
					break
				}
			}
			if !vatSum.Equal(dec(nat.VAT)) || !netSum.Equal(dec(nat.Net)) {
				t.Errorf("%s, refunds of %s USDC: the credit notes credited %s VAT and %s net in %s; the invoice stated %s and %s",
					seller, step, vatSum, netSum, nat.Currency, nat.VAT, nat.Net)
			}
		}
	}
}
