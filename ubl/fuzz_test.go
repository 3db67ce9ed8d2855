package ubl

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/beevik/etree"
	"github.com/fiscal402/fiscal402/internal/testtool"
	"github.com/shopspring/decimal"
)

// FuzzRenderInvoice: whatever the input, the renderer either returns a
// *ValidationError (every problem with a field and a sentinel) and no XML,
// or XML that is well-formed, keeps the EN 16931 arithmetic (BR-CO-10 …
// BR-CO-16, 2-decimal amounts), carries no VAT id on a category-O invoice,
// and validates against the UBL 2.1 XSD (xmllint).
//
//	go test ./ubl -run XXX -fuzz FuzzRenderInvoice -fuzztime 20s
func FuzzRenderInvoice(f *testing.F) {
	xmllint := testtool.LookPath(f, "xmllint")
	xsdDir := testtool.Conformance(f, "ubl-2.1", "maindoc")

	f.Add(false, false, true, "Example Ltd", "Private customer", "1 Main St", "Paid in full", "IE1234567T", "", "DE", "S", "1", "100.00", "100.00", "19", uint8(1), "")
	f.Add(true, false, true, "Example Ltd", "Kunde GmbH", "", "note", "IE1234567T", "DE987654321", "DE", "AE", "2", "50", "100.00", "0", uint8(2), "")
	f.Add(true, true, true, "Example Ltd", "Kunde GmbH", "", "refund", "IE1234567T", "DE987654321", "DE", "AE", "1", "951.29", "951.29", "0", uint8(1), "")
	f.Add(false, false, false, "Tom & Jerry <\"x\">", "שלום 🚀", "a\tb\r\nc", "]]>", "IE1234567T", "", "FR", "S", "0.5", "0.0099", "0.00", "25.5", uint8(3), "0.00")
	f.Add(false, false, true, "Example Ltd", "Customer", "", "", "IE1234567T", "US123", "US", "O", "1", "119", "119.00", "0", uint8(1), "")
	f.Add(false, false, true, "Example Ltd", "Reader", "", "", "IE1234567T", "", "IE", "Z", "1", "15", "15.00", "0", uint8(1), "0.00")
	f.Add(false, false, true, "Example Ltd", "Customer", "", "", "IE1234567T", "", "DE", "S", "1", "8.40", "8.40", "19", uint8(1), "1.60")
	f.Add(false, false, true, "Example Ltd", "Customer", "", "", "IE1234567T", "", "DE", "S", "1", "799406520.60", "799406520.60", "19", uint8(1), "151887238.91")
	f.Add(false, false, true, "Example Ltd", "Customer", "", "", "IE1234567T", "", "DE", "S", "1e9999", "1e-9999", "100.00", "1e9999", uint8(1), "1e9999")
	f.Add(false, false, true, "bad\x00name", "\xff", "", "", "USDC", "", "XX", "Q", "-1", "1e400", "0.001", "-5", uint8(0), "x")

	f.Fuzz(func(t *testing.T, peppol, credit, paid bool, sellerName, buyerName, street, note, sellerVAT, buyerVAT, buyerCountry, category, qty, price, net, rate string, nLines uint8, subtotalVAT string) {
		dec := func(s string) decimal.Decimal {
			v, err := decimal.NewFromString(s)
			if err != nil {
				return decimal.New(-1, 0) // invalid: the renderer must reject the line
			}
			return v
		}
		inv := b2c("x402-fuzz", buyerCountry, "19", "1.00")
		if peppol {
			inv = b2b("x402-fuzz", sellerIE, buyerDEBusiness)
			inv.Buyer.Country = buyerCountry
		}
		inv.Seller.Name, inv.Seller.VATNumber, inv.Seller.Street = sellerName, sellerVAT, street
		inv.Buyer.Name, inv.Buyer.VATNumber = buyerName, buyerVAT
		inv.Note, inv.PaidInFull = note, paid
		l := Line{Name: sellerName + " item", Quantity: dec(qty), PriceAmount: dec(price), NetAmount: dec(net), Category: category, RatePercent: dec(rate)}
		inv.Lines = nil
		for range int(nLines % 5) {
			inv.Lines = append(inv.Lines, l)
		}
		if subtotalVAT != "" && len(inv.Lines) > 0 {
			base := l.NetAmount.Mul(decimal.New(int64(len(inv.Lines)), 0))
			inv.Subtotals = []TaxSubtotal{{Category: category, RatePercent: l.RatePercent, TaxableAmount: base, TaxAmount: dec(subtotalVAT)}}
		}

		var out []byte
		var err error
		xsd := "UBL-Invoice-2.1.xsd"
		if credit {
			xsd = "UBL-CreditNote-2.1.xsd"
			out, err = RenderCreditNote(CreditNote{Invoice: inv, InvoiceRef: "x402-orig"})
		} else {
			out, err = RenderInvoice(inv)
		}
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 || out != nil {
				t.Fatalf("rejection is not a ValidationError with problems (out %d bytes): %v", len(out), err)
			}
			for _, p := range ve.Problems {
				if p.Field == "" || p.Err == nil || !isSentinel(p.Err) {
					t.Fatalf("problem without field or sentinel: %#v", p)
				}
			}
			return
		}
		checkWellFormed(t, out)
		checkInvariants(t, out)
		// The direct writer must give the etree renderer's bytes.
		var p *prepared
		if credit {
			cn := CreditNote{Invoice: inv, InvoiceRef: "x402-orig"}
			p, _ = prepare(&cn.Invoice, &cn)
		} else {
			p, _ = prepare(&inv, nil)
		}
		if ref, _ := p.renderEtree(); !bytes.Equal(out, ref) {
			t.Fatalf("direct writer differs from etree:\n%s", firstDiff(out, ref))
		}
		// xmllint costs milliseconds per call, so it runs once per XSD-relevant
		// shape of the document: the element structure with every value
		// reduced to its character classes, except free text (xsd:string
		// accepts any XML character, so its content cannot change the XSD
		// verdict).
		if !newXSDShape(out) {
			return
		}
		cmd := exec.Command(xmllint, "--noout", "--schema", filepath.Join(xsdDir, xsd), "-")
		cmd.Stdin = bytes.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("XSD validation failed: %v\n%s\n%s", err, msg, out)
		}
	})
}

// xsdShapes are the document shapes already validated in this process.
var xsdShapes sync.Map

// Elements whose content is free text (UBL TextType/NameType, xsd:string).
var freeText = map[string]bool{
	"Note": true, "Name": true, "RegistrationName": true, "StreetName": true, "CityName": true,
	"PostalZone": true, "Telephone": true, "ElectronicMail": true,
	"AdditionalStreetName": true, "CountrySubentity": true, "Line": true,
}

func newXSDShape(out []byte) bool {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(out); err != nil {
		return true
	}
	var b strings.Builder
	var walk func(e *etree.Element)
	walk = func(e *etree.Element) {
		b.WriteString("<" + e.FullTag())
		for _, a := range e.Attr {
			if a.Key == "name" {
				b.WriteString(" name")
				continue
			}
			b.WriteString(" " + a.Key + "=" + charClasses(a.Value))
		}
		b.WriteString(">")
		if len(e.ChildElements()) == 0 {
			if freeText[e.Tag] {
				b.WriteString("*")
			} else {
				b.WriteString(charClasses(e.Text()))
			}
		}
		for _, c := range e.ChildElements() {
			walk(c)
		}
	}
	walk(doc.Root())
	_, seen := xsdShapes.LoadOrStore(b.String(), true)
	return !seen
}

// charClasses maps digits to 9, ASCII letters to a, keeps other characters.
func charClasses(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return '9'
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			return 'a'
		}
		return r
	}, s)
}

func isSentinel(err error) bool {
	for _, s := range []error{ErrRequired, ErrFormat, ErrCode, ErrDecimals, ErrRange, ErrMismatch, ErrForbidden, ErrXMLChar, ErrUnsupported} {
		if err == s {
			return true
		}
	}
	return false
}

func checkWellFormed(t *testing.T, out []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(out))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v\n%s", err, out)
		}
	}
}

// checkInvariants re-reads the rendered document and checks the EN 16931
// arithmetic from the XML alone, as a validator would.
func checkInvariants(t *testing.T, out []byte) {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(out); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	num := func(e *etree.Element) decimal.Decimal {
		v, err := decimal.NewFromString(e.Text())
		if err != nil {
			t.Fatalf("%s: %q is not a decimal", e.Tag, e.Text())
		}
		return v
	}
	one := func(path string) decimal.Decimal {
		e := root.FindElement(path)
		if e == nil {
			return decimal.Zero
		}
		return num(e)
	}
	sum := func(path string) decimal.Decimal {
		s := decimal.Zero
		for _, e := range root.FindElements(path) {
			s = s.Add(num(e))
		}
		return s
	}
	for _, e := range root.FindElements(".//*[@currencyID]") {
		if e.Tag != "PriceAmount" && strings.Contains(e.Text(), ".") && len(e.Text())-strings.Index(e.Text(), ".")-1 != 2 {
			t.Errorf("%s = %q does not have exactly 2 decimals", e.Tag, e.Text())
		}
	}
	lineTag := "cac:InvoiceLine"
	if root.Tag == "CreditNote" {
		lineTag = "cac:CreditNoteLine"
	}
	lmt := "./cac:LegalMonetaryTotal/cbc:"
	eq := func(rule string, a, b decimal.Decimal) {
		if !a.Equal(b) {
			t.Errorf("%s broken: %s != %s\n%s", rule, a, b, out)
		}
	}
	eq("BR-CO-10", one(lmt+"LineExtensionAmount"), sum("./"+lineTag+"/cbc:LineExtensionAmount"))
	eq("BR-CO-13", one(lmt+"TaxExclusiveAmount"), one(lmt+"LineExtensionAmount"))
	eq("BR-CO-14", one("./cac:TaxTotal/cbc:TaxAmount"), sum("./cac:TaxTotal/cac:TaxSubtotal/cbc:TaxAmount"))
	eq("BR-CO-15", one(lmt+"TaxInclusiveAmount"), one(lmt+"TaxExclusiveAmount").Add(one("./cac:TaxTotal/cbc:TaxAmount")))
	eq("BR-CO-16", one(lmt+"PayableAmount"), one(lmt+"TaxInclusiveAmount").Sub(one(lmt+"PrepaidAmount")))
	// BR-53, PEPPOL-EN16931-R054, R055: with BT-6, one more TaxTotal with
	// BT-111 only, in that currency, with the sign of BT-110.
	tts := root.FindElements("./cac:TaxTotal")
	if tc := root.FindElement("./cbc:TaxCurrencyCode"); tc != nil {
		if len(tts) != 2 || tts[1].FindElement("cac:TaxSubtotal") != nil {
			t.Errorf("R054: %d TaxTotals with BT-6", len(tts))
		} else if a := tts[1].FindElement("cbc:TaxAmount"); a.SelectAttrValue("currencyID", "") != tc.Text() || num(a).Sign()*one("./cac:TaxTotal/cbc:TaxAmount").Sign() < 0 {
			t.Errorf("BT-111 %s %s", a.Text(), a.SelectAttrValue("currencyID", ""))
		}
	} else if len(tts) != 1 {
		t.Errorf("R053: %d TaxTotals", len(tts))
	}
	if root.FindElement("./cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory[cbc:ID='O']") != nil && root.FindElement(".//cac:PartyTaxScheme") != nil {
		t.Errorf("BR-O-02: category-O document carries a VAT identifier")
	}
}

// TestGoldenInvariants applies the fuzz test's arithmetic check to the goldens.
func TestGoldenInvariants(t *testing.T) {
	for _, gc := range goldenCases() {
		out, err := gc.input().render()
		if err != nil {
			t.Fatal(err)
		}
		checkWellFormed(t, out)
		checkInvariants(t, out)
	}
}

// FuzzRenderLaw fuzzes the fields of the invoicing-law release: tax
// country and currency, the rate, dates and periods, the extra address
// lines and the Greek myDATA references. Same contract as
// FuzzRenderInvoice: a *ValidationError and no XML, or a well-formed
// document that keeps the arithmetic (including BR-53, R054, R055) and
// passes the XSD.
//
//	go test ./ubl -run XXX -fuzz FuzzRenderLaw -fuzztime 20s
func FuzzRenderLaw(f *testing.F) {
	xmllint := testtool.LookPath(f, "xmllint")
	xsdDir := testtool.Conformance(f, "ubl-2.1", "maindoc")
	f.Add(false, false, "PL", "PLN", "4.2655", "2026-11-18", "2026-11-19", "", "", "", "", "Stiege 2", "c/o x", "Wien", "", "")
	f.Add(true, false, "IE", "", "", "", "2026-11-20", "2026-11-01", "2026-11-30", "2026-11-02", "2026-11-02", "", "", "", "", "")
	f.Add(true, true, "GR", "", "", "", "2026-11-20", "", "", "", "", "", "", "", "400001234567890", "https://invoices.example.gr/1")
	f.Add(false, true, "GB", "GBP", "0.8712", "2026-11-01", "2026-11-20", "2026-11-30", "2026-11-01", "", "", "<&>", "\r\n", "\t", "0", "x y")
	f.Add(false, false, "", "EUR", "1e40", "2026-13-01", "0000-01-01", "x", "", "", "", "\x00", "\xff", "", "", "")
	f.Fuzz(func(t *testing.T, peppol, credit bool, taxCountry, taxCode, rate, rateDate, supplyDate, pStart, pEnd, lStart, lEnd, street2, line3, subdivision, mark, url string) {
		inv := b2c("x402-fuzz", "PL", "23", "100.00")
		inv.Seller = sellerPL
		if peppol {
			inv = b2b("x402-fuzz", sellerIE, buyerATBusiness, line("x", "951.29", "AE", "0"))
		}
		if mark != "" || url != "" {
			inv = grB2B(grID)
			inv.MyDATA = &MyDATA{MARK: mark, URL: url}
		}
		inv.TaxCountry, inv.SupplyDate = taxCountry, supplyDate
		if taxCode != "" || rate != "" {
			r, err := decimal.NewFromString(rate)
			if err != nil {
				r = decimal.New(-1, 0)
			}
			inv.TaxCurrency = &TaxCurrency{Code: taxCode, Rate: r, RateDate: rateDate, RateSource: "fuzz"}
		}
		if pStart != "" || pEnd != "" {
			inv.Period = &Period{Start: pStart, End: pEnd}
		}
		if lStart != "" || lEnd != "" {
			inv.Lines[0].Period = &Period{Start: lStart, End: lEnd}
		}
		inv.Buyer.AdditionalStreet, inv.Buyer.AddressLine3, inv.Buyer.Subdivision = street2, line3, subdivision
		var out []byte
		var err error
		xsd := "UBL-Invoice-2.1.xsd"
		if credit {
			xsd = "UBL-CreditNote-2.1.xsd"
			out, err = RenderCreditNote(CreditNote{Invoice: inv, InvoiceRef: "x402-orig"})
		} else {
			out, err = RenderInvoice(inv)
		}
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 || out != nil {
				t.Fatalf("rejection is not a ValidationError with problems (out %d bytes): %v", len(out), err)
			}
			for _, p := range ve.Problems {
				if p.Field == "" || p.Err == nil || !isSentinel(p.Err) {
					t.Fatalf("problem without field or sentinel: %#v", p)
				}
			}
			return
		}
		checkWellFormed(t, out)
		checkInvariants(t, out)
		if again := etreeRewrite(t, out); !bytes.Equal(again, out) {
			t.Fatalf("output not in canonical form:\n%s", firstDiff(out, again))
		}
		if !newXSDShape(out) {
			return
		}
		cmd := exec.Command(xmllint, "--noout", "--schema", filepath.Join(xsdDir, xsd), "-")
		cmd.Stdin = bytes.NewReader(out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("XSD validation failed: %v\n%s\n%s", err, msg, out)
		}
	})
}
