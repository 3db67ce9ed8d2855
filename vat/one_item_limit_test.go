package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestOneItemRuleEndsWithTheSupplyThatExceedsTheLimit: one item of
// third-party evidence places the customer only while the supplier's
// cross-border TBE supplies do not exceed EUR 100,000 in the current and the
// preceding calendar year; where the limit is exceeded during a year, the
// rule does not apply from that time (Art. 24b(d), second and third
// subparagraphs, Implementing Regulation (EU) No 282/2011 as amended by
// Implementing Regulation (EU) 2017/2459,
// http://data.europa.eu/eli/reg_impl/2017/2459/oj). The supply that takes
// the year over EUR 100,000 is the first made after "that time", as the
// package reads "as of that time" in Art. 59c(2) for the EUR 10,000: it
// needs two items. A review found a EUR 1,210 supply on a year at EUR
// 99,950 placed on one card item, the year then at EUR 100,958.33.
func TestOneItemRuleEndsWithTheSupplyThatExceedsTheLimit(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	eur := decimal.RequireFromString
	card := []Evidence{{Kind: EvidencePaymentCard, Country: "AT", Source: EvidenceSourceThirdParty, Provider: "card acquirer"}}
	for _, c := range []struct {
		name    string
		seller  Seller
		gross   string
		want    string
		allowed bool
	}{
		// AT standard rate 20 %: EUR 1,210 is EUR 1,008.33 net; EUR 60 is 50 net.
		{"stated over, this supply takes the year over", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{PreviousYear: eur("50000"), CurrentYear: eur("99950")}}, "1210", EvidenceRuleInsufficient, false},
		{"stated over, this supply reaches the limit exactly", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{PreviousYear: eur("50000"), CurrentYear: eur("99950")}}, "60", EvidenceRuleOneItem, true},
		{"stated over, this supply stays within", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{PreviousYear: eur("50000"), CurrentYear: eur("90000")}}, "1210", EvidenceRuleOneItem, true},
		{"from running totals, this supply takes the year over", Seller{Country: "DE", CrossBorder: &CrossBorderTotals{PreviousYear: eur("50000"), CurrentYear: eur("99999.99")}}, "12.10", EvidenceRuleInsufficient, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Determine(Input{
				Seller: c.seller,
				Buyer:  Buyer{Country: "AT", Evidence: card},
				Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: eur(c.gross)},
			})
			got := ""
			if d.LocationEvidence != nil {
				got = d.LocationEvidence.Rule
			}
			if got != c.want {
				t.Fatalf("evidence rule %q (status %s, regime %s, threshold %+v); want %q", got, d.Status, d.Regime, d.Threshold, c.want)
			}
			if c.allowed != (d.Status == StatusDetermined) || !c.allowed && !hasReason(d, ReasonLocationEvidenceInsufficient) {
				t.Fatalf("status %s, reasons %v; want determined %v", d.Status, d.Reasons, c.allowed)
			}
		})
	}
}

// TestManualDeterminationOfASupplyOverTheOneItemLimit: a person's
// determination of the supply that takes the year over EUR 100,000 on one
// item does not record the one-item rule as its evidence (Art. 24b(d)
// third subparagraph, Implementing Regulation (EU) 2017/2459): the person
// settled the location.
func TestManualDeterminationOfASupplyOverTheOneItemLimit(t *testing.T) {
	eur := decimal.RequireFromString
	in := Input{
		Seller: Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{PreviousYear: eur("50000"), CurrentYear: eur("99950")}},
		Buyer:  Buyer{Country: "AT", Evidence: []Evidence{{Kind: EvidencePaymentCard, Country: "AT", Source: EvidenceSourceThirdParty}}},
		Supply: Supply{Kind: KindDigitalService, Date: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), GrossEUR: eur("1210")},
	}
	d, err := DetermineManually(in, Manual{Regime: RegimeOSSB2C, TaxingCountry: "AT", RatePercent: "20", Reason: "billing address checked by phone", DecidedBy: "reviewer-7"})
	if err != nil {
		t.Fatal(err)
	}
	if d.LocationEvidence == nil || d.LocationEvidence.Rule != EvidenceRuleManual {
		t.Fatalf("evidence %+v; want rule %s", d.LocationEvidence, EvidenceRuleManual)
	}
}
