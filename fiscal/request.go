package fiscal

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/vat"
)

// SettlementRequest is the body of POST /settlements (spec §2.1), as the
// merchant sends it. Every field is a JSON string; amounts are decimal
// strings. Fields marked "extension" are not in the specification's table;
// they are optional and documented in the OpenAPI document.
type SettlementRequest struct {
	AmountUSDC         string `json:"amountUsdc"`
	TxHash             string `json:"txHash"`
	Timestamp          string `json:"timestamp"`
	PayerWallet        string `json:"payerWallet"`
	ReceiverWallet     string `json:"receiverWallet"`
	Network            string `json:"network"`
	Asset              string `json:"asset,omitempty"`
	Scheme             string `json:"scheme,omitempty"`
	ConsumerCountry    string `json:"consumerCountry,omitempty"`
	ConsumerVATNumber  string `json:"consumerVatNumber,omitempty"`
	ConsumerName       string `json:"consumerName,omitempty"`
	ConsumerPostalCode string `json:"consumerPostalCode,omitempty"` // extension: special territories (Canary Islands, Åland, ...)
	SupplyKind         string `json:"supplyKind,omitempty"`         // extension: default from the account, else "digital_service"
	Description        string `json:"description,omitempty"`        // extension: the invoice line's item name
	// LocationEvidence (extension) are items of the customer's location
	// (Art. 24b, 24f Implementing Regulation 282/2011), each with its kind,
	// country and source; with them the location is assessed instead of
	// resting on consumerCountry alone.
	LocationEvidence []vat.Evidence `json:"locationEvidence,omitempty"`
	// RateConditions (extension) attest legal conditions of reduced rates
	// for this supply (e.g. "it_isbn_issn").
	RateConditions []string `json:"rateConditions,omitempty"`
	// UnderlyingProvider (extension) names the provider of a service sold
	// by an electronic interface (the account's Seller.ElectronicInterface).
	UnderlyingProvider *vat.Provider `json:"underlyingProvider,omitempty"`
	// ConsumerAddress (extension) is the customer's postal address. A
	// business sale's invoice must state the customer's full name and
	// address (Art. 226(5) Directive 2006/112/EC); without it the engine
	// takes the registry's (VIES discloses it for some member states
	// only), and a business sale with neither waits for review
	// (buyer_address_missing). Its country, if given, is consumerCountry's;
	// its postal code, if consumerPostalCode is not given, is the buyer's
	// postal code for the determination too.
	ConsumerAddress *Address `json:"consumerAddress,omitempty"`
}

// maxEvidence bounds the items of location evidence of one buyer.
const maxEvidence = 10

// Limits on the request. The specification leaves them open (§8); these are
// documented in the README and the OpenAPI document.
const (
	MaxRequestBytes = 64 << 10 // body limit of POST /settlements
	maxTextLen      = 200      // consumerName, description
	maxAmountDigits = 12       // integer digits of amountUsdc: < 10^12 USDC, above any USDC supply
	minYear         = 2015     // no EVM settlement predates Ethereum's launch
	// maxIdempotencyKeyLen bounds an Idempotency-Key: visible ASCII only.
	maxIdempotencyKeyLen = 255
	// MaxClockSkew is how far in the future a settlement timestamp may lie
	// (clock skew between the chain, the merchant and us).
	MaxClockSkew = 5 * time.Minute
)

// The payments of spec §1: protocols, networks ("Supported chains") and
// assets ("Supported assets"). The networks are evmverify's, so that what
// the engine accepts and what it can verify on chain are one list.
const (
	assetUSDC    = "USDC"
	protocolX402 = "x402"
	schemeExact  = "exact"
	usdcDecimals = evmverify.USDCDecimals
)

func describeNetworks() string {
	out := make([]string, 0, len(usdcContracts))
	for n := range usdcContracts {
		out = append(out, n)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// usdcContracts are the USDC token contracts per supported network, lower
// case, taken from evmverify.USDCContract (which cites Circle's address list
// and x402's constants, research/x402-evm.md §3); an asset given as a
// contract address must be one of them. Built once, never changed.
var usdcContracts = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum} {
		addr, ok := evmverify.USDCContract(n)
		if !ok {
			panic("fiscal: evmverify knows no USDC contract on " + n)
		}
		m[n] = addr
	}
	return m
}()

var (
	amountRE  = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	txHashRE  = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	addressRE = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	caip2RE   = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	idemKeyRE = regexp.MustCompile(`^[\x21-\x7e]{1,` + strconv.Itoa(maxIdempotencyKeyLen) + `}$`)
)

// BuyerFacts are what the merchant attests about the buyer and the supply:
// the merchant-attested fields of POST /settlements (spec §2.1) under the
// same JSON names, validated by the same rules; every field is optional.
// Without Country the record is PENDING_MANUAL_REVIEW
// (buyer_country_missing), never 0 % VAT. Ingest paths, whose other facts
// come from x402 documents or the chain, take them as they are.
type BuyerFacts struct {
	Country     string `json:"consumerCountry,omitempty"`    // ISO 3166-1 alpha-2 (EL, XI accepted)
	VATNumber   string `json:"consumerVatNumber,omitempty"`  // with its country prefix; checked with the registry
	Name        string `json:"consumerName,omitempty"`       // at most 200 characters
	PostalCode  string `json:"consumerPostalCode,omitempty"` // special territories (Canary Islands, Åland, ...)
	SupplyKind  string `json:"supplyKind,omitempty"`         // "" = the account's default, else "digital_service"
	Description string `json:"description,omitempty"`        // the invoice line's item name; "" = the account's
	// Evidence are items of the customer's location (Art. 24b, 24f
	// Implementing Regulation 282/2011): with them the determination
	// assesses the location instead of taking Country on trust.
	Evidence []vat.Evidence `json:"locationEvidence,omitempty"`
	// Conditions are legal conditions of reduced rates attested for this
	// supply (vat Condition codes), added to the account's.
	Conditions []string `json:"rateConditions,omitempty"`
	// Provider names the underlying provider when the account is an
	// electronic interface (Seller.ElectronicInterface).
	Provider *vat.Provider `json:"underlyingProvider,omitempty"`
	// Address is the customer's postal address (consumerAddress), the
	// one a business sale's invoice states (Art. 226(5)).
	Address *Address `json:"consumerAddress,omitempty"`
}

// Normalised validates the facts and returns them in their stored form.
// Field pointers are /buyer/<JSON name>.
func (b BuyerFacts) Normalised() (BuyerFacts, error) {
	n, err := parseBuyer(SettlementRequest{
		ConsumerCountry: b.Country, ConsumerVATNumber: b.VATNumber, ConsumerName: b.Name, ConsumerPostalCode: b.PostalCode,
		SupplyKind: b.SupplyKind, Description: b.Description, LocationEvidence: b.Evidence, RateConditions: b.Conditions,
		UnderlyingProvider: b.Provider, ConsumerAddress: b.Address,
	})
	return n, prefixField("/buyer", err)
}

// Payment is a validated, normalised settled payment with the merchant's
// facts about the buyer and the supply: lower-case hashes and addresses,
// canonical amount, UTC time, upper-case country. SettlementRequest.Payment
// makes one; every way in records from one.
type Payment struct {
	Amount         decimal.Decimal
	AmountString   string // as sent (validated: plain decimal, at most 6 decimals)
	TxHash         string
	Timestamp      time.Time
	PayerWallet    string
	ReceiverWallet string
	Network        string
	Asset          string
	Scheme         string
	Protocol       string // "x402" or "evm-transfer"
	Buyer          BuyerFacts
}

// Payment checks a request against the specification (§1 conventions,
// §2.1) and returns the normalised payment or an *Error naming the first
// field that fails (a JSON pointer). now is the engine clock, for the
// future-timestamp check.
func (req SettlementRequest) Payment(now time.Time) (Payment, error) {
	return req.payment(now)
}

func (req SettlementRequest) payment(now time.Time) (Payment, error) {
	var s Payment
	var err error
	if s.Amount, s.AmountString, err = parseUSDCAmount("/amountUsdc", req.AmountUSDC); err != nil {
		return s, err
	}
	if req.TxHash == "" {
		return s, badRequest("/txHash", "is required")
	}
	if !txHashRE.MatchString(req.TxHash) {
		return s, badRequest("/txHash", "must be 0x followed by 64 hexadecimal digits")
	}
	s.TxHash = strings.ToLower(req.TxHash)
	if s.Timestamp, err = parseTimestamp("/timestamp", req.Timestamp, now); err != nil {
		return s, err
	}
	if s.PayerWallet, err = parseAddress("/payerWallet", req.PayerWallet); err != nil {
		return s, err
	}
	if s.ReceiverWallet, err = parseAddress("/receiverWallet", req.ReceiverWallet); err != nil {
		return s, err
	}
	if s.Network, err = parseNetwork("/network", req.Network); err != nil {
		return s, err
	}
	if s.Asset, err = parseAsset(req.Network, req.Asset); err != nil {
		return s, err
	}
	s.Scheme = schemeExact
	if req.Scheme != "" && req.Scheme != schemeExact {
		return s, &Error{Code: CodeUnsupportedScheme, Field: "/scheme", Detail: fmt.Sprintf("scheme %q is not supported; supported: %q", req.Scheme, schemeExact)}
	}
	s.Protocol = protocolX402
	if s.Buyer, err = parseBuyer(req); err != nil {
		return s, err
	}
	return s, nil
}

// parseNetwork accepts a supported CAIP-2 network (spec §1 "Supported
// chains"): missing is a BAD_REQUEST, anything else unknown is
// UNSUPPORTED_NETWORK naming the supported ones.
func parseNetwork(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required (CAIP-2, e.g. %q)", evmverify.NetworkBase)
	}
	if _, ok := usdcContracts[v]; !ok {
		detail := fmt.Sprintf("network %q is not supported; supported: %s", v, describeNetworks())
		if !caip2RE.MatchString(v) {
			detail = fmt.Sprintf("%q is not a CAIP-2 network id; supported: %s", v, describeNetworks())
		}
		return "", &Error{Code: CodeUnsupportedNetwork, Field: field, Detail: detail}
	}
	return v, nil
}

// parseUSDCAmount accepts a positive decimal string with at most 6 decimals
// (USDC's precision) and at most maxAmountDigits integer digits. Exponents,
// signs, leading zeros and JSON numbers are refused: an amount has exactly
// one spelling family, and nothing is rounded.
func parseUSDCAmount(field, v string) (decimal.Decimal, string, error) {
	if v == "" {
		return decimal.Decimal{}, "", badRequest(field, "is required (a decimal string such as \"1.50\")")
	}
	if strings.HasPrefix(v, "-") {
		return decimal.Decimal{}, "", badRequest(field, "must be greater than zero")
	}
	if !amountRE.MatchString(v) {
		return decimal.Decimal{}, "", badRequest(field, "must be a plain decimal string such as \"1.50\" (no sign, exponent, spaces or leading zeros)")
	}
	intPart, frac, _ := strings.Cut(v, ".")
	if len(frac) > usdcDecimals {
		// Zeros past USDC's sixth decimal do not change the value
		// ("0.0510000" is 0.051): they are dropped. A non-zero digit there
		// is finer than the token's smallest unit and cannot have settled.
		if i := strings.IndexFunc(frac[usdcDecimals:], func(r rune) bool { return r != '0' }); i >= 0 {
			return decimal.Decimal{}, "", badRequest(field, "has a non-zero digit at decimal place %d; USDC's smallest unit is 0.000001 (%d decimals)", usdcDecimals+1+i, usdcDecimals)
		}
		v = intPart + "." + frac[:usdcDecimals]
	}
	if len(intPart) > maxAmountDigits {
		return decimal.Decimal{}, "", badRequest(field, "is too large (at most %d integer digits)", maxAmountDigits)
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		return decimal.Decimal{}, "", badRequest(field, "is not a decimal number")
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, "", badRequest(field, "must be greater than zero")
	}
	return d, v, nil
}

// parseTimestamp accepts RFC 3339 (an ISO-8601 profile) in UTC only: "Z" or
// "+00:00". A settlement cannot lie in the future beyond MaxClockSkew.
func parseTimestamp(field, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, badRequest(field, "is required (ISO-8601 UTC, e.g. \"2026-04-10T12:00:00Z\")")
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || !(strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "+00:00")) {
		return time.Time{}, badRequest(field, "must be an ISO-8601 UTC timestamp such as \"2026-04-10T12:00:00Z\"")
	}
	t = t.UTC()
	if t.Year() < minYear {
		return time.Time{}, badRequest(field, "is before %d; no USDC settlement can be that old", minYear)
	}
	if t.After(now.Add(MaxClockSkew)) {
		return time.Time{}, badRequest(field, "is in the future (%s is after the service time %s)", t.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// parseAddress accepts a 20-byte EVM address, 0x-prefixed, and returns it in
// lower case. The EIP-55 mixed-case checksum is not checked: it needs
// Keccak-256, which the standard library lacks, and it protects typing, not
// settlement facts (evmverify checks those against the chain).
func parseAddress(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required")
	}
	if !addressRE.MatchString(v) {
		return "", badRequest(field, "must be an EVM address: 0x followed by 40 hexadecimal digits")
	}
	return strings.ToLower(v), nil
}

// parseAsset accepts "USDC" (the default when omitted) or the USDC contract
// address of the network, compared case-insensitively.
func parseAsset(network, v string) (string, error) {
	switch {
	case v == "" || v == assetUSDC:
		return assetUSDC, nil
	case strings.EqualFold(v, usdcContracts[network]):
		return assetUSDC, nil
	}
	return "", &Error{Code: CodeUnsupportedAsset, Field: "/asset", Detail: fmt.Sprintf("asset %q is not supported on %s; supported: %q (or its contract %s)", v, network, assetUSDC, usdcContracts[network])}
}

func parseBuyer(req SettlementRequest) (BuyerFacts, error) {
	var b BuyerFacts
	if req.ConsumerCountry != "" {
		c, err := parseBuyerCountry("/consumerCountry", req.ConsumerCountry)
		if err != nil {
			return b, err
		}
		b.Country = c
	}
	pc := strings.TrimSpace(req.ConsumerPostalCode)
	if len(pc) > 16 || !utf8.ValidString(pc) || strings.IndexFunc(pc, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return b, badRequest("/consumerPostalCode", "must be a postal code of at most 16 printable characters")
	}
	if pc != "" && b.Country == "" {
		return b, badRequest("/consumerPostalCode", "needs consumerCountry: a postal code alone does not locate the buyer")
	}
	b.PostalCode = pc
	vn := strings.TrimSpace(req.ConsumerVATNumber)
	if len(vn) > 32 || !utf8.ValidString(vn) || strings.IndexFunc(vn, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return b, badRequest("/consumerVatNumber", "must be a VAT number of at most 32 printable characters")
	}
	b.VATNumber = vn
	var err error
	if b.Name, err = parseText("/consumerName", req.ConsumerName); err != nil {
		return b, err
	}
	if b.SupplyKind, err = parseToken("/supplyKind", req.SupplyKind); err != nil {
		return b, err
	}
	if b.Description, err = parseText("/description", req.Description); err != nil {
		return b, err
	}
	if b.Evidence, err = parseEvidence("/locationEvidence", req.LocationEvidence); err != nil {
		return b, err
	}
	if b.Conditions, err = parseConditions("/rateConditions", req.RateConditions); err != nil {
		return b, err
	}
	if pr := req.UnderlyingProvider; pr != nil {
		np := *pr
		if np.Name, err = parseText("/underlyingProvider/name", pr.Name); err != nil {
			return b, err
		}
		if np.Name == "" {
			return b, badRequest("/underlyingProvider/name", "is required")
		}
		if pr.Country != "" {
			if np.Country, err = parseCountry("/underlyingProvider/country", pr.Country); err != nil {
				return b, err
			}
		}
		if np.VATNumber, err = parseText("/underlyingProvider/vatNumber", pr.VATNumber); err != nil {
			return b, err
		}
		b.Provider = &np
	}
	if b.Address, err = parseBuyerAddress("/consumerAddress", req.ConsumerAddress, b.Country); err != nil {
		return b, err
	}
	if b.Address != nil && b.Address.PostalCode != "" {
		switch {
		case b.PostalCode == "":
			b.PostalCode = b.Address.PostalCode
		case !strings.EqualFold(strings.ReplaceAll(b.PostalCode, " ", ""), strings.ReplaceAll(b.Address.PostalCode, " ", "")):
			return b, badRequest("/consumerAddress/postalCode", "%q is not consumerPostalCode %q: one buyer has one postal code", b.Address.PostalCode, b.PostalCode)
		}
	}
	return b, nil
}

// parseBuyerAddress checks the customer's postal address: text an invoice
// can carry (at most 200 characters a field), a postal code as
// consumerPostalCode takes it, a country, if given, equal to the buyer's
// (EL and GR, XI and GB alike). An address with no field set is none.
func parseBuyerAddress(field string, a *Address, country string) (*Address, error) {
	out, err := parseAddressFields(field, a)
	if out == nil || err != nil {
		return nil, err
	}
	if country == "" {
		return nil, badRequest(field, "needs consumerCountry: the address's country is the buyer's")
	}
	if a.Country != "" {
		c, err := parseCountry(field+"/country", a.Country)
		if err != nil {
			return nil, err
		}
		if isoCountry(c) != isoCountry(country) {
			return nil, badRequest(field+"/country", "%q is not consumerCountry %q", a.Country, country)
		}
	}
	out.Country = country
	return out, nil
}

// parseAddressFields checks the fields of an address, the country only for
// its form; nil when none is set.
func parseAddressFields(field string, a *Address) (*Address, error) {
	if a == nil {
		return nil, nil
	}
	var out Address
	var err error
	for _, f := range []struct {
		name string
		in   string
		out  *string
	}{
		{"street", a.Street, &out.Street}, {"additionalStreet", a.AdditionalStreet, &out.AdditionalStreet},
		{"city", a.City, &out.City}, {"subdivision", a.Subdivision, &out.Subdivision},
	} {
		if *f.out, err = parseText(field+"/"+f.name, f.in); err != nil {
			return nil, err
		}
	}
	pc := strings.TrimSpace(a.PostalCode)
	if len(pc) > 16 || !utf8.ValidString(pc) || strings.IndexFunc(pc, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return nil, badRequest(field+"/postalCode", "must be a postal code of at most 16 printable characters")
	}
	out.PostalCode = pc
	if out == (Address{}) && strings.TrimSpace(a.Country) == "" {
		return nil, nil
	}
	if a.Country != "" {
		if out.Country, err = parseCountry(field+"/country", a.Country); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// parseConditions checks attested rate conditions against the codes the
// rate table knows.
func parseConditions(field string, in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	known := map[string]bool{}
	for _, c := range vat.Rates().Conditions() {
		known[c.Code] = true
	}
	for i, c := range in {
		if !known[c] {
			return nil, badRequest(fmt.Sprintf("%s/%d", field, i), "%q is not a rate condition this ruleset knows", c)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(in))), nil
}

// ParseCountry checks a country code as the engine does (see parseCountry)
// and reports a problem as BAD_REQUEST naming field.
func ParseCountry(field, v string) (string, error) { return parseCountry(field, v) }

// ParseAmount checks a USDC amount as the engine does: a decimal string
// above zero, at most 12 integer digits and 6 decimals (USDC's precision).
func ParseAmount(field, v string) (decimal.Decimal, error) {
	d, _, err := parseUSDCAmount(field, v)
	return d, err
}

// ParseTimestamp checks a settlement instant as the engine does: RFC 3339
// in UTC, not before 2015, at most MaxClockSkew after now.
func ParseTimestamp(field, v string, now time.Time) (time.Time, error) {
	return parseTimestamp(field, v, now)
}

// ParseText checks a free text (a name, a description) as the engine does:
// valid UTF-8, at most 200 characters, no control character an invoice
// cannot carry; it returns the text trimmed.
func ParseText(field, v string) (string, error) { return parseText(field, v) }

// parseBuyerCountry accepts, for where a customer is, what parseCountry
// accepts and the codes vat.Buyer documents beyond ISO 3166-1 (IC for the
// Canary Islands, EA for Ceuta and Melilla, UK for GB: vat.BuyerCountry),
// so that a request is refused only for a code Determine refuses too.
func parseBuyerCountry(field, v string) (string, error) {
	c, err := parseCountry(field, v)
	if err == nil {
		return c, nil
	}
	u := strings.ToUpper(strings.TrimSpace(v))
	if _, ok := vat.BuyerCountry(u); ok && len(u) == 2 {
		return u, nil
	}
	return "", badRequest(field, "%q is not an ISO 3166-1 alpha-2 country code (or EL, XI, UK, IC, EA)", v)
}

// parseCountry accepts an ISO 3166-1 alpha-2 code (any case) and the two VAT
// prefixes that are not ISO codes but name places: EL (Greece, Art. 215 VAT
// Directive prefix) and XI (Northern Ireland, Windsor Framework).
func parseCountry(field, v string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(v))
	if c == "EL" || c == "XI" {
		return c, nil
	}
	if _, ok := iso3166Alpha2[c]; !ok {
		return "", badRequest(field, "%q is not an ISO 3166-1 alpha-2 country code", v)
	}
	return c, nil
}

func parseToken(field, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if len(v) > 64 || strings.IndexFunc(v, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
		return "", badRequest(field, "must be a lower-case token such as \"digital_service\"")
	}
	return v, nil
}

// parseText accepts free text that will appear in the UBL invoice: at most
// maxTextLen characters, no characters that XML 1.0 forbids (C0 controls
// other than tab, LF, CR; U+FFFE, U+FFFF; lone surrogates cannot occur in
// valid UTF-8) and no other control characters.
func parseText(field, v string) (string, error) {
	if !utf8.ValidString(v) {
		return "", badRequest(field, "is not valid UTF-8")
	}
	v = strings.TrimSpace(v)
	if utf8.RuneCountInString(v) > maxTextLen {
		return "", badRequest(field, "is longer than %d characters", maxTextLen)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xfffe || r == 0xffff {
			return "", badRequest(field, "contains the control character U+%04X, which an invoice cannot carry", r)
		}
	}
	return v, nil
}

// CheckIdempotencyKey reports whether k may be used as an Idempotency-Key:
// 1 to 255 visible ASCII characters (no spaces), or "" for none. Every way
// in that takes one checks it so.
func CheckIdempotencyKey(k string) error { return validIdempotencyKey(k) }

func validIdempotencyKey(k string) error {
	if k == "" {
		return nil
	}
	if !idemKeyRE.MatchString(k) {
		return &Error{Code: CodeBadRequest, Field: "Idempotency-Key", Detail: fmt.Sprintf("must be 1 to %d visible ASCII characters", maxIdempotencyKeyLen)}
	}
	return nil
}

// paymentFromChain builds the payment an ingest path read from the chain,
// through the same validation as POST /settlements: amount, payer, receiver
// and time are the Transfer log's and its block's; the buyer facts are the
// merchant's.
func paymentFromChain(in Ingest, f evmverify.Facts, now time.Time) (Payment, error) {
	amount, ok := new(big.Int).SetString(f.Amount, 10)
	if !ok {
		return Payment{}, &Error{Code: CodeInternal, Detail: "the chain facts carry an unreadable amount", Err: fmt.Errorf("amount %q", f.Amount)}
	}
	if amount.Sign() <= 0 {
		return Payment{}, badRequest("/logIndex", "the Transfer at log %d moves 0 USDC: it is not a payment", f.LogIndex)
	}
	req := SettlementRequest{
		AmountUSDC:         decimal.NewFromBigInt(amount, -usdcDecimals).String(),
		TxHash:             in.TxHash,
		Timestamp:          f.BlockTime.UTC().Format(time.RFC3339),
		PayerWallet:        f.From,
		ReceiverWallet:     f.To,
		Network:            in.Network,
		Asset:              assetUSDC,
		ConsumerCountry:    in.Buyer.Country,
		ConsumerVATNumber:  in.Buyer.VATNumber,
		ConsumerName:       in.Buyer.Name,
		ConsumerPostalCode: in.Buyer.PostalCode,
		SupplyKind:         in.Buyer.SupplyKind,
		Description:        in.Buyer.Description,
		ConsumerAddress:    in.Buyer.Address,
	}
	p, err := req.payment(now)
	if err != nil {
		return Payment{}, err
	}
	p.Protocol, p.Scheme = in.Protocol, in.Scheme
	return p, nil
}

// parseEvidence checks items of location evidence: at most maxEvidence,
// each with a kind, a country and a source; the value is personal data kept
// on the record only.
func parseEvidence(field string, in []vat.Evidence) ([]vat.Evidence, error) {
	if len(in) > maxEvidence {
		return nil, badRequest(field, "at most %d items", maxEvidence)
	}
	out := make([]vat.Evidence, 0, len(in))
	for i, it := range in {
		at := fmt.Sprintf("%s/%d", field, i)
		var err error
		if it.Kind, err = parseToken(at+"/kind", it.Kind); err != nil {
			return nil, err
		}
		if it.Kind == "" {
			return nil, badRequest(at+"/kind", "is required")
		}
		if it.Source, err = parseToken(at+"/source", it.Source); err != nil {
			return nil, err
		}
		if it.Source == "" {
			return nil, badRequest(at+"/source", "is required")
		}
		if it.Country, err = parseBuyerCountry(at+"/country", it.Country); err != nil {
			return nil, err
		}
		if it.Provider, err = parseText(at+"/provider", it.Provider); err != nil {
			return nil, err
		}
		if it.Value, err = parseLongText(at+"/value", it.Value, 500); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// parseLongText is parseText with its own limit.
func parseLongText(field, v string, max int) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) > max {
		return "", badRequest(field, "must be at most %d bytes", max)
	}
	if len(v) <= maxTextLen {
		return parseText(field, v)
	}
	if _, err := parseText(field, v[:0]); err != nil {
		return "", err
	}
	for _, c := range v {
		if c == 0xfffd || c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return "", badRequest(field, "must be printable UTF-8 text")
		}
	}
	return v, nil
}
