package vat_test

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/fiscal402/fiscal402/vat"
)

// A Swiss seller's sale to a Swiss consumer: neither the EU nor the UK
// ruleset governs it, so the determination is a manual review that names
// Swiss VAT, never "not subject to VAT". Coverage answers the same without
// a full determination.
func ExampleCoverage() {
	seller, buyer := vat.Seller{Country: "CH"}, vat.Buyer{Country: "CH"}
	c := vat.Coverage(seller, buyer)
	fmt.Println(c.Status, c.Governing.Name, c.Reasons[0].Code)
	d := vat.Determine(vat.Input{Seller: seller, Buyer: buyer,
		Supply: vat.Supply{Kind: vat.KindSaaS, Date: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)}})
	fmt.Println(d.Status, d.Reasons[0].Code, d.Category == "", d.LocalTax.Name)

	eu := vat.Coverage(vat.Seller{Country: "DE"}, vat.Buyer{Country: "CH"})
	fmt.Println(eu.Status, eu.Ruleset)
	// Output:
	// NOT_COVERED Swiss VAT (MWSTG) corridor_not_covered
	// MANUAL_REVIEW_REQUIRED corridor_not_covered true Swiss VAT (MWSTG)
	// COVERED eu-vat-oss-2026.09
}

// An Italian e-book at 4 % needs the ISBN attested (article 1(667) Law
// 190/2014); without it the determination neither applies 4 % nor guesses
// 22 %.
func ExampleDetermine_conditionalRate() {
	in := vat.Input{
		Seller: vat.Seller{Country: "US"},
		Buyer:  vat.Buyer{Country: "IT"},
		Supply: vat.Supply{Kind: vat.KindEbook, Date: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)},
	}
	d := vat.Determine(in)
	fmt.Println(d.Status, d.Reasons[0].Code)
	in.Supply.Conditions = []string{vat.ConditionITISBNISSN}
	d = vat.Determine(in)
	fmt.Println(d.Status, d.RatePercent, d.RateCondition.Code)
	// Output:
	// MANUAL_REVIEW_REQUIRED reduced_rate_condition_unattested
	// DETERMINED 4 it_isbn_issn
}

// Location evidence that contradicts: the billing address says Germany, the
// IP address France. Art. 24b(d) Implementing Regulation 282/2011 needs two
// non-contradictory items, so the determination is a manual review listing
// the items; the IP address itself (personal data) is not in it.
func ExampleDetermine_contradictoryEvidence() {
	d := vat.Determine(vat.Input{
		Seller: vat.Seller{Country: "US"},
		Buyer: vat.Buyer{Country: "DE", Evidence: []vat.Evidence{
			{Kind: vat.EvidenceBillingAddress, Country: "DE", Source: vat.EvidenceSourceCustomer, Value: "Hauptstr. 1, 10115 Berlin"},
			{Kind: vat.EvidenceIPAddress, Country: "FR", Source: vat.EvidenceSourceThirdParty, Provider: "MaxMind GeoIP2", Value: "198.51.100.7"},
		}},
		Supply: vat.Supply{Kind: vat.KindDigitalService, Date: time.Date(2026, 9, 1, 10, 0, 0, 0, time.UTC)},
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "status": "MANUAL_REVIEW_REQUIRED",
	//   "reasons": [
	//     {
	//       "code": "location_evidence_contradictory",
	//       "detail": "The items of location evidence contradict one another, so Art. 24b(d) Implementing Regulation 282/2011 does not settle the customer's location: buyer.evidence[0] billing_address=DE (customer); buyer.evidence[1] ip_address=FR (third_party: MaxMind GeoIP2); consumer country=DE (merchant)."
	//     }
	//   ],
	//   "ruleset": "eu-vat-oss-2026.09",
	//   "locationEvidence": {
	//     "rule": "contradictory",
	//     "items": [
	//       {
	//         "index": 0,
	//         "kind": "billing_address",
	//         "country": "DE",
	//         "source": "customer",
	//         "article": "24f(a)",
	//         "agrees": false,
	//         "personal": true
	//       },
	//       {
	//         "index": 1,
	//         "kind": "ip_address",
	//         "country": "FR",
	//         "source": "third_party",
	//         "provider": "MaxMind GeoIP2",
	//         "article": "24f(b)",
	//         "agrees": false,
	//         "personal": true
	//       }
	//     ],
	//     "basis": "Art. 24b(d) first subparagraph and Art. 24f Implementing Regulation (EU) 282/2011: two items of non-contradictory evidence"
	//   }
	// }
}
