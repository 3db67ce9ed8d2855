package catalog

import (
	"github.com/shopspring/decimal"
)

// PricingPolicy is the published form of a Pricing (GET /v1/pricing and the
// manifest's pricing block). It is computed from the same Pricing value
// whose fee every record accrues (Pricing.fee), so the published policy and
// the fee on the records cannot disagree.
type PricingPolicy struct {
	Model              string            `json:"model"`    // "basis_points"
	Currency           string            `json:"currency"` // "EUR"
	Basis              string            `json:"basis"`
	CurrentFeeBPS      int64             `json:"current_fee_bps"`
	CurrentDisplayRate string            `json:"current_display_rate"`
	Beta               PricingBeta       `json:"beta"`
	Standard           PricingStandard   `json:"standard"`
	CustomPricing      PricingCustom     `json:"custom_pricing"`
	Collection         PricingCollection `json:"collection"`
	Accrual            string            `json:"accrual"`
	Sandbox            PricingSandbox    `json:"sandbox"`
	IngestAuth         PricingIngestAuth `json:"ingest_auth"`
}

// PricingBeta is the beta period's fee (active, 0 bps,
// "free_during_beta").
type PricingBeta struct {
	Active bool   `json:"active"`
	FeeBPS int64  `json:"fee_bps"`
	Label  string `json:"label"`
}

// PricingStandard is the fee after the beta (50 bps, "0.5%").
type PricingStandard struct {
	FeeBPS      int64  `json:"fee_bps"`
	DisplayRate string `json:"display_rate"`
}

// PricingCustom says whether custom and high-volume pricing is offered.
type PricingCustom struct {
	Available bool   `json:"available"`
	Contact   string `json:"contact"`
}

// PricingCollection says how fees are collected:
// accrued by policy, never split from the settlement.
type PricingCollection struct {
	Method                         string `json:"method"` // "policy_accrual"
	SplitOfSettlement              bool   `json:"split_of_settlement"`
	IntegratedSettlementCollection bool   `json:"integrated_settlement_collection"`
	X402PaymentGate                bool   `json:"x402_payment_gate"`
	Description                    string `json:"description"`
}

// PricingSandbox is the sandbox's quota and price (by default 10 calls per
// agent per UTC day, price 0).
type PricingSandbox struct {
	QuotaPerAgentPerDay int      `json:"quota_per_agent_per_day"`
	Price               string   `json:"price"` // decimal string, EUR
	Currency            string   `json:"currency"`
	Endpoints           []string `json:"endpoints"`
	Agent               string   `json:"agent"`
	Output              string   `json:"output"`
}

// PricingIngestAuth says whether the key header is optional on POST
// /settlements. It is required.
type PricingIngestAuth struct {
	Header     string   `json:"header"`
	Required   bool     `json:"required"`
	Endpoints  []string `json:"endpoints"`
	Resolution string   `json:"resolution"`
}

// Published returns the policy as the service publishes it.
func (p Pricing) Published() PricingPolicy {
	current := p.CurrentFeeBPS()
	return PricingPolicy{
		Model:              p.Model,
		Currency:           "EUR",
		Basis:              "basis points of each fiscal record's exact gross EUR amount (fx.grossEurExact), not of the cents figure fx.grossEur; the exact fee (fee.accruedEurExact) is rounded once to the cent half away from zero (fee.accruedEur)",
		CurrentFeeBPS:      current,
		CurrentDisplayRate: DisplayRate(current),
		Beta:               PricingBeta{Active: p.BetaActive, FeeBPS: p.BetaFeeBPS, Label: p.BetaLabel},
		Standard:           PricingStandard{FeeBPS: p.StandardFeeBPS, DisplayRate: DisplayRate(p.StandardFeeBPS)},
		CustomPricing:      PricingCustom{Available: p.CustomPricing, Contact: "the production pilot channel (the same channel that issues keys)"},
		Collection: PricingCollection{
			Method:                         p.Collection,
			SplitOfSettlement:              false,
			IntegratedSettlementCollection: false,
			X402PaymentGate:                false,
			Description:                    "The fee is accrued by policy on each record and invoiced separately; it is never taken from the settlement, the service never receives or holds the payment, and no x402 payment is required to call the API.",
		},
		Accrual: "Every fiscal record carries fee {model, bps, accruedEur, accruedEurExact, label, collection} for the policy in force when it was recorded: accruedEurExact is the exact fee (12 decimals; a micropayment's is below a cent), accruedEur that fee rounded once to the cent; the signed receipt carries the same figures but the exact one.",
		Sandbox: PricingSandbox{
			QuotaPerAgentPerDay: p.SandboxQuotaPerDay,
			Price:               decimal.NewFromInt(p.SandboxPrice).String(),
			Currency:            "EUR",
			Endpoints:           []string{"POST /v1/compliance/evaluate", "POST /sandbox/v1/simulate"},
			Agent:               "the account when a valid X-Service-Key is sent, otherwise the client address; counted per UTC day, together for both endpoints",
			Output:              "watermarked (UBL note and receipt claim); sandbox receipts are signed by a key that is never in the production JWKS",
		},
		IngestAuth: PricingIngestAuth{
			Header:     HeaderServiceKey,
			Required:   true,
			Endpoints:  []string{"POST /settlements", "POST /v1/x402/settlements", "POST /v1/fiscal-events"},
			Resolution: "The header is required on every ingest endpoint, POST /settlements included (it is never optional there), because the key identifies the seller whose records and invoices are made. A missing or unknown key is 401 AUTHENTICATION_FAILED.",
		},
	}
}

// DisplayRate renders basis points as a percentage: 50 → "0.5%", 0 → "0%".
func DisplayRate(bps int64) string {
	return decimal.New(bps, -2).String() + "%"
}

// PricingPolicy returns the pricing policy this engine applies.
func (s *Service) PricingPolicy() PricingPolicy { return s.pricing.Published() }
