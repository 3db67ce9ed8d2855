package fiscal

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
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

// Limits on the request. The specification leaves them open (§8); these are
// documented in the README and the OpenAPI document.
// The fields themselves are checked by internal/wire (amounts, times,
// addresses, countries, text, Idempotency-Keys).
const MaxRequestBytes = 64 << 10 // body limit of POST /settlements

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

var caip2RE = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)

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
	if !wire.IsTxHash(req.TxHash) {
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

// The checks of internal/wire, their *wire.FieldError as BAD_REQUEST.
func parseUSDCAmount(field, v string) (decimal.Decimal, string, error) {
	d, canon, err := wire.USDCAmount(field, v)
	return d, canon, InputError(err)
}
func parseTimestamp(field, v string, now time.Time) (time.Time, error) {
	return checked(wire.Timestamp(field, v, now))
}
func parseAddress(field, v string) (string, error) { return checked(wire.Address(field, v)) }
func parseCountry(field, v string) (string, error) { return checked(wire.Country(field, v)) }
func parseText(field, v string) (string, error)    { return checked(wire.Text(field, v)) }
func parseToken(field, v string) (string, error)   { return checked(wire.Token(field, v)) }
func validIdempotencyKey(k string) error           { return InputError(wire.IdempotencyKey(k)) }
func parseBuyerCountry(field, v string) (string, error) {
	return checked(wire.BuyerCountry(field, v))
}
func parseLongText(field, v string, max int) (string, error) {
	return checked(wire.LongText(field, v, max))
}
func parseEvidence(field string, in []vat.Evidence) ([]vat.Evidence, error) {
	return checked(wire.Evidence(field, in))
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
	pc, err := checked(wire.PostalCode("/consumerPostalCode", req.ConsumerPostalCode))
	if err != nil {
		return b, err
	}
	if pc != "" && b.Country == "" {
		return b, badRequest("/consumerPostalCode", "needs consumerCountry: a postal code alone does not locate the buyer")
	}
	b.PostalCode = pc
	if b.VATNumber, err = checked(wire.VATNumber("/consumerVatNumber", req.ConsumerVATNumber)); err != nil {
		return b, err
	}
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
	if b.Conditions, err = checked(wire.RateConditions("/rateConditions", req.RateConditions)); err != nil {
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
		if invoicelaw.ISOCountry(c) != invoicelaw.ISOCountry(country) {
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
	if out.PostalCode, err = checked(wire.PostalCode(field+"/postalCode", a.PostalCode)); err != nil {
		return nil, err
	}
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
