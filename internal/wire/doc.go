// Package wire checks the fields of a request as they arrive on the wire:
// USDC amounts, timestamps, EVM addresses and transaction hashes, country
// codes, free text, tokens, location evidence and Idempotency-Keys. Each
// check returns the normalised value or a *FieldError naming the field (a
// JSON pointer) and what is wrong; fiscal turns it into a BAD_REQUEST
// fiscal.Error (fiscal.InputError; another code when the error carries
// one), so that the engine and the packages around it refuse the same
// input with the same words.
//
// It imports evmverify (USDC's precision) and vat (location evidence, the
// ISO 3166-1 codes and the customer codes vat.Buyer accepts) and nothing else of ours.
package wire
