package sandbox_test

import (
	"context"
	"encoding/json"
	"github.com/fiscal402/fiscal402/fx"
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
	_, e := fiscaltest.TotalsEngine(t, "12000")
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

// TestSimulateAccountSellerUsesRunningTotals: a simulation with a key and
// no seller is a sale of the account's seller, and decides it as POST
// /settlements does for the same request: on the account's Art. 59c
// running totals. An Irish seller already over EUR 10,000 in 2026 (its
// opening figures) charges a German consumer German VAT (Art. 59c(1)(c),
// (2) Directive 2006/112/EC); a simulation of Irish VAT would be wrong.
func TestSimulateAccountSellerUsesRunningTotals(t *testing.T) {
	_, e := fiscaltest.TotalsEngine(t, "12000")
	sb := sandbox.New(e, sandbox.Options{})
	ctx := context.Background()
	req := fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z")
	sim, err := sb.Simulate(ctx, fiscaltest.AccountID(0), "", sandbox.SimulateRequest{SettlementRequest: req})
	if err != nil {
		t.Fatal(err)
	}
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	var r fiscal.Record
	if err := json.Unmarshal(sim.Record, &r); err != nil {
		t.Fatal(err)
	}
	got, want := r.Classification, res.Record.Classification
	if got.Status != want.Status || got.Regime != want.Regime || got.TaxingCountry != want.TaxingCountry {
		t.Errorf("simulation %s %s %s, production %s %s %s", got.Status, got.Regime, got.TaxingCountry, want.Status, want.Regime, want.TaxingCountry)
	}
	if want.TaxingCountry != "DE" {
		t.Errorf("production taxes in %s, want DE", want.TaxingCountry)
	}
	if th := got.Threshold; th == nil || th.Rule != vat.ThresholdCurrentYear {
		t.Errorf("simulation threshold section %+v, want current_year_exceeded", th)
	}
}

// TestEvaluateAccountSellerFXPolicy: a preview at an instant converts at
// "the rate a settlement then would get" (EvaluateRequest), which for the
// account's own seller is the rate of the account's Art. 91(2) reading
// (Seller.FXPolicy), as POST /settlements converts. An account on the
// "rate of the day" reading paid at 08:00 UTC gets that day's ECB rate,
// not the previous publication the engine's default would take.
func TestEvaluateAccountSellerFXPolicy(t *testing.T) {
	seller := fiscaltest.IrishSeller
	seller.FXPolicy = fx.ForDayOrPrevious
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), seller))
	sb := sandbox.New(e, sandbox.Options{})
	ctx := context.Background()
	at := "2026-04-10T08:00:00Z"
	ev, err := sb.Evaluate(ctx, fiscaltest.AccountID(0), "", sandbox.EvaluateRequest{
		Buyer: parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: "11.90", Date: at,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "11.90", "DE", at), "")
	if err != nil {
		t.Fatal(err)
	}
	got, want := ev.FX, res.Record.FX
	if got.USDPerEUR == nil || want.USDPerEUR == nil {
		t.Fatalf("rates: preview %v, settlement %v", got.USDPerEUR, want.USDPerEUR)
	}
	g, w := got.USDPerEUR, want.USDPerEUR
	if g.RateDate != w.RateDate || g.Policy != w.Policy || got.GrossEUR != want.GrossEUR {
		t.Errorf("preview converts at %s of %s (%s) to %s; the settlement at %s of %s (%s) to %s",
			g.Raw, g.RateDate, g.Policy, got.GrossEUR, w.Raw, w.RateDate, w.Policy, want.GrossEUR)
	}
}

// TestEvaluateDayIsTheSupplyDay: a preview for a UTC day ("date":
// "2024-01-01") is of a supply on that day, also where the taxing
// territory's clock is behind UTC: the Azores (UTC-1 in winter) take the
// rate of 1 January 2024, the first day the rate table covers, not of
// 31 December 2023, which it does not.
func TestEvaluateDayIsTheSupplyDay(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)))
	sb := sandbox.New(e, sandbox.Options{})
	ev, err := sb.Evaluate(context.Background(), "", "", sandbox.EvaluateRequest{
		Seller: &parties.Seller{Country: "US"}, Buyer: parties.Buyer{Country: "PT", PostalCode: "9500-150"},
		Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: "11.90", Date: "2024-01-01",
	})
	if err != nil {
		t.Fatal(err)
	}
	d := ev.Determination
	if d.Status != vat.StatusDetermined || d.SupplyDate != ev.Date {
		t.Errorf("preview of %s: %s, supply date %s, reasons %v", ev.Date, d.Status, d.SupplyDate, d.Reasons)
	}
}

// TestEvaluateTodayIsTheSupplyDayBeforeItBeganInTheAzores: a preview of
// today ("date" the UTC day) asked at 00:30 UTC in winter, when the
// Azores (UTC-1) still have yesterday, is of a supply on the day asked
// there too: the preview took the instant now, 23:30 of the day before in
// the Azores, and so the rate and supply date of a day not asked for (on
// 1 January, the year before's).
func TestEvaluateTodayIsTheSupplyDayBeforeItBeganInTheAzores(t *testing.T) {
	now := time.Date(2026, 1, 15, 0, 30, 0, 0, time.UTC)
	e := fiscaltest.Engine(t, fiscaltest.Config(t, now))
	sb := sandbox.New(e, sandbox.Options{})
	ev, err := sb.Evaluate(context.Background(), "", "", sandbox.EvaluateRequest{
		Seller: &parties.Seller{Country: "US"}, Buyer: parties.Buyer{Country: "PT", PostalCode: "9500-150"},
		Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: "11.90", Date: now.Format(time.DateOnly),
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := ev.Determination; ev.Date != now.Format(time.DateOnly) || d.SupplyDate != ev.Date || d.TimeZone != "Atlantic/Azores" {
		t.Errorf("preview of %s asked at %s: supply date %s (%s), reasons %v", ev.Date, now.Format(time.RFC3339), d.SupplyDate, d.TimeZone, d.Reasons)
	}
}
