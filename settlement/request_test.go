package settlement

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

var now = time.Date(2026, 4, 13, 0, 0, 0, 0, time.UTC)

// request is a valid body of POST /settlements, spelt as a merchant may
// spell it (mixed-case hex, lower-case country).
func request() Request {
	return Request{
		AmountUSDC: "1.50", TxHash: "0xAB" + strings.Repeat("0", 61) + "7", Timestamp: "2026-04-10T14:30:00Z",
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: "de", ConsumerName: "Beispiel GmbH", ConsumerVATNumber: "DE136695976",
	}
}

// fieldError returns err as a field error, failing the test when it is
// none.
func fieldError(t *testing.T, name string, err error) *wire.FieldError {
	t.Helper()
	var fe *wire.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("%s: %v is not a field error", name, err)
	}
	return fe
}

// TestPaymentNormalises: the payment is the request in its one spelling.
func TestPaymentNormalises(t *testing.T) {
	p, err := request().Payment(now)
	if err != nil {
		t.Fatal(err)
	}
	want := Payment{
		AmountString: "1.50", TxHash: "0xab" + strings.Repeat("0", 61) + "7", Timestamp: time.Date(2026, 4, 10, 14, 30, 0, 0, time.UTC),
		PayerWallet: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", ReceiverWallet: "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
		Network: "eip155:8453", Asset: "USDC", Scheme: "exact", Protocol: "x402",
		Buyer: Buyer{Country: "DE", Name: "Beispiel GmbH", VATNumber: "DE136695976"},
	}
	if p.Amount.String() != "1.5" || p.AmountString != want.AmountString || p.TxHash != want.TxHash || !p.Timestamp.Equal(want.Timestamp) ||
		p.PayerWallet != want.PayerWallet || p.ReceiverWallet != want.ReceiverWallet || p.Network != want.Network ||
		p.Asset != want.Asset || p.Scheme != want.Scheme || p.Protocol != want.Protocol ||
		p.Buyer.Country != want.Buyer.Country || p.Buyer.Name != want.Buyer.Name || p.Buyer.VATNumber != want.Buyer.VATNumber {
		t.Errorf("payment %+v\nwant    %+v", p, want)
	}
	// The asset may be named by its contract, in any case.
	for _, n := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum} {
		req := request()
		req.Network, req.Asset, req.Scheme = n, strings.ToUpper(USDCContract(n)), "exact"
		if p, err := req.Payment(now); err != nil || p.Asset != AssetUSDC {
			t.Errorf("%s by contract: %v %q", n, err, p.Asset)
		}
	}
}

// TestPaymentRefusals: each refusal names its field, its code ("" is
// BAD_REQUEST) and says what is supported, in the words the HTTP answers
// carry.
func TestPaymentRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(*Request)
		code   string
		field  string
		detail string
	}{
		{"no network", func(r *Request) { r.Network = "" }, "", "/network", `is required (CAIP-2, e.g. "eip155:8453")`},
		{"another network", func(r *Request) { r.Network = "eip155:10" }, CodeUnsupportedNetwork, "/network",
			`network "eip155:10" is not supported; supported: eip155:1, eip155:8453`},
		{"not CAIP-2", func(r *Request) { r.Network = "base" }, CodeUnsupportedNetwork, "/network",
			`"base" is not a CAIP-2 network id; supported: eip155:1, eip155:8453`},
		{"another asset", func(r *Request) { r.Asset = "USDT" }, CodeUnsupportedAsset, "/asset",
			`asset "USDT" is not supported on eip155:8453; supported: "USDC" (or its contract 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913)`},
		{"another network's contract", func(r *Request) { r.Asset = USDCContract(evmverify.NetworkEthereum) }, CodeUnsupportedAsset, "/asset",
			`asset "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" is not supported on eip155:8453; supported: "USDC" (or its contract 0x833589fcd6edb6e08f4c7c32d4f71b54bda02913)`},
		{"another scheme", func(r *Request) { r.Scheme = "upto" }, CodeUnsupportedScheme, "/scheme", `scheme "upto" is not supported; supported: "exact"`},
		{"no tx hash", func(r *Request) { r.TxHash = "" }, "", "/txHash", "is required"},
		{"short tx hash", func(r *Request) { r.TxHash = "0xab" }, "", "/txHash", "must be 0x followed by 64 hexadecimal digits"},
		{"postal code alone", func(r *Request) { r.ConsumerCountry, r.ConsumerVATNumber, r.ConsumerPostalCode = "", "", "35002" }, "", "/consumerPostalCode",
			"needs consumerCountry: a postal code alone does not locate the buyer"},
		{"provider without name", func(r *Request) { r.UnderlyingProvider = &vat.Provider{Country: "US"} }, "", "/underlyingProvider/name", "is required"},
		{"provider's country", func(r *Request) { r.UnderlyingProvider = &vat.Provider{Name: "P", Country: "USA"} }, "", "/underlyingProvider/country", ""},
		{"amount", func(r *Request) { r.AmountUSDC = "1e3" }, "", "/amountUsdc", ""},
		{"timestamp", func(r *Request) { r.Timestamp = "2026-04-10" }, "", "/timestamp", ""},
		{"payer", func(r *Request) { r.PayerWallet = "0x1" }, "", "/payerWallet", ""},
		{"receiver", func(r *Request) { r.ReceiverWallet = "" }, "", "/receiverWallet", ""},
		{"country", func(r *Request) { r.ConsumerCountry = "DEU" }, "", "/consumerCountry", ""},
		{"supply kind", func(r *Request) { r.SupplyKind = "a b" }, "", "/supplyKind", ""},
		{"evidence", func(r *Request) { r.LocationEvidence = []vat.Evidence{{Kind: "dowsing"}} }, "", "/locationEvidence/0/source", "is required"},
	} {
		req := request()
		c.edit(&req)
		_, err := req.Payment(now)
		fe := fieldError(t, c.name, err)
		if fe.Code != c.code || fe.Field != c.field || (c.detail != "" && fe.Detail != c.detail) || fe.Detail == "" {
			t.Errorf("%s: code %q field %q detail %q\nwant code %q field %q detail %q", c.name, fe.Code, fe.Field, fe.Detail, c.code, c.field, c.detail)
		}
	}
}

// TestConsumerAddressRequest: the consumerAddress member is checked like
// the other buyer facts, and its postal code joins the buyer's.
func TestConsumerAddressRequest(t *testing.T) {
	for _, c := range []struct {
		name    string
		country string
		postal  string
		addr    *invoicelaw.Address
		field   string // "" : accepted
	}{
		{"without consumerCountry", "", "", &invoicelaw.Address{Street: "a", City: "b"}, "/consumerAddress"},
		{"another country", "DE", "", &invoicelaw.Address{Street: "a", City: "b", Country: "AT"}, "/consumerAddress/country"},
		{"two postal codes", "DE", "10115", &invoicelaw.Address{Street: "a", City: "b", PostalCode: "80331"}, "/consumerAddress/postalCode"},
		{"control character", "DE", "", &invoicelaw.Address{Street: "a\x00", City: "b"}, "/consumerAddress/street"},
		{"too long", "DE", "", &invoicelaw.Address{City: strings.Repeat("x", 201)}, "/consumerAddress/city"},
		{"the same postal code, spaced", "NL", "1012LG", &invoicelaw.Address{Street: "a", City: "b", PostalCode: "1012 lg"}, ""},
		{"EL and GR", "EL", "", &invoicelaw.Address{Street: "a", City: "b", Country: "GR"}, ""},
		{"empty", "DE", "", &invoicelaw.Address{}, ""},
	} {
		req := request()
		req.ConsumerCountry, req.ConsumerVATNumber, req.ConsumerPostalCode, req.ConsumerAddress = c.country, "", c.postal, c.addr
		p, err := req.Payment(now)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "":
			if fe := fieldError(t, c.name, err); fe.Code != "" || fe.Field != c.field {
				t.Errorf("%s: %v, want BAD_REQUEST at %s", c.name, err, c.field)
			}
		case c.name == "empty" && p.Buyer.Address != nil:
			t.Errorf("%s: address %+v", c.name, p.Buyer.Address)
		}
	}
	req := request()
	req.ConsumerCountry = "ES"
	req.ConsumerVATNumber = ""
	req.ConsumerAddress = &invoicelaw.Address{Street: "Calle Triana 1", City: "Las Palmas de Gran Canaria", PostalCode: "35002"}
	p, err := req.Payment(now)
	if err != nil || p.Buyer.PostalCode != "35002" || p.Buyer.Address == nil || p.Buyer.Address.Country != "ES" || p.Buyer.Address.City != "Las Palmas de Gran Canaria" {
		t.Errorf("address's postal code: %v, buyer %+v", err, p.Buyer)
	}
}

// TestAddressChecks: an address checked apart from a request, as a review's
// resolution gives one.
func TestAddressChecks(t *testing.T) {
	a := &invoicelaw.Address{Street: " Rue 1 ", City: "Paris", Country: "fr"}
	if out, err := AddressFields("/buyer/consumerAddress", a); err != nil || out.Country != "FR" {
		t.Errorf("fields: %v %+v", err, out)
	}
	if out, err := AddressFields("/x", &invoicelaw.Address{}); out != nil || err != nil {
		t.Errorf("empty: %v %+v", err, out)
	}
	if _, err := BuyerAddress("/buyer/consumerAddress", a, "DE"); fieldError(t, "other country", err).Field != "/buyer/consumerAddress/country" {
		t.Errorf("other country: %v", err)
	}
	if out, err := BuyerAddress("/buyer/consumerAddress", &invoicelaw.Address{City: "Athens"}, "EL"); err != nil || out.Country != "EL" {
		t.Errorf("country taken from the buyer: %v %+v", err, out)
	}
}

// TestBuyerNormalised: the buyer facts of an ingest are checked by the
// request's rules, their errors under /buyer.
func TestBuyerNormalised(t *testing.T) {
	b, err := Buyer{Country: "el", VATNumber: "EL094259216", Provider: &vat.Provider{Name: "Studio", Country: "us"}}.Normalised()
	if err != nil || b.Country != "EL" || b.Provider == nil || b.Provider.Country != "US" {
		t.Errorf("normalised %+v, %v", b, err)
	}
	for _, c := range []struct {
		b     Buyer
		field string
	}{
		{Buyer{Country: "DEU"}, "/buyer/consumerCountry"},
		{Buyer{PostalCode: "10115"}, "/buyer/consumerPostalCode"},
		{Buyer{Country: "DE", Address: &invoicelaw.Address{City: "Berlin", Country: "AT"}}, "/buyer/consumerAddress/country"},
		{Buyer{Provider: &vat.Provider{}}, "/buyer/underlyingProvider/name"},
	} {
		_, err := c.b.Normalised()
		if fe := fieldError(t, c.field, err); fe.Field != c.field || fe.Code != "" {
			t.Errorf("%+v: %v, want BAD_REQUEST at %s", c.b, err, c.field)
		}
	}
}

// TestFingerprint: one request, however spelt, has one fingerprint, the
// one stored Idempotency-Key claims hold (the values are those the engine
// computed before the payment had its own package); any change of meaning
// changes it.
func TestFingerprint(t *testing.T) {
	fp := func(req Request) string {
		t.Helper()
		p, err := req.Payment(now)
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(p.Fingerprint())
	}
	base := fp(request())
	if base != "9e09f6c08ae3131f9cb88846bf901e6f2718855e46978fdd3978950608892722" {
		t.Errorf("fingerprint %s changed: stored Idempotency-Keys would not match", base)
	}
	respelt := request()
	respelt.AmountUSDC, respelt.TxHash, respelt.ConsumerCountry = "1.500", strings.ToLower(respelt.TxHash), "DE"
	if got := fp(respelt); got != base {
		t.Errorf("respelt: %s, want %s", got, base)
	}
	for name, edit := range map[string]func(*Request){
		"amount":      func(r *Request) { r.AmountUSDC = "1.51" },
		"payer":       func(r *Request) { r.PayerWallet = r.ReceiverWallet },
		"network":     func(r *Request) { r.Network = evmverify.NetworkEthereum },
		"country":     func(r *Request) { r.ConsumerCountry = "AT"; r.ConsumerVATNumber = "" },
		"description": func(r *Request) { r.Description = "API call" },
		"conditions":  func(r *Request) { r.RateConditions = []string{"it_isbn_issn"} },
	} {
		req := request()
		edit(&req)
		if fp(req) == base {
			t.Errorf("%s changed, the fingerprint did not", name)
		}
	}
	withFacts := request()
	withFacts.LocationEvidence = []vat.Evidence{{Kind: vat.EvidenceIPAddress, Country: "DE", Source: vat.EvidenceSourceMerchant}}
	withFacts.RateConditions = []string{"it_isbn_issn"}
	if got := fp(withFacts); got != "71c0366b1324f2a54b69b59ce2d84f1c9c426e0d1d8e19232ab675c911df5455" {
		t.Errorf("fingerprint with evidence and conditions %s changed", got)
	}
}

// TestFingerprintPrefixlessNumber: a buyer's VAT number given without its
// country prefix is read under the buyer's country where it is checked
// (Buyer.QualifiedVATNumber), but the payment keeps it as sent, so that a
// retry of a request stored before numbers were qualified has the
// fingerprint its Idempotency-Key was stored with (the values are those
// computed before QualifyNumber existed) and is not answered 409.
func TestFingerprintPrefixlessNumber(t *testing.T) {
	for given, want := range map[string]string{
		"136695976":     "0cb9f47cd6eba5dce6a1ac7187a9d1daa7edb7bb036a86e9d947a27e36d3984d",
		" 136 695.976 ": "74e30d2290eb3410c5fbe2d42e3dbe61fc93a7f04b7ae7d9255acbcc14fa6f37",
	} {
		req := request()
		req.ConsumerVATNumber = given
		p, err := req.Payment(now)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(p.Fingerprint()); got != want {
			t.Errorf("%q: fingerprint %s, stored %s", given, got, want)
		}
		if p.Buyer.VATNumber != strings.TrimSpace(given) || p.Buyer.QualifiedVATNumber() != "DE136695976" {
			t.Errorf("%q: number %q, read as %q; want it kept as sent, read as DE136695976", given, p.Buyer.VATNumber, p.Buyer.QualifiedVATNumber())
		}
	}
}

// TestUSDCContract: the supported networks are evmverify's, and no other.
func TestUSDCContract(t *testing.T) {
	for _, n := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum} {
		want, _ := evmverify.USDCContract(n)
		if got := USDCContract(n); got == "" || got != want || got != strings.ToLower(got) {
			t.Errorf("%s: %q, want %q", n, got, want)
		}
	}
	if got := USDCContract("eip155:84532"); got != "" {
		t.Errorf("a testnet has contract %q", got)
	}
}
