package goblbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/invopop/gobl/bill"
	"github.com/invopop/gobl/dsig"
	"github.com/shopspring/decimal"
)

// expected is the sale's EUR figures computed here from the law alone, not
// from either library: gross = 1.00 USD / 1.1612 USD per EUR rounded to
// cents (half away from zero); B2C: the VAT contained in a VAT-inclusive
// price at the Irish standard rate of 23 % (s. 46(1)(a) VAT Consolidation
// Act 2010; Art. 58 Directive 2006/112/EC puts the supply in Ireland) is
// gross × 23 / 123, rounded to cents; B2B: none charged, the customer
// accounts for it (Art. 196).
func expected(d document) (gross, vat decimal.Decimal) {
	gross = decimal.RequireFromString(amountUSDC).DivRound(decimal.RequireFromString(usdPerEUR), 2)
	if d.b2b {
		return gross, decimal.Zero
	}
	return gross, gross.Mul(decimal.NewFromInt(23)).DivRound(decimal.NewFromInt(123), 2)
}

// TestSameSale checks that both libraries produce, for each document, an
// invoice whose gross and VAT are the ones the law gives (expected), and
// that GOBL's envelope carries a signature that verifies. With
// GOBL_UBL_OUT set it writes both UBL documents there, for the validator
// (testdata/conformance/validate-ubl).
func TestSameSale(t *testing.T) {
	key := dsig.NewES256Key()
	out := os.Getenv("GOBL_UBL_OUT")
	for _, d := range documents {
		t.Run(d.name, func(t *testing.T) {
			wantGross, wantVAT := expected(d)
			if !d.b2b && !wantVAT.IsPositive() {
				t.Fatalf("expected VAT %s", wantVAT)
			}

			env, xml, err := goblInvoice(d, 1, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Verify(key.Public()); err != nil {
				t.Fatalf("GOBL signature: %v", err)
			}
			inv := env.Extract().(*bill.Invoice)
			gTotal := decimal.RequireFromString(inv.Totals.TotalWithTax.String())
			gVAT := decimal.RequireFromString(inv.Totals.Tax.String())
			if !gTotal.Equal(wantGross) || !gVAT.Equal(wantVAT) {
				t.Errorf("GOBL: total %s VAT %s, want %s and %s", gTotal, gVAT, wantGross, wantVAT)
			}

			_, books := engine(t, t.TempDir())
			res, err := books.Settle(context.Background(), d.request(1), "")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Record
			if r.Invoice == nil {
				t.Fatalf("fiscal402: no invoice: %s %v", r.ReviewStatus, r.ReviewReasons)
			}
			fGross := decimal.RequireFromString(r.FX.GrossEUR)
			fVAT := decimal.RequireFromString(r.FX.VATEUR)
			if !fGross.Equal(wantGross) || !fVAT.Equal(wantVAT) {
				t.Errorf("fiscal402: gross %s VAT %s, want %s and %s", fGross, fVAT, wantGross, wantVAT)
			}
			if !fVAT.Equal(gVAT) {
				t.Errorf("VAT differs: GOBL %s, fiscal402 %s", gVAT, fVAT)
			}
			ours, _, err := books.Invoice(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			rcpt, err := books.Receipt(context.Background(), r.ID)
			if err != nil {
				t.Fatalf("fiscal402 receipt: %v", err)
			}
			envJSON, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("gross %s EUR, VAT %s EUR; GOBL: envelope %d bytes (%d signature), UBL %d bytes; fiscal402: record %d bytes, receipt %d bytes, UBL %d bytes (%s)",
				wantGross, wantVAT, len(envJSON), len(env.Signatures), len(xml), len(res.JSON), len(rcpt), len(ours), r.Invoice.Profile)
			if out != "" {
				for name, b := range map[string][]byte{"gobl-" + d.name + ".xml": xml, "fiscal402-" + d.name + ".xml": ours} {
					if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}
