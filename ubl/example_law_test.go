package ubl_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fiscal402/fiscal402/ubl"
	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// A Polish seller's domestic sale, invoiced in EUR: Polish law applies
// (TaxCountry), so the VAT is also stated in PLN at the NBP rate of the
// last working day before the supply (Art. 230; VAT Act Art. 106e(11),
// 31a), and the date of supply is written because it precedes the issue
// date (Art. 226(7)).
func ExampleRenderInvoice_taxCurrency() {
	inv := ubl.Invoice{
		Profile: ubl.ProfileEN16931, ID: "F402-2026-000123", IssueDate: "2026-11-20", Currency: "EUR",
		TaxCountry: "PL", SupplyDate: "2026-11-19",
		TaxCurrency: &ubl.TaxCurrency{Code: "PLN", Rate: dec("4.2655"), RateDate: "2026-11-18",
			RateSource: "NBP average rate, table 223/A/NBP/2026"},
		Seller: ubl.Party{Name: "Przykład Sp. z o.o.", VATNumber: "PL7770001111", Country: "PL"},
		Buyer:  ubl.Party{Name: "Private customer", Country: "PL"},
		Lines: []ubl.Line{{Name: "API access", Quantity: dec("1"), PriceAmount: dec("100.00"), NetAmount: dec("100.00"),
			Category: "S", RatePercent: dec("23")}},
		PaidInFull: true,
	}
	out, err := ubl.RenderInvoice(inv)
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		for _, tag := range []string{"cbc:Note", "TaxCurrencyCode", "ActualDeliveryDate", `<cbc:TaxAmount currencyID="PLN"`} {
			if strings.Contains(l, tag) {
				fmt.Println(strings.TrimSpace(l))
			}
		}
	}
	// Output:
	// <cbc:Note>VAT in PLN at 1 EUR = 4.2655 PLN, rate of 2026-11-18 (NBP average rate, table 223/A/NBP/2026): S 23 %: taxable amount 426.55 PLN, VAT 98.11 PLN; total VAT 98.11 PLN.</cbc:Note>
	// <cbc:TaxCurrencyCode>PLN</cbc:TaxCurrencyCode>
	// <cbc:ActualDeliveryDate>2026-11-19</cbc:ActualDeliveryDate>
	// <cbc:TaxAmount currencyID="PLN">98.11</cbc:TaxAmount>
}

// A business sale that cannot be invoiced as it stands: the engine stores a
// review record naming the rules instead of answering 500.
func ExampleValidationError_Rules() {
	inv := ubl.Invoice{
		Profile: ubl.ProfileEN16931, ID: "F402-2026-000124", IssueDate: "2026-11-20", Currency: "EUR",
		TaxCountry: "IE", SupplyDate: "2026-11-20",
		Seller: ubl.Party{Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE"},
		Buyer:  ubl.Party{Name: "Beispiel Handels GmbH", VATNumber: "ATU13585627", Country: "AT"}, // no address
		Lines: []ubl.Line{{Name: "API access", Quantity: dec("1"), PriceAmount: dec("951.29"), NetAmount: dec("951.29"),
			Category: "AE"}},
	}
	_, err := ubl.RenderInvoice(inv)
	var ve *ubl.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Rules())
		for _, p := range ve.Problems {
			fmt.Println(p.Field, p.Rule)
		}
	}
	// Output:
	// [VAT-Art226(5)]
	// Buyer.Street VAT-Art226(5)
	// Buyer.City VAT-Art226(5)
}

// Render before the number is known, number at commit.
func ExampleDraftInvoice() {
	d, err := ubl.DraftInvoice(ubl.Invoice{
		Profile: ubl.ProfileEN16931, IssueDate: "2026-11-20", Currency: "EUR", // no ID yet
		Seller: ubl.Party{Name: "Example Payments Ltd", VATNumber: "IE1234567T", Country: "IE"},
		Buyer:  ubl.Party{Name: "Private customer", Country: "DE"},
		Lines: []ubl.Line{{Name: "API access", Quantity: dec("1"), PriceAmount: dec("100.00"), NetAmount: dec("100.00"),
			Category: "S", RatePercent: dec("19")}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("VAT", d.Totals().Tax)
	out, err := d.Finish("F402-2026-000125") // inside the commit
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Split(string(out), "\n")[3])
	// Output:
	// VAT 19
	//   <cbc:ID>F402-2026-000125</cbc:ID>
}

// A month of micro-payments on one summary invoice (Art. 223): one line
// per rate, the VAT on the exact sum.
func ExampleSummarize() {
	var supplies []ubl.Supply
	for day := 1; day <= 30; day++ {
		for range 100 {
			supplies = append(supplies, ubl.Supply{Date: fmt.Sprintf("2026-11-%02d", day),
				NetAmount: dec("0.000951"), Category: "S", RatePercent: dec("19")})
		}
	}
	sum, err := ubl.Summarize("API requests", ubl.SummaryPerRate, supplies)
	if err != nil {
		panic(err)
	}
	l, s := sum.Lines[0], sum.Subtotals[0]
	fmt.Println(l.Name)
	fmt.Println("exact", l.PriceAmount, "net", l.NetAmount, "VAT", s.TaxAmount, "period", sum.Period.Start, sum.Period.End)
	// Rounding each request to the cent would have given a net of 0.00.
	// Output:
	// API requests: 3000 supplies, 2026-11-01 to 2026-11-30
	// exact 2.853 net 2.85 VAT 0.54 period 2026-11-01 2026-11-30
}

// What a German seller's account lacks for a domestic business sale over
// Peppol.
func ExampleCheckSeller() {
	c := ubl.CheckSeller(ubl.Party{
		Name: "Beispiel Software GmbH", VATNumber: "DE123456789", Street: "Musterstraße 1", City: "Berlin", Country: "DE",
	}, "DE")
	fmt.Println("B2C:", len(c.B2C), "reverse charge:", len(c.B2BReverseCharge))
	for _, p := range c.B2BStandard {
		fmt.Println(p.Field, p.Rule)
	}
	// Output:
	// B2C: 0 reverse charge: 0
	// Seller.Contact DE-R-002
	// Seller.Contact.Name DE-R-005
	// Seller.Contact.Telephone DE-R-006
	// Seller.Contact.Email DE-R-007
	// Seller.PostalCode DE-R-004
}

func ExampleGreekInvoiceNumber() {
	id, err := ubl.GreekInvoiceNumber("998877666", "2026-11-20", 0, ubl.GreekDocTypeServices, "F402", "000130")
	fmt.Println(id, err)
	// Output:
	// 998877666|20/11/2026|0|2.1|F402|000130 <nil>
}
