package x402

import "fmt"

// Kind classifies an Error so that a caller can answer it (an HTTP layer
// maps BadRequest to 400, the others to 422).
type Kind string

// Error kinds.
const (
	BadRequest          Kind = "bad_request"          // a document is malformed or inconsistent
	UnsupportedProtocol Kind = "unsupported_protocol" // an x402 version other than 1 or 2
	UnsupportedScheme   Kind = "unsupported_scheme"   // a scheme other than "exact"
	UnsupportedNetwork  Kind = "unsupported_network"  // not a CAIP-2 id nor a known v1 name, or not one the Parser accepts
	UnsupportedAsset    Kind = "unsupported_asset"    // not the token the Parser accepts on the network
	NotSettled          Kind = "not_settled"          // success:false: nothing to record
)

// Error is a problem with the documents of a Settlement: its Kind, the JSON
// pointer of the offending member and one sentence. For NotSettled, Reason
// and Message are the settle response's errorReason and errorMessage.
type Error struct {
	Kind    Kind
	Field   string
	Detail  string
	Reason  string
	Message string
}

func (e *Error) Error() string {
	msg := "x402: " + string(e.Kind)
	if e.Field != "" {
		msg += " " + e.Field
	}
	return msg + ": " + e.Detail
}

func badRequest(field, format string, args ...any) *Error {
	return &Error{Kind: BadRequest, Field: field, Detail: fmt.Sprintf(format, args...)}
}
