package fiscal_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestNationalVATIsRoundedOnceFromTheExactVAT: where the invoicing state's
// currency is not the euro, the invoice states the VAT payable in it (Art.
// 230 Directive 2006/112/EC, "using the conversion mechanism provided for
// in Article 91"; EN 16931 BT-111): the supply's exact VAT converted at
// the rate and rounded once in the national currency, not its VAT rounded
// to the euro cent first and then converted and rounded again, which
// moves it by up to half a cent times the rate (a forint and more in HUF,
// two grosze in PLN). Over many amounts, the record's national VAT and
// net, and the invoice's BT-111 and its note, are the exact figures
// rounded once. A review found them computed from the rounded euro cents.
func TestNationalVATIsRoundedOnceFromTheExactVAT(t *testing.T) {
	e := lawEngine(t)
	rng := rand.New(rand.NewSource(3))
	n := 60
	if testing.Short() {
		n = 20
	}
	twice := 0
	for _, country := range []string{"HU", "PL", "CZ", "SE"} {
		b := lawBooks(t, e, strings.ToLower(country)+"-full")
		for i := 0; i < n; i++ {
			req := fiscaltest.LawRequest(1000*len(country)+i+int(country[0])*100, lawBuyer(country), false, true)
			req.AmountUSDC = decimal.New(int64(1+rng.Intn(50000000)), -6).String() // up to 50 USDC
			r := settleOK(t, b, req)
			doc, _ := invoiceOf(t, b, r, t.TempDir())
			nat := r.FX.National
			if nat == nil {
				t.Fatalf("%s: no national figures", country)
			}
			wantVAT := mustDec(nat.VATExact).Round(2).StringFixed(2)
			wantNet := mustDec(nat.NetExact).Round(2).StringFixed(2)
			if mustDec(r.FX.VATEUR).Mul(nat.Rate.Value).Round(2).StringFixed(2) != wantVAT {
				twice++
			}
			if nat.VAT != wantVAT || nat.Net != wantNet {
				t.Errorf("%s %s USDC: national net %s VAT %s %s; the exact %s and %s round once to %s and %s",
					country, req.AmountUSDC, nat.Net, nat.VAT, nat.Currency, nat.NetExact, nat.VATExact, wantNet, wantVAT)
				continue
			}
			bt111 := fmt.Sprintf(`<cbc:TaxAmount currencyID="%s">%s</cbc:TaxAmount>`, nat.Currency, wantVAT)
			note := fmt.Sprintf("taxable amount %s %s, VAT %s %s; total VAT %s %s.", wantNet, nat.Currency, wantVAT, nat.Currency, wantVAT, nat.Currency)
			if !strings.Contains(doc, bt111) || !strings.Contains(doc, note) {
				t.Errorf("%s %s USDC: the invoice lacks %s or %q", country, req.AmountUSDC, bt111, note)
			}
		}
	}
	if twice == 0 {
		t.Fatal("no amount's VAT rounded twice differs from it rounded once: the test checks nothing")
	}
	t.Logf("%d of %d supplies: the euro cents converted would round otherwise", twice, 4*n)
}
