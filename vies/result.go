package vies

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Status is the tri-state outcome of a registry lookup.
type Status string

const (
	// StatusValid: the registry confirmed the number is registered.
	StatusValid Status = "valid"
	// StatusInvalid: the registry (or the syntax and check-digit rules)
	// definitively said the number is not a valid VAT number.
	StatusInvalid Status = "invalid"
	// StatusUnavailable: no definitive answer could be had (outage,
	// throttling, timeout, malformed reply, configuration problem). It says
	// nothing about the number.
	StatusUnavailable Status = "unavailable"
)

// Registry names as they appear in [Result.Registry].
const (
	RegistryVIES = "VIES"
	RegistryHMRC = "HMRC"
)

// Fault codes of an invalid Result: these are the only ones that may
// accompany [StatusInvalid].
const (
	// FaultSyntax: the injected [SyntaxFunc] rejected the number (format or
	// check digits); no registry was asked.
	FaultSyntax = "SYNTAX"
	// FaultInvalid: VIES answered valid:false without a fault
	// (userError absent or INVALID).
	FaultInvalid = "INVALID"
	// FaultInvalidInput: VIES answered INVALID_INPUT, or HMRC answered 400
	// INVALID_REQUEST about the target number: the registry rejects the
	// number's form.
	FaultInvalidInput = "INVALID_INPUT"
	// FaultNotFound: HMRC answered 404 NOT_FOUND (target not registered).
	FaultNotFound = "NOT_FOUND"
)

// Fault codes of an unavailable Result produced by this package. Registry
// fault codes (MS_UNAVAILABLE, MS_MAX_CONCURRENT_REQ, SERVICE_UNAVAILABLE,
// TIMEOUT, SERVER_BUSY, IP_BLOCKED, VAT_BLOCKED, INVALID_REQUESTER_INFO,
// GLOBAL_MAX_CONCURRENT_REQ, …) are passed through verbatim, and an HTTP
// error status without a registry code is reported as "HTTP_<status>"
// (HTTP_429, HTTP_500, HTTP_503, …).
const (
	// FaultTimeout: no reply within the per-attempt timeout (also the VIES
	// fault code of the same name: the member state did not answer in time).
	FaultTimeout = "TIMEOUT"
	// FaultNetwork: the request did not complete (DNS, connect, TLS, reset).
	FaultNetwork = "NETWORK"
	// FaultMalformed: a reply this package cannot read as a definitive
	// answer: not JSON, unknown shape, contradictory fields, an echo of a
	// different number, an unparseable date.
	FaultMalformed = "MALFORMED_RESPONSE"
	// FaultCanceled: the caller's context ended before an answer arrived.
	FaultCanceled = "CANCELED"
	// FaultRateLimited: the local per-registry-country rate limit could not
	// grant a slot before the caller's deadline; the registry was not asked.
	FaultRateLimited = "RATE_LIMITED"
	// FaultUnsupported: no registry can confirm this kind of number (non-Union
	// OSS "EU" numbers, UK government department / health authority numbers,
	// unknown prefixes). Manual review, never invalid.
	FaultUnsupported = "UNSUPPORTED_NUMBER"
	// FaultRegistryOff: lookups for this registry are switched off or not
	// configured (vies mode "off", no HMRC credentials, the offline Fake).
	FaultRegistryOff = "REGISTRY_OFF"
	// FaultRequesterInfo: the configured requester number is unusable (VIES
	// uses the same code for a requester it rejects). Configuration, not a
	// buyer problem: no lookup is made rather than one without proof.
	FaultRequesterInfo = "INVALID_REQUESTER_INFO"
	// FaultAuth: HMRC rejected the client credentials or the bearer token
	// (after one refresh). A configuration problem, not a buyer problem.
	FaultAuth = "AUTH_FAILED"
)

// Result is the answer of a lookup. It is stored on the fiscal record as the
// registry proof, so its JSON form is a wire format (see the package doc).
type Result struct {
	Status   Status `json:"status"`
	Registry string `json:"registry"` // "VIES" | "HMRC"; empty when no registry was consulted
	// CountryCode is the VIES country code (EL for Greece, XI for Northern
	// Ireland, DE, …) or "GB" for HMRC.
	CountryCode string `json:"countryCode"`
	Number      string `json:"vatNumber"` // body without the country prefix
	// Name and Address are the registry's, verbatim; VIES sends "---" when a
	// member state does not disclose them (e.g. DE, ES; a real reply in
	// https://github.com/annuaire-entreprises-data-gouv-fr/site/issues/475) and that is kept.
	Name    string `json:"name,omitempty"`
	Address string `json:"address,omitempty"`
	// RequestDate is the registry's date of the consultation when it gave
	// one (VIES requestDate, HMRC processingDate), otherwise the time the
	// attempt ended by the injected clock.
	RequestDate time.Time `json:"requestDate"`
	// RequestIdentifier is the VIES requestIdentifier or the HMRC
	// consultationNumber: the proof of the consultation. Only present when
	// the requester's own number is configured.
	RequestIdentifier string `json:"requestIdentifier,omitempty"`
	// Fault is empty for valid; one of the Fault* invalid codes for invalid;
	// the fault code for unavailable.
	Fault  string `json:"fault,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Attempts is how many registry calls this answer took (0 when none was
	// made: syntax failure, cache hit of a stored answer keeps its own count).
	Attempts int  `json:"attempts,omitempty"`
	Cached   bool `json:"cached,omitempty"`
}

// Checker looks up a VAT number (with its country prefix, as the customer
// gave it). Implementations never return [StatusInvalid] for an outage: only
// a definitive answer is invalid.
type Checker interface {
	Check(ctx context.Context, vatNumber string) Result
}

// SyntaxFunc checks a VAT number's syntax and check digits and splits it into
// its country prefix and normalised body (the engine injects
// vat.ValidateNumber; this package does not import vat).
type SyntaxFunc func(vatNumber string) (prefix, body string, err error)

// Transient reports whether an unavailable result with this fault code is
// worth retrying soon: network errors, timeouts, HTTP 429 and 5xx, and the
// registry faults that mean "busy" or "down" (VIES WSDL fault codes,
// https://ec.europa.eu/taxation_customs/vies/checkVatService.wsdl: SERVICE_UNAVAILABLE,
// MS_UNAVAILABLE, TIMEOUT, SERVER_BUSY, *_MAX_CONCURRENT_REQ*). Everything
// else (IP_BLOCKED, VAT_BLOCKED, INVALID_REQUESTER_INFO, AUTH_FAILED,
// MALFORMED_RESPONSE, HTTP 4xx other than 429, …) would fail the same way again.
func Transient(fault string) bool {
	switch fault {
	case FaultNetwork, FaultTimeout, "SERVICE_UNAVAILABLE", "MS_UNAVAILABLE", "SERVER_BUSY", "HTTP_429":
		return true
	}
	if strings.Contains(fault, "MAX_CONCURRENT_REQ") {
		return true
	}
	if len(fault) == len("HTTP_500") && strings.HasPrefix(fault, "HTTP_5") {
		return isDigits(fault[len("HTTP_"):])
	}
	return false
}

// httpFault is the fault code of an HTTP error status without a registry
// code. A status outside 100–999 is no HTTP status at all.
func httpFault(status int) string {
	if status < 100 || status > 999 {
		return FaultMalformed
	}
	return fmt.Sprintf("HTTP_%d", status)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// faultCode returns a registry-supplied code if it looks like one
// (upper-case letters, digits and underscores, at most 64 characters), so
// that arbitrary reply text never lands in Result.Fault.
func faultCode(code string) (string, bool) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if code == "" || len(code) > 64 {
		return "", false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", false
		}
	}
	return code, true
}

// clip shortens registry-supplied text for Result.Detail.
func clip(s string) string {
	const max = 200
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	// Cut on a rune boundary.
	for i := max; i > 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return s[:i] + "…"
		}
	}
	return ""
}

// unavailable builds an unavailable result.
func unavailable(registry, cc, number string, at time.Time, fault, detail string) Result {
	return Result{Status: StatusUnavailable, Registry: registry, CountryCode: cc, Number: number,
		RequestDate: at, Fault: fault, Detail: detail}
}
