//go:build ignore

// This file is the glue between the x402 Go SDK and fiscal402, to copy into
// a program that imports both. It is not built with this module (the
// "ignore" build tag): the SDK is not a dependency of fiscal402, whose
// build environment's Go module proxy refuses it (go list -m
// github.com/x402-foundation/x402/go answers 403 Forbidden there), so go build, go vet
// and go mod tidy skip this file. main.go runs the same hook body on the
// same inputs without the SDK, and its test runs it against a real chain.
//
// Names are those of the SDK v2.9.0 (go/server_hooks.go,
// go/facilitator_hooks.go); from v2.21 the module path ends in /go/v2.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	x402 "github.com/x402-foundation/x402/go"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/ingest"
	wire "github.com/fiscal402/fiscal402/x402"
)

// Resource server: the seller's middleware settled through a facilitator.
// The hook runs synchronously in the buyer's request and its error is
// ignored by the SDK, so it only validates and durably enqueues; the ingest
// queue (ingest.New runs it) verifies on chain and records.
func registerResourceServerHook(s *x402.X402ResourceServer, payments *ingest.Service, accountID string, log *slog.Logger) {
	s.OnAfterSettle(func(c x402.SettleResultContext) error {
		return enqueue(c.Ctx, payments, accountID, c.Result, c.RequirementsBytes, c.PayloadBytes, buyerFromContext(c.Ctx), log)
	})
}

// Facilitator: it settles for many merchants; payTo says whose settlement it
// is. A facilitator rarely knows the buyer's country: such records are
// PENDING_MANUAL_REVIEW (buyer_country_missing) until the merchant supplies
// it, which is the honest answer, never 0 % VAT.
func registerFacilitatorHook(f *x402.X402Facilitator, payments *ingest.Service, accountByPayTo map[string]string, log *slog.Logger) {
	f.OnAfterSettle(func(c x402.FacilitatorSettleResultContext) error {
		account, ok := accountByPayTo[strings.ToLower(c.Requirements.GetPayTo())]
		if !ok {
			return nil // not a merchant that records with fiscal402
		}
		return enqueue(c.Ctx, payments, account, c.Result, c.RequirementsBytes, c.PayloadBytes, fiscal.BuyerFacts{}, log)
	})
}

// enqueue hands one settlement to fiscal402. The SDK's SettleResponse
// marshals to the wire JSON fiscal402 parses; the requirements and payload
// bytes are passed as received (v1 and v2 alike). A result without a
// transaction reached no chain; success:false is answered NOT_SETTLED by
// the engine, except "settlement_pending", which it holds until the chain
// has the transaction. (SDK versions that send success:false to
// OnSettleFailure instead of OnAfterSettle need the same call there for
// "settlement_pending".)
func enqueue(ctx context.Context, payments *ingest.Service, accountID string, result *x402.SettleResponse, requirements, payload []byte, buyer fiscal.BuyerFacts, log *slog.Logger) error {
	if result == nil || result.Transaction == "" {
		return nil
	}
	settle, err := json.Marshal(result)
	if err != nil {
		return err
	}
	_, err = payments.EnqueueX402(ctx, ingest.X402{
		Account:    accountID,
		Settlement: wire.Settlement{SettleResponse: settle, PaymentRequirements: requirements, PaymentPayload: payload},
		Buyer:      buyer,
	})
	var fe *fiscal.Error
	if errors.As(err, &fe) && fe.Code == ingest.CodeNotSettled {
		return nil
	}
	if err != nil {
		log.Error("fiscal402: x402 settlement not queued", "tx", result.Transaction, "err", err)
	}
	return err
}

// The merchant's own middleware, which knows the customer, puts the buyer
// facts in the request context before the x402 middleware runs.
type buyerKey struct{}

func WithBuyer(ctx context.Context, b fiscal.BuyerFacts) context.Context {
	return context.WithValue(ctx, buyerKey{}, b)
}

func buyerFromContext(ctx context.Context) fiscal.BuyerFacts {
	b, _ := ctx.Value(buyerKey{}).(fiscal.BuyerFacts)
	return b
}
