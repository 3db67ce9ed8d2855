package sandbox_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/sandbox"
)

// TestSimulationAccruesNoFee: a sandbox simulation is priced 0 (the
// sandbox price of evaluate and simulate, GET /v1/pricing), so its record, and the
// receipt that signs the record's figures, accrue no fee even where the
// production policy charges one: a production record of the same payment
// accrues the policy's basis points.
func TestSimulationAccruesNoFee(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	cfg.Fee = fiscal.FeePolicy{BPS: 50}
	e := fiscaltest.Engine(t, cfg)
	ctx := context.Background()
	prod, err := fiscaltest.Books(t, e, 0).Settle(ctx, fiscaltest.Request(1, "100.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	if f := prod.Record.Fee; f == nil || f.BPS != "50" || f.AccruedEUR == "0.00" {
		t.Fatalf("production fee %+v, want 50 bps accrued", f)
	}
	sim, err := sandbox.New(e, sandbox.Options{}).Simulate(ctx, "", "", sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(2, "100.00", "DE", "2026-04-10T14:30:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	var rec fiscal.Record
	if err := json.Unmarshal(sim.Record, &rec); err != nil {
		t.Fatal(err)
	}
	if f := rec.Fee; f != nil && (f.BPS != "0" || f.AccruedEUR != "0.00") {
		t.Errorf("sandbox record fee %+v, want none accrued", f)
	}
	var r struct {
		Claims struct {
			Fee *struct {
				BPS        string `json:"bps"`
				AccruedEUR string `json:"accrued_eur"`
			} `json:"fee"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(sim.Receipt, &r); err != nil {
		t.Fatal(err)
	}
	if f := r.Claims.Fee; f != nil && (f.BPS != "0" || f.AccruedEUR != "0.00") {
		t.Errorf("sandbox receipt fee %+v, want none accrued", f)
	}
}
