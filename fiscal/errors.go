package fiscal

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable, machine-readable error code of the service specification
// (§7). Codes are never renamed; new ones may be added.
type Code string

// The error codes. The HTTP status each maps to is in [Code.HTTPStatus].
const (
	CodeAuthenticationFailed Code = "AUTHENTICATION_FAILED" // the X-Service-Key is missing or unknown
	CodeBadRequest           Code = "BAD_REQUEST"           // malformed request; Field says where
	CodeNotFound             Code = "NOT_FOUND"             // no such resource for this account
	CodeMethodNotAllowed     Code = "METHOD_NOT_ALLOWED"    // the path exists, the method does not
	CodePayloadTooLarge      Code = "PAYLOAD_TOO_LARGE"     // body over the limit
	CodeUnsupportedMedia     Code = "UNSUPPORTED_MEDIA_TYPE"
	CodeIdempotencyConflict  Code = "IDEMPOTENCY_CONFLICT" // same Idempotency-Key, different body
	CodeSettlementConflict   Code = "SETTLEMENT_CONFLICT"  // (network, txHash) already recorded for another account
	CodeChainVerifyFailed    Code = "CHAIN_VERIFY_FAILED"  // the chain says the claimed transfer did not happen
	CodeUnsupportedNetwork   Code = "UNSUPPORTED_NETWORK"
	CodeUnsupportedAsset     Code = "UNSUPPORTED_ASSET"
	CodeUnsupportedScheme    Code = "UNSUPPORTED_SCHEME"
	CodeUnsupportedProtocol  Code = "UNSUPPORTED_PROTOCOL"
	CodeRateLimited          Code = "RATE_LIMITED"
	CodeQuotaExceeded        Code = "QUOTA_EXCEEDED"
	CodeChainUnavailable     Code = "CHAIN_UNAVAILABLE" // the chain could not be asked (RPC down) or is not final yet: retry
	CodeDBUnavailable        Code = "DB_UNAVAILABLE"    // the ledger could not be written
	CodeInternal             Code = "INTERNAL"

	// x402 and evm-transfer ingest (IngestX402, IngestTransfer).
	CodeNotSettled          Code = "NOT_SETTLED"                 // an x402 settle response with success:false: nothing to record
	CodeChainVerifyRequired Code = "CHAIN_VERIFICATION_REQUIRED" // the ingest path reads the chain, but the network's chain mode is off

	// CodePaymentAlreadyRecorded: this account already recorded the (network,
	// txHash) payment as the other kind of record (a settlement when a
	// fiscal event is posted, or the reverse); the detail says where.
	CodePaymentAlreadyRecorded Code = "PAYMENT_ALREADY_RECORDED"
	// CodeUnsupportedJurisdiction: the parties are outside what the endpoint
	// covers (evaluate: the buyer is not an attested EU-27 customer).
	CodeUnsupportedJurisdiction Code = "UNSUPPORTED_JURISDICTION"
)

// The error codes of the webhook API (both 409).
const (
	CodeWebhookLimit    Code = "WEBHOOK_LIMIT_REACHED"     // too many webhook endpoints for the account, or secrets for the endpoint
	CodeWebhookConflict Code = "WEBHOOK_ENDPOINT_CONFLICT" // the endpoint's state forbids the change: defined in the accounts file, its last secret, disabled, none enabled
)

// codeStatus is the one table that maps codes to HTTP status codes (DESIGN.md
// "Errors"). fiscal does not import net/http; the numbers are RFC 9110's.
var codeStatus = map[Code]int{
	CodeAuthenticationFailed: 401,
	CodeBadRequest:           400,
	CodeNotFound:             404,
	CodeMethodNotAllowed:     405,
	CodePayloadTooLarge:      413,
	CodeUnsupportedMedia:     415,
	CodeIdempotencyConflict:  409,
	CodeSettlementConflict:   409,
	CodeChainVerifyFailed:    422,
	CodeUnsupportedNetwork:   422,
	CodeUnsupportedAsset:     422,
	CodeUnsupportedScheme:    422,
	CodeUnsupportedProtocol:  422,
	CodeRateLimited:          429,
	CodeQuotaExceeded:        429,
	CodeChainUnavailable:     503,
	CodeNotSettled:           422,
	CodeChainVerifyRequired:  422,
	CodeDBUnavailable:        503,
	CodeWebhookLimit:         409,
	CodeWebhookConflict:      409,
	CodeInternal:             500,

	CodePaymentAlreadyRecorded:  409,
	CodeUnsupportedJurisdiction: 422,
}

// HTTPStatus is the HTTP status code a response carrying c has.
func (c Code) HTTPStatus() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return 500
}

// Error is the one error type the engine returns for anything a caller may
// act on. Branch on Code with errors.As, never on the message.
type Error struct {
	Code       Code
	Field      string        // JSON pointer (RFC 6901) of the offending input field, e.g. "/amountUsdc"
	Detail     string        // one human sentence, safe to show to the caller
	RetryAfter time.Duration // > 0 when the caller should retry after this long
	Err        error         // the cause, for logs; not shown to callers
}

func (e *Error) Error() string {
	msg := string(e.Code)
	if e.Field != "" {
		msg += " " + e.Field
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, &fiscal.Error{Code: fiscal.CodeNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// CodeOf returns the Code of err, or CodeInternal when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

func badRequest(field, format string, args ...any) *Error {
	return &Error{Code: CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

func notFound(what string) *Error {
	return &Error{Code: CodeNotFound, Detail: what + " not found"}
}
