package settlement

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// Request is the body of POST /settlements (the OpenAPI SettlementRequest
// schema), as the merchant sends it. Every field is a JSON string; amounts
// are decimal strings. Fields marked "extension" are our additions to the
// basic settlement request (amountUsdc through consumerName); they are
// optional and documented in the OpenAPI document.
type Request struct {
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
	ConsumerAddress *invoicelaw.Address `json:"consumerAddress,omitempty"`
}

// Buyer are what the merchant attests about the buyer and the supply: the
// merchant-attested fields of POST /settlements under the same
// JSON names, validated by the same rules; every field is optional.
// Without Country the record is PENDING_MANUAL_REVIEW
// (buyer_country_missing), never 0 % VAT. Ingest paths, whose other facts
// come from x402 documents or the chain, take them as they are.
type Buyer struct {
	Country     string `json:"consumerCountry,omitempty"`    // ISO 3166-1 alpha-2 (EL, XI accepted)
	VATNumber   string `json:"consumerVatNumber,omitempty"`  // as sent; without its country prefix read under Country (QualifiedVATNumber); checked with the registry
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
	Address *invoicelaw.Address `json:"consumerAddress,omitempty"`
}

// QualifiedVATNumber is VATNumber as a registry is asked about it and the
// record states it: read under Country when it was given without its
// country prefix (vat.QualifyNumber: "136695976" of a German buyer is
// "DE136695976"), else as given. VATNumber itself stays as sent: the
// fingerprints of POST /settlements, POST /v1/fiscal-events and the ingest
// queue hash it, and a retry of a request stored before numbers were
// qualified must keep its fingerprint.
func (b Buyer) QualifiedVATNumber() string { return vat.QualifyNumber(b.VATNumber, b.Country) }

// PrefixlessVATNumber is VATNumber when it was given without its country
// prefix and QualifiedVATNumber supplied one, else "". A record keeps it
// beside the number it states, so that every revision, decided again from
// the record, notes as the first did that the prefix was the engine's
// reading and not the customer's (vat.ReasonVATNumberPrefixSupplied).
func (b Buyer) PrefixlessVATNumber() string {
	if b.QualifiedVATNumber() == b.VATNumber {
		return ""
	}
	return b.VATNumber
}

// Normalised validates the facts and returns them in their stored form,
// or a field error (see the package doc) whose pointer is /buyer/<JSON
// name>.
func (b Buyer) Normalised() (Buyer, error) {
	n, err := parseBuyer(Request{
		ConsumerCountry: b.Country, ConsumerVATNumber: b.VATNumber, ConsumerName: b.Name, ConsumerPostalCode: b.PostalCode,
		SupplyKind: b.SupplyKind, Description: b.Description, LocationEvidence: b.Evidence, RateConditions: b.Conditions,
		UnderlyingProvider: b.Provider, ConsumerAddress: b.Address,
	})
	return n, underField("/buyer", err)
}

// Payment is a validated, normalised settled payment with the merchant's
// facts about the buyer and the supply: lower-case hashes and addresses,
// canonical amount, UTC time, upper-case country. Request.Payment makes
// one; every way in records from one.
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
	Buyer          Buyer
}

// Payment checks a request (decimal-string amounts, ISO-8601 UTC times,
// CAIP-2 networks, ISO 3166-1 alpha-2 countries, the required fields) and
// returns the normalised payment or a field error (see the
// package doc) naming the first field that fails (a JSON pointer). now is
// the engine clock, for the future-timestamp check.
func (req Request) Payment(now time.Time) (Payment, error) {
	var s Payment
	var err error
	if s.Amount, s.AmountString, err = wire.USDCAmount("/amountUsdc", req.AmountUSDC); err != nil {
		return s, err
	}
	if req.TxHash == "" {
		return s, badRequest("/txHash", "is required")
	}
	if !wire.IsTxHash(req.TxHash) {
		return s, badRequest("/txHash", "must be 0x followed by 64 hexadecimal digits")
	}
	s.TxHash = strings.ToLower(req.TxHash)
	if s.Timestamp, err = wire.Timestamp("/timestamp", req.Timestamp, now); err != nil {
		return s, err
	}
	if s.PayerWallet, err = wire.Address("/payerWallet", req.PayerWallet); err != nil {
		return s, err
	}
	if s.ReceiverWallet, err = wire.Address("/receiverWallet", req.ReceiverWallet); err != nil {
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
		return s, &wire.FieldError{Code: CodeUnsupportedScheme, Field: "/scheme", Detail: fmt.Sprintf("scheme %s is not supported; supported: %q", shown.Quote(req.Scheme), schemeExact)}
	}
	s.Protocol = protocolX402
	if s.Buyer, err = parseBuyer(req); err != nil {
		return s, err
	}
	return s, nil
}

func parseBuyer(req Request) (Buyer, error) {
	var b Buyer
	if req.ConsumerCountry != "" {
		c, err := wire.BuyerCountry("/consumerCountry", req.ConsumerCountry)
		if err != nil {
			return b, err
		}
		b.Country = c
	}
	pc, err := wire.PostalCode("/consumerPostalCode", req.ConsumerPostalCode)
	if err != nil {
		return b, err
	}
	if pc != "" && b.Country == "" {
		return b, badRequest("/consumerPostalCode", "needs consumerCountry: a postal code alone does not locate the buyer")
	}
	b.PostalCode = pc
	if b.VATNumber, err = wire.VATNumber("/consumerVatNumber", req.ConsumerVATNumber); err != nil {
		return b, err
	}
	if b.Name, err = wire.Text("/consumerName", req.ConsumerName); err != nil {
		return b, err
	}
	if b.SupplyKind, err = wire.Token("/supplyKind", req.SupplyKind); err != nil {
		return b, err
	}
	if b.Description, err = wire.Text("/description", req.Description); err != nil {
		return b, err
	}
	if b.Evidence, err = wire.Evidence("/locationEvidence", req.LocationEvidence); err != nil {
		return b, err
	}
	if b.Conditions, err = wire.RateConditions("/rateConditions", req.RateConditions); err != nil {
		return b, err
	}
	if pr := req.UnderlyingProvider; pr != nil {
		np := *pr
		if np.Name, err = wire.Text("/underlyingProvider/name", pr.Name); err != nil {
			return b, err
		}
		if np.Name == "" {
			return b, badRequest("/underlyingProvider/name", "is required")
		}
		if pr.Country != "" {
			if np.Country, err = wire.Country("/underlyingProvider/country", pr.Country); err != nil {
				return b, err
			}
		}
		// A VAT number, checked as consumerVatNumber is (at most 32
		// printable characters), not as free text.
		if np.VATNumber, err = wire.VATNumber("/underlyingProvider/vatNumber", pr.VATNumber); err != nil {
			return b, err
		}
		b.Provider = &np
	}
	if b.Address, b.PostalCode, err = BuyerAddressAt(BuyerFields{Address: "/consumerAddress", Country: "/consumerCountry", PostalCode: "/consumerPostalCode"},
		req.ConsumerAddress, b.Country, b.PostalCode); err != nil {
		return b, err
	}
	return b, nil
}

// BuyerFields are the JSON pointers of a body's members that locate the
// buyer: its postal address, its country and its postal code. POST
// /settlements names them /consumerAddress, /consumerCountry and
// /consumerPostalCode; POST /v1/fiscal-events /buyer/address, /buyer/country
// and /buyer/postalCode.
type BuyerFields struct {
	Address, Country, PostalCode string
}

// BuyerAddressAt is the one check of a customer's postal address a, at the
// members f names, for every body that takes one: BuyerAddress's rules
// against the buyer's country (validated; "" none), and the address's
// postal code stands for the buyer's postal code (validated) when that is
// "" and must otherwise be it (one buyer has one postal code). It returns
// the address and the buyer's postal code.
func BuyerAddressAt(f BuyerFields, a *invoicelaw.Address, country, postalCode string) (*invoicelaw.Address, string, error) {
	out, err := buyerAddress(f.Address, strings.TrimPrefix(f.Country, "/"), a, country)
	if out == nil || err != nil {
		return nil, postalCode, err
	}
	if out.PostalCode != "" {
		switch {
		case postalCode == "":
			postalCode = out.PostalCode
		case !strings.EqualFold(strings.ReplaceAll(postalCode, " ", ""), strings.ReplaceAll(out.PostalCode, " ", "")):
			return nil, postalCode, badRequest(f.Address+"/postalCode", "%q is not %s %q: one buyer has one postal code",
				out.PostalCode, strings.TrimPrefix(f.PostalCode, "/"), postalCode)
		}
	}
	return out, postalCode, nil
}

// BuyerAddress checks the customer's postal address at field: text an
// invoice can carry (at most 200 characters a field), a postal code as
// consumerPostalCode takes it, a country, if given, equal to the buyer's
// country (EL and GR, XI and GB alike), which it takes. An address with no
// field set is none (nil).
func BuyerAddress(field string, a *invoicelaw.Address, country string) (*invoicelaw.Address, error) {
	return buyerAddress(field, "consumerCountry", a, country)
}

// buyerAddress is BuyerAddress with the name of the buyer's country member
// the errors say.
func buyerAddress(field, countryName string, a *invoicelaw.Address, country string) (*invoicelaw.Address, error) {
	out, err := AddressFields(field, a)
	if out == nil || err != nil {
		return nil, err
	}
	if country == "" {
		return nil, badRequest(field, "needs %s: the address's country is the buyer's", countryName)
	}
	if a.Country != "" {
		c, err := wire.Country(field+"/country", a.Country)
		if err != nil {
			return nil, err
		}
		if invoicelaw.ISOCountry(c) != invoicelaw.ISOCountry(country) {
			return nil, badRequest(field+"/country", "%q is not %s %q", a.Country, countryName, country)
		}
	}
	out.Country = country
	return out, nil
}

// AddressFields checks the fields of an address at field, the country only
// for its form; nil when none is set. BuyerAddress checks it against the
// buyer's country too.
func AddressFields(field string, a *invoicelaw.Address) (*invoicelaw.Address, error) {
	if a == nil {
		return nil, nil
	}
	var out invoicelaw.Address
	var err error
	for _, f := range []struct {
		name string
		in   string
		out  *string
	}{
		{"street", a.Street, &out.Street}, {"additionalStreet", a.AdditionalStreet, &out.AdditionalStreet},
		{"city", a.City, &out.City}, {"subdivision", a.Subdivision, &out.Subdivision},
	} {
		if *f.out, err = wire.Text(field+"/"+f.name, f.in); err != nil {
			return nil, err
		}
	}
	if out.PostalCode, err = wire.PostalCode(field+"/postalCode", a.PostalCode); err != nil {
		return nil, err
	}
	if out == (invoicelaw.Address{}) && strings.TrimSpace(a.Country) == "" {
		return nil, nil
	}
	if a.Country != "" {
		if out.Country, err = wire.Country(field+"/country", a.Country); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

func badRequest(field, format string, args ...any) *wire.FieldError {
	return &wire.FieldError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// underField puts a part's pointer before the field of a field error (the
// buyer facts of an ingest are under /buyer).
func underField(ptr string, err error) error {
	var fe *wire.FieldError
	if errors.As(err, &fe) {
		cp := *fe
		cp.Field = ptr + fe.Field
		return &cp
	}
	return err
}

// Differences names, one "member value (recorded value)" each, where p
// states another payment than the one recorded with amountUSDC, payer,
// receiver and asset (addresses compared without case; an asset left
// out on either side is not compared). A transaction backs one payment:
// a duplicate (network, txHash) with differences is a PAYMENT_CONFLICT,
// whichever way in recorded it (fiscal's settlements, fiscalevent's
// events). nil: the same payment.
func (p Payment) Differences(amountUSDC, payer, receiver, asset string) []string {
	var diff []string
	if amount, err := decimal.NewFromString(amountUSDC); err != nil || !amount.Equal(p.Amount) {
		diff = append(diff, fmt.Sprintf("amountUsdc %s (recorded %s)", p.AmountString, amountUSDC))
	}
	if !strings.EqualFold(payer, p.PayerWallet) {
		diff = append(diff, fmt.Sprintf("payerWallet %s (recorded %s)", p.PayerWallet, payer))
	}
	if !strings.EqualFold(receiver, p.ReceiverWallet) {
		diff = append(diff, fmt.Sprintf("receiverWallet %s (recorded %s)", p.ReceiverWallet, receiver))
	}
	if p.Asset != "" && asset != "" && !strings.EqualFold(asset, p.Asset) {
		diff = append(diff, fmt.Sprintf("asset %s (recorded %s)", p.Asset, asset))
	}
	return diff
}
