package ubl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// expectProblem fails unless err is a *ValidationError with no XML and a
// problem matching want.
func expectProblem(t *testing.T, out []byte, err error, want wantProblem) {
	t.Helper()
	if err == nil {
		t.Fatalf("rendered, want %s %s error on %s", want.rule, want.err, want.field)
	}
	if out != nil {
		t.Errorf("returned %d bytes of XML together with an error", len(out))
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is not a *ValidationError: %T %v", err, err)
	}
	for _, p := range ve.Problems {
		if p.Field == want.field && p.Rule == want.rule && errors.Is(p, want.err) {
			return
		}
	}
	t.Errorf("no problem {%s %s %v} in:\n%v", want.field, want.rule, want.err, err)
}

// lawB2B is an Irish seller's reverse-charge sale to an Austrian business
// under Irish invoicing law: the shape every law test mutates.
func lawB2B() Invoice {
	inv := b2b("F402-1", sellerIE, buyerATBusiness, line("x", "100.00", "AE", "0"))
	inv.TaxCountry, inv.SupplyDate = "IE", "2026-11-20"
	return inv
}

func lawPL() Invoice {
	inv := b2c("F402-1", "PL", "23", "100.00")
	inv.Seller, inv.TaxCountry, inv.SupplyDate, inv.TaxCurrency = sellerPL, "PL", "2026-11-19", nbpRate()
	return inv
}

func lawUK() Invoice {
	inv := b2c("F402-1", "GB", "20", "100.00")
	inv.Seller, inv.TaxCountry, inv.SupplyDate = sellerUSUK, "GB", "2026-11-20"
	inv.TaxCurrency = &TaxCurrency{Code: "GBP", Rate: d("0.8712"), RateDate: "2026-11-01", RateSource: "HMRC monthly rate"}
	return inv
}

func TestLawRejects(t *testing.T) {
	for _, f := range []func() Invoice{lawB2B, lawPL, lawUK} {
		if _, err := RenderInvoice(f()); err != nil {
			t.Fatalf("base case rejected: %v", err)
		}
	}
	tests := []struct {
		name string
		inv  func() Invoice
		want wantProblem
	}{
		// Art. 230: the VAT in the national currency.
		{"PL without PLN", func() Invoice { i := lawPL(); i.TaxCurrency = nil; return i }, wantProblem{"TaxCurrency", RuleArt230, ErrRequired}},
		{"PL with SEK", func() Invoice { i := lawPL(); i.TaxCurrency.Code = "SEK"; return i }, wantProblem{"TaxCurrency.Code", RuleArt230, ErrMismatch}},
		{"UK without GBP", func() Invoice { i := lawUK(); i.TaxCurrency = nil; return i }, wantProblem{"TaxCurrency", RuleArt230, ErrRequired}},
		{"SE without SEK", func() Invoice {
			i := b2c("F402-1", "SE", "25", "100.00")
			i.Seller, i.TaxCountry, i.SupplyDate = sellerSE, "SE", "2026-11-20"
			return i
		}, wantProblem{"TaxCurrency", RuleArt230, ErrRequired}},
		{"tax currency equal to the invoice currency", func() Invoice {
			i := lawPL()
			i.TaxCurrency.Code = "EUR"
			return i
		}, wantProblem{"TaxCurrency.Code", "PEPPOL-EN16931-R005", ErrForbidden}},
		{"tax currency USDC", func() Invoice { i := lawPL(); i.TaxCurrency.Code = "USDC"; return i }, wantProblem{"TaxCurrency.Code", "BR-CL-05", ErrCode}},
		{"zero rate", func() Invoice { i := lawPL(); i.TaxCurrency.Rate = decimal.Zero; return i }, wantProblem{"TaxCurrency.Rate", "", ErrRange}},
		{"rate with 11 decimals", func() Invoice { i := lawPL(); i.TaxCurrency.Rate = d("4.26550000001"); return i }, wantProblem{"TaxCurrency.Rate", "", ErrDecimals}},
		{"no rate source", func() Invoice { i := lawPL(); i.TaxCurrency.RateSource = ""; return i }, wantProblem{"TaxCurrency.RateSource", "", ErrRequired}},
		{"bad rate date", func() Invoice { i := lawPL(); i.TaxCurrency.RateDate = "18.11.2026"; return i }, wantProblem{"TaxCurrency.RateDate", "PEPPOL-EN16931-F001", ErrFormat}},
		{"unknown tax country", func() Invoice { i := lawB2B(); i.TaxCountry = "CH"; return i }, wantProblem{"TaxCountry", "", ErrUnsupported}},
		{"EL is no tax country", func() Invoice { i := lawB2B(); i.TaxCountry = "EL"; return i }, wantProblem{"TaxCountry", "", ErrUnsupported}},

		// Art. 226(7): the date of supply.
		{"no date of supply", func() Invoice { i := lawB2B(); i.SupplyDate = ""; return i }, wantProblem{"SupplyDate", RuleArt226_7, ErrRequired}},
		{"bad date of supply", func() Invoice { i := lawB2B(); i.SupplyDate = "2026-02-30"; return i }, wantProblem{"SupplyDate", "PEPPOL-EN16931-F001", ErrFormat}},

		// Art. 226(5), Art. 220a(2): the customer's address on a business sale.
		{"reverse charge without buyer street", func() Invoice { i := lawB2B(); i.Buyer.Street = ""; return i }, wantProblem{"Buyer.Street", RuleArt226_5, ErrRequired}},
		{"reverse charge without buyer city", func() Invoice { i := lawB2B(); i.Buyer.City = ""; return i }, wantProblem{"Buyer.City", RuleArt226_5, ErrRequired}},
		{"reverse charge outside Peppol without address", func() Invoice {
			i := lawB2B()
			i.Profile = ProfileEN16931
			i.Buyer = Party{Name: "Beispiel Handels GmbH", VATNumber: "ATU13585627", Country: "AT"}
			return i
		}, wantProblem{"Buyer.Street", RuleArt226_5, ErrRequired}},

		// Art. 362: no non-Union OSS number on a business invoice.
		{"non-Union OSS number on a reverse-charge invoice", func() Invoice {
			i := lawB2B()
			i.Seller = Party{Name: "Example API Inc.", TaxRegistrationID: "EU372022452", LegalID: "EIN 12-3456789", EndpointID: "5391234500004", EndpointScheme: "0088", Country: "US"}
			return i
		}, wantProblem{"Seller.TaxRegistrationID", RuleArt362, ErrForbidden}},

		// UK: the GB VRN, no EU VATEX code.
		{"UK invoice with the EU number", func() Invoice {
			i := lawUK()
			i.Seller.VATNumber, i.Seller.TaxRegistrationID = "", "EU372022452"
			return i
		}, wantProblem{"Seller.VATNumber", RuleUKReg14, ErrRequired}},
		{"UK invoice with an Irish VAT number", func() Invoice { i := lawUK(); i.Seller.VATNumber = "IE1234567T"; return i }, wantProblem{"Seller.VATNumber", RuleUKReg14, ErrRequired}},
		{"UK reverse charge with VATEX-EU-AE", func() Invoice {
			i := b2b("F402-1", sellerUSUK, buyerGBBusiness, line("x", "100.00", "AE", "0"))
			i.TaxCountry, i.SupplyDate, i.TaxCurrency = "GB", "2026-11-20", lawUK().TaxCurrency
			i.Lines[0].ExemptionCode = "VATEX-EU-AE"
			return i
		}, wantProblem{"Lines[0].ExemptionCode", RuleUKReg14, ErrForbidden}},

		// Periods (BG-14, BG-26).
		{"empty period", func() Invoice { i := lawB2B(); i.Period = &Period{}; return i }, wantProblem{"Period", "BR-CO-19", ErrRequired}},
		{"period ends before it starts", func() Invoice {
			i := lawB2B()
			i.Period = &Period{Start: "2026-11-30", End: "2026-11-01"}
			return i
		}, wantProblem{"Period.End", "BR-29", ErrRange}},
		{"line period ends before it starts", func() Invoice {
			i := lawB2B()
			i.Lines[0].Period = &Period{Start: "2026-11-30", End: "2026-11-01"}
			return i
		}, wantProblem{"Lines[0].Period.End", "BR-30", ErrRange}},
		{"line period before the invoice period", func() Invoice {
			i := lawB2B()
			i.Period = &Period{Start: "2026-11-01", End: "2026-11-30"}
			i.Lines[0].Period = &Period{Start: "2026-10-31", End: "2026-11-02"}
			return i
		}, wantProblem{"Lines[0].Period.Start", "PEPPOL-EN16931-R110", ErrRange}},
		{"line period after the invoice period", func() Invoice {
			i := lawB2B()
			i.Period = &Period{Start: "2026-11-01", End: "2026-11-30"}
			i.Lines[0].Period = &Period{Start: "2026-11-29", End: "2026-12-01"}
			return i
		}, wantProblem{"Lines[0].Period.End", "PEPPOL-EN16931-R111", ErrRange}},

		// New address fields are text like the others.
		{"subdivision with a control character", func() Invoice { i := lawB2B(); i.Buyer.Subdivision = "Wien\x01"; return i }, wantProblem{"Buyer.Subdivision", "", ErrXMLChar}},
		{"blank third address line", func() Invoice { i := lawB2B(); i.Buyer.AddressLine3 = "  "; return i }, wantProblem{"Buyer.AddressLine3", "PEPPOL-EN16931-R008", ErrFormat}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderInvoice(tc.inv())
			expectProblem(t, out, err, tc.want)
		})
	}
}

// TestLawChecksNeedTaxCountry: without TaxCountry the renderer behaves as
// before the law checks existed (the engine opts in per invoice).
func TestLawChecksNeedTaxCountry(t *testing.T) {
	inv := b2b("x", sellerIE, Party{Name: "Kunde GmbH", VATNumber: "DE987654321", Country: "DE"}, line("x", "100.00", "AE", "0"))
	if _, err := RenderInvoice(inv); err != nil {
		t.Fatalf("without TaxCountry: %v", err)
	}
	inv.TaxCountry, inv.SupplyDate = "IE", "2026-11-20"
	out, err := RenderInvoice(inv)
	expectProblem(t, out, err, wantProblem{"Buyer.Street", RuleArt226_5, ErrRequired})
}

// TestTaxCurrencyAmounts: BT-111 is the sum of the per-rate VAT amounts,
// each converted at the rate and rounded once; the note states the rate,
// its date and source, and the converted breakdown; the second TaxTotal
// carries only BT-111 in the tax currency.
func TestTaxCurrencyAmounts(t *testing.T) {
	inv := lawPL()
	inv.Lines = []Line{line("a", "100.00", "S", "23"), line("b", "33.33", "S", "8"), line("c", "0.01", "S", "23")}
	tot, err := inv.Totals()
	if err != nil {
		t.Fatal(err)
	}
	// Independently: 23 % group base 100.01 → VAT 23.0023 → 23.00 EUR → ×4.2655 = 98.1065 → 98.11 PLN;
	// 8 % group base 33.33 → VAT 2.6664 → 2.67 EUR → ×4.2655 = 11.388885 → 11.39 PLN.
	want := []struct{ base, vat string }{{"426.59", "98.11"}, {"142.17", "11.39"}}
	if len(tot.TaxCurrencySubtotals) != 2 {
		t.Fatalf("tax currency subtotals: %+v", tot.TaxCurrencySubtotals)
	}
	for i, w := range want {
		s := tot.TaxCurrencySubtotals[i]
		if s.TaxableAmount.StringFixed(2) != w.base || s.TaxAmount.StringFixed(2) != w.vat {
			t.Errorf("group %d in PLN = %s / %s, want %s / %s", i, s.TaxableAmount.StringFixed(2), s.TaxAmount.StringFixed(2), w.base, w.vat)
		}
	}
	if got := tot.TaxCurrencyTax.StringFixed(2); got != "109.50" {
		t.Errorf("BT-111 = %s, want 109.50", got)
	}
	out, err := RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	tts := doc.FindElements("./Invoice/cac:TaxTotal")
	if len(tts) != 2 || tts[1].FindElement("cac:TaxSubtotal") != nil {
		t.Fatalf("want two TaxTotals, the second without subtotals (R054)")
	}
	if a := tts[1].FindElement("cbc:TaxAmount"); a.Text() != "109.50" || a.SelectAttrValue("currencyID", "") != "PLN" {
		t.Errorf("BT-111 written as %s %s", a.Text(), a.SelectAttrValue("currencyID", ""))
	}
	if got := text(t, doc, "./Invoice/cbc:TaxCurrencyCode"); got != "PLN" {
		t.Errorf("BT-6 = %q", got)
	}
	note := text(t, doc, "./Invoice/cbc:Note")
	for _, part := range []string{inv.Note + " VAT in PLN at 1 EUR = 4.2655 PLN, rate of 2026-11-18 (NBP average rate",
		"S 23 %: taxable amount 426.59 PLN, VAT 98.11 PLN; S 8 %: taxable amount 142.17 PLN, VAT 11.39 PLN; total VAT 109.50 PLN."} {
		if !strings.Contains(note, part) {
			t.Errorf("note lacks %q:\n%s", part, note)
		}
	}
	if got := text(t, doc, "./Invoice/cac:Delivery/cbc:ActualDeliveryDate"); got != "2026-11-19" {
		t.Errorf("BT-72 = %q", got)
	}
}

// TestUKReverseChargeLegend: under UK law the reverse-charge breakdown has
// no VATEX code, only the legend (BR-AE-10 accepts the text alone), and
// the seller is identified by its GB VRN.
func TestUKReverseChargeLegend(t *testing.T) {
	i := b2b("F402-1", sellerUSUK, buyerGBBusiness, line("x", "100.00", "AE", "0"))
	i.TaxCountry, i.SupplyDate, i.TaxCurrency = "GB", "2026-11-20", lawUK().TaxCurrency
	out, err := RenderInvoice(i)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("VATEX")) {
		t.Error("UK invoice carries a VATEX code")
	}
	doc := parse(t, out)
	const cat = "./Invoice/cac:TaxTotal/cac:TaxSubtotal/cac:TaxCategory/"
	if r := text(t, doc, cat+"cbc:TaxExemptionReason"); r != ukReverseChargeReason {
		t.Errorf("legend %q", r)
	}
	if v := text(t, doc, "./Invoice/cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme/cbc:CompanyID"); v != "GB123456782" {
		t.Errorf("seller VAT id %q", v)
	}
	// The caller's own legend is kept.
	i.Lines[0].ExemptionReason = "Reverse charge: customer to pay the VAT to HMRC"
	out, err = RenderInvoice(i)
	if err != nil {
		t.Fatal(err)
	}
	if r := text(t, parse(t, out), cat+"cbc:TaxExemptionReason"); r != i.Lines[0].ExemptionReason {
		t.Errorf("legend %q", r)
	}
}

// TestBuyerAddressWritten: every address field reaches the XML in the
// order of the UBL AddressType.
func TestBuyerAddressWritten(t *testing.T) {
	inv := lawB2B()
	inv.Buyer.AddressLine3 = "c/o Buchhaltung"
	out, err := RenderInvoice(inv)
	if err != nil {
		t.Fatal(err)
	}
	addr := parse(t, out).FindElement("./Invoice/cac:AccountingCustomerParty/cac:Party/cac:PostalAddress")
	var got []string
	for _, e := range addr.ChildElements() {
		got = append(got, e.Tag+"="+strings.TrimSpace(e.Text()))
	}
	want := []string{"StreetName=Wiedner Hauptstraße 15", "AdditionalStreetName=Stiege 2, Top 7", "CityName=Wien", "PostalZone=1040",
		"CountrySubentity=Wien", "AddressLine=", "Country="}
	if !slices.Equal(got, want) {
		t.Errorf("address = %q\nwant %q", got, want)
	}
	if l := addr.FindElement("cac:AddressLine/cbc:Line"); l == nil || l.Text() != "c/o Buchhaltung" {
		t.Errorf("third address line = %v", l)
	}
}

func TestValidationErrorRules(t *testing.T) {
	inv := lawB2B()
	inv.Buyer.Street, inv.Buyer.City, inv.SupplyDate = "", "", ""
	inv.Lines[0].Name = ""
	inv.Lines = append(inv.Lines, inv.Lines[0])
	_, err := RenderInvoice(inv)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatal(err)
	}
	if got, want := ve.Rules(), []string{"BR-25"}; !slices.Equal(got, want) {
		t.Errorf("Rules() = %q, want %q (first pass only)", got, want)
	}
	inv.Lines = inv.Lines[:1]
	inv.Lines[0].Name = "x"
	inv.Lines[0].ID = "L\x01"
	_, err = RenderInvoice(inv)
	if !errors.As(err, &ve) {
		t.Fatal(err)
	}
	if got, want := ve.Rules(), []string{"field:Lines[0].ID"}; !slices.Equal(got, want) {
		t.Errorf("Rules() = %q, want %q", got, want)
	}
	inv.Lines[0].ID = ""
	_, err = RenderInvoice(inv)
	if !errors.As(err, &ve) {
		t.Fatal(err)
	}
	if got, want := ve.Rules(), []string{RuleArt226_7, RuleArt226_5}; !slices.Equal(got, want) {
		t.Errorf("Rules() = %q, want %q", got, want)
	}
}

func TestNationalCurrency(t *testing.T) {
	for c, want := range map[string]string{
		"PL": "PLN", "SE": "SEK", "CZ": "CZK", "DK": "DKK", "HU": "HUF", "RO": "RON", "GB": "GBP",
		"DE": "EUR", "IE": "EUR", "BG": "EUR", "HR": "EUR", "GR": "EUR",
		"EL": "", "CH": "", "US": "", "XI": "", "": "",
	} {
		got, ok := NationalCurrency(c)
		if got != want || ok != (want != "") {
			t.Errorf("NationalCurrency(%q) = %q, %v; want %q", c, got, ok, want)
		}
	}
	if n := len(euroArea) + len(nationalCurrency) - 1; n != 27 {
		t.Errorf("%d member states known, want 27", n)
	}
}

// TestNationalTaxRegistrationRules: SE-R-005 and IT-R-001 on the seller's
// BT-32, checked by the Go port and, when PEPPOL_XSLT is set, by the
// artefact on the same documents rendered without the port's check.
func TestNationalTaxRegistrationRules(t *testing.T) {
	itSeller := Party{Name: "Esempio S.r.l.", VATNumber: "IT12345678903", Street: "Via Roma 1", City: "Roma", PostalCode: "00100", Country: "IT"}
	cases := []struct {
		seller Party
		taxReg string
		rule   string // "" when valid
	}{
		{sellerSE, "Godkänd för F-skatt", ""},
		{sellerSE, "GODKÄND FÖR  F-SKATT", ""},
		{sellerSE, "F-skatt", "SE-R-005"},
		{itSeller, "RSSMRA80A01H501U", ""},
		{itSeller, "12345678903", ""},
		{itSeller, "rssmra80a01h501u", "IT-R-001"},
		{itSeller, "IT-123", "IT-R-001"},
	}
	var files []string
	dir := t.TempDir()
	for i, tc := range cases {
		inv := b2b("x", tc.seller, buyerDEBusiness, line("x", "100.00", "AE", "0"))
		inv.Seller.TaxRegistrationID = tc.taxReg
		out, err := RenderInvoice(inv)
		if tc.rule == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.taxReg, err)
			}
		} else {
			expectProblem(t, out, err, wantProblem{"Seller.TaxRegistrationID", tc.rule, ErrFormat})
		}
		inv.Seller.TaxRegistrationID = ""
		p, err := prepare(&inv, nil)
		if err != nil {
			t.Fatal(err)
		}
		inv.Seller.TaxRegistrationID = tc.taxReg
		raw, _ := p.render()
		f := filepath.Join(dir, fmt.Sprintf("%02d.xml", i))
		if err := os.WriteFile(f, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if os.Getenv("PEPPOL_XSLT") == "" {
		t.Skip("the artefact half needs PEPPOL_XSLT")
	}
	report, _ := validateUBL(t, files, "", schematronLayer(t, "PEPPOL_XSLT", "the Peppol BIS 3.0 layer"))
	for i, tc := range cases {
		var findings []string
		for _, l := range strings.Split(report, "\n") {
			if strings.HasPrefix(l, files[i]+":") {
				findings = append(findings, l)
			}
		}
		if (tc.rule == "") != (len(findings) == 0) || tc.rule != "" && !strings.Contains(findings[0], "] "+tc.rule+":") {
			t.Errorf("%q: artefact findings %q, Go port says %q", tc.taxReg, findings, tc.rule)
		}
	}
}
