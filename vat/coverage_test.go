package vat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/vat/internal/ratesgen"
)

// allCases are the inputs of every golden line.
func allCases() []Input {
	ins := goldenInputs()
	for _, c := range issueCases {
		ins = append(ins, c.in)
	}
	return ins
}

// TestCoverageAgreesWithDetermine runs every corridor of the golden table
// through Coverage and Determine: corridor_not_covered if and only if
// NOT_COVERED, the same governing law, and a covered corridor determined
// under the ruleset Coverage names.
func TestCoverageAgreesWithDetermine(t *testing.T) {
	counts := map[string]int{}
	for _, in := range allCases() {
		c := Coverage(in.Seller, in.Buyer)
		d := Determine(in)
		checkNewInvariants(t, in, d)
		counts[c.Status]++
		notCovered := slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == ReasonCorridorNotCovered })
		switch c.Status {
		case CoverageNotCovered:
			if !notCovered || d.Status != StatusManualReview || d.LocalTax == nil || *d.LocalTax != *c.Governing {
				t.Errorf("%s: Coverage says not covered (%s), Determine %s", describe(in), c.Governing.Name, summary(d))
			}
		case CoverageCovered:
			if notCovered {
				t.Errorf("%s: Coverage says covered by %s, Determine says corridor_not_covered", describe(in), c.Ruleset)
			}
			if d.Jurisdiction != "" && d.Ruleset != c.Ruleset {
				t.Errorf("%s: Coverage names %s, Determine used %s", describe(in), c.Ruleset, d.Ruleset)
			}
		case CoverageUndetermined:
			if notCovered || d.Determined() || len(c.Reasons) == 0 {
				t.Errorf("%s: Coverage undetermined %v, Determine %s", describe(in), c.Reasons, summary(d))
			}
		default:
			t.Errorf("%s: status %q", describe(in), c.Status)
		}
	}
	if counts[CoverageNotCovered] < 15 || counts[CoverageCovered] < 100 || counts[CoverageUndetermined] < 5 {
		t.Errorf("the golden corridors exercise too little: %v", counts)
	}
}

// TestCorridorTable pins the coverage of the corridors the issue names,
// written by hand from the rule (package documentation).
func TestCorridorTable(t *testing.T) {
	for _, c := range []struct {
		seller, buyer string
		status, rs    string
		governing     string
	}{
		{"CH", "CH", CoverageNotCovered, "", "Swiss VAT (MWSTG)"},
		{"US", "US", CoverageNotCovered, "", "US state and local sales and use taxes"},
		{"CH", "US", CoverageNotCovered, "", "US state and local sales and use taxes"},
		{"US", "CH", CoverageNotCovered, "", "Swiss VAT (MWSTG)"},
		{"LI", "CH", CoverageNotCovered, "", "Swiss VAT (MWSTG)"},
		{"NO", "NO", CoverageNotCovered, "", "Norwegian VAT (merverdiavgiftsloven)"},
		{"CA", "CA", CoverageNotCovered, "", "Canadian GST/HST (Excise Tax Act, Part IX)"},
		{"AU", "AU", CoverageNotCovered, "", "Australian GST (A New Tax System (Goods and Services Tax) Act 1999)"},
		{"JP", "JP", CoverageNotCovered, "", "Japanese consumption tax (Consumption Tax Act, Act No. 108 of 1988)"},
		{"SG", "SG", CoverageNotCovered, "", "Singapore GST (Goods and Services Tax Act 1993)"},
		{"IN", "IN", CoverageNotCovered, "", "Indian IGST (Integrated Goods and Services Tax Act 2017)"},
		{"US", "IC", CoverageNotCovered, "", "IGIC (Impuesto General Indirecto Canario)"},
		{"BR", "MX", CoverageNotCovered, "", "the indirect-tax law of MX"},
		{"CH", "DE", CoverageCovered, RulesetEU, ""},
		{"DE", "CH", CoverageCovered, RulesetEU, ""},
		{"DE", "IC", CoverageCovered, RulesetEU, ""},
		{"US", "GB", CoverageCovered, RulesetUK, ""},
		{"GB", "US", CoverageCovered, RulesetUK, ""},
		{"GB", "FR", CoverageCovered, RulesetEU, ""},
		{"FR", "XI", CoverageCovered, RulesetUK, ""},
		{"", "US", CoverageUndetermined, "", ""},
		{"US", "", CoverageUndetermined, "", ""},
		{"IC", "US", CoverageUndetermined, "", ""},
	} {
		got := Coverage(Seller{Country: c.seller}, Buyer{Country: c.buyer})
		gov := ""
		if got.Governing != nil {
			gov = got.Governing.Name
		}
		if got.Status != c.status || got.Ruleset != c.rs || gov != c.governing {
			t.Errorf("Coverage(%s → %s) = %s %s %q, want %s %s %q", c.seller, c.buyer, got.Status, got.Ruleset, gov, c.status, c.rs, c.governing)
		}
	}
}

// TestCoverageJSON pins the wire form the capability check can pass on.
func TestCoverageJSON(t *testing.T) {
	b, err := json.Marshal(Coverage(Seller{Country: "US"}, Buyer{Country: "US"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"status":"NOT_COVERED"`, `"placeOfSupply":"US"`, `"governing":{"name":"US state and local sales and use taxes","territory":"US"`, `"reasons":[{"code":"corridor_not_covered"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

// TestEverySourceIsCitable: no rate row, condition, local-tax statement or
// territory basis points at a file beside the repository, and every source
// names a public address.
func TestEverySourceIsCitable(t *testing.T) {
	for _, r := range rateRows {
		if err := ratesgen.CheckCitation(r.source, true); err != nil {
			t.Errorf("%s %s %s: %v", r.country, r.territory, r.series, err)
		}
		if err := ratesgen.CheckCitation(r.note, false); err != nil {
			t.Errorf("%s %s %s note: %v", r.country, r.territory, r.series, err)
		}
	}
	for _, c := range Rates().Conditions() {
		if err := ratesgen.CheckCitation(c.Source, true); err != nil || c.Description == "" {
			t.Errorf("condition %s: %v", c.Code, err)
		}
	}
	check := func(what string, lt LocalTax) {
		if err := ratesgen.CheckCitation(lt.Source, true); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if lt.Name == "" || lt.Territory == "" || !strings.HasSuffix(lt.Note, ".") {
			t.Errorf("%s: incomplete statement %+v", what, lt)
		}
	}
	for tr, lt := range territoryTaxes {
		check(tr.name, lt)
	}
	for cc, lt := range countryTaxes {
		check(cc, lt)
		if !isoCountries[cc] || cc != lt.Territory {
			t.Errorf("%s: not an ISO code or a territory mismatch (%s)", cc, lt.Territory)
		}
	}
	check("generic", genericTax("MX"))
	for _, tr := range []*territory{tCanary, tCeuta, tMelilla, tCeutaMel, tAthos, tAland, tGuadeloupe, tMartinique, tGuiana, tReunion, tMayotte, tBusingen, tHeligoland, tLivigno, tCampione, tAzores, tMadeira, tNI} {
		if err := ratesgen.CheckCitation(tr.basis, false); err != nil {
			t.Errorf("%s basis: %v", tr.name, err)
		}
	}
	// Every territory the issue names has its own statement.
	for _, tr := range []*territory{tCanary, tCeuta, tMelilla, tCeutaMel, tAthos, tAland, tGuadeloupe, tMartinique, tGuiana, tReunion, tMayotte, tBusingen, tHeligoland, tLivigno, tCampione} {
		if _, ok := territoryTaxes[tr]; !ok {
			t.Errorf("%s has no local-tax statement", tr.name)
		}
	}
}

// TestBuyerCountryCodes: every code Buyer.Country documents resolves, end
// to end.
func TestBuyerCountryCodes(t *testing.T) {
	for _, cc := range []string{"AX", "IC", "EA", "GP", "MQ", "GF", "RE", "YT", "MF", "MC", "IM", "XI", "EL", "UK", "GR"} {
		norm, ok := BuyerCountry(cc)
		if !ok {
			t.Errorf("BuyerCountry(%q) not accepted", cc)
		}
		d := Determine(Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: cc}, Supply{Kind: KindSaaS, Date: sep1}})
		if slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == ReasonBuyerCountryUnknown }) || d.PlaceOfSupply == "" {
			t.Errorf("%s (%s): %s", cc, norm, summary(d))
		}
	}
	for _, bad := range []string{"", "XX", "ES-CN", "Spain", "E"} {
		if _, ok := BuyerCountry(bad); ok {
			t.Errorf("BuyerCountry(%q) accepted", bad)
		}
	}
}

// TestEvidenceIsNotModified: Determine reads the evidence and the
// conditions without changing them.
func TestEvidenceIsNotModified(t *testing.T) {
	ev := []Evidence{{Kind: "billing_address", Country: "de", Source: "customer", Value: "x"}, {Kind: "ip_address", Country: "DE", Source: "third_party"}}
	conds := []string{" it_isbn_issn "}
	in := Input{Seller{Country: "US"}, Buyer{Country: "DE", Evidence: ev}, Supply{Kind: KindEbook, Date: sep1, Conditions: conds}}
	before := fmt.Sprintf("%+v %q", ev, conds)
	Determine(in)
	Coverage(in.Seller, in.Buyer)
	if fmt.Sprintf("%+v %q", ev, conds) != before {
		t.Error("Determine modified the evidence or the conditions")
	}
}

func FuzzLocateBuyer(f *testing.F) {
	f.Add("DE", "", "billing_address", "DE", "customer", "ip_address", "FR", "third_party", "US", "100000", "0")
	f.Add("", "35001", "payment_card", "IC", "third_party", "sim", "ES", "third_party", "DE", "1", "2")
	f.Add("EA", "51001", "other", "ea", "merchant", "bank", "ES", "customer", "CH", "-1", "1e9")
	f.Fuzz(func(t *testing.T, country, postal, k1, c1, s1, k2, c2, s2, seller, prev, cur string) {
		in := Input{
			Seller: Seller{Country: seller},
			Buyer: Buyer{Country: country, PostalCode: postal, Evidence: []Evidence{
				{Kind: k1, Country: c1, Source: s1}, {Kind: k2, Country: c2, Source: s2}}},
			Supply: Supply{Kind: KindDigitalService, Date: sep1},
		}
		if p, err1 := decimalOrNil(prev); err1 == nil {
			if c, err2 := decimalOrNil(cur); err2 == nil {
				in.Seller.CrossBorder = &CrossBorderTotals{PreviousYear: p, CurrentYear: c}
			}
		}
		d := Determine(in)
		checkInvariants(t, in, d)
		checkNewInvariants(t, in, d)
		c := Coverage(in.Seller, in.Buyer)
		if (c.Status == CoverageNotCovered) != slices.ContainsFunc(d.Reasons, func(r Reason) bool { return r.Code == ReasonCorridorNotCovered }) {
			t.Errorf("Coverage %s disagrees with Determine %s", c.Status, summary(d))
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
	})
}

func decimalOrNil(s string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err == nil && (d.Exponent() < -4 || d.Exponent() > 12) {
		return decimal.Decimal{}, fmt.Errorf("out of range")
	}
	return d, err
}

func BenchmarkDetermineWithEvidence(b *testing.B) {
	in := Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("40000", "1000")},
		Buyer{Country: "FR", Evidence: []Evidence{{Kind: EvidenceBillingAddress, Country: "FR", Source: EvidenceSourceCustomer}, {Kind: EvidenceIPAddress, Country: "FR", Source: EvidenceSourceThirdParty}}},
		Supply{Kind: KindEpublication, Date: sep1, Conditions: []string{ConditionFRPressCPPAP}, GrossEUR: decimal.RequireFromString("11.90")}}
	b.ReportAllocs()
	for b.Loop() {
		if d := Determine(in); !d.Determined() {
			b.Fatal(summary(d))
		}
	}
}

func BenchmarkCoverage(b *testing.B) {
	s, by := Seller{Country: "CH"}, Buyer{Country: "CH"}
	b.ReportAllocs()
	for b.Loop() {
		if c := Coverage(s, by); c.Status != CoverageNotCovered {
			b.Fatal(c.Status)
		}
	}
}
