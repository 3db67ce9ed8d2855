package returns_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/fiscal402/fiscal402/returns"
)

// TestThousandCallsOneOSSLine (issue 15): 1,000 payments of 0.04 USDC to a
// German consumer in Q1 2026 make one OSS line whose VAT equals, to the
// cent, the VAT this test computes itself on the summed amount: 40 USDC at
// the quarter's period-end ECB rate (Art. 369h(2) Directive 2006/112/EC),
// 19 % included in the price (Art. 73, 78: the VAT is in the
// consideration). Cent-rounded per payment, the same sales would carry
// EUR 0.00 or 0.01 each; the return adds exact amounts and rounds once.
func TestThousandCallsOneOSSLine(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 fsynced settlements")
	}
	b := newBooks(t, testNow)
	var sales []sale
	for range 1000 {
		sales = append(sales, sale{"0.04", "DE", "", "", "2026-03-10T12:00:00Z"})
	}
	recs := settle(t, b, 1, sales...)
	var invoiceCents big.Rat
	for _, r := range recs {
		v, ok := new(big.Rat).SetString(r.FX.VATEUR)
		if !ok {
			t.Fatalf("record %s vatEur %q", r.ID, r.FX.VATEUR)
		}
		invoiceCents.Add(&invoiceCents, v)
	}
	ret, _, err := returns.OSS(context.Background(), b, q1, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Lines) != 1 {
		t.Fatalf("%d lines, want one (DE 19 %%): %+v", len(ret.Lines), ret.Lines)
	}
	l := ret.Lines[0]
	if l.MemberState != "DE" || l.RatePercent != "19" || l.Records != 1000 || l.AmountUSDC != "40.000000" {
		t.Fatalf("line %+v", l)
	}
	// The test's own figure: gross EUR = 40 / rate; VAT = gross × 19/119.
	gross := new(big.Rat).Quo(rat(t, "40"), rat(t, ret.FX.Rate.Raw))
	vat := new(big.Rat).Mul(gross, big.NewRat(19, 119))
	if want := cents(vat); l.VATEUR != want {
		t.Fatalf("line VAT %s, the VAT of 40 USDC at %s is %s", l.VATEUR, ret.FX.Rate.Raw, want)
	}
	t.Logf("1,000 × 0.04 USDC to DE, Q1 2026: OSS line VAT EUR %s (taxable %s) at %s USD/EUR; test's own figure %s; "+
		"invoices' exact VAT rounded once %s; sum of the documents' cent VAT %s",
		l.VATEUR, l.TaxableAmountEUR, ret.FX.Rate.Raw, cents(vat), l.InvoiceVATEUR, invoiceCents.FloatString(2))
}
