package vat

import (
	"slices"
	"strings"
	"testing"
)

// TestOutsideEUUnconfirmedBusinessClaimKeepsEvidenceReview: a customer who
// says it is outside the EU, on location evidence that does not settle
// where it is (Art. 24b(d) Implementing Regulation 282/2011: one item of
// the customer's own, above EUR 100,000), goes to review: were it an EU
// consumer, EU VAT would be due instead of no VAT at all. Only a business
// a registry confirmed is located by its establishment rather than by the
// Art. 24b presumptions (Art. 18(1) and 24b; evidence.go finishEvidence).
// A bare B2B claim, a number that fails its check digits, one VIES found
// invalid or could not check must not lift the review and let the supply
// go out as "not subject to VAT" (category O) on the customer's word: a
// review found all of these DETERMINED OUTSIDE_SCOPE O.
func TestOutsideEUUnconfirmedBusinessClaimKeepsEvidenceReview(t *testing.T) {
	ev := []Evidence{{Kind: EvidenceBillingAddress, Country: "US", Source: EvidenceSourceCustomer}}
	canary := []Evidence{{Kind: EvidenceBillingAddress, Country: "IC", Source: EvidenceSourceCustomer}}
	for _, c := range []struct {
		name  string
		buyer Buyer
	}{
		{"consumer", Buyer{Country: "US", Evidence: ev}},
		{"business claim without number", Buyer{Country: "US", Evidence: ev, Business: true}},
		{"number failing its check digit", Buyer{Country: "US", Evidence: ev, VATNumber: "DE136695978"}},
		{"number VIES found invalid", Buyer{Country: "US", Evidence: ev, VATNumber: "DE136695976",
			Registry: &RegistryCheck{Status: RegistryInvalid, Registry: RegistryVIES, Number: "DE136695976"}}},
		{"number VIES could not check", Buyer{Country: "US", Evidence: ev, VATNumber: "DE136695976",
			Registry: &RegistryCheck{Status: RegistryUnavailable, Registry: RegistryVIES, Number: "DE136695976", Fault: "MS_UNAVAILABLE"}}},
		{"unchecked number, Canary Islands", Buyer{Country: "ES", PostalCode: "35001", Evidence: canary, VATNumber: "ESB64717838"}},
	} {
		in := Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("500000", "0")}, c.buyer, digitalCounted}
		d := Determine(in)
		codes := make([]string, len(d.Reasons))
		for i, r := range d.Reasons {
			codes[i] = r.Code
		}
		if d.Status != StatusManualReview || !slices.Contains(codes, ReasonLocationEvidenceInsufficient) {
			t.Errorf("%s: %s; want %s with %s", c.name, summary(d), StatusManualReview, ReasonLocationEvidenceInsufficient)
		}
	}
}

// TestInvalidNumberReasonSaysWhy: the note on a refused number names the
// test it fails in words a reviewer reads without the package's source:
// the prefix, the characters, the length, a part that cannot exist (a
// date, an office code), or the check digit.
func TestInvalidNumberReasonSaysWhy(t *testing.T) {
	for number, want := range map[string]string{
		"QQ123456789":   "country prefix",
		"ATU1515B209":   "character",
		"ATU151592092":  "length",
		"CZ95123891":    "cannot exist",
		"IT00687129980": "cannot exist",
		"DE136695978":   "check digit",
	} {
		d := Determine(Input{Seller{Country: "DE"}, Buyer{Country: "FR", VATNumber: number}, digital})
		var detail string
		for _, r := range d.Reasons {
			if r.Code == ReasonVATNumberInvalid {
				detail = r.Detail
			}
		}
		if !strings.Contains(detail, want) {
			t.Errorf("%s: reason %q; want it to say %q", number, detail, want)
		}
	}
}
