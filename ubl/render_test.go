package ubl

import (
	"bytes"
	"encoding/xml"
	"strings"
	"sync"
	"testing"

	"github.com/beevik/etree"
)

// TestTotals checks the EN 16931 arithmetic against hand-computed values:
// VAT rounded once per (category, rate), half away from zero, totals as sums
// of rounded values (BR-CO-10 … BR-CO-16).
func TestTotals(t *testing.T) {
	tests := []struct {
		name      string
		lines     []Line
		subtotals []TaxSubtotal
		paid      bool
		// want: per-group VAT, then BT-106, BT-110, BT-112, BT-113, BT-115
		groupVAT                                []string
		lineExt, tax, taxIncl, prepaid, payable string
	}{
		{"one line 19 %", []Line{line("a", "100.00", "S", "19")}, nil, true,
			[]string{"19.00"}, "100.00", "19.00", "119.00", "119.00", "0.00"},
		{"half cent rounds up: 0.98 × 25 % = 0.245", []Line{line("a", "0.98", "S", "25")}, nil, true,
			[]string{"0.25"}, "0.98", "0.25", "1.23", "1.23", "0.00"},
		{"half cent rounds up: 0.50 × 19 % = 0.095", []Line{line("a", "0.50", "S", "19")}, nil, true,
			[]string{"0.10"}, "0.50", "0.10", "0.60", "0.60", "0.00"},
		{"rounded once per group, not per line", []Line{line("a", "0.50", "S", "19"), line("b", "0.50", "S", "19"), line("c", "0.50", "S", "19")}, nil, true,
			[]string{"0.29"}, "1.50", "0.29", "1.79", "1.79", "0.00"},
		{"two rates, groups in order of first line", []Line{line("a", "9.35", "S", "7"), line("b", "8.40", "S", "19"), line("c", "4.67", "S", "7")}, nil, true,
			[]string{"0.98", "1.60"}, "22.42", "2.58", "25.00", "25.00", "0.00"},
		{"fractional rate 25.5 %", []Line{line("a", "94.82", "S", "25.5")}, nil, true,
			[]string{"24.18"}, "94.82", "24.18", "119.00", "119.00", "0.00"},
		{"rate written as 19.00 groups with 19", []Line{line("a", "1.00", "S", "19.00"), line("b", "1.00", "S", "19")}, nil, true,
			[]string{"0.38"}, "2.00", "0.38", "2.38", "2.38", "0.00"},
		{"zero amount", []Line{line("a", "0.00", "S", "19")}, nil, true,
			[]string{"0.00"}, "0.00", "0.00", "0.00", "0.00", "0.00"},
		{"not paid: whole total payable", []Line{line("a", "100.00", "S", "19")}, nil, false,
			[]string{"19.00"}, "100.00", "19.00", "119.00", "0.00", "119.00"},
		{"tax-inclusive subtotal kept as given (1.60, exact 1.596)", []Line{line("a", "8.40", "S", "19")},
			[]TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("8.40"), TaxAmount: d("1.60")}}, true,
			[]string{"1.60"}, "8.40", "1.60", "10.00", "10.00", "0.00"},
		{"tax-inclusive subtotal 0.01 below the computed VAT", []Line{line("a", "8.41", "S", "19")},
			[]TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("8.41"), TaxAmount: d("1.59")}}, true,
			[]string{"1.59"}, "8.41", "1.59", "10.00", "10.00", "0.00"},
		{"zero-rated", []Line{line("a", "15.00", "Z", "0")}, nil, true,
			[]string{"0.00"}, "15.00", "0.00", "15.00", "15.00", "0.00"},
		{"largest case", []Line{line("a", "799406520.60", "S", "19")}, nil, true,
			[]string{"151887238.91"}, "799406520.60", "151887238.91", "951293759.51", "951293759.51", "0.00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := b2c("x", "DE", "19", "1.00")
			inv.Lines, inv.Subtotals, inv.PaidInFull = tc.lines, tc.subtotals, tc.paid
			tot, err := inv.Totals()
			if err != nil {
				t.Fatal(err)
			}
			if len(tot.Subtotals) != len(tc.groupVAT) {
				t.Fatalf("%d subtotals, want %d", len(tot.Subtotals), len(tc.groupVAT))
			}
			for i, s := range tot.Subtotals {
				if got := s.TaxAmount.StringFixed(2); got != tc.groupVAT[i] {
					t.Errorf("subtotal %d VAT = %s, want %s", i, got, tc.groupVAT[i])
				}
			}
			for _, c := range []struct{ name, got, want string }{
				{"LineExtension", tot.LineExtension.StringFixed(2), tc.lineExt},
				{"TaxExclusive", tot.TaxExclusive.StringFixed(2), tc.lineExt},
				{"Tax", tot.Tax.StringFixed(2), tc.tax},
				{"TaxInclusive", tot.TaxInclusive.StringFixed(2), tc.taxIncl},
				{"Prepaid", tot.Prepaid.StringFixed(2), tc.prepaid},
				{"Payable", tot.Payable.StringFixed(2), tc.payable},
			} {
				if c.got != c.want {
					t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
				}
			}
			// The XML states the same figures.
			out, err := RenderInvoice(inv)
			if err != nil {
				t.Fatal(err)
			}
			doc := parse(t, out)
			if got := text(t, doc, "./Invoice/cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount"); got != tc.taxIncl {
				t.Errorf("XML TaxInclusiveAmount = %s, want %s", got, tc.taxIncl)
			}
			if got := text(t, doc, "./Invoice/cac:LegalMonetaryTotal/cbc:PayableAmount"); got != tc.payable {
				t.Errorf("XML PayableAmount = %s, want %s", got, tc.payable)
			}
			if prepaid := doc.FindElement("./Invoice/cac:LegalMonetaryTotal/cbc:PrepaidAmount"); (prepaid != nil) != tc.paid {
				t.Errorf("PrepaidAmount present = %v, want %v", prepaid != nil, tc.paid)
			}
		})
	}
}

func parse(t *testing.T, b []byte) *etree.Document {
	t.Helper()
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	return doc
}

func text(t *testing.T, doc *etree.Document, path string) string {
	t.Helper()
	e := doc.FindElement(path)
	if e == nil {
		t.Fatalf("no element %s", path)
	}
	return e.Text()
}

// TestDeterministic: equal inputs give byte-identical output, also when
// rendered concurrently (no shared state; run with -race).
func TestDeterministic(t *testing.T) {
	for _, gc := range goldenCases() {
		first, err := gc.input().render()
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		outs := make([][]byte, 8)
		for i := range outs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i], _ = gc.input().render()
			}()
		}
		wg.Wait()
		for i, o := range outs {
			if !bytes.Equal(o, first) {
				t.Fatalf("%s: render %d differs from the first", gc.Name, i)
			}
		}
	}
}

// TestTextRoundTrip: what goes in comes out, character for character, after
// an XML parser has read it (markup characters, quotes, emoji, RTL, TAB, CR, LF).
func TestTextRoundTrip(t *testing.T) {
	weird := []string{
		`Tom & Jerry's <"Best"> Café ☕ 🚀`,
		"שלום עולם – مرحبا بالعالم",
		"line one\r\nline two\rthree\ttab",
		"]]> and &amp; literally",
		"  leading and trailing spaces  ",
		"\u202Eright-to-left override\u202C",
		"U+FFFD \uFFFD is a valid character",
	}
	for _, s := range weird {
		inv := b2c("x", "DE", "19", "100.00")
		inv.Seller.Name, inv.Buyer.Name, inv.Note, inv.Lines[0].Name = s, s, s, s
		inv.PaymentMeans.Name = s // an attribute value
		out, err := RenderInvoice(inv)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		got := map[string][]string{}
		dec := xml.NewDecoder(bytes.NewReader(out))
		var stack []string
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tk := tok.(type) {
			case xml.StartElement:
				stack = append(stack, tk.Name.Local)
				for _, a := range tk.Attr {
					if a.Name.Local == "name" {
						got["@name"] = append(got["@name"], a.Value)
					}
				}
			case xml.EndElement:
				stack = stack[:len(stack)-1]
			case xml.CharData:
				if len(stack) > 0 {
					got[stack[len(stack)-1]] = append(got[stack[len(stack)-1]], string(tk))
				}
			}
		}
		for _, k := range []string{"RegistrationName", "Note", "Name", "@name"} {
			found := false
			for _, v := range got[k] {
				found = found || v == s
			}
			if !found {
				t.Errorf("%q did not survive in %s: got %q", s, k, got[k])
			}
		}
	}
}

// TestCategoryOHasNoVATIDs: BR-O-02..04 — the parties' VAT numbers are
// neither written as VAT identifiers nor used as electronic addresses.
func TestCategoryOHasNoVATIDs(t *testing.T) {
	inv := b2b("x", sellerIE, buyerDEBusiness, line("x", "10.00", "O", "0"))
	inv.Seller.EndpointID, inv.Seller.EndpointScheme = "5391234500004", "0088"
	inv.Buyer.EndpointID, inv.Buyer.EndpointScheme = "7612345678900", "0088"
	out, err := RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	for _, vat := range []string{sellerIE.VATNumber, buyerDEBusiness.VATNumber, "PartyTaxScheme", "<cbc:Percent>"} {
		if bytes.Contains(out, []byte(vat)) {
			t.Errorf("category-O invoice contains %q", vat)
		}
	}
	doc := parse(t, out)
	if got := text(t, doc, "./Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/cbc:TaxExemptionReasonCode"); got != "VATEX-EU-O" {
		t.Errorf("exemption code %q", got)
	}
}

// TestExemptionDefaultsAndOverrides: AE and O get the VATEX code list's
// code and text unless the caller gives its own text.
func TestExemptionDefaultsAndOverrides(t *testing.T) {
	inv := b2b("x", sellerIE, buyerDEBusiness, line("x", "10.00", "AE", "0"))
	out, err := RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	const cat = "./Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/"
	if c, r := text(t, doc, cat+"cbc:TaxExemptionReasonCode"), text(t, doc, cat+"cbc:TaxExemptionReason"); c != "VATEX-EU-AE" || r != "Reverse charge" {
		t.Errorf("defaults = %q, %q", c, r)
	}
	if doc.FindElement("./Invoice/cac:InvoiceLine/cac:Item/cac:ClassifiedTaxCategory/cbc:TaxExemptionReason") != nil {
		t.Error("exemption reason written on the line (UBL-CR-? territory; it belongs in the breakdown)")
	}
	inv.Lines[0].ExemptionReason = "Autoliquidation – article 196 de la directive 2006/112/CE"
	out, err = RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	if r := text(t, parse(t, out), cat+"cbc:TaxExemptionReason"); r != inv.Lines[0].ExemptionReason {
		t.Errorf("reason = %q", r)
	}
}

// TestCreditNoteStructure: root, type code 381, reference to the invoice,
// credit-note line elements.
func TestCreditNoteStructure(t *testing.T) {
	cn := CreditNote{Invoice: b2c("x402-r1", "DE", "19", "100.00"), InvoiceRef: "x402-de19", InvoiceIssueDate: "2026-11-20"}
	out, err := RenderCreditNote(cn)
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	if root := doc.Root(); root.Tag != "CreditNote" || root.SelectAttrValue("xmlns", "") != nsCreditNote {
		t.Fatalf("root %s xmlns=%s", root.Tag, root.SelectAttrValue("xmlns", ""))
	}
	for path, want := range map[string]string{
		"./CreditNote/cbc:CreditNoteTypeCode":                                          "381",
		"./CreditNote/cac:BillingReference/cac:InvoiceDocumentReference/cbc:ID":        "x402-de19",
		"./CreditNote/cac:BillingReference/cac:InvoiceDocumentReference/cbc:IssueDate": "2026-11-20",
		"./CreditNote/cac:CreditNoteLine/cbc:CreditedQuantity":                         "1",
		"./CreditNote/cac:LegalMonetaryTotal/cbc:PayableAmount":                        "0.00",
	} {
		if got := text(t, doc, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if bytes.Contains(out, []byte("InvoiceLine")) || bytes.Contains(out, []byte("InvoiceTypeCode")) {
		t.Error("credit note contains invoice elements")
	}
}

// TestEndpoints: Peppol derives endpoints from VAT numbers; EN 16931 writes
// only explicit ones and accepts schemes Peppol does not (EM).
func TestEndpoints(t *testing.T) {
	out, err := RenderInvoice(b2b("x", sellerFR, buyerITBusiness, line("x", "10.00", "AE", "0")))
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	for _, c := range []struct{ party, id, scheme string }{
		{"AccountingSupplierParty", "FR40123456789", "9957"},
		{"AccountingCustomerParty", "IT12345678903", "0211"},
	} {
		e := doc.FindElement("./Invoice/cac:" + c.party + "/cac:Party/cbc:EndpointID")
		if e == nil || e.Text() != c.id || e.SelectAttrValue("schemeID", "") != c.scheme {
			t.Errorf("%s endpoint = %v", c.party, e)
		}
	}

	b := b2c("x", "DE", "19", "100.00")
	b.Buyer.VATNumber = "DE987654321"
	out, err = RenderInvoice(b)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("EndpointID")) {
		t.Error("EN 16931 invoice got a derived endpoint")
	}
	b.Buyer.EndpointID, b.Buyer.EndpointScheme = "kunde@example.org", "EM"
	out, err = RenderInvoice(b)
	if err != nil {
		t.Fatalf("EM endpoint under EN 16931: %v", err)
	}
	if !bytes.Contains(out, []byte(`<cbc:EndpointID schemeID="EM">kunde@example.org</cbc:EndpointID>`)) {
		t.Error("explicit EM endpoint not written")
	}
}

// TestOutputForm: XML declaration, indentation, final newline, no
// timestamps or other volatile content.
func TestOutputForm(t *testing.T) {
	out, err := RenderInvoice(b2c("x", "DE", "19", "100.00"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Invoice xmlns=")) {
		t.Errorf("unexpected start: %q", out[:80])
	}
	if !bytes.HasSuffix(out, []byte("</Invoice>\n")) {
		t.Errorf("unexpected end: %q", out[len(out)-20:])
	}
	if !strings.Contains(string(out), "\n  <cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>\n") {
		t.Error("CustomizationID not indented by two spaces")
	}
	if strings.Contains(string(out), "ProfileID") {
		t.Error("EN 16931 invoice has a ProfileID")
	}
}
