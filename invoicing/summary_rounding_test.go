package invoicing_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/invoicing"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/vat"
)

// ublAmounts is what the rounding rules of EN 16931 relate in a UBL
// invoice: the line net amounts (BT-131), the VAT breakdown (BG-23) and
// the document totals (BG-22).
type ublAmounts struct {
	Lines []struct {
		Net string `xml:"LineExtensionAmount"`
	} `xml:"InvoiceLine"`
	TaxTotal []struct {
		Tax       string `xml:"TaxAmount"`
		Subtotals []struct {
			Taxable string `xml:"TaxableAmount"`
			Tax     string `xml:"TaxAmount"`
			Percent string `xml:"TaxCategory>Percent"`
		} `xml:"TaxSubtotal"`
	} `xml:"TaxTotal"`
	Totals struct {
		LineExtension string `xml:"LineExtensionAmount"`
		TaxExclusive  string `xml:"TaxExclusiveAmount"`
		TaxInclusive  string `xml:"TaxInclusiveAmount"`
		Prepaid       string `xml:"PrepaidAmount"`
		Payable       string `xml:"PayableAmount"`
	} `xml:"LegalMonetaryTotal"`
}

func dec(t *testing.T, what, s string) decimal.Decimal {
	t.Helper()
	if s == "" {
		return decimal.Zero
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("%s: %q is not a decimal", what, s)
	}
	return d
}

// TestSummaryInvoicesHoldTheCalculationRulesExactly: the summary invoices
// of many buyers' months of random amounts (sub-cent to a few euros, two
// VAT rates, four member states) hold the calculation rules of EN 16931
// to the cent, BR-CO-17 among them: each VAT category tax amount (BT-117)
// is its taxable amount (BT-116, the supplies' exact net summed and
// rounded once) times the rate, rounded to two decimals, not a figure a
// cent away from it; and the summary's stored document states the
// invoice's own figures. A review found the VAT of some summaries a cent
// off BT-116 × rate (the exact VAT rounded on its own), so that the
// invoice's total was a cent off its lines and rate.
func TestSummaryInvoicesHoldTheCalculationRulesExactly(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	rng := rand.New(rand.NewSource(7))
	buyers, n := 120, 0
	if testing.Short() {
		buyers = 40
	}
	for k := 0; k < buyers; k++ {
		wallet := fmt.Sprintf("0x%040x", 0x1000+k)
		for i, m := 0, 1+rng.Intn(6); i < m; i++ {
			amount := decimal.New(int64(1+rng.Intn(3000000)), -6).String() // 0.000001 … 3 USDC
			req := fiscaltest.Request(n, amount, []string{"DE", "FR", "AT", "NL"}[k%4], fmt.Sprintf("2026-03-%02dT10:00:00Z", 1+i))
			req.PayerWallet = wallet
			if rng.Intn(3) == 0 {
				req.SupplyKind = vat.KindEbook // a reduced rate beside the standard one
			}
			n++
			res, err := b.Settle(ctx, req, "")
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Record; r.ReviewStatus != fiscal.StatusProcessed || r.Invoicing == nil || r.Invoicing.Invoice != "summary" {
				t.Fatalf("supply %d: %s %v, invoicing %+v; want it posted to its summary", n, r.ReviewStatus, r.ReviewReasons, r.Invoicing)
			}
		}
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil || len(issued) != buyers {
		t.Fatalf("Issue: %d summaries, %v; want %d", len(issued), err, buyers)
	}
	misses := 0
	for _, res := range issued {
		s := res.Summary
		_, raw, err := invoicing.Summary(ctx, b, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var u ublAmounts
		if err := xml.Unmarshal(raw, &u); err != nil || len(u.TaxTotal) != 1 {
			t.Fatalf("%s: %v, %d TaxTotals", s.ID, err, len(u.TaxTotal))
		}
		var lines, taxable, vatSum decimal.Decimal
		for _, l := range u.Lines {
			lines = lines.Add(dec(t, "BT-131", l.Net))
		}
		if len(u.TaxTotal[0].Subtotals) != len(s.Totals) {
			t.Fatalf("%s: %d subtotals in the UBL, %d in the document", s.ID, len(u.TaxTotal[0].Subtotals), len(s.Totals))
		}
		for i, st := range u.TaxTotal[0].Subtotals {
			base, tax, pct := dec(t, "BT-116", st.Taxable), dec(t, "BT-117", st.Tax), dec(t, "BT-119", st.Percent)
			taxable, vatSum = taxable.Add(base), vatSum.Add(tax)
			// BR-CO-17, to the cent.
			if want := base.Mul(pct).Div(decimal.NewFromInt(100)).Round(2); !tax.Equal(want) {
				misses++
				t.Errorf("%s: BR-CO-17: VAT %s at %s %% on %s, want %s", s.ID, st.Tax, st.Percent, st.Taxable, want.StringFixed(2))
			}
			// The stored document says what the invoice says.
			if got := s.Totals[i]; got.NetEUR != st.Taxable || got.VATEUR != st.Tax {
				t.Errorf("%s: document total %d is %s + %s VAT, the invoice %s + %s", s.ID, i, got.NetEUR, got.VATEUR, st.Taxable, st.Tax)
			}
			// BT-116 is the supplies' exact net summed and rounded once.
			if want := dec(t, "netEurExact", s.Totals[i].NetEURExact).Round(2); !base.Equal(want) {
				t.Errorf("%s: BT-116 %s, the exact net %s rounds to %s", s.ID, st.Taxable, s.Totals[i].NetEURExact, want.StringFixed(2))
			}
		}
		tot := u.Totals
		ext, excl, incl, prepaid, payable := dec(t, "BT-106", tot.LineExtension), dec(t, "BT-109", tot.TaxExclusive), dec(t, "BT-112", tot.TaxInclusive),
			dec(t, "BT-113", tot.Prepaid), dec(t, "BT-115", tot.Payable)
		switch {
		case !ext.Equal(lines): // BR-CO-10
			t.Errorf("%s: BR-CO-10: BT-106 %s, lines %s", s.ID, tot.LineExtension, lines)
		case !excl.Equal(ext) || !taxable.Equal(ext): // BR-CO-13, BR-S-08
			t.Errorf("%s: BT-109 %s, BT-106 %s, Σ BT-116 %s", s.ID, tot.TaxExclusive, tot.LineExtension, taxable)
		case !dec(t, "BT-110", u.TaxTotal[0].Tax).Equal(vatSum): // BR-CO-14
			t.Errorf("%s: BR-CO-14: BT-110 %s, Σ BT-117 %s", s.ID, u.TaxTotal[0].Tax, vatSum)
		case !incl.Equal(excl.Add(vatSum)): // BR-CO-15
			t.Errorf("%s: BR-CO-15: BT-112 %s, BT-109 + BT-110 %s", s.ID, tot.TaxInclusive, excl.Add(vatSum))
		case !payable.Equal(incl.Sub(prepaid)) || !payable.IsZero(): // BR-CO-16, paid in full
			t.Errorf("%s: BR-CO-16: BT-115 %s, BT-112 %s − BT-113 %s", s.ID, tot.Payable, tot.TaxInclusive, tot.Prepaid)
		case s.NetEUR != tot.TaxExclusive || s.VATEUR != u.TaxTotal[0].Tax || s.GrossEUR != tot.TaxInclusive:
			t.Errorf("%s: document %s + %s = %s, invoice %s + %s = %s", s.ID, s.NetEUR, s.VATEUR, s.GrossEUR, tot.TaxExclusive, u.TaxTotal[0].Tax, tot.TaxInclusive)
		}
	}
	t.Logf("%d summaries of %d supplies; %d VAT subtotals off BT-116 × rate", len(issued), n, misses)
}

// TestRefundsNetASummaryWhoseVATIsItsTaxableAmountTimesRate: a summary's
// VAT is its taxable amount times the rate (BR-CO-17), which in some
// months is a cent off its supplies' exact VAT rounded on its own.
// Refunding every supply of such a summary must still credit, per rate,
// exactly the net and VAT the summary charged: the credit notes against
// it reduce what it stated (Art. 90, 219 Directive 2006/112/EC), not a
// figure it never stated.
func TestRefundsNetASummaryWhoseVATIsItsTaxableAmountTimesRate(t *testing.T) {
	c := newClock(time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC))
	ctx := context.Background()
	b := summaryEngine(t, fiscal.InvoicingSummaryMonthly, c)
	rng := rand.New(rand.NewSource(11))
	supplies := map[string][]string{} // wallet → record ids
	for k, n := 0, 0; k < 150; k++ {
		wallet := fmt.Sprintf("0x%040x", 0x2000+k)
		for i, m := 0, 1+rng.Intn(3); i < m; i++ {
			req := fiscaltest.Request(1000+n, decimal.New(int64(1+rng.Intn(3000000)), -6).String(), "DE", fmt.Sprintf("2026-03-%02dT10:00:00Z", 1+i))
			req.PayerWallet = wallet
			n++
			res, err := b.Settle(ctx, req, "")
			if err != nil {
				t.Fatal(err)
			}
			supplies[wallet] = append(supplies[wallet], res.Record.ID)
		}
	}
	c.set(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC))
	issued, err := invoicing.Issue(ctx, b, invoicing.SummaryRequest{Period: "2026-03"})
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, res := range issued {
		s := res.Summary
		tot := s.Totals[0]
		if len(s.Totals) != 1 || dec(t, "vatEurExact", tot.VATEURExact).Round(2).StringFixed(2) == tot.VATEUR {
			continue // its VAT is also its exact VAT rounded: not the case here
		}
		tried++
		var net, vatSum decimal.Decimal
		for _, id := range supplies[s.Buyer] {
			r, err := refunds.Create(ctx, b, id, refunds.Request{}, "")
			if err != nil {
				t.Fatalf("refund of %s: %v", id, err)
			}
			net, vatSum = net.Sub(dec(t, "netEur", r.Refund.FX.NetEUR)), vatSum.Sub(dec(t, "vatEur", r.Refund.FX.VATEUR))
		}
		if net.StringFixed(2) != tot.NetEUR || vatSum.StringFixed(2) != tot.VATEUR {
			t.Errorf("%s (exact VAT %s): every supply refunded, the credit notes credit net %s VAT %s; the summary charged net %s VAT %s",
				s.ID, tot.VATEURExact, net.StringFixed(2), vatSum.StringFixed(2), tot.NetEUR, tot.VATEUR)
		}
	}
	if tried == 0 {
		t.Fatal("no summary of these amounts has a VAT other than its exact VAT rounded; the test checks nothing")
	}
	t.Logf("%d summaries whose VAT differs from their exact VAT rounded, refunded in full", tried)
}
