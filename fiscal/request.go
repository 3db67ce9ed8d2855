package fiscal

import (
	"fmt"
	"math/big"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
)

// The settled payment and its checks are package settlement's; the engine
// takes them under their names of old. Their checks answer with field
// errors, which InputError makes *Error (BAD_REQUEST, UNSUPPORTED_NETWORK,
// UNSUPPORTED_ASSET, UNSUPPORTED_SCHEME) where the engine calls them.
type (
	// SettlementRequest is the body of POST /settlements (spec §2.1):
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
func parseCountry(field, v string) (string, error) { return checked(wire.Country(field, v)) }
func parseText(field, v string) (string, error)    { return checked(wire.Text(field, v)) }
func validIdempotencyKey(k string) error           { return InputError(wire.IdempotencyKey(k)) }
func parseLongText(field, v string, max int) (string, error) {
	return checked(wire.LongText(field, v, max))
}
func parseEvidence(field string, in []vat.Evidence) ([]vat.Evidence, error) {
	return checked(wire.Evidence(field, in))
}

// paymentFromChain builds the payment an ingest path read from the chain,
// through the same validation as POST /settlements: amount, payer, receiver
// and time are the Transfer log's and its block's; the buyer facts are the
// merchant's.
func paymentFromChain(in Ingest, f evmverify.Facts, now time.Time) (Payment, error) {
	amount, ok := new(big.Int).SetString(f.Amount, 10)
	if !ok {
		return Payment{}, &Error{Code: CodeInternal, Detail: "the chain facts carry an unreadable amount", Err: fmt.Errorf("amount %q", f.Amount)}
	}
	if amount.Sign() <= 0 {
		return Payment{}, badRequest("/logIndex", "the Transfer at log %d moves 0 USDC: it is not a payment", f.LogIndex)
	}
	req := SettlementRequest{
		AmountUSDC:         decimal.NewFromBigInt(amount, -evmverify.USDCDecimals).String(),
		TxHash:             in.TxHash,
		Timestamp:          f.BlockTime.UTC().Format(time.RFC3339),
		PayerWallet:        f.From,
		ReceiverWallet:     f.To,
		Network:            in.Network,
		Asset:              settlement.AssetUSDC,
		ConsumerCountry:    in.Buyer.Country,
		ConsumerVATNumber:  in.Buyer.VATNumber,
		ConsumerName:       in.Buyer.Name,
		ConsumerPostalCode: in.Buyer.PostalCode,
		SupplyKind:         in.Buyer.SupplyKind,
		Description:        in.Buyer.Description,
		ConsumerAddress:    in.Buyer.Address,
	}
	p, err := req.Payment(now)
	if err != nil {
		return Payment{}, InputError(err)
	}
	p.Protocol, p.Scheme = in.Protocol, in.Scheme
	return p, nil
}
