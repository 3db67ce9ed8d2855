package ubl_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/shopspring/decimal"
)

// An OSS sale to a consumer in Germany, paid in full in USDC on Base.
func ExampleRenderInvoice() {
	note, err := ubl.SettlementNote("EUR", ubl.Settlement{
		PaidOn: "2026-11-20", Amount: "125.090000", Asset: "USDC", Network: "eip155:8453", TxHash: "0x3f5c…7f",
		Rate: "1.0512", RateCurrency: "USD", RateDate: "2026-11-19",
		RateSource: "ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD",
	})
	if err != nil {
		panic(err)
	}
	inv := ubl.Invoice{
		Profile:   ubl.ProfileEN16931, // B2C: plain EN 16931
		ID:        "x402-7f3a",
		IssueDate: "2026-11-20",
		Currency:  "EUR",
		Note:      note,
		Seller: ubl.Party{
			Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE",
		},
		Buyer: ubl.Party{Name: "Private customer", Country: "DE"},
		Lines: []ubl.Line{{
			Name:     "API access, 1 request",
			Quantity: decimal.NewFromInt(1), PriceAmount: decimal.RequireFromString("100.00"),
			NetAmount: decimal.RequireFromString("100.00"),
			Category:  "S", RatePercent: decimal.NewFromInt(19),
		}},
		PaymentMeans: &ubl.PaymentMeans{Code: "ZZZ", Name: "USDC stablecoin transfer", PaymentID: "0x3f5c…7f"},
		PaidInFull:   true,
	}
	out, err := ubl.RenderInvoice(inv)
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Amount") || strings.Contains(l, "Percent") || strings.Contains(l, "TypeCode") {
			fmt.Println(strings.TrimSpace(l))
		}
	}
	// Output:
	// <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
	// <cbc:TaxAmount currencyID="EUR">19.00</cbc:TaxAmount>
	// <cbc:TaxableAmount currencyID="EUR">100.00</cbc:TaxableAmount>
	// <cbc:TaxAmount currencyID="EUR">19.00</cbc:TaxAmount>
	// <cbc:Percent>19</cbc:Percent>
	// <cbc:LineExtensionAmount currencyID="EUR">100.00</cbc:LineExtensionAmount>
	// <cbc:TaxExclusiveAmount currencyID="EUR">100.00</cbc:TaxExclusiveAmount>
	// <cbc:TaxInclusiveAmount currencyID="EUR">119.00</cbc:TaxInclusiveAmount>
	// <cbc:PrepaidAmount currencyID="EUR">119.00</cbc:PrepaidAmount>
	// <cbc:PayableAmount currencyID="EUR">0.00</cbc:PayableAmount>
	// <cbc:LineExtensionAmount currencyID="EUR">100.00</cbc:LineExtensionAmount>
	// <cbc:Percent>19</cbc:Percent>
	// <cbc:PriceAmount currencyID="EUR">100.00</cbc:PriceAmount>
}

// A refund of a reverse-charge B2B invoice, sent over Peppol: the
// electronic addresses are derived from the VAT numbers.
func ExampleRenderCreditNote() {
	cn := ubl.CreditNote{
		Invoice: ubl.Invoice{
			Profile: ubl.ProfilePeppol, ID: "x402-7f3a-r1", IssueDate: "2026-11-25", Currency: "EUR",
			BuyerReference: "order-42",
			Seller:         ubl.Party{Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE"},
			Buyer:          ubl.Party{Name: "Kunde GmbH", VATNumber: "DE987654321", Country: "DE"},
			Lines: []ubl.Line{{
				Name: "API access, November 2026", Quantity: decimal.NewFromInt(1),
				PriceAmount: decimal.RequireFromString("951.29"), NetAmount: decimal.RequireFromString("951.29"),
				Category: "AE",
			}},
			PaidInFull: true,
		},
		InvoiceRef: "x402-7f3a", InvoiceIssueDate: "2026-11-20",
	}
	out, err := ubl.RenderCreditNote(cn)
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		for _, tag := range []string{"TypeCode", "<cbc:ID>x402-7f3a<", "EndpointID", "TaxExemption"} {
			if strings.Contains(l, tag) {
				fmt.Println(strings.TrimSpace(l))
			}
		}
	}
	// Output:
	// <cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>
	// <cbc:ID>x402-7f3a</cbc:ID>
	// <cbc:EndpointID schemeID="9935">IE1234567T</cbc:EndpointID>
	// <cbc:EndpointID schemeID="9930">DE987654321</cbc:EndpointID>
	// <cbc:TaxExemptionReasonCode>VATEX-EU-AE</cbc:TaxExemptionReasonCode>
	// <cbc:TaxExemptionReason>Reverse charge</cbc:TaxExemptionReason>
}

// Problems are reported all at once, each with the input field, the
// EN 16931 or Peppol rule and a sentinel to branch on.
func ExampleRenderInvoice_validation() {
	inv := ubl.Invoice{
		Profile: ubl.ProfileEN16931, ID: "x402-7f3a", IssueDate: "2026-11-20",
		Currency: "USDC", // not ISO 4217
		Seller:   ubl.Party{Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE"},
		Buyer:    ubl.Party{Name: "Private customer", Country: "DE"},
		Lines: []ubl.Line{{
			Name: "API access\x00", Quantity: decimal.NewFromInt(1),
			PriceAmount: decimal.RequireFromString("0.125"), NetAmount: decimal.RequireFromString("0.125"),
			Category: "S", RatePercent: decimal.NewFromInt(19),
		}},
	}
	_, err := ubl.RenderInvoice(inv)
	var ve *ubl.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Printf("%s [%s] %v\n", p.Field, p.Rule, p.Err)
		}
	}
	fmt.Println(errors.Is(err, ubl.ErrCode), errors.Is(err, ubl.ErrXMLChar))
	// Output:
	// Currency [BR-CL-04] not in code list
	// Lines[0].Name [] invalid character for XML 1.0
	// Lines[0].NetAmount [BR-DEC-23] too many decimal places
	// true true
}

// Tax-inclusive pricing: the engine splits the gross into net and VAT and
// passes the subtotal; the renderer checks it and derives the totals.
func ExampleInvoice_Totals() {
	inv := ubl.Invoice{
		Profile: ubl.ProfileEN16931, ID: "x402-7f3a", IssueDate: "2026-11-20", Currency: "EUR",
		Seller: ubl.Party{Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE"},
		Buyer:  ubl.Party{Name: "Private customer", Country: "DE"},
		Lines: []ubl.Line{{
			Name: "API access", Quantity: decimal.NewFromInt(1),
			PriceAmount: decimal.RequireFromString("8.40"), NetAmount: decimal.RequireFromString("8.40"),
			Category: "S", RatePercent: decimal.NewFromInt(19),
		}},
		// 10.00 gross: net round(10.00 / 1.19) = 8.40, VAT 10.00 − 8.40 = 1.60
		Subtotals: []ubl.TaxSubtotal{{
			Category: "S", RatePercent: decimal.NewFromInt(19),
			TaxableAmount: decimal.RequireFromString("8.40"), TaxAmount: decimal.RequireFromString("1.60"),
		}},
		PaidInFull: true,
	}
	t, err := inv.Totals()
	if err != nil {
		panic(err)
	}
	fmt.Println("net", t.TaxExclusive.StringFixed(2), "VAT", t.Tax.StringFixed(2), "gross", t.TaxInclusive.StringFixed(2), "payable", t.Payable.StringFixed(2))
	// Output:
	// net 8.40 VAT 1.60 gross 10.00 payable 0.00
}

func ExampleEASForVATNumber() {
	for _, vat := range []string{"DE123456789", "IE1234567T", "IT12345678903", "EL123456783", "DK12345678"} {
		scheme, ok := ubl.EASForVATNumber(vat)
		fmt.Println(vat, scheme, ok)
	}
	// Output:
	// DE123456789 9930 true
	// IE1234567T 9935 true
	// IT12345678903 0211 true
	// EL123456783 9933 true
	// DK12345678  false
}

func ExampleSettlementNote() {
	note, err := ubl.SettlementNote("EUR", ubl.Settlement{
		PaidOn: "2026-11-20", Amount: "119.000000", Asset: "USDC", Network: "eip155:8453", TxHash: "0xabc",
		Rate: "1.0512", RateCurrency: "USD", RateDate: "2026-11-19",
		RateSource: "ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(note)
	// Output:
	// Paid in full on 2026-11-20: 119.000000 USDC on eip155:8453, tx 0xabc; converted at 1 EUR = 1.0512 USD as of 2026-11-19 (ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD).
}
