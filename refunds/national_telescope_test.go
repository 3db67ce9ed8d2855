package refunds_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/refunds"
)

// TestNationalFiguresTelescopeWhenTheLastNoteDrifts: a Czech seller's
// sale to a Czech consumer of 119.00 USDC, whose invoice states its VAT in
// CZK (Art. 230 Directive 2006/112/EC,
// https://eur-lex.europa.eu/eli/dir/2006/112/oj), refunded in full in two
// steps: 19.990001 USDC, then the rest. The credit notes' national net and
// VAT must add up to what the invoice stated (Art. 90: the taxable amount
// is reduced by what is refunded, never more). A conformance sweep found
// the last note's euro net cents, a running difference, 0.011 from its
// exact share: it fell back to converting its euro cents, and the notes
// credited 428.86 CZK of the 428.69 CZK the invoice charged (its record
// stating VATExact -356.680155 but VAT -356.85).
func TestNationalFiguresTelescopeWhenTheLastNoteDrifts(t *testing.T) {
	e := lawEngine(t)
	ctx := context.Background()
	b := lawBooks(t, e, "cz-full")
	sale := settleOK(t, b, request(3401, "119.00", "CZ", "2026-04-10T14:30:00Z"))
	nat := sale.FX.National
	if nat == nil || sale.Invoice == nil {
		t.Fatalf("sale %s has no national VAT (%s)", sale.ID, sale.ReviewStatus)
	}
	var vatSum, netSum decimal.Decimal
	for _, amt := range []string{"19.990001", ""} {
		res, err := refunds.Create(ctx, b, sale.ID, refunds.Request{AmountUSDC: amt}, "")
		if err != nil {
			t.Fatal(err)
		}
		rn := res.Refund.FX.National
		vatSum, netSum = vatSum.Sub(dec(rn.VAT)), netSum.Sub(dec(rn.Net))
		r := rn.Rate.Value
		cent := decimal.New(1, -2)
		if dec(rn.VAT).Sub(dec(res.Refund.FX.VATEURExact).Mul(r)).Abs().GreaterThan(cent) ||
			dec(rn.Net).Sub(dec(res.Refund.FX.NetEURExact).Mul(r)).Abs().GreaterThan(cent) {
			t.Errorf("refund %d: national net %s and VAT %s %s are not within 0.01 of its exact share converted (%s, %s)",
				res.Refund.Sequence, rn.Net, rn.VAT, nat.Currency, dec(res.Refund.FX.NetEURExact).Mul(r), dec(res.Refund.FX.VATEURExact).Mul(r))
		}
		if _, _, err := refunds.CreditNote(ctx, b, sale.ID, res.Refund.ID); err != nil {
			t.Fatal(err)
		}
	}
	if !vatSum.Equal(dec(nat.VAT)) || !netSum.Equal(dec(nat.Net)) {
		t.Errorf("the credit notes credited %s VAT and %s net in %s; the invoice stated %s and %s",
			vatSum, netSum, nat.Currency, nat.VAT, nat.Net)
	}
}

// TestNationalFiguresTelescopeOverRandomRefunds: sales by sellers whose
// invoices state their VAT in a national currency (Art. 230 Directive
// 2006/112/EC: CZK, HUF, PLN, RON, SEK, DKK) to consumers at home, in
// Germany and in the Azores, each refunded in 2 to 4 random partial
// refunds and then the rest. Once refunded in full, the credit notes have
// credited exactly the net and VAT the invoice stated in the national
// currency and in euro (Art. 90: the taxable amount is reduced by what is
// refunded); each note's national figures lie within 0.01 of its own
// exact share converted, its BT-111 is its record's national VAT, and
// every credit note whose euro cents lie more than 0.01 from its exact
// share (stated in the national currency from its exact share since the
// fix) passes validate-ubl. The sequences are seeded: the run is the same
// every time.
func TestNationalFiguresTelescopeOverRandomRefunds(t *testing.T) {
	e := lawEngine(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(61, 402))
	dir := t.TempDir()
	var drifted []string
	cent := decimal.New(1, -2)
	n := 3500
	for _, seller := range []string{"cz-full", "hu-full", "pl-full", "ro-full", "se-full", "dk-full"} {
		b := lawBooks(t, e, seller)
		home := strings.ToUpper(seller[:2])
		for _, buyer := range []struct{ country, postalCode string }{{home, ""}, {"DE", ""}, {"PT", "9500-001"}, {home, ""}, {"DE", ""}, {"PT", "9500-001"}} {
			n++
			total := decimal.New(1_000_000+rng.Int64N(500_000_000), -6) // 1 to 501 USDC
			req := request(n, total.String(), buyer.country, "2026-04-10T14:30:00Z")
			req.ConsumerPostalCode = buyer.postalCode
			sale := settleOK(t, b, req)
			nat := sale.FX.National
			if nat == nil || sale.Invoice == nil {
				t.Fatalf("%s → %s: sale %s has no national VAT (%s %v)", seller, buyer.country, sale.ID, sale.ReviewStatus, sale.ReviewReasons)
			}
			what := fmt.Sprintf("%s → %s, %s USDC", seller, strings.TrimSpace(buyer.country+" "+buyer.postalCode), total)
			var natVAT, natNet, gross, net, vat decimal.Decimal
			remaining := total
			parts := 2 + rng.IntN(3)
			for i := 0; i <= parts; i++ {
				amount := ""
				if i < parts {
					// at most half of what remains, at least one atomic unit
					a := decimal.New(1+rng.Int64N(remaining.Shift(6).IntPart()/2), -6)
					remaining = remaining.Sub(a)
					amount = a.String()
				}
				res, err := refunds.Create(ctx, b, sale.ID, refunds.Request{AmountUSDC: amount}, "")
				if err != nil {
					t.Fatalf("%s: refund %d of %q: %v", what, i+1, amount, err)
				}
				ref := res.Refund
				if ref.Full != (i == parts) {
					t.Fatalf("%s: refund %d full=%v", what, i+1, ref.Full)
				}
				rn := ref.FX.National
				natVAT, natNet = natVAT.Sub(dec(rn.VAT)), natNet.Sub(dec(rn.Net))
				gross, net, vat = gross.Sub(dec(ref.FX.GrossEUR)), net.Sub(dec(ref.FX.NetEUR)), vat.Sub(dec(ref.FX.VATEUR))
				if dec(rn.VAT).Sub(dec(rn.VATExact)).Abs().GreaterThan(cent) || dec(rn.Net).Sub(dec(rn.NetExact)).Abs().GreaterThan(cent) {
					t.Errorf("%s: refund %d: national net %s and VAT %s %s are not within 0.01 of its exact share converted, %s and %s",
						what, ref.Sequence, rn.Net, rn.VAT, nat.Currency, rn.NetExact, rn.VATExact)
				}
				cn, _, err := refunds.CreditNote(ctx, b, sale.ID, ref.ID)
				if err != nil {
					t.Fatal(err)
				}
				if m := bt111.FindSubmatch(cn); m == nil || string(m[1]) != nat.Currency || !dec(string(m[2])).Equal(dec(rn.VAT).Neg()) {
					t.Errorf("%s: refund %d: credit note BT-111 %q, the record's national VAT %s %s", what, ref.Sequence, m, rn.VAT, nat.Currency)
				}
				if dec(ref.FX.NetEUR).Sub(dec(ref.FX.NetEURExact)).Abs().GreaterThan(cent) ||
					dec(ref.FX.VATEUR).Sub(dec(ref.FX.VATEURExact)).Abs().GreaterThan(cent) {
					f := filepath.Join(dir, ref.ID+".xml")
					if err := os.WriteFile(f, cn, 0o644); err != nil {
						t.Fatal(err)
					}
					drifted = append(drifted, f)
				}
			}
			if !natVAT.Equal(dec(nat.VAT)) || !natNet.Equal(dec(nat.Net)) {
				t.Errorf("%s: the credit notes credited %s VAT and %s net in %s; the invoice stated %s and %s",
					what, natVAT, natNet, nat.Currency, nat.VAT, nat.Net)
			}
			if !gross.Equal(dec(sale.FX.GrossEUR)) || !net.Equal(dec(sale.FX.NetEUR)) || !vat.Equal(dec(sale.FX.VATEUR)) {
				t.Errorf("%s: the credit notes credited %s gross, %s net, %s VAT in EUR; the invoice charged %s, %s, %s",
					what, gross, net, vat, sale.FX.GrossEUR, sale.FX.NetEUR, sale.FX.VATEUR)
			}
		}
	}
	if len(drifted) == 0 {
		t.Fatal("no credit note's euro cents lay more than 0.01 from its exact share: the sequences show nothing")
	}
	t.Logf("%d credit notes with euro cents more than 0.01 from their exact share", len(drifted))
	validateUBL(t, drifted, false)
}
