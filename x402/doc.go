// Package x402 reads the documents an x402 payment leaves behind once it is
// settled: the facilitator's settle response, the payment requirements and
// the payment payload, as JSON or as the base64 values of the x402 HTTP
// headers.
//
// fiscal402 cannot depend on the x402 Go SDK (the module proxy refuses it),
// so this package owns the JSON shapes, with the names of the x402
// specification v2 §5 and the Go SDK v2.9.0 (SettleResponse,
// PaymentRequirements, PaymentPayload), plus the x402 v1 names
// (maxAmountRequired, network names such as "base"). It imports nothing of
// fiscal402's: a facilitator or resource server can use it on its own.
//
// # The settled-payment hook
//
// An x402 facilitator or resource server calls its after-settle hook with
// the three documents. Put them in a Settlement, unchanged:
//
//	s := x402.Settlement{
//		SettleResponse:      settleResponseJSON, // or the PAYMENT-RESPONSE header value
//		PaymentRequirements: requirementsJSON,   // may be empty for x402 v2
//		PaymentPayload:      payloadJSON,        // or the PAYMENT-SIGNATURE header value
//	}
//	p, pending, err := x402.Parse(s)
//
// Parse checks that the documents describe one payment (same network,
// payer, payee and amount wherever two name it) and returns it normalised; the
// engine then reads the payment from the chain (package ingest), because
// x402 documents are claims, not proof, and carry no settlement time.
//
// # Parsing rules
//
// A document that is empty, JSON null or an object without members is
// absent. The payment payload, or just its scheme payload ("payload"), may
// be absent when the settle response names the payer: the payment is then
// the settle response's transaction with the requirements' asset, payee and
// amount, and nothing an authorization would say is claimed (no transfer
// method, no nonce). A payment payload that is present names its
// x402Version.
//
// Unknown members are ignored, because x402 adds fields between versions
// (extensions, the TypeScript server's "requirements"); repeated members,
// lone UTF-16 surrogates and nesting deeper than 32 levels are refused,
// because they have no single meaning. An EIP-3009 authorization must
// carry its six members (from, to, value, validAfter, validBefore, nonce)
// and a validity window that ends after it starts; a Permit2 authorization
// its from, permitted {token, amount}, spender, nonce, deadline and witness
// {to, validAfter}, with a deadline not before validAfter and the
// x402ExactPermit2Proxy as spender; an ERC-7710
// payload its delegationManager, permissionContext and delegator. A scheme
// payload has the shape of one transfer method (EIP-3009, Permit2 or
// ERC-7710), which the payment reports as its Method; either way the
// chain's Transfer log, not the authorization, is what the engine records.
// Each version keeps its own shape: v2 documents name networks in CAIP-2, the price "amount" and
// the payload's "accepted"; v1 documents the price "maxAmountRequired" and
// the payload's scheme and network. A settle response with success:false
// is a NotSettled error, also when it names a transaction, except
// "settlement_pending" with a transaction, which Parse reports as pending;
// one with success:true that names an errorReason or errorMessage reports
// both outcomes and is refused there.
//
// # Errors
//
// Every error is an *Error with a Kind (BadRequest, UnsupportedProtocol,
// UnsupportedScheme, UnsupportedNetwork, NotSettled) and the JSON pointer
// of the offending member under /settleResponse, /paymentRequirements or
// /paymentPayload.
package x402
