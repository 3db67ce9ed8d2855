package fiscal_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestMicropaymentFeeKeepsItsExactValue: the fee a record accrues under
// the pricing policy (basis points of the gross EUR amount) is, for a
// micropayment, positive but below a cent. The record keeps it exact
// (fee.accruedEurExact, at fx.ExactScale decimals: the exact gross times
// the basis points), beside the cents (accruedEur, that exact fee rounded
// once), as its FX figures keep netEurExact beside netEur: a $0.001 call
// at 50 bps accrues 0.0000043 EUR, not 0.00. A review found only the
// cents, and those computed from the gross already rounded to the cent
// (0.00 EUR for any payment under half a cent, rounded twice). The API's
// record (its JSON) states the same.
func TestMicropaymentFeeKeepsItsExactValue(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	cfg.Fee = fiscal.FeePolicy{BPS: 50}
	b := fiscaltest.Books(t, fiscaltest.Engine(t, cfg), 0)
	for i, amount := range []string{"0.001", "0.000001", "0.009", "1.19", "100.00"} {
		res, err := b.Settle(context.Background(), fiscaltest.Request(i+1, amount, "DE", "2026-04-10T14:30:00Z"), "")
		if err != nil {
			t.Fatal(err)
		}
		r := res.Record
		gross := decimal.RequireFromString(r.FX.GrossEURExact)
		want := gross.Mul(decimal.NewFromInt(50)).Div(decimal.NewFromInt(10000)) // exact: 12 + 4 decimals
		if r.Fee == nil || r.Fee.AccruedEURExact == "" {
			t.Fatalf("%s USDC: fee %+v has no exact figure", amount, r.Fee)
		}
		got := decimal.RequireFromString(r.Fee.AccruedEURExact)
		if !got.Equal(want.Round(12)) || !got.IsPositive() {
			t.Errorf("%s USDC (gross %s EUR): fee exact %s, want %s", amount, r.FX.GrossEURExact, r.Fee.AccruedEURExact, want.Round(12).StringFixed(12))
		}
		if r.Fee.AccruedEUR != want.Round(2).StringFixed(2) {
			t.Errorf("%s USDC (gross %s EUR): fee %s EUR, want the exact %s rounded once, %s", amount, r.FX.GrossEURExact, r.Fee.AccruedEUR, want, want.Round(2).StringFixed(2))
		}
		var wire struct {
			Fee map[string]string `json:"fee"`
		}
		if err := json.Unmarshal(res.JSON, &wire); err != nil || wire.Fee["accruedEurExact"] != r.Fee.AccruedEURExact {
			t.Errorf("%s USDC: the record's JSON states fee %v (%v)", amount, wire.Fee, err)
		}
	}
}
