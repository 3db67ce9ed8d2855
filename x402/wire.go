package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/strictjson"
)

// SettleResponse is an x402 SettleResponse: the body of a facilitator's
// POST /settle answer and, base64-encoded, the PAYMENT-RESPONSE header
// (X-PAYMENT-RESPONSE in v1). Spec v2 §5.3.2.
type SettleResponse struct {
	Success      bool            `json:"success"`
	ErrorReason  string          `json:"errorReason,omitempty"`  // e.g. "insufficient_funds", "settlement_pending"
	ErrorMessage string          `json:"errorMessage,omitempty"` // Go SDK only
	Payer        string          `json:"payer,omitempty"`
	Transaction  string          `json:"transaction"` // tx hash; "" on failure
	Network      string          `json:"network"`     // CAIP-2 (v1: a network name)
	Amount       string          `json:"amount,omitempty"`
	Extensions   json.RawMessage `json:"extensions,omitempty"`
}

// PaymentRequirements is one x402 PaymentRequirements: an element of
// PaymentRequired.accepts, and PaymentPayload.accepted in v2. Spec v2 §5.1.2.
type PaymentRequirements struct {
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

// PaymentPayload is an x402 PaymentPayload: base64-encoded, the
// PAYMENT-SIGNATURE header (X-PAYMENT in v1). v2 carries the chosen
// requirements in Accepted; v1 carries Scheme and Network instead. Spec v2
// §5.2.
type PaymentPayload struct {
	X402Version int                  `json:"x402Version"`
	Resource    *ResourceInfo        `json:"resource,omitempty"`
	Accepted    *PaymentRequirements `json:"accepted,omitempty"` // v2
	Scheme      string               `json:"scheme,omitempty"`   // v1
	Network     string               `json:"network,omitempty"`  // v1
	Payload     json.RawMessage      `json:"payload"`
	Extensions  json.RawMessage      `json:"extensions,omitempty"`
}

// ResourceInfo describes the paid resource (spec v2 §5.1.1).
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// exactPayload is the part of the `exact` EVM scheme's payload that
// names the payer: EIP-3009 authorization, Permit2 permit2Authorization, or
// an ERC-7710 delegator (https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md).
type exactPayload struct {
	Authorization *struct {
		From        string `json:"from"`
		To          string `json:"to"`
		Value       string `json:"value"`
		ValidAfter  string `json:"validAfter"`
		ValidBefore string `json:"validBefore"`
		Nonce       string `json:"nonce"`
	} `json:"authorization"`
	Permit2Authorization *permit2Authorization `json:"permit2Authorization"`
	// ERC-7710 (scheme_exact_evm.md §3 Phase 2).
	DelegationManager string `json:"delegationManager"`
	PermissionContext string `json:"permissionContext"`
	Delegator         string `json:"delegator"`
}

// erc7710Member is the first member of the ERC-7710 shape p has, "" for
// none.
func (p *exactPayload) erc7710Member() string {
	for _, m := range []struct{ name, v string }{{"delegator", p.Delegator}, {"delegationManager", p.DelegationManager}, {"permissionContext", p.PermissionContext}} {
		if m.v != "" {
			return m.name
		}
	}
	return ""
}

// permit2Authorization is the Permit2 method's signed
// PermitWitnessTransferFrom: the payer (from) lets the spender (the
// x402ExactPermit2Proxy) move permitted.amount of permitted.token to
// witness.to, between witness.validAfter and deadline, once (nonce)
// (scheme_exact_evm.md §2, Phase 2).
type permit2Authorization struct {
	From      string `json:"from"`
	Permitted *struct {
		Token  string `json:"token"`
		Amount string `json:"amount"`
	} `json:"permitted"`
	Spender  string `json:"spender"`
	Nonce    string `json:"nonce"`
	Deadline string `json:"deadline"`
	Witness  *struct {
		To         string `json:"to"`
		ValidAfter string `json:"validAfter"`
	} `json:"witness"`
}

// SettlementPending is the settle response error reason that is not a
// failure: the transaction was submitted but its outcome is not known yet
// (x402-foundation/x402 issue #1062; Go SDK v2.23.0 and later).
const SettlementPending = "settlement_pending"

// v1Networks maps the x402 v1 network names of the chains this module
// knows to CAIP-2 (x402 Go SDK go/mechanisms/evm/v1/network.go,
// https://github.com/x402-foundation/x402; v1 and v2 names in
// https://github.com/x402-foundation/x402/blob/main/specs/x402-specification-v1.md and x402-specification-v2.md). The testnets are mapped so that the answer names the
// network precisely (UNSUPPORTED_NETWORK eip155:84532), not as a typo.
var v1Networks = map[string]string{
	"base":         "eip155:8453",
	"base-sepolia": "eip155:84532",
	"ethereum":     "eip155:1",
	"sepolia":      "eip155:11155111",
}

// Bounds on x402 fields that end up in a record.
const (
	// MaxAtomicDigits bounds an amount in atomic units: 18 digits, below
	// 10^12 USDC of 6 decimals (above any USDC supply).
	MaxAtomicDigits = 18
	maxResourceURL  = 2048
	// USDCDecimals is the precision of USDC on every chain x402 settles it
	// on (Circle's token contracts: decimals() = 6).
	USDCDecimals = 6
)

var (
	atomicRE  = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	hash32RE  = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	addressRE = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	caip2RE   = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
)

// Settlement is one settled x402 payment as a facilitator or resource
// server holds it after settling: the three x402 documents, each raw JSON,
// a JSON string holding the base64 header value, or that base64 text bare.
// PaymentRequirements may be empty when PaymentPayload is x402 v2 (its
// "accepted" member names the requirements); PaymentPayload may be empty
// when SettleResponse names the payer.
type Settlement struct {
	SettleResponse      []byte // PAYMENT-RESPONSE (X-PAYMENT-RESPONSE in v1), or the /settle answer
	PaymentRequirements []byte // the element of PaymentRequired.accepts that was paid
	PaymentPayload      []byte // PAYMENT-SIGNATURE (X-PAYMENT in v1)
}

// Payment is what the three documents of a Settlement say about one
// payment, parsed and normalised. It is stored in queues as JSON, so its
// fields are only ever added.
type Payment struct {
	Version      int    `json:"x402Version"`
	Network      string `json:"network"` // CAIP-2 (v1 names mapped)
	TxHash       string `json:"txHash"`  // lower case
	AmountAtomic string `json:"amount"`  // canonical decimal integer, atomic units of the asset
	Asset        string `json:"asset"`   // token contract, lower case
	Payer        string `json:"payer"`   // lower case
	PayTo        string `json:"payTo"`   // lower case
	ResourceURL  string `json:"resourceUrl,omitempty"`
	Method       string `json:"transferMethod,omitempty"`     // eip3009 | permit2 | erc7710, from the payload's shape
	Nonce        string `json:"authorizationNonce,omitempty"` // the EIP-3009 nonce (bytes32), when the payload has one
	// NetworkField and AssetField are the JSON pointers the network and
	// asset were read from, for a caller that refuses one it does not
	// support.
	NetworkField string `json:"-"`
	AssetField   string `json:"-"`
}

// Parse reads a Settlement and returns the normalised payment and whether
// the facilitator said "settlement_pending" (submitted, outcome unknown).
// It checks the documents' syntax and that they describe one payment
// (same network, payer, payee and amount wherever two of them name it); any
// CAIP-2 network and any asset are accepted (see Parser). Errors are
// *Error with JSON pointers under /settleResponse, /paymentRequirements
// and /paymentPayload.
func Parse(s Settlement) (Payment, bool, error) { return Parser{}.Parse(s) }

// Parser reads settlements for the networks and assets a caller supports.
type Parser struct {
	// Assets maps each accepted CAIP-2 network to the token contract
	// accepted on it (any case). nil accepts every network and asset.
	// Otherwise another network is UnsupportedNetwork and another asset
	// UnsupportedAsset, reported where the requirements name them, before
	// the other documents are compared with them.
	Assets map[string]string
}

// Parse is the package's Parse with the parser's networks and assets.
func (ps Parser) Parse(s Settlement) (Payment, bool, error) {
	var in Payment
	var sr struct {
		SettleResponse
		Success *bool `json:"success"`
	}
	present, err := decodePart("/settleResponse", s.SettleResponse, &sr)
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
		if sr.ErrorReason != SettlementPending || sr.Transaction == "" {
			return in, false, notSettled(sr.ErrorReason, sr.ErrorMessage, sr.Transaction)
		}
		pending = true
	}
	if err := successWithoutError(*sr.Success, sr.ErrorReason, sr.ErrorMessage); err != nil {
		return in, false, err
	}
	if sr.Transaction == "" {
		return in, false, badRequest("/settleResponse/transaction", "is required: a successful settlement names its transaction")
	}
	if !hash32RE.MatchString(sr.Transaction) {
		return in, false, badRequest("/settleResponse/transaction", "must be 0x followed by 64 hexadecimal digits")
	}
	in.TxHash = strings.ToLower(sr.Transaction)
	if sr.Network == "" {
		return in, false, badRequest("/settleResponse/network", "is required: the settle response names the network it settled on (x402 specification v1 and v2 §5.3.2)")
	}

	var ppv struct {
		PaymentPayload
		X402Version *int `json:"x402Version"`
	}
	havePayload, err := decodePart("/paymentPayload", s.PaymentPayload, &ppv)
	if err != nil {
		return in, false, err
	}
	pp := ppv.PaymentPayload
	if havePayload && ppv.X402Version == nil {
		return in, false, badRequest("/paymentPayload/x402Version", "is required: a payment payload names its x402 version (x402 specification v2 §5.2.2); omit the whole payment payload when there is none")
	}
	if havePayload {
		pp.X402Version = *ppv.X402Version
	}
	if havePayload && pp.X402Version != 1 && pp.X402Version != 2 {
		return in, false, &Error{Kind: UnsupportedProtocol, Field: "/paymentPayload/x402Version",
			Detail: fmt.Sprintf("x402 version %d is not supported; supported: 2 (and v1 field names)", pp.X402Version)}
	}

	var req PaymentRequirements
	reqPtr := "/paymentRequirements"
	haveReq, err := decodePart(reqPtr, s.PaymentRequirements, &req)
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
		return in, false, &Error{Kind: UnsupportedScheme, Field: reqPtr + "/scheme", Detail: fmt.Sprintf("scheme %s is not supported; supported: %q", shown.Quote(req.Scheme), SchemeExact)}
	}
	if err := versionShape(in.Version, havePayload, pp, req, reqPtr, sr.Network); err != nil {
		return in, false, err
	}
	if in.Network, err = parseNetwork(reqPtr+"/network", req.Network); err != nil {
		return in, false, err
	}
	in.NetworkField = reqPtr + "/network"
	if err := ps.network(in.NetworkField, in.Network); err != nil {
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
	in.AssetField = reqPtr + "/asset"
	if err := ps.asset(in.AssetField, in.Network, req.Asset); err != nil {
		return in, false, err
	}
	if in.Asset, err = parseAddress(in.AssetField, req.Asset); err != nil {
		return in, false, err
	}
	if in.AmountAtomic, err = amount(sr.Amount, req, reqPtr); err != nil {
		return in, false, err
	}
	if in.PayTo, err = parseAddress(reqPtr+"/payTo", req.PayTo); err != nil {
		return in, false, err
	}
	if havePayload {
		if pp.Scheme != "" && pp.Scheme != req.Scheme {
			return in, false, badRequest("/paymentPayload/scheme", "is %s, but %s/scheme is %s: the documents describe different payments", shown.Quote(pp.Scheme), reqPtr, shown.Quote(req.Scheme))
		}
		if pp.Accepted != nil && reqPtr != "/paymentPayload/accepted" {
			if err := in.sameAccepted(*pp.Accepted, req.Scheme, reqPtr); err != nil {
				return in, false, err
			}
		}
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
		if err := sameMethod(reqPtr, req.Extra, in.Method); err != nil {
			return in, false, err
		}
		if pp.Accepted != nil && reqPtr != "/paymentPayload/accepted" {
			if err := sameMethod("/paymentPayload/accepted", pp.Accepted.Extra, in.Method); err != nil {
				return in, false, err
			}
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

// versionShape checks that the documents have the shape of their x402
// version. x402 v2 names networks in CAIP-2 (specification v2 §5.1.2,
// §5.3.2, §11.1), the price "amount" (§5.1.2), and its payload carries
// "accepted" (§5.2.2). x402 v1 names the price "maxAmountRequired" (v1
// §5.1.2) and its payload names scheme and network (v1 §5.2.2, "All fields
// are required"). The reference facilitators route a payment by version
// and network (x402 Go SDK go/facilitator.go: v2 mechanisms under CAIP-2
// ids, v1 under names), so documents of one version in the other's shape
// describe no settlement.
func versionShape(version int, havePayload bool, pp PaymentPayload, req PaymentRequirements, reqPtr, settleNetwork string) error {
	switch version {
	case 2:
		nets := []struct{ field, v string }{{reqPtr + "/network", req.Network}, {"/settleResponse/network", settleNetwork}}
		if havePayload && pp.Accepted != nil {
			nets = append(nets, struct{ field, v string }{"/paymentPayload/accepted/network", pp.Accepted.Network})
		}
		for _, n := range nets {
			if caip2, ok := v1Networks[n.v]; ok {
				return badRequest(n.field, "is %q, an x402 v1 network name, in x402 v2 documents: v2 names networks in CAIP-2 (%q; x402 specification v2 §11.1)", n.v, caip2)
			}
		}
		if req.Amount == "" {
			return badRequest(reqPtr+"/amount", "is required in x402 v2 (atomic units as a decimal string; maxAmountRequired is the v1 name; x402 specification v2 §5.1.2)")
		}
		if havePayload && pp.Accepted == nil {
			return badRequest("/paymentPayload/accepted", "is required in an x402 v2 payment payload: the requirements the client chose and signed for (x402 specification v2 §5.2.2)")
		}
	case 1:
		if req.MaxAmountRequired == "" {
			return badRequest(reqPtr+"/maxAmountRequired", "is required in x402 v1 (atomic units as a decimal string; amount is the v2 name; x402 specification v1 §5.1.2)")
		}
		if havePayload && pp.Scheme == "" {
			return badRequest("/paymentPayload/scheme", "is required in an x402 v1 payment payload (x402 specification v1 §5.2.2)")
		}
		if havePayload && pp.Network == "" {
			return badRequest("/paymentPayload/network", "is required in an x402 v1 payment payload (x402 specification v1 §5.2.2)")
		}
	}
	return nil
}

func (ps Parser) network(field, network string) error {
	if ps.Assets == nil {
		return nil
	}
	if _, ok := ps.Assets[network]; !ok {
		return &Error{Kind: UnsupportedNetwork, Field: field, Detail: fmt.Sprintf("network %s is not supported; supported: %s (x402 v1 names: base, ethereum)", shown.Quote(network), ps.networks())}
	}
	return nil
}

func (ps Parser) asset(field, network, asset string) error {
	if ps.Assets == nil || strings.EqualFold(asset, ps.Assets[network]) {
		return nil
	}
	return &Error{Kind: UnsupportedAsset, Field: field, Detail: fmt.Sprintf("asset %s is not supported on %s; supported: %s", shown.Quote(asset), network, ps.Assets[network])}
}

func (ps Parser) networks() string {
	out := make([]string, 0, len(ps.Assets))
	for n := range ps.Assets {
		out = append(out, n)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// SchemeExact is the only x402 scheme whose settlements are recorded: the
// payer authorises exactly the amount the requirements ask for.
const SchemeExact = "exact"

// readExactPayload takes the payer, transfer method and EIP-3009 nonce from
// the scheme payload. A payer named both here and by the settle response
// must be the same account: the two documents describe one payment. So
// must an EIP-3009 authorization's "to" and "value" be the requirements'
// payTo and amount: transferWithAuthorization moves exactly value to to
// (EIP-3009), and the exact scheme requires value = amount and to = payTo
// (scheme_exact_evm.md "Verify the authorization parameters meet the
// PaymentRequirements"; the x402 Go SDK facilitators, v1 and v2, refuse a
// recipient or authorization value mismatch). Likewise a Permit2
// authorization's permitted token and amount and its witness.to must be
// the requirements' asset, amount and payTo (scheme_exact_evm.md §2; the
// Go SDK refuses a token, amount or recipient mismatch). in.Asset,
// in.PayTo and in.AmountAtomic are set.
func (in *Payment) readExactPayload(raw json.RawMessage) error {
	const ptr = "/paymentPayload/payload"
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var p exactPayload
	if err := strictjson.DecodeOpen(raw, &p); err != nil {
		return prefixField(ptr, decodeError(err))
	}
	var shapes []string
	erc7710 := p.erc7710Member()
	for _, m := range []struct {
		name    string
		present bool
	}{{"authorization", p.Authorization != nil}, {"permit2Authorization", p.Permit2Authorization != nil}, {erc7710, erc7710 != ""}} {
		if m.present {
			shapes = append(shapes, m.name)
		}
	}
	if len(shapes) > 1 {
		return badRequest(ptr+"/"+shapes[1], "is present beside %s: an exact payload has the shape of one transfer method (EIP-3009 authorization, Permit2 permit2Authorization or ERC-7710 delegator; scheme_exact_evm.md), and this one says two things about how the money moved", shapes[0])
	}
	var from, fromPtr string
	switch {
	case p.Authorization != nil:
		a := p.Authorization
		in.Method, from, fromPtr = "eip3009", a.From, ptr+"/authorization/from"
		if err := checkAuthorization(ptr+"/authorization/", a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce); err != nil {
			return err
		}
		if !hash32RE.MatchString(a.Nonce) {
			return badRequest(ptr+"/authorization/nonce", "must be 0x followed by 64 hexadecimal digits (an EIP-3009 bytes32 nonce)")
		}
		in.Nonce = strings.ToLower(a.Nonce)
		if err := in.payeeIs(ptr+"/authorization/to", p.Authorization.To); err != nil {
			return err
		}
		if err := in.amountIs(ptr+"/authorization/value", p.Authorization.Value); err != nil {
			return err
		}
	case p.Permit2Authorization != nil:
		pa := p.Permit2Authorization
		in.Method, from, fromPtr = "permit2", pa.From, ptr+"/permit2Authorization/from"
		if err := checkPermit2(ptr+"/permit2Authorization/", pa); err != nil {
			return err
		}
		if err := in.assetIs(ptr+"/permit2Authorization/permitted/token", pa.Permitted.Token); err != nil {
			return err
		}
		if err := in.amountIs(ptr+"/permit2Authorization/permitted/amount", pa.Permitted.Amount); err != nil {
			return err
		}
		if err := in.payeeIs(ptr+"/permit2Authorization/witness/to", pa.Witness.To); err != nil {
			return err
		}
	case erc7710 != "":
		in.Method, from, fromPtr = "erc7710", p.Delegator, ptr+"/delegator"
		if err := checkERC7710(ptr+"/", &p); err != nil {
			return err
		}
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

// uintRE is a uint256 as x402 writes EIP-3009's validAfter and validBefore:
// decimal digits, at most 78 (2^256 has 78 digits).
var uintRE = regexp.MustCompile(`^[0-9]{1,78}$`)

// uint256At reads v, the member at ptr, as uintRE's decimal; what says
// what it must be when it is not.
func uint256At(ptr, v, what string) (*big.Int, error) {
	if !uintRE.MatchString(v) {
		return nil, badRequest(ptr, "must be %s", what)
	}
	n, _ := new(big.Int).SetString(v, 10)
	return n, nil
}

// checkAuthorization checks that an EIP-3009 authorization has its six
// members, all required (x402 specification v1 §5.2.2 and v2 §5.2.2,
// "The Authorization object"), and a validity window that some block
// could fall in: transferWithAuthorization requires validAfter <
// block.timestamp < validBefore (EIP-3009,
// https://eips.ethereum.org/EIPS/eip-3009), so validBefore <= validAfter
// was never executable. ptr ends with "/".
func checkAuthorization(ptr string, from, to, value, validAfter, validBefore, nonce string) error {
	for _, m := range []struct{ name, v string }{
		{"from", from}, {"to", to}, {"value", value},
		{"validAfter", validAfter}, {"validBefore", validBefore}, {"nonce", nonce},
	} {
		if m.v == "" {
			return badRequest(ptr+m.name, "is required: an EIP-3009 authorization names from, to, value, validAfter, validBefore and nonce (x402 specification §5.2.2)")
		}
	}
	var window [2]*big.Int
	for i, m := range []struct{ name, v string }{{"validAfter", validAfter}, {"validBefore", validBefore}} {
		var err error
		if window[i], err = uint256At(ptr+m.name, m.v, "a Unix time as a decimal integer string such as \"1740672089\" (EIP-3009 uint256)"); err != nil {
			return err
		}
	}
	if window[1].Cmp(window[0]) <= 0 {
		return badRequest(ptr+"validBefore", "is %s, not after validAfter %s: EIP-3009 executes an authorization only strictly between the two, so this one never settled", validBefore, validAfter)
	}
	return nil
}

// checkPermit2 checks that a Permit2 authorization has its members, all
// required: from, permitted {token, amount}, spender, nonce, deadline and
// witness {to, validAfter} (scheme_exact_evm.md §2 Phase 2,
// https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md;
// the x402 Go SDK's Permit2PayloadFromMap refuses a payload without any of
// them, so none such was settled), with addresses where addresses go and
// uint256 decimal strings for nonce, deadline and validAfter, and a window
// some block could fall in: the x402ExactPermit2Proxy requires
// block.timestamp >= witness.validAfter and Permit2's
// permitWitnessTransferFrom reverts after the deadline, so a deadline before
// validAfter never settled. The spender must be the x402ExactPermit2Proxy
// (X402ExactPermit2Proxy): "The spender in the signature is the
// x402ExactPermit2Proxy, not the Facilitator", the contract that sends the
// funds only to witness.to and exactly permitted.amount (scheme_exact_evm.md
// §2 Phase 2 and Annex), and the x402 Go and TypeScript facilitators refuse
// any other spender (invalid_permit2_spender), so a permit for another
// spender was not settled under the exact scheme. ptr ends with "/".
func checkPermit2(ptr string, pa *permit2Authorization) error {
	required := func(member string) error {
		return badRequest(ptr+member, "is required: a Permit2 authorization names from, permitted {token, amount}, spender, nonce, deadline and witness {to, validAfter} (x402 exact scheme on EVM, Permit2)")
	}
	if pa.From == "" {
		return required("from")
	}
	if pa.Permitted == nil {
		return required("permitted")
	}
	if pa.Permitted.Token == "" {
		return required("permitted/token")
	}
	if pa.Permitted.Amount == "" {
		return required("permitted/amount")
	}
	if pa.Spender == "" {
		return required("spender")
	}
	spender, err := parseAddress(ptr+"spender", pa.Spender)
	if err != nil {
		return err
	}
	if spender != X402ExactPermit2Proxy {
		return badRequest(ptr+"spender", "is %s, but in the exact scheme a Permit2 authorization's spender is the x402ExactPermit2Proxy %s, which alone sends exactly the permitted amount to witness.to (scheme_exact_evm.md §2); the x402 facilitators refuse any other spender (invalid_permit2_spender), so this permit was not settled under the exact scheme", spender, X402ExactPermit2Proxy)
	}
	if pa.Witness == nil {
		return required("witness")
	}
	if pa.Witness.To == "" {
		return required("witness/to")
	}
	var deadline, validAfter *big.Int
	for _, m := range []struct {
		name, v string
		n       **big.Int
	}{{"nonce", pa.Nonce, nil}, {"deadline", pa.Deadline, &deadline}, {"witness/validAfter", pa.Witness.ValidAfter, &validAfter}} {
		if m.v == "" {
			return required(m.name)
		}
		n, err := uint256At(ptr+m.name, m.v, "a uint256 as a decimal integer string such as \"1740672154\" (Permit2)")
		if err != nil {
			return err
		}
		if m.n != nil {
			*m.n = n
		}
	}
	if deadline.Cmp(validAfter) < 0 {
		return badRequest(ptr+"deadline", "is %s, before witness.validAfter %s: the permit is executable only from validAfter to the deadline, so this one never settled", pa.Deadline, pa.Witness.ValidAfter)
	}
	return nil
}

// X402ExactPermit2Proxy is the x402ExactPermit2Proxy, the spender of every
// exact-scheme Permit2 authorization, deployed at this address on every EVM
// chain with CREATE2 (scheme_exact_evm.md, Annex "Canonical Address",
// https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md;
// x402 Go SDK go/mechanisms/evm/constants.go X402ExactPermit2ProxyAddress).
// Lower case, the form every comparison uses. The earlier pre-audit proxy
// addresses were deployed on Base Sepolia only (contracts/evm/README.md),
// a network whose payments are not recorded.
const X402ExactPermit2Proxy = "0x402085c248eea27d92e8b30b2c58ed07f9e20001"

// payloadShapes names the scheme payload's member that makes each transfer
// method's shape, for answers.
var payloadShapes = map[string]string{"eip3009": "authorization", "permit2": "permit2Authorization", "erc7710": "delegator"}

// sameMethod checks that requirements' extra.assetTransferMethod (ptr is
// the requirements' pointer), when they name one, is the method whose
// shape the scheme payload has (method; "" when there is no scheme
// payload, and nothing to compare): "MUST be "eip3009" when the payment
// payload uses the EIP-3009 shape", and likewise for permit2 and erc7710
// (scheme_exact_evm.md). extra is free-form in x402, so one that does not
// name a method as a string is not read.
func sameMethod(ptr string, extra json.RawMessage, method string) error {
	if method == "" || len(extra) == 0 {
		return nil
	}
	var e struct {
		AssetTransferMethod string `json:"assetTransferMethod"`
	}
	if json.Unmarshal(extra, &e) != nil || e.AssetTransferMethod == "" || e.AssetTransferMethod == method {
		return nil
	}
	return badRequest(ptr+"/extra/assetTransferMethod", "is %s, but the payment payload has the %s shape (%s): the requirements and the payload describe different payments", shown.Quote(e.AssetTransferMethod), method, payloadShapes[method])
}

// hexBytesRE is a non-empty byte string in hex, as an ERC-7710
// permissionContext is written.
var hexBytesRE = regexp.MustCompile(`^0x(?:[0-9a-fA-F]{2})+$`)

// checkERC7710 checks that an ERC-7710 payload has its three members, all
// required: delegationManager and delegator (addresses) and
// permissionContext (the delegation proof, bytes in hex)
// (scheme_exact_evm.md §3 Phase 2: "The payload field must contain"); the
// facilitator settles by calling redeemDelegations on that manager with
// that context, so a payload without one of them settled nothing. ptr ends
// with "/".
func checkERC7710(ptr string, p *exactPayload) error {
	for _, m := range []struct{ name, v string }{{"delegationManager", p.DelegationManager}, {"permissionContext", p.PermissionContext}, {"delegator", p.Delegator}} {
		if m.v == "" {
			return badRequest(ptr+m.name, "is required: an ERC-7710 payload names delegationManager, permissionContext and delegator (x402 exact scheme on EVM, ERC-7710)")
		}
	}
	if _, err := parseAddress(ptr+"delegationManager", p.DelegationManager); err != nil {
		return err
	}
	if !hexBytesRE.MatchString(p.PermissionContext) {
		return badRequest(ptr+"permissionContext", "must be the delegation proof as 0x followed by an even, non-zero number of hexadecimal digits")
	}
	return nil
}

// payeeIs, assetIs and amountIs check a member of the scheme payload that
// repeats the requirements' payTo, asset or amount (empty: not named).
func (in *Payment) payeeIs(field, v string) error {
	return sameAddress(field, v, in.PayTo, "payee", "payTo")
}

func (in *Payment) assetIs(field, v string) error {
	return sameAddress(field, v, in.Asset, "token", "asset")
}

func sameAddress(field, v, want, what, member string) error {
	if v == "" {
		return nil
	}
	addr, err := parseAddress(field, v)
	if err != nil {
		return err
	}
	if addr != want {
		return badRequest(field, "names %s %s, but the requirements' %s is %s: the documents describe different payments", what, addr, member, want)
	}
	return nil
}

func (in *Payment) amountIs(field, v string) error {
	if v == "" {
		return nil
	}
	value, err := parseAtomic(field, v)
	if err != nil {
		return err
	}
	if value != in.AmountAtomic {
		return badRequest(field, "authorizes %s atomic units, but the payment's amount is %s: the exact scheme moves exactly the amount required", value, in.AmountAtomic)
	}
	return nil
}

// parseNetwork accepts a CAIP-2 network or an x402 v1 network name and
// returns the CAIP-2 id.
func parseNetwork(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required (CAIP-2, e.g. \"eip155:8453\")")
	}
	if caip2, ok := v1Networks[v]; ok {
		return caip2, nil
	}
	if !caip2RE.MatchString(v) {
		return "", &Error{Kind: UnsupportedNetwork, Field: field, Detail: fmt.Sprintf("%s is not a CAIP-2 network id (x402 v1 names: base, ethereum)", shown.Quote(v))}
	}
	return v, nil
}

// sameNetwork checks that a network named by another document (empty:
// not named) is the requirements' network.
func sameNetwork(field, v, want, reqPtr string) error {
	if v == "" {
		return nil
	}
	got := v
	if caip2, ok := v1Networks[v]; ok {
		got = caip2
	}
	if got != want {
		return badRequest(field, "is %s, but %s/network is %s: the documents describe different payments", shown.Quote(v), reqPtr, shown.Quote(want))
	}
	return nil
}

// amount returns the settled amount in atomic units: the settle
// response's amount when present ("actual amount settled in atomic units",
// https://github.com/x402-foundation/x402/blob/main/specs/x402-specification-v2.md §5.3.2), else the requirements' amount (v2) or maxAmountRequired (v1).
// The exact scheme settles exactly the amount required
// (https://github.com/x402-foundation/x402/blob/main/specs/schemes/exact/scheme_exact_evm.md;
// the x402 Go SDK facilitators refuse an authorization value other than
// it), so a settle response that states another amount than the
// requirements describes another payment.
func amount(settled string, req PaymentRequirements, reqPtr string) (string, error) {
	if req.Amount != "" && req.MaxAmountRequired != "" && req.Amount != req.MaxAmountRequired {
		return "", badRequest(reqPtr+"/maxAmountRequired", "is %s, but amount is %s: one requirement, two amounts", shown.Quote(req.MaxAmountRequired), shown.Quote(req.Amount))
	}
	var required string
	var err error
	switch {
	case req.Amount != "":
		required, err = parseAtomic(reqPtr+"/amount", req.Amount)
	case req.MaxAmountRequired != "":
		required, err = parseAtomic(reqPtr+"/maxAmountRequired", req.MaxAmountRequired)
	}
	if err != nil {
		return "", err
	}
	if settled == "" {
		if required == "" {
			return "", badRequest(reqPtr+"/amount", "is required (atomic units as a decimal string, e.g. \"10000\" for 0.01 USDC)")
		}
		return required, nil
	}
	got, err := parseAtomic("/settleResponse/amount", settled)
	if err != nil {
		return "", err
	}
	if required != "" && got != required {
		return "", badRequest("/settleResponse/amount", "is %s, but the requirements' amount is %s: the exact scheme settles exactly the amount required", got, required)
	}
	return got, nil
}

// sameAccepted checks that the payload's "accepted" requirements (x402 v2:
// the requirements the client chose and signed for) are the requirements
// given beside it: same scheme, asset, payTo and amount wherever accepted
// names them (the network is compared before). in holds the requirements'
// parsed asset, payTo and amount.
func (in *Payment) sameAccepted(acc PaymentRequirements, scheme, reqPtr string) error {
	const ptr = "/paymentPayload/accepted"
	differ := func(field, have, want string) error {
		return badRequest(ptr+"/"+field, "is %s, but %s/%s is %s: the documents describe different payments", shown.Quote(have), reqPtr, field, shown.Quote(want))
	}
	if acc.Scheme != "" && acc.Scheme != scheme {
		return differ("scheme", acc.Scheme, scheme)
	}
	for _, a := range []struct{ field, v, want string }{{"asset", acc.Asset, in.Asset}, {"payTo", acc.PayTo, in.PayTo}} {
		if a.v == "" {
			continue
		}
		addr, err := parseAddress(ptr+"/"+a.field, a.v)
		if err != nil {
			return err
		}
		if addr != a.want {
			return differ(a.field, addr, a.want)
		}
	}
	for _, a := range []struct{ field, v string }{{"amount", acc.Amount}, {"maxAmountRequired", acc.MaxAmountRequired}} {
		if a.v == "" {
			continue
		}
		v, err := parseAtomic(ptr+"/"+a.field, a.v)
		if err != nil {
			return err
		}
		if v != in.AmountAtomic {
			return badRequest(ptr+"/"+a.field, "is %s, but the payment's amount is %s: the documents describe different payments", v, in.AmountAtomic)
		}
	}
	return nil
}

// parseAtomic accepts a positive amount of atomic units as x402 writes it: a
// decimal integer string, no sign, no leading zeros, at most
// MaxAtomicDigits digits.
func parseAtomic(field, v string) (string, error) {
	if !atomicRE.MatchString(v) {
		return "", badRequest(field, "must be atomic units as a decimal integer string such as \"10000\" (no sign, decimals, exponent or leading zeros)")
	}
	if len(v) > MaxAtomicDigits {
		return "", badRequest(field, "is too large (at most %d digits)", MaxAtomicDigits)
	}
	if v == "0" {
		return "", badRequest(field, "must be greater than zero")
	}
	return v, nil
}

func parseAddress(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required")
	}
	if !addressRE.MatchString(v) {
		return "", badRequest(field, "must be an EVM address: 0x followed by 40 hexadecimal digits")
	}
	return strings.ToLower(v), nil
}

// usdcPerAtomic is 10^6: USDC has 6 decimals.
var usdcPerAtomic = new(big.Int).Exp(big.NewInt(10), big.NewInt(USDCDecimals), nil)

// AtomicToUSDC renders atomic USDC units as a decimal string with math/big
// (never floats): "1500000" → "1.5", "10000" → "0.01", "2000000" → "2".
// Trailing zeros of the fraction are dropped, so each amount has one
// spelling. A negative amount has its sign once, in front ("-0.5"): the
// digits are those of its absolute value.
func AtomicToUSDC(atomic *big.Int) string {
	sign := ""
	if atomic.Sign() < 0 {
		sign = "-"
	}
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(atomic), usdcPerAtomic, new(big.Int))
	if r.Sign() == 0 {
		return sign + q.String()
	}
	frac := fmt.Sprintf("%0*s", USDCDecimals, r.String())
	return sign + q.String() + "." + strings.TrimRight(frac, "0")
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

// decodePart decodes one x402 document. raw is JSON (an object), a JSON
// string holding the base64 of the object (the HTTP header value), or that
// base64 text bare; empty, JSON null or an object without members means
// absent. Unknown members are
// ignored (x402 grows), duplicate members and wrong JSON types are errors
// under the part's pointer.
func decodePart(ptr string, raw []byte, v any) (bool, error) {
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
	if isEmptyObject(raw) {
		return false, nil
	}
	if err := strictjson.DecodeOpen(raw, v); err != nil {
		return false, prefixField(ptr, decodeError(err))
	}
	return true, nil
}

// isEmptyObject reports whether raw (trimmed, starting with '{') is the
// JSON object with no members: a document that says nothing, which is read
// as absent, as JSON null is.
func isEmptyObject(raw []byte) bool {
	return raw[len(raw)-1] == '}' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// decodeError turns a strictjson error into a BadRequest *Error.
func decodeError(err error) error {
	var se *strictjson.Error
	if errors.As(err, &se) {
		return &Error{Kind: BadRequest, Field: se.Field, Detail: strings.Replace(se.Detail, "the body", "the document", 1)}
	}
	return err
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
	var e *Error
	if errors.As(err, &e) {
		cp := *e
		cp.Field = ptr + e.Field
		return &cp
	}
	return err
}

// notSettled is the answer to a settle response with success:false: the
// payment did not settle, so there is nothing to record (the x402 Go SDK
// v2.9.0 ran its AfterSettle hook on success:false too: SettlePayment in
// go/server.go, https://github.com/x402-foundation/x402). A transaction it
// names is not recorded either: the reference facilitators name one when
// it reverted ("transaction_failed") or when its receipt could not be read
// ("failed_to_get_receipt"), and in both the facilitator reports that it
// did not settle the payment; only "settlement_pending" holds a transaction
// until the chain decides.
func notSettled(reason, message, tx string) *Error {
	detail := "the settle response says success:false: the payment did not settle, nothing was recorded"
	if reason != "" {
		detail += fmt.Sprintf(" (errorReason %s)", shown.Quote(reason))
	}
	switch {
	case reason == SettlementPending:
		detail += "; a pending settlement needs its transaction hash to be held"
	case tx != "":
		named := shown.Quote(tx)
		if hash32RE.MatchString(tx) {
			named = strings.ToLower(tx)
		}
		detail += fmt.Sprintf("; it names transaction %s, which the facilitator reports did not settle the payment, so it is not recorded (only errorReason %q holds a transaction for the chain to decide)", named, SettlementPending)
	}
	return &Error{Kind: NotSettled, Field: "/settleResponse/success", Detail: detail, Reason: reason, Message: message}
}

// successWithoutError refuses a settle response that says success:true and
// names an error: errorReason is the reason "if settlement failed (omitted
// if successful)" (x402 specification v2 §5.3.2,
// https://github.com/x402-foundation/x402/blob/main/specs/x402-specification-v2.md),
// and the Go SDK's errorMessage accompanies it. Such a response reports
// both outcomes; the engine does not choose one, and records nothing.
func successWithoutError(success bool, reason, message string) error {
	if !success {
		return nil
	}
	for _, m := range []struct{ name, v string }{{"errorReason", reason}, {"errorMessage", message}} {
		if m.v != "" {
			return badRequest("/settleResponse/"+m.name, "is %s, but success is true: a settle response names an error only when settlement failed (x402 specification v2 §5.3.2: omitted if successful), so this one reports both outcomes and nothing was recorded", shown.Quote(m.v))
		}
	}
	return nil
}
