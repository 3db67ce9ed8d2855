package catalog

import (
	"fmt"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/settlement"
)

// Service describes one engine: its configuration decides which
// capabilities are live (a VAT-number registry, chain verification) and
// which rates it holds.
type Service struct {
	e       *fiscal.Engine
	set     fiscal.Config
	pricing Pricing
}

// New returns the description of e under the pricing policy p (the policy
// whose FeePolicy the engine accrues).
func New(e *fiscal.Engine, p Pricing) *Service {
	return &Service{e: e, set: e.Settings(), pricing: p}
}

// The asset the service records, and its precision (Circle's USDC:
// decimals() = 6 on every supported chain).
const (
	AssetUSDC    = settlement.AssetUSDC
	usdcDecimals = evmverify.USDCDecimals
)

func badRequest(field, format string, args ...any) *fiscal.Error {
	return &fiscal.Error{Code: fiscal.CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}
