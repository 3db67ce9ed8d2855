package catalog

import "github.com/fiscal402/fiscal402/fiscal"

// Pricing is the pricing policy (GET /v1/pricing). The same value drives the fee
// accrued on each record and what the service publishes about its pricing,
// so the two cannot drift apart.
type Pricing struct {
	Model              string // "basis_points"
	BetaActive         bool
	BetaFeeBPS         int64  // 0 during the beta
	BetaLabel          string // "free_during_beta"
	StandardFeeBPS     int64  // 50, published as "0.5%" (DisplayRate)
	CustomPricing      bool   // custom and high-volume pricing available
	Collection         string // "policy_accrual": accrued by policy, never a split of the settlement
	SandboxQuotaPerDay int    // evaluate + simulate calls per agent per day
	SandboxPrice       int64  // 0
}

// DefaultPricing is the published policy: beta active at 0 bps, standard
// 50 bps ("0.5%"), collection by policy accrual, sandbox 10 calls a day
// for free.
func DefaultPricing() Pricing {
	return Pricing{
		Model:              "basis_points",
		BetaActive:         true,
		BetaFeeBPS:         0,
		BetaLabel:          "free_during_beta",
		StandardFeeBPS:     50,
		CustomPricing:      true,
		Collection:         "policy_accrual",
		SandboxQuotaPerDay: 10,
		SandboxPrice:       0,
	}
}

// CurrentFeeBPS is the fee in force: the beta fee while the beta is active.
func (p Pricing) CurrentFeeBPS() int64 {
	if p.BetaActive {
		return p.BetaFeeBPS
	}
	return p.StandardFeeBPS
}

// FeePolicy is the fee each record accrues under this policy (the
// engine's Config.Fee): the fee in force, labelled while the beta runs.
func (p Pricing) FeePolicy() fiscal.FeePolicy {
	f := fiscal.FeePolicy{Model: p.Model, BPS: p.CurrentFeeBPS(), Collection: p.Collection}
	if p.BetaActive {
		f.Label = p.BetaLabel
	}
	return f
}
