package fiscal

import (
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
)

// The settled payment and its checks are package settlement's; the engine
// takes them under their names of old. Their checks answer with field
// errors, which InputError makes *Error (BAD_REQUEST, UNSUPPORTED_NETWORK,
// UNSUPPORTED_ASSET, UNSUPPORTED_SCHEME) where the engine calls them.
type (
	// SettlementRequest is the body of POST /settlements:
	// settlement.Request.
	SettlementRequest = settlement.Request
	// BuyerFacts are what the merchant attests about the buyer and the
	// supply: settlement.Buyer.
	BuyerFacts = settlement.Buyer
	// Payment is a validated, normalised settled payment:
	// settlement.Payment.
	Payment = settlement.Payment
)

// MaxRequestBytes is the body limit of POST /settlements
// (settlement.MaxRequestBytes).
const MaxRequestBytes = settlement.MaxRequestBytes

// The checks of internal/wire the engine's own inputs use, their
// *wire.FieldError as BAD_REQUEST.
func parseText(field, v string) (string, error) { return checked(wire.Text(field, v)) }
func validIdempotencyKey(k string) error        { return InputError(wire.IdempotencyKey(k)) }
func parseLongText(field, v string, max int) (string, error) {
	return checked(wire.LongText(field, v, max))
}
func parseEvidence(field string, in []vat.Evidence) ([]vat.Evidence, error) {
	return checked(wire.Evidence(field, in))
}
