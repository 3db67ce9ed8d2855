package fiscal

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/fiscal402/fiscal402/evmverify"
)

// The x402 wire types. fiscal402 cannot depend on the x402 Go SDK (the
// module proxy refuses it: research x402-evm.md §2.1), so it owns the JSON
// shapes, with the JSON names of the x402 specification v2 §5 and the Go SDK
// v2.9.0 (`x402.SettleResponse`, `types.PaymentRequirements`,
// `types.PaymentPayload`), plus the x402 v1 names (`maxAmountRequired`,
// network names such as "base"; x402-specification-v1.md). Unknown members
// are ignored when parsing, because x402 adds fields between versions
// (extensions, the TypeScript server's "requirements"); duplicate members
// are refused, because they have no single meaning.

// X402SettleResponse is an x402 SettleResponse: the body of a facilitator's
// POST /settle answer and, base64-encoded, the PAYMENT-RESPONSE header
// (X-PAYMENT-RESPONSE in v1). Spec v2 §5.3.2.
type X402SettleResponse struct {
	Success      bool            `json:"success"`
	ErrorReason  string          `json:"errorReason,omitempty"`  // e.g. "insufficient_funds", "settlement_pending"
	ErrorMessage string          `json:"errorMessage,omitempty"` // Go SDK only
	Payer        string          `json:"payer,omitempty"`
	Transaction  string          `json:"transaction"` // tx hash; "" on failure
	Network      string          `json:"network"`     // CAIP-2 (v1: a network name)
	Amount       string          `json:"amount,omitempty"`
	Extensions   json.RawMessage `json:"extensions,omitempty"`
}

// X402PaymentRequirements is one x402 PaymentRequirements: an element of
// PaymentRequired.accepts, and PaymentPayload.accepted in v2. Spec v2 §5.1.2.
type X402PaymentRequirements struct {
	Scheme            string          `json:"scheme"`
	Network           string          `json:"network"`
	Amount            string          `json:"amount,omitempty"`            // v2: atomic units
	MaxAmountRequired string          `json:"maxAmountRequired,omitempty"` // v1: atomic units
	Asset             string          `json:"asset"`                       // token contract address
	PayTo             string          `json:"payTo"`
	MaxTimeoutSeconds int64           `json:"maxTimeoutSeconds,omitempty"`
	Extra             json.RawMessage `json:"extra,omitempty"`
	// v1 carried the resource description in each requirement.
	Resource     string          `json:"resource,omitempty"`
	Description  string          `json:"description,omitempty"`
	MimeType     string          `json:"mimeType,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// X402PaymentPayload is an x402 PaymentPayload: base64-encoded, the
// PAYMENT-SIGNATURE header (X-PAYMENT in v1). v2 carries the chosen
// requirements in Accepted; v1 carries Scheme and Network instead. Spec v2
// §5.2.
type X402PaymentPayload struct {
	X402Version int                      `json:"x402Version"`
	Resource    *X402ResourceInfo        `json:"resource,omitempty"`
	Accepted    *X402PaymentRequirements `json:"accepted,omitempty"` // v2
	Scheme      string                   `json:"scheme,omitempty"`   // v1
	Network     string                   `json:"network,omitempty"`  // v1
	Payload     json.RawMessage          `json:"payload"`
	Extensions  json.RawMessage          `json:"extensions,omitempty"`
}

// X402ResourceInfo describes the paid resource (spec v2 §5.1.1).
type X402ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// x402ExactPayload is the part of the `exact` EVM scheme's payload that
// names the payer: EIP-3009 authorization, Permit2 permit2Authorization, or
// an ERC-7710 delegator (scheme_exact_evm.md; research x402-evm.md §1.2).
type x402ExactPayload struct {
	Authorization *struct {
		From  string `json:"from"`
		To    string `json:"to"`
		Nonce string `json:"nonce"`
	} `json:"authorization"`
	Permit2Authorization *struct {
		From string `json:"from"`
	} `json:"permit2Authorization"`
	Delegator string `json:"delegator"`
}

// X402 settle response error reason that is not a failure: the transaction
// was submitted but its outcome is not known yet (x402-foundation/x402
// issue #1062; Go SDK v2.23.0 and later).
const x402SettlementPending = "settlement_pending"

// x402V1Networks maps the x402 v1 network names of the chains this module
// knows to CAIP-2 (x402 Go SDK go/mechanisms/evm/v1/network.go; research
// x402-evm.md §1.5). The testnets are mapped so that the answer names the
// network precisely (UNSUPPORTED_NETWORK eip155:84532), not as a typo.
var x402V1Networks = map[string]string{
	"base":         "eip155:8453",
	"base-sepolia": "eip155:84532",
	"ethereum":     "eip155:1",
	"sepolia":      "eip155:11155111",
}

// Bounds on x402 fields that end up in a record.
const (
	maxAtomicDigits = maxAmountDigits + 6 // atomic USDC units: the same bound as amountUsdc
	maxResourceURL  = 2048
)

var atomicRE = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// x402Input is a parsed, normalised x402 settlement report: what the three
// x402 documents say about one payment. It is stored in the ingest queue
// (JSON), so its fields are only ever added.
type x402Input struct {
	Version      int    `json:"x402Version"`
	Network      string `json:"network"` // CAIP-2
	TxHash       string `json:"txHash"`  // lower case
	AmountAtomic string `json:"amount"`  // canonical decimal integer, USDC atomic units
	Payer        string `json:"payer"`   // lower case
	PayTo        string `json:"payTo"`   // lower case
	ResourceURL  string `json:"resourceUrl,omitempty"`
	Method       string `json:"transferMethod,omitempty"` // eip3009 | permit2 | erc7710
	Nonce        string `json:"authorizationNonce,omitempty"`
}

// parseX402 reads the three x402 documents (each raw JSON, a JSON string
// holding base64, or bare base64 as in the HTTP headers; requirements and
// payload may be empty, see IngestX402) and returns the normalised report
// and whether the facilitator said "settlement_pending". Errors are *Error
// with JSON pointers under /settleResponse, /paymentRequirements and
// /paymentPayload.
func parseX402(settleRaw, requirementsRaw, payloadRaw []byte) (x402Input, bool, error) {
	var in x402Input
	var sr struct {
		X402SettleResponse
		Success *bool `json:"success"`
	}
	present, err := decodeX402Part("/settleResponse", settleRaw, &sr)
	if err != nil {
		return in, false, err
	}
	if !present {
		return in, false, badRequest("/settleResponse", "is required: the facilitator's settle response (PAYMENT-RESPONSE)")
	}
	if sr.Success == nil {
		return in, false, badRequest("/settleResponse/success", "is required (x402 spec v2 §5.3.2)")
	}
	pending := false
	if !*sr.Success {
		if sr.ErrorReason != x402SettlementPending || sr.Transaction == "" {
			return in, false, notSettled(sr.ErrorReason, sr.ErrorMessage)
		}
		pending = true
	}
	if sr.Transaction == "" {
		return in, false, badRequest("/settleResponse/transaction", "is required: a successful settlement names its transaction")
	}
	if in.TxHash, err = evmverify.ParseTxHash(sr.Transaction); err != nil {
		return in, false, badRequest("/settleResponse/transaction", "must be 0x followed by 64 hexadecimal digits")
	}

	var pp X402PaymentPayload
	havePayload, err := decodeX402Part("/paymentPayload", payloadRaw, &pp)
	if err != nil {
		return in, false, err
	}
	if havePayload && pp.X402Version != 1 && pp.X402Version != 2 {
		return in, false, &Error{Code: CodeUnsupportedProtocol, Field: "/paymentPayload/x402Version",
			Detail: fmt.Sprintf("x402 version %d is not supported; supported: 2 (and v1 field names)", pp.X402Version)}
	}

	var req X402PaymentRequirements
	reqPtr := "/paymentRequirements"
	haveReq, err := decodeX402Part(reqPtr, requirementsRaw, &req)
	if err != nil {
		return in, false, err
	}
	if !haveReq {
		if !havePayload || pp.Accepted == nil {
			return in, false, badRequest(reqPtr, "is required unless the payment payload is x402 v2 (its \"accepted\" member names the requirements)")
		}
		req, reqPtr = *pp.Accepted, "/paymentPayload/accepted"
	}

	switch {
	case havePayload:
		in.Version = pp.X402Version
	case req.MaxAmountRequired != "" && req.Amount == "":
		in.Version = 1
	default:
		in.Version = 2
	}
	if req.Scheme == "" {
		return in, false, badRequest(reqPtr+"/scheme", "is required")
	}
	if req.Scheme != SchemeExact {
		return in, false, &Error{Code: CodeUnsupportedScheme, Field: reqPtr + "/scheme", Detail: fmt.Sprintf("scheme %q is not supported; supported: %q", req.Scheme, SchemeExact)}
	}
	if in.Network, err = x402Network(reqPtr+"/network", req.Network); err != nil {
		return in, false, err
	}
	if err := sameNetwork("/settleResponse/network", sr.Network, in.Network, reqPtr); err != nil {
		return in, false, err
	}
	if havePayload {
		if pp.Accepted != nil && reqPtr != "/paymentPayload/accepted" {
			if err := sameNetwork("/paymentPayload/accepted/network", pp.Accepted.Network, in.Network, reqPtr); err != nil {
				return in, false, err
			}
		}
		if err := sameNetwork("/paymentPayload/network", pp.Network, in.Network, reqPtr); err != nil {
			return in, false, err
		}
	}
	if req.Asset == "" {
		return in, false, badRequest(reqPtr+"/asset", "is required (the token contract address)")
	}
	if _, err := parseAsset(in.Network, req.Asset); err != nil {
		return in, false, withField(reqPtr+"/asset", err)
	}
	if in.AmountAtomic, err = x402Amount(sr.Amount, req, reqPtr); err != nil {
		return in, false, err
	}
	if in.PayTo, err = parseAddress(reqPtr+"/payTo", req.PayTo); err != nil {
		return in, false, err
	}
	if sr.Payer != "" {
		if in.Payer, err = parseAddress("/settleResponse/payer", sr.Payer); err != nil {
			return in, false, err
		}
	}
	if havePayload {
		if err := in.readExactPayload(pp.Payload); err != nil {
			return in, false, err
		}
	}
	if in.Payer == "" {
		return in, false, badRequest("/settleResponse/payer", "is required when the payment payload does not name the payer (authorization.from, permit2Authorization.from or delegator)")
	}
	resource, resourcePtr := req.Resource, reqPtr+"/resource"
	if havePayload && pp.Resource != nil {
		resource, resourcePtr = pp.Resource.URL, "/paymentPayload/resource/url"
	}
	if in.ResourceURL, err = parseResourceURL(resourcePtr, resource); err != nil {
		return in, false, err
	}
	return in, pending, nil
}

// readExactPayload takes the payer, transfer method and EIP-3009 nonce from
// the scheme payload. A payer named both here and by the settle response
// must be the same account: the two documents describe one payment.
func (in *x402Input) readExactPayload(raw json.RawMessage) error {
	const ptr = "/paymentPayload/payload"
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var p x402ExactPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		return prefixField(ptr, jsonError(err))
	}
	var from, fromPtr string
	switch {
	case p.Authorization != nil:
		in.Method, from, fromPtr = "eip3009", p.Authorization.From, ptr+"/authorization/from"
		if p.Authorization.Nonce != "" {
			if !txHashRE.MatchString(p.Authorization.Nonce) {
				return badRequest(ptr+"/authorization/nonce", "must be 0x followed by 64 hexadecimal digits (an EIP-3009 bytes32 nonce)")
			}
			in.Nonce = strings.ToLower(p.Authorization.Nonce)
		}
	case p.Permit2Authorization != nil:
		in.Method, from, fromPtr = "permit2", p.Permit2Authorization.From, ptr+"/permit2Authorization/from"
	case p.Delegator != "":
		in.Method, from, fromPtr = "erc7710", p.Delegator, ptr+"/delegator"
	}
	if from == "" {
		return nil
	}
	addr, err := parseAddress(fromPtr, from)
	if err != nil {
		return err
	}
	if in.Payer != "" && in.Payer != addr {
		return badRequest(fromPtr, "names payer %s, but the settle response names %s", addr, in.Payer)
	}
	in.Payer = addr
	return nil
}

// x402Network accepts a CAIP-2 network or an x402 v1 network name and
// returns the CAIP-2 id of a supported network.
func x402Network(field, v string) (string, error) {
	network := v
	if caip2, ok := x402V1Networks[v]; ok {
		network = caip2
	}
	network, err := parseNetwork(field, network)
	var fe *Error
	if errors.As(err, &fe) && fe.Code == CodeUnsupportedNetwork {
		fe.Detail += " (x402 v1 names: base, ethereum)"
	}
	return network, err
}

// sameNetwork checks that a network named by another document (empty:
// not named) is the requirements' network.
func sameNetwork(field, v, want, reqPtr string) error {
	if v == "" {
		return nil
	}
	got := v
	if caip2, ok := x402V1Networks[v]; ok {
		got = caip2
	}
	if got != want {
		return badRequest(field, "is %q, but %s/network is %q: the documents describe different payments", v, reqPtr, want)
	}
	return nil
}

// x402Amount returns the settled amount in atomic units: the settle
// response's amount when present (the actual amount, research x402-evm.md
// §2.3), else the requirements' amount (v2) or maxAmountRequired (v1).
func x402Amount(settled string, req X402PaymentRequirements, reqPtr string) (string, error) {
	if settled != "" {
		return parseAtomic("/settleResponse/amount", settled)
	}
	if req.Amount != "" && req.MaxAmountRequired != "" && req.Amount != req.MaxAmountRequired {
		return "", badRequest(reqPtr+"/maxAmountRequired", "is %q, but amount is %q: one requirement, two amounts", req.MaxAmountRequired, req.Amount)
	}
	switch {
	case req.Amount != "":
		return parseAtomic(reqPtr+"/amount", req.Amount)
	case req.MaxAmountRequired != "":
		return parseAtomic(reqPtr+"/maxAmountRequired", req.MaxAmountRequired)
	}
	return "", badRequest(reqPtr+"/amount", "is required (atomic units as a decimal string, e.g. \"10000\" for 0.01 USDC)")
}

// parseAtomic accepts a positive amount of atomic units as x402 writes it: a
// decimal integer string, no sign, no leading zeros, at most
// maxAtomicDigits digits.
func parseAtomic(field, v string) (string, error) {
	if !atomicRE.MatchString(v) {
		return "", badRequest(field, "must be atomic units as a decimal integer string such as \"10000\" (no sign, decimals, exponent or leading zeros)")
	}
	if len(v) > maxAtomicDigits {
		return "", badRequest(field, "is too large (at most %d digits)", maxAtomicDigits)
	}
	if v == "0" {
		return "", badRequest(field, "must be greater than zero")
	}
	return v, nil
}

// usdcPerAtomic is 10^6: USDC has 6 decimals on both networks
// (evmverify.USDCDecimals; research x402-evm.md §3).
var usdcPerAtomic = new(big.Int).Exp(big.NewInt(10), big.NewInt(evmverify.USDCDecimals), nil)

// atomicToUSDC renders atomic units as a USDC decimal string with math/big
// (never floats): "1500000" → "1.5", "10000" → "0.01", "2000000" → "2".
// Trailing zeros of the fraction are dropped, so each amount has one
// spelling.
func atomicToUSDC(atomic *big.Int) string {
	q, r := new(big.Int).QuoRem(atomic, usdcPerAtomic, new(big.Int))
	if r.Sign() == 0 {
		return q.String()
	}
	frac := fmt.Sprintf("%0*s", evmverify.USDCDecimals, r.String())
	return q.String() + "." + strings.TrimRight(frac, "0")
}

// parseResourceURL accepts the paid resource's URL as x402 reports it: it is
// stored on the record for reconciliation, so it is bounded and may not
// carry control characters.
func parseResourceURL(field, v string) (string, error) {
	if len(v) > maxResourceURL {
		return "", badRequest(field, "is longer than %d bytes", maxResourceURL)
	}
	if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) >= 0 {
		return "", badRequest(field, "contains control characters")
	}
	return v, nil
}

// decodeX402Part decodes one x402 document. raw is JSON (an object), a JSON
// string holding the base64 of the object (the HTTP header value), or that
// base64 text bare; empty or JSON null means absent. Unknown members are
// ignored (x402 grows), duplicate members and wrong JSON types are errors
// under the part's pointer.
func decodeX402Part(ptr string, raw []byte, v any) (bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return false, badRequest(ptr, "is not a valid JSON string")
		}
		raw = []byte(strings.TrimSpace(s))
		if len(raw) == 0 {
			return false, nil
		}
	}
	if raw[0] != '{' {
		decoded, err := decodeBase64(string(raw))
		if err != nil {
			return false, badRequest(ptr, "must be a JSON object or the base64 of one (an x402 header value)")
		}
		raw = bytes.TrimSpace(decoded)
		if len(raw) == 0 || raw[0] != '{' {
			return false, badRequest(ptr, "decodes from base64, but not to a JSON object")
		}
	}
	if !utf8.Valid(raw) {
		return false, badRequest(ptr, "is not valid UTF-8")
	}
	if err := checkDuplicateKeys(raw); err != nil {
		return false, prefixField(ptr, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return false, prefixField(ptr, jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return false, badRequest(ptr, "has data after the JSON object")
	}
	return true, nil
}

// decodeBase64 accepts standard base64 with or without padding (x402's
// headers: Go base64.StdEncoding, TypeScript btoa) and, leniently, the URL
// alphabet.
func decodeBase64(s string) ([]byte, error) {
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// prefixField puts a part's pointer before the field of an *Error.
func prefixField(ptr string, err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return withField(ptr+fe.Field, fe)
	}
	return err
}

// withField returns a copy of an *Error naming another field.
func withField(field string, err error) error {
	var fe *Error
	if !errors.As(err, &fe) {
		return err
	}
	cp := *fe
	cp.Field = field
	return &cp
}

// notSettled is the answer to a settle response with success:false: the
// payment did not settle, so there is nothing to record (research
// x402-evm.md §2.2: the SDK's hook may fire on failures too).
func notSettled(reason, message string) *Error {
	detail := "the settle response says success:false: the payment did not settle, nothing was recorded"
	if reason != "" {
		detail += fmt.Sprintf(" (errorReason %q)", reason)
	}
	if reason == x402SettlementPending {
		detail += "; a pending settlement needs its transaction hash to be held"
	}
	e := &Error{Code: CodeNotSettled, Field: "/settleResponse/success", Detail: detail}
	if message != "" {
		e.Err = fmt.Errorf("facilitator: %s", message)
	}
	return e
}

// X402IngestRequest is the body of POST /v1/x402/settlements: the three x402
// documents, each either the JSON object itself or a JSON string holding
// the base64 header value (PAYMENT-RESPONSE, PAYMENT-SIGNATURE / X-PAYMENT),
// and the merchant-attested buyer facts. paymentRequirements may be omitted
// when paymentPayload is x402 v2, paymentPayload when settleResponse names
// the payer (see Engine.IngestX402).
type X402IngestRequest struct {
	SettleResponse      json.RawMessage `json:"settleResponse"`
	PaymentRequirements json.RawMessage `json:"paymentRequirements,omitempty"`
	PaymentPayload      json.RawMessage `json:"paymentPayload,omitempty"`
	Buyer               BuyerFacts      `json:"buyer"`
}

// DecodeX402IngestRequest reads the body of POST /v1/x402/settlements. The
// envelope and buyer are decoded strictly, as DecodeSettlementRequest
// decodes a settlement (unknown or duplicate members, JSON numbers for
// strings: BAD_REQUEST with the field's pointer); the x402 documents are
// checked by IngestX402, which ignores their unknown members but not their
// duplicates.
func DecodeX402IngestRequest(r io.Reader) (X402IngestRequest, error) {
	var env struct {
		X402IngestRequest
		Buyer json.RawMessage `json:"buyer"`
	}
	if err := decodeStrict(r, &env); err != nil {
		return X402IngestRequest{}, err
	}
	req := env.X402IngestRequest
	// The buyer is decoded on its own so that an unknown member is named
	// by its full pointer (encoding/json reports only the member's name).
	if b := bytes.TrimSpace(env.Buyer); len(b) > 0 && string(b) != "null" {
		if err := decodeStrict(bytes.NewReader(b), &req.Buyer); err != nil {
			return X402IngestRequest{}, prefixField("/buyer", err)
		}
	}
	return req, nil
}
