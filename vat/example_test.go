package vat_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

func ExampleDetermine() {
	d := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "DE", OverThreshold: true},
		Buyer:  vat.Buyer{Country: "FI"},
		Supply: vat.Supply{Kind: vat.KindDigitalService, Date: time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)},
	})
	fmt.Println(d.Status, d.Regime, d.Scheme, d.Category, d.RatePercent, d.TaxingCountry)
	fmt.Println(d.LegalBasis)
	// Output:
	// DETERMINED OSS_B2C union S 25.5 FI
	// Art. 58(1) Directive 2006/112/EC; Union scheme Art. 369a–369k
}

// A business customer is reverse-charged only with a number a registry
// confirmed; the registry's answer (from package vies) is an input.
func ExampleDetermine_reverseCharge() {
	checked := time.Date(2026, 9, 1, 9, 59, 0, 0, time.UTC)
	d := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "FR"},
		Buyer: vat.Buyer{
			Country: "AT", Business: true, VATNumber: "ATU 135 856 27",
			Registry: &vat.RegistryCheck{Status: vat.RegistryValid, Registry: vat.RegistryVIES,
				Number: "ATU13585627", CheckedAt: checked, RequestIdentifier: "WAPIAAAAZ0000001"},
		},
		Supply: vat.Supply{Kind: vat.KindSaaS, Date: checked},
	})
	fmt.Println(d.Status, d.Regime, d.Category, d.RatePercent, d.VATEX)
	fmt.Println(d.InvoiceNote)

	// Without the registry's answer the claim stays open.
	open := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "FR"},
		Buyer:  vat.Buyer{Country: "AT", Business: true, VATNumber: "ATU13585627"},
		Supply: vat.Supply{Kind: vat.KindSaaS, Date: checked},
	})
	fmt.Println(open.Status, open.Reasons[0].Code)
	// Output:
	// DETERMINED REVERSE_CHARGE_B2B AE 0 VATEX-EU-AE
	// Reverse charge
	// MANUAL_REVIEW_REQUIRED vat_number_unverified
}

// A customer outside the EU VAT territory, here found from a Canary Islands
// postal code: category O, and no VAT ids on the invoice (BR-O-02).
func ExampleDetermine_outsideScope() {
	d := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "DE"},
		Buyer:  vat.Buyer{Country: "ES", PostalCode: "38001"},
		Supply: vat.Supply{Kind: vat.KindEbook, Date: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
	})
	fmt.Println(d.Regime, d.Category, d.VATEX, d.Territory, d.OmitVATIDs(), d.ChargesVAT())
	fmt.Println(d.InvoiceNote)
	fmt.Println(d.LocalTax.Name, d.LocalTax.Authority)
	// Output:
	// OUTSIDE_SCOPE O VATEX-EU-O Canary Islands true false
	// Not subject to EU VAT – place of supply Canary Islands, outside the EU VAT territory (Art. 6(1)(b) Directive 2006/112/EC; Art. 44/58 Directive 2006/112/EC). Local tax: IGIC (Impuesto General Indirecto Canario), not assessed
	// IGIC (Impuesto General Indirecto Canario) Agencia Tributaria Canaria
}

// The JSON form is what the fiscal record embeds as "classification";
// ratePercent is a JSON number.
func ExampleDetermination_json() {
	d := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "US"},
		Buyer: vat.Buyer{Country: "IE", Evidence: []vat.Evidence{
			{Kind: vat.EvidenceBillingAddress, Country: "IE", Source: vat.EvidenceSourceCustomer, Value: "1 Main Street, Dublin"},
			{Kind: vat.EvidencePaymentCard, Country: "IE", Source: vat.EvidenceSourceThirdParty, Provider: "card issuer"},
		}},
		Supply: vat.Supply{Kind: vat.KindEbook, Date: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "status": "DETERMINED",
	//   "ruleset": "eu-vat-oss-2026.09",
	//   "jurisdiction": "eu-vat",
	//   "regime": "OSS_B2C",
	//   "ossScheme": "non-union",
	//   "taxCategoryCode": "Z",
	//   "ratePercent": 0,
	//   "taxingCountry": "IE",
	//   "placeOfSupply": "IE",
	//   "legalBasis": "Art. 58(1) Directive 2006/112/EC; non-Union scheme Art. 358a–369",
	//   "buyerTreatment": "B2C",
	//   "rateKind": "zero",
	//   "rateSource": {
	//     "table": "vat-rates-2026.12.3",
	//     "effectiveFrom": "2024-01-01",
	//     "source": "https://www.kildarestreet.com/wrans/?id=2023-12-05a.405&s=section%3Awrans+speaker%3A466 ; https://www.oireachtas.ie/en/debates/question/2023-07-25/310/"
	//   },
	//   "supplyDate": "2026-09-01",
	//   "timeZone": "Europe/Dublin",
	//   "locationEvidence": {
	//     "rule": "two_items",
	//     "country": "IE",
	//     "items": [
	//       {
	//         "index": 0,
	//         "kind": "billing_address",
	//         "country": "IE",
	//         "source": "customer",
	//         "article": "24f(a)",
	//         "agrees": true,
	//         "personal": true
	//       },
	//       {
	//         "index": 1,
	//         "kind": "payment_card",
	//         "country": "IE",
	//         "source": "third_party",
	//         "provider": "card issuer",
	//         "article": "24f(c)",
	//         "agrees": true
	//       }
	//     ],
	//     "basis": "Art. 24b(d) first subparagraph and Art. 24f Implementing Regulation (EU) 282/2011: two items of non-contradictory evidence"
	//   }
	// }
}

func ExampleRateTable_Standard() {
	t := vat.Rates()
	for _, d := range []string{"2024-08-31", "2024-09-01"} {
		on, _ := time.Parse(time.DateOnly, d)
		rate, src, err := t.Standard("FI", on)
		fmt.Println(d, rate, src.EffectiveFrom, err)
	}
	_, _, err := t.Standard("FI", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(err)
	// Output:
	// 2024-08-31 24  <nil>
	// 2024-09-01 25.5 2024-09-01 <nil>
	// vat: rate for FI on 2027-01-01: vat: date outside the rate table's coverage
}

func ExampleValidateNumber() {
	n, err := vat.ValidateNumber("be (0)428.759.497")
	fmt.Println(n, err)

	_, err = vat.ValidateNumber("DE136695978")
	var ne *vat.NumberError
	if errors.As(err, &ne) {
		fmt.Println(ne.Reason)
	}
	// Output:
	// BE0428759497 <nil>
	// checksum
}

func ExampleNormalizeNumber() {
	fmt.Println(vat.NormalizeNumber("gr 094-259-216"))
	// Output: EL094259216
}
