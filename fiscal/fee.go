package fiscal

import (
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/fx"
)

// FeePolicy is the service fee each record accrues under the pricing
// policy in force (GET /v1/pricing): basis points of the gross EUR amount, accrued
// by policy, never collected from the settlement. The published pricing
// policy (package catalog) makes it, so the two cannot drift apart.
type FeePolicy struct {
	Model      string // "" means "basis_points"
	BPS        int64  // the fee in force; 0 during the beta
	Label      string // e.g. "free_during_beta"; "" for none
	Collection string // "" means "policy_accrual"
}

func (p FeePolicy) withDefaults() FeePolicy {
	if p.Model == "" {
		p.Model = "basis_points"
	}
	if p.Collection == "" {
		p.Collection = "policy_accrual"
	}
	if p.BPS == 0 && p.Label == "" {
		p.Label = "free_during_beta"
	}
	return p
}

// accrue is the fee on a gross EUR amount: gross × bps / 10,000, rounded by
// the one EUR rounding rule.
func (p FeePolicy) accrue(gross decimal.Decimal) *Fee {
	return &Fee{
		Model:      p.Model,
		BPS:        strconv.FormatInt(p.BPS, 10), // decimal.NewFromInt(p.BPS).String()
		AccruedEUR: fx.StringFixed(fx.DivEUR(gross.Mul(decimal.NewFromInt(p.BPS)), decimal.NewFromInt(10000)), 2),
		Label:      p.Label,
		Collection: p.Collection,
	}
}
