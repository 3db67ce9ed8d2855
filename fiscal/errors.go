package fiscal

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/settlement"
)

// Code is a stable, machine-readable error code of the HTTP API (README
// "Errors"). Codes are never renamed; new ones may be added.
type Code string

// The error codes of the engine. The HTTP status each maps to is in
// [Code.HTTPStatus]. The packages around the engine declare their own codes
// (httpserver: METHOD_NOT_ALLOWED, PAYLOAD_TOO_LARGE, ...; ingest:
// NOT_SETTLED, ...; webhooks, sandbox) with statuses from the same table.
const (
	CodeAuthenticationFailed Code = "AUTHENTICATION_FAILED" // the caller could not be authenticated (the HTTP layer's key)
	CodeBadRequest           Code = "BAD_REQUEST"           // malformed request; Field says where
	CodeNotFound             Code = "NOT_FOUND"             // no such resource for this account
	CodeIdempotencyConflict  Code = "IDEMPOTENCY_CONFLICT"  // same Idempotency-Key, different body
	CodeSettlementConflict   Code = "SETTLEMENT_CONFLICT"   // (network, txHash) already recorded for another account
	CodeChainVerifyFailed    Code = "CHAIN_VERIFY_FAILED"   // the chain says the claimed transfer did not happen
	CodeUnsupportedNetwork   Code = settlement.CodeUnsupportedNetwork
	CodeUnsupportedAsset     Code = settlement.CodeUnsupportedAsset
	CodeUnsupportedScheme    Code = settlement.CodeUnsupportedScheme
	CodeChainUnavailable     Code = "CHAIN_UNAVAILABLE" // the chain could not be asked (RPC down) or is not final yet: retry
	CodeDBUnavailable        Code = "DB_UNAVAILABLE"    // the ledger could not be written
	CodeInternal             Code = "INTERNAL"
	// CodeChainVerifyRequired: an ingest path reads the chain, but the
	// network's chain mode is off.
	CodeChainVerifyRequired Code = "CHAIN_VERIFICATION_REQUIRED"
	// CodePaymentAlreadyRecorded: this account already recorded the (network,
	// txHash) payment as the other kind of record (a settlement when a
	// fiscal event is posted, or the reverse); the detail says where.
	CodePaymentAlreadyRecorded Code = "PAYMENT_ALREADY_RECORDED"
	// CodeRecordNotPending: only a record PENDING_MANUAL_REVIEW can be
	// resolved; a processed record is corrected by a credit note.
	CodeRecordNotPending Code = "RECORD_NOT_PENDING"
	// CodeRevisionConflict: the record got another revision while this one
	// was being made; read it again and decide on its current state.
	CodeRevisionConflict Code = "REVISION_CONFLICT"
	// CodePaymentConflict: the (network, txHash) payment is recorded with
	// other facts (amount, payer, receiver, asset) than the request states.
	CodePaymentConflict Code = "PAYMENT_CONFLICT"
)

// codeStatus is the one table that maps codes to HTTP status codes (the
// README's "Errors" lists it), the codes of the packages around the engine included, so that
// one code never answers two statuses. fiscal does not import net/http; the
// numbers are RFC 9110's.
var codeStatus = map[Code]int{
	CodeAuthenticationFailed:   401,
	CodeBadRequest:             400,
	CodeNotFound:               404,
	CodeIdempotencyConflict:    409,
	CodeSettlementConflict:     409,
	CodePaymentAlreadyRecorded: 409,
	CodeRecordNotPending:       409,
	CodeRevisionConflict:       409,
	CodePaymentConflict:        409,
	CodeLedgerIntegrity:        500,
	CodeChainVerifyFailed:      422,
	CodeUnsupportedNetwork:     422,
	CodeUnsupportedAsset:       422,
	CodeUnsupportedScheme:      422,
	CodeChainVerifyRequired:    422,
	CodeChainUnavailable:       503,
	CodeDBUnavailable:          503,
	CodeInternal:               500,
	CodeCreditNoteRefused:      422,
	CodePeriodOpen:             409,
	CodeInvoiceRulesFailed:     422,

	"METHOD_NOT_ALLOWED":        405, // httpserver: the path exists, the method does not
	"PATH_NOT_CANONICAL":        307, // httpserver: "//" or dot segments: repeat at the cleaned path
	"CLIENT_CLOSED":             499, // httpserver: the client went away (logged only: nobody reads the answer)
	"PAYLOAD_TOO_LARGE":         413, // httpserver: body over the limit
	"UNSUPPORTED_MEDIA_TYPE":    415, // httpserver: not application/json
	"RATE_LIMITED":              429, // httpserver: over the per-account rate limit
	"UNSUPPORTED_PROTOCOL":      422, // ingest: an x402 version it does not read
	"NOT_SETTLED":               422, // ingest: an x402 settle response with success:false
	"QUOTA_EXCEEDED":            429, // sandbox: the evaluate + simulate quota is used up
	"UNSUPPORTED_JURISDICTION":  422, // sandbox: evaluate's buyer is not an attested EU-27 customer
	"REFUND_EXCEEDS_REMAINING":  409, // refunds: more than what remains of the settlement
	"RECORD_PENDING_REVIEW":     409, // refunds: a settlement pending review has no invoice to correct
	"WEBHOOK_LIMIT_REACHED":     409, // webhooks: too many endpoints, or secrets
	"WEBHOOK_ENDPOINT_CONFLICT": 409, // webhooks: the endpoint's state forbids the change
}

// HTTPStatus is the HTTP status code a response carrying c has.
func (c Code) HTTPStatus() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return 500
}

// Error is the one error type the engine returns for anything a caller may
// act on. Branch on its Code with errors.As, never on the message:
//
//	var fe *fiscal.Error
//	if errors.As(err, &fe) && fe.Code == fiscal.CodeNotFound { ... }
type Error struct {
	Code       Code
	Field      string        // the offending input: a JSON pointer (RFC 6901) into a body, e.g. "/amountUsdc", else a header's or parameter's name, e.g. "Idempotency-Key", "limit"
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

func badRequest(field, format string, args ...any) *Error {
	return &Error{Code: CodeBadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// InputError turns the field error of a request check (internal/wire,
// and the checks of a settled payment in package settlement) into a
// BAD_REQUEST *Error naming the field, or an *Error of the code the field
// error carries (UNSUPPORTED_NETWORK, ...); any other error, nil included,
// is returned as it is. The packages around the engine that check request
// fields with internal/wire or settlement answer through it.
func InputError(err error) error {
	var we *wire.FieldError
	if errors.As(err, &we) {
		return &Error{Code: cmp.Or(Code(we.Code), CodeBadRequest), Field: we.Field, Detail: we.Detail}
	}
	return err
}

// checked is InputError for a check that also returns a value.
func checked[T any](v T, err error) (T, error) { return v, InputError(err) }

func notFound(what string) *Error { return &Error{Code: CodeNotFound, Detail: what + " not found"} }

// bare names an id a client sent in a detail, bounded (shown.Bare): a
// 20,000-character path id is not echoed whole.
func bare(id string) string { return shown.Bare(id) }
