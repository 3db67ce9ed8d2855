package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
)

// TestEvaluateAccountSellerUsesRunningTotals: with a key and no seller,
// the preview is of a sale by the account's seller, whose Art. 59c
// position the engine keeps in the account's running totals (opening
// figures plus counted sales). An Irish seller already over EUR 10,000 in
// 2026 charges a German consumer German VAT (Art. 59c(1)(c), (2)
// Directive 2006/112/EC), as POST /settlements does for the same sale; a
// preview of Irish VAT would be wrong.
func TestEvaluateAccountSellerUsesRunningTotals(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.OverThreshold = false
	seller.OpeningTotals = []fiscal.OpeningTotal{{Year: 2026, EUR: "12000"}}
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
	sb := sandbox.New(e, sandbox.Options{})
	ev, err := sb.Evaluate(context.Background(), fiscaltest.AccountID(0), "", sandbox.EvaluateRequest{
		Buyer: parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: "11.90", Date: "2026-04-10",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := ev.Determination
	if d.Status != vat.StatusDetermined || d.Regime != vat.RegimeOSSB2C || d.TaxingCountry != "DE" {
		t.Errorf("preview for the account's seller over the threshold: %s %s %s, want OSS_B2C DE", d.Status, d.Regime, d.TaxingCountry)
	}
	if th := d.Threshold; th == nil || th.Rule != vat.ThresholdCurrentYear {
		t.Errorf("threshold section %+v, want current_year_exceeded", th)
	}
}
