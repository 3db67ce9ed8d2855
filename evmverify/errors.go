package evmverify

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnavailable reports that the chain could not be asked, or that its
// answer could not be trusted, so nothing is known about the claim: every
// RPC endpoint was unreachable, timed out, answered with a JSON-RPC error
// object (geth's "transaction indexing is in progress" among them), sent a
// reply that is not a well-formed JSON-RPC answer, was still syncing, or
// the block changed between two calls (ErrReorg). The caller retries later
// (the engine answers 503 with Retry-After) and writes nothing. It is always
// wrapped with detail; test it with errors.Is.
var ErrUnavailable = errors.New("chain rpc unavailable")

// ErrReorg is wrapped together with ErrUnavailable when the block named by
// the transaction receipt is not the block the node returns for that number
// a moment later: the chain reorganised between the calls (or a load
// balancer mixed two nodes). Retrying settles it either way.
var ErrReorg = errors.New("block hash changed between calls")

// ErrNotConfigured reports that a network has no policy, or a policy without
// RPC endpoints, so the Verifier has nobody to ask. It is a configuration
// fault of the operator, never a statement about the claim.
var ErrNotConfigured = errors.New("no rpc endpoint configured")

// Reasons carried by RejectedError. They are stable snake_case identifiers:
// callers branch on them and they end up in API problem details, so they are
// never renamed (add new ones instead).
const (
	// ReasonUnsupportedNetwork: the claim names a network that is not an
	// eip155 chain, or asks for "the network's USDC" on a chain where this
	// package knows no USDC contract (USDCContract).
	ReasonUnsupportedNetwork = "unsupported_network"
	// ReasonWrongChain: the RPC endpoint serves a different chain than the
	// claim's CAIP-2 network (eth_chainId differs on every endpoint).
	ReasonWrongChain = "wrong_chain"
	// ReasonTxNotFound: a synced node knows neither a receipt nor a pending
	// transaction with this hash.
	ReasonTxNotFound = "tx_not_found"
	// ReasonTxReverted: the transaction was mined with status 0; it moved
	// nothing (EIP-658 status code).
	ReasonTxReverted = "tx_reverted"
	// ReasonNoMatchingLog: no Transfer log of the asset matches the claim
	// (or, with a log index, the receipt has no log at that index).
	ReasonNoMatchingLog = "no_matching_log"
	// ReasonAmbiguousLogs: more than one Transfer log matches the claim and
	// no log index was given to pick one.
	ReasonAmbiguousLogs = "ambiguous_logs"
	// ReasonAmountMismatch: a Transfer of the asset from the payer to the
	// receiver exists, but with a different value.
	ReasonAmountMismatch = "amount_mismatch"
	// ReasonReceiverMismatch: a Transfer of the asset from the payer with the
	// claimed value exists, but to another address.
	ReasonReceiverMismatch = "receiver_mismatch"
	// ReasonPayerMismatch: a Transfer of the asset to the receiver with the
	// claimed value exists, but from another address.
	ReasonPayerMismatch = "payer_mismatch"
	// ReasonAssetMismatch: the matching Transfer was emitted by another
	// contract than the claimed asset (another token, or a look-alike).
	ReasonAssetMismatch = "asset_mismatch"
	// ReasonLogNotTransfer: the log at the given index is not an ERC-20
	// Transfer(address,address,uint256) event.
	ReasonLogNotTransfer = "log_not_transfer"
	// ReasonTimeMismatch: the matching Transfer is in a block whose time
	// lies more than MaxTimeSkew from the claim's Time.
	ReasonTimeMismatch = "time_mismatch"
	// ReasonAuthorizationMismatch: the claim names an EIP-3009
	// authorization nonce (Claim.Nonce) the transaction did not use: the
	// receipt has no AuthorizationUsed(payer, nonce) event of the asset
	// followed by its Transfer (EIP-3009,
	// https://eips.ethereum.org/EIPS/eip-3009), or that Transfer is not the
	// claim's LogIndex.
	ReasonAuthorizationMismatch = "authorization_mismatch"
)

// RejectedError reports that the chain answered and the answer contradicts
// the claim: the claim is false, and retrying will not change that (the
// engine answers 422 CHAIN_VERIFY_FAILED with the reason). Reason is one of
// the Reason... constants; Detail is a human-readable explanation (it may
// name addresses, amounts and log indices, never RPC URLs).
type RejectedError struct {
	Reason string
	Detail string
}

func (e *RejectedError) Error() string {
	if e.Detail == "" {
		return "evmverify: claim rejected: " + e.Reason
	}
	return "evmverify: claim rejected: " + e.Reason + ": " + e.Detail
}

func reject(reason, format string, args ...any) *RejectedError {
	return &RejectedError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// NotFinalError reports a claim that holds so far but is not yet buried
// deeply enough for the network's policy: fewer than Required
// confirmations, or not finalized while the policy requires it, or
// (Pending) the transaction is known but not yet mined. The caller retries
// later (the engine answers 503 with Retry-After). Facts holds what was
// verified so far; it is the zero value when Pending.
type NotFinalError struct {
	Confirmations    uint64 // head - block + 1 on the answering node; 0 when pending
	Required         uint64 // the policy's minimum confirmations (at least 1)
	Finalized        bool   // the block is at or below the node's "finalized" block
	RequireFinalized bool   // the policy requires Finalized
	Pending          bool   // the node knows the transaction but has no receipt yet
	Facts            Facts
	// RetryAfter estimates when a retry can succeed, from the chain's block
	// interval and finality time (at least one block interval). It is a
	// hint for a Retry-After header, not a promise.
	RetryAfter time.Duration
}

func (e *NotFinalError) Error() string {
	switch {
	case e.Pending:
		return "evmverify: not final: transaction pending (no receipt yet)"
	case e.Confirmations < e.Required:
		return fmt.Sprintf("evmverify: not final: %d of %d confirmations", e.Confirmations, e.Required)
	default:
		return fmt.Sprintf("evmverify: not final: block %d not yet finalized (%d confirmations)", e.Facts.BlockNumber, e.Confirmations)
	}
}

// ClaimError reports a claim that is malformed before any chain is asked: a
// field is missing or not in the required syntax. Field names the Claim
// field ("TxHash", "Payer", ...). The engine maps it to 400 BAD_REQUEST.
type ClaimError struct {
	Field string
	Err   error
}

func (e *ClaimError) Error() string { return "evmverify: claim " + e.Field + ": " + e.Err.Error() }
func (e *ClaimError) Unwrap() error { return e.Err }

// RPCError is a JSON-RPC 2.0 error object returned by a node (JSON-RPC 2.0
// §5.1). Call returns it wrapped together with ErrUnavailable: an error
// object means the node did not answer the question, not that the answer is
// no.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }
