package fiscal

import (
	"cmp"
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
	p.Model, p.Collection = cmp.Or(p.Model, "basis_points"), cmp.Or(p.Collection, "policy_accrual")
	if p.BPS == 0 && p.Label == "" {
		p.Label = "free_during_beta"
	}
	return p
}

// accrue is the fee on the exact gross EUR amount: gross × bps / 10,000,
// kept exact (fx.ExactScale) and rounded once to the cent by the one EUR
// rounding rule (fx.BasisPoints), as a record's net and VAT are: a
// micropayment's fee is 0.00 in cents and positive exactly.
func (p FeePolicy) accrue(grossExact decimal.Decimal) *Fee {
	exact, cents := fx.BasisPoints(grossExact, p.BPS)
	f := &Fee{Model: p.Model, BPS: strconv.FormatInt(p.BPS, 10), AccruedEUR: fx.StringFixed(cents, 2), Label: p.Label, Collection: p.Collection}
	if p.BPS != 0 { // no fee (the beta's 0 bps) has no exact figure but 0.00
		f.AccruedEURExact = fx.StringFixed(exact, fx.ExactScale)
	}
	return f
}
