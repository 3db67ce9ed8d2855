package catalog_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestPublishedFeeBasisIsTheRecordsOwn: GET /v1/pricing says which of a
// record's fx fields the basis points apply to (basis, "(fx.<field>)").
// A seller checking an accrued fee recomputes it from that field, so it
// must be the field the engine computes from: for a payment whose exact
// gross is just under 1 EUR (grossEur 1.00), 50 bps of the cents figure
// is 0.005, rounded to 0.01, while the fee the record accrues is 50 bps of
// the exact gross, below half a cent: 0.00.
func TestPublishedFeeBasisIsTheRecordsOwn(t *testing.T) {
	p := catalog.DefaultPricing()
	p.BetaActive = false // the standard 50 bps in force
	pub := p.Published()
	m := regexp.MustCompile(`\(fx\.(\w+)\)`).FindStringSubmatch(pub.Basis)
	if m == nil {
		t.Fatalf("the published basis %q names no fx field", pub.Basis)
	}
	field := m[1]
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	cfg.Fee = p.FeePolicy()
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	ctx := context.Background()
	probe, err := b.Settle(ctx, fiscaltest.Request(1, "1.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	perUSDC := decimal.RequireFromString(probe.Record.FX.GrossEURExact)
	// An amount whose exact gross is 0.9975 EUR or a micro-euro above.
	amount := decimal.RequireFromString("0.9975").Div(perUSDC).RoundUp(6)
	res, err := b.Settle(ctx, fiscaltest.Request(2, amount.StringFixed(6), "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		FX  map[string]any    `json:"fx"`
		Fee map[string]string `json:"fee"`
	}
	if err := json.Unmarshal(res.JSON, &wire); err != nil {
		t.Fatal(err)
	}
	raw, ok := wire.FX[field].(string)
	if !ok {
		t.Fatalf("the record's fx has no field %q (the published basis %q): %v", field, pub.Basis, wire.FX)
	}
	base := decimal.RequireFromString(raw)
	want := base.Mul(decimal.NewFromInt(pub.CurrentFeeBPS)).Shift(-4).Round(2).StringFixed(2) // half away from zero
	if got := wire.Fee["accruedEur"]; got != want {
		t.Errorf("%s USDC: fx.%s %s × %d bps is %s EUR, the record accrued %s (grossEur %s, grossEurExact %s)",
			amount, field, raw, pub.CurrentFeeBPS, want, got, wire.FX["grossEur"], wire.FX["grossEurExact"])
	}
}
