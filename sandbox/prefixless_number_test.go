package sandbox_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// TestPrefixlessNumberPreviewAndSimulation: the preview (POST
// /v1/compliance/evaluate) and the simulation (POST /sandbox/v1/simulate)
// of a sale to a German business that gives its VAT number without the
// prefix DE ask the registry about DE136695976 and decide the reverse
// charge on its answer, stating that number, as POST /settlements does.
func TestPrefixlessNumberPreviewAndSimulation(t *testing.T) {
	const number, given = "DE136695976", "136695976"
	now := time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	fake := vies.NewFake()
	fake.Set(number, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "DE", Number: "136695976", RequestIdentifier: "WAPI-sb", RequestDate: now,
		Name: "BEISPIEL GMBH", Address: "MUSTERSTRASSE 1\n10115 BERLIN"})
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	cfg.VIES = fake
	e := fiscaltest.Engine(t, cfg)
	sb := sandbox.New(e, sandbox.Options{})
	ctx := context.Background()
	ev, err := sb.Evaluate(ctx, fiscaltest.AccountID(0), sandbox.AccountAgent(fiscaltest.AccountID(0)), sandbox.EvaluateRequest{
		Buyer: parties.Buyer{Country: "DE", BusinessStatus: "B2B", VATNumber: given}, Supply: parties.Supply{Kind: "saas"},
		AmountUSDC: "12.00", Date: "2026-04-10",
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := ev.Determination; d.Regime != vat.RegimeReverseChargeB2B || ev.Buyer.VATNumber != number {
		t.Errorf("evaluate: %s %s %v, number %q; want %s on %s", d.Status, d.Regime, d.Reasons, ev.Buyer.VATNumber, vat.RegimeReverseChargeB2B, number)
	}
	req := fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z")
	req.ConsumerVATNumber = given
	sim, err := sb.Simulate(ctx, fiscaltest.AccountID(0), sandbox.AccountAgent(fiscaltest.AccountID(0)), sandbox.SimulateRequest{SettlementRequest: req})
	if err != nil {
		t.Fatal(err)
	}
	var r fiscal.Record
	if err := json.Unmarshal(sim.Record, &r); err != nil {
		t.Fatal(err)
	}
	if r.Classification.Regime != vat.RegimeReverseChargeB2B || r.Buyer.VATNumber != number {
		t.Errorf("simulate: %s %s %v, number %q; want %s on %s", r.ReviewStatus, r.Classification.Regime, r.Classification.Reasons, r.Buyer.VATNumber, vat.RegimeReverseChargeB2B, number)
	}
}
