package goblbench

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"

	"github.com/invopop/gobl"
	"github.com/invopop/gobl.ubl"
	"github.com/invopop/gobl/addons/eu/en16931"
	"github.com/invopop/gobl/bill"
	"github.com/invopop/gobl/cal"
	"github.com/invopop/gobl/catalogues/untdid"
	"github.com/invopop/gobl/cbc"
	"github.com/invopop/gobl/currency"
	"github.com/invopop/gobl/dsig"
	"github.com/invopop/gobl/l10n"
	"github.com/invopop/gobl/num"
	"github.com/invopop/gobl/org"
	"github.com/invopop/gobl/tax"
)

// The sale, the same for both libraries: 1.00 USDC settled on Base on
// 2026-04-10 at 14:30 UTC, converted at a fixed rate of 1.1612 USD per EUR
// (USDC pegged 1:1 to USD), for one electronically supplied service.
const (
	amountUSDC = "1.00"
	usdPerEUR  = "1.1612"
	saleAt     = "2026-04-10T14:30:00Z"
	itemName   = "API access (electronically supplied service)"
)

// The seller: a German company over the EU-wide EUR 10,000 threshold of
// Art. 59c Directive 2006/112/EC, registered for the Union One-Stop Shop in
// Germany, so that its sales to consumers in other member states are taxed
// where the consumer is (Art. 58).
var seller = fiscal.Seller{
	LegalName: "Beispiel Digital GmbH", VATNumber: "DE812847601", LegalID: "HRB 12345 B", Country: "DE",
	Address:       fiscal.Address{Street: "Friedrichstrasse 1", City: "Berlin", PostalCode: "10117"},
	OverThreshold: true,
	Registrations: []vat.Registration{{Scheme: vat.RegistrationNational, Country: "DE"}, {Scheme: vat.RegistrationOSSUnion, Country: "DE"}},
	ItemName:      itemName,
}

// A document is one of the two sales: an Irish consumer (B2C, Irish VAT
// under the OSS at the Irish standard rate) or a French business with a
// VAT number that VIES confirms (B2B, reverse charge, Art. 196).
type document struct {
	name string
	b2b  bool
}

var documents = []document{{"B2C-OSS-IE", false}, {"B2B-reverse-charge-FR", true}}

// The French business customer, as VIES answers it.
const (
	frVAT     = "FR40303265045"
	frName    = "SA Exemple"
	frStreet  = "12 rue de l'Exemple"
	frCity    = "Paris"
	frPostal  = "75001"
	ieCountry = "IE"
)

// request is settlement request n of the document: tx hash derived from n,
// so that every settlement is a new record.
func (d document) request(n uint64) fiscal.SettlementRequest {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], n)
	sum := sha256.Sum256(append([]byte(d.name), buf[:]...))
	req := fiscal.SettlementRequest{
		AmountUSDC: amountUSDC, TxHash: "0x" + hex.EncodeToString(sum[:]), Timestamp: saleAt,
		PayerWallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", ReceiverWallet: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
		Network: "eip155:8453", ConsumerCountry: ieCountry,
	}
	if d.b2b {
		req.ConsumerCountry, req.ConsumerVATNumber, req.ConsumerName = "FR", frVAT, frName
		req.ConsumerAddress = &fiscal.Address{Street: frStreet, City: frCity, PostalCode: frPostal}
	}
	return req
}

// fixedFX is an ECB-format feed with the one fixed USD rate on the days
// around the sale (the engine takes the latest publication before it).
func fixedFX(tb testing.TB) fx.Source {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<gesmes:subject>Reference rates</gesmes:subject>
	<gesmes:Sender><gesmes:name>fixed benchmark rate (not ECB data)</gesmes:name></gesmes:Sender>
	<Cube>
`)
	for _, day := range []string{"2026-04-10", "2026-04-09", "2026-04-08"} {
		fmt.Fprintf(&b, "\t\t<Cube time='%s'><Cube currency='USD' rate='%s'/></Cube>\n", day, usdPerEUR)
	}
	b.WriteString("\t</Cube>\n</gesmes:Envelope>\n")
	t, err := fx.ParseXML(strings.NewReader(b.String()), "bench:fixed")
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// engine opens a fiscal402 engine in dir with the seller's account "de",
// the fixed rate, VIES confirming the French customer, a fixed clock and no
// background work.
func engine(tb testing.TB, dir string) (*fiscal.Engine, *fiscal.Books) {
	tb.Helper()
	now, _ := time.Parse(time.RFC3339, saleAt)
	now = now.Add(time.Minute)
	reg := vies.NewFake()
	reg.Set(frVAT, vies.Result{Status: vies.StatusValid, Registry: vies.RegistryVIES, CountryCode: "FR", Number: frVAT[2:],
		Name: strings.ToUpper(frName), Address: "12 RUE DE L'EXEMPLE\n75001 PARIS", RequestIdentifier: "WAPI-BENCH", RequestDate: now})
	e, err := fiscal.New(fiscal.Config{
		Dir:          dir,
		Accounts:     []fiscal.Account{{ID: "de", Seller: seller}},
		FX:           fixedFX(tb),
		VIES:         reg,
		Clock:        func() time.Time { return now },
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		NoBackground: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	books, err := e.Books("de")
	if err != nil {
		tb.Fatal(err)
	}
	return e, books
}

// payment is the engine's validated form of settlement request n, with the
// account's defaults (supply kind, item name) as Books.Settle fills them.
func (d document) payment(tb testing.TB, books *fiscal.Books, n uint64, now time.Time) fiscal.Payment {
	tb.Helper()
	p, err := d.request(n).Payment(now)
	if err != nil {
		tb.Fatal(err)
	}
	acc := books.Account().Seller
	p.Buyer.SupplyKind, p.Buyer.Description = acc.SupplyKind, acc.ItemName
	return p
}

// prepareIssue is the engine's work on a settlement before the ledger:
// registry answer, VAT determination, EUR conversion, the invoicing law,
// the UBL invoice (without its number, drawn at commit) and the receipt's
// claims (signed at commit).
func prepareIssue(books *fiscal.Books, p fiscal.Payment, now time.Time) (*fiscal.Draft, error) {
	e, s := books.Engine(), books.Account().Seller
	d, err := e.Prepare(context.Background(), "de", fiscal.Supply{Payment: p, Seller: s}, now)
	if err != nil {
		return nil, err
	}
	if err := e.Issue(d, s); err != nil {
		return nil, err
	}
	if d.Record.ReviewStatus != fiscal.StatusProcessed || d.Record.Invoice == nil {
		return nil, fmt.Errorf("not processed with an invoice: %s %v", d.Record.ReviewStatus, d.Record.ReviewReasons)
	}
	return d, nil
}

// goblSeller and goblCustomer are the parties of the GOBL invoice, the
// same facts as the fiscal402 account and request.
var (
	goblSeller = &org.Party{
		Name:      seller.LegalName,
		TaxID:     &tax.Identity{Country: "DE", Code: cbc.Code(seller.VATNumber[2:])},
		Addresses: []*org.Address{{Street: seller.Address.Street, Locality: seller.Address.City, Code: cbc.Code(seller.Address.PostalCode), Country: "DE"}},
	}
	goblIrishConsumer = &org.Party{
		Name:      "Consumer",
		Addresses: []*org.Address{{Country: ieCountry}},
	}
	goblFrenchBusiness = &org.Party{
		Name:      frName,
		TaxID:     &tax.Identity{Country: "FR", Code: cbc.Code(frVAT[2:])},
		Addresses: []*org.Address{{Street: frStreet, Locality: frCity, Code: frPostal, Country: "FR"}},
	}
)

// goblStep is how far goblSteps goes.
type goblStep int

const (
	stepCalculate goblStep = iota // convert, build, envelope and calculate
	stepSign                      // and sign (which validates)
	stepUBL                       // and convert to UBL and marshal the XML
)

// goblInvoice is GOBL's work on the sale: convert 1.00 USD(C) at the fixed
// rate with GOBL's num, build the bill.Invoice (DE regime, EN 16931 addon,
// prices include VAT), envelope and calculate it (Insert calculates), sign
// the envelope (ES256; Sign validates the envelope and its document), convert
// it to UBL with gobl.ubl and marshal the XML. GOBL v0.205.1 has no Irish
// regime: the OSS line names the country and the 23 % by hand, where
// fiscal402 determines both (vat.Determine).
func goblInvoice(d document, n uint64, key *dsig.PrivateKey) (*gobl.Envelope, []byte, error) {
	return goblSteps(d, n, key, stepUBL)
}

func goblSteps(d document, n uint64, key *dsig.PrivateKey, upto goblStep) (*gobl.Envelope, []byte, error) {
	usdc, err := num.AmountFromString(amountUSDC)
	if err != nil {
		return nil, nil, err
	}
	rate, err := num.AmountFromString(usdPerEUR)
	if err != nil {
		return nil, nil, err
	}
	gross := usdc.Divide(rate).Rescale(2)
	// No rate key: GOBL refuses one for a country it has no regime for,
	// so the EN 16931 category (S, standard rate) is set by hand too.
	combo := &tax.Combo{Category: tax.CategoryVAT, Country: l10n.TaxCountryCode(ieCountry), Percent: num.NewPercentage(230, 3),
		Ext: tax.Extensions{untdid.ExtKeyTaxCategory: "S"}}
	customer := goblIrishConsumer
	inv := &bill.Invoice{
		Regime:    tax.WithRegime("DE"),
		Addons:    tax.WithAddons(en16931.V2017),
		Series:    "F402-2026",
		Code:      cbc.Code(fmt.Sprintf("%06d", n)),
		IssueDate: cal.MakeDate(2026, 4, 10),
		Currency:  currency.EUR,
		Tax:       &bill.Tax{PricesInclude: tax.CategoryVAT},
		Supplier:  goblSeller,
	}
	if d.b2b {
		customer = goblFrenchBusiness
		inv.Tags = tax.WithTags(tax.TagReverseCharge)
		combo = &tax.Combo{Category: tax.CategoryVAT, Rate: tax.RateExempt.With(tax.TagReverseCharge)}
	}
	inv.Customer = customer
	inv.Lines = []*bill.Line{{
		Quantity: num.MakeAmount(1, 0),
		Item:     &org.Item{Name: itemName, Price: gross, Unit: "C62"}, // one, as fiscal402's line
		Taxes:    tax.Set{combo},
	}}
	env := gobl.NewEnvelope()
	if err := env.Insert(inv); err != nil || upto == stepCalculate {
		return env, nil, err
	}
	if err := env.Sign(key); err != nil || upto == stepSign {
		return env, nil, err
	}
	doc, err := ubl.ToUBL(env)
	if err != nil {
		return nil, nil, err
	}
	out, err := doc.Bytes()
	if err != nil {
		return nil, nil, err
	}
	return env, out, nil
}
