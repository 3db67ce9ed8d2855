package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestOneItemRuleNeedsTotalsThatCoverTheSeller: the one-item rule of Art.
// 24b(d) second subparagraph (Implementing Regulation (EU) No 282/2011 as
// amended by Implementing Regulation (EU) 2017/2459,
// http://data.europa.eu/eli/reg_impl/2017/2459/oj) holds only while the
// supplier's cross-border TBE supplies stay within EUR 100,000 in the
// current and the preceding year. A seller that states it is over the EUR
// 10,000 of Art. 59c (OverThreshold) while its totals (CrossBorder, the
// ledger's since onboarding plus any opening figures) show less than EUR
// 10,000 in both years has supplies the totals do not count, so they cannot
// show it within EUR 100,000: one card item is insufficient (review). The
// demo account of the README (overThreshold, no opening totals) had one
// third-party item accepted on a few euros of recorded sales. Totals that
// account for the statement (over EUR 10,000, within EUR 100,000) still
// allow the rule.
func TestOneItemRuleNeedsTotalsThatCoverTheSeller(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	eur := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	for _, c := range []struct {
		name   string
		seller Seller
		want   string
	}{
		{"stated over, totals of a few euros", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{CurrentYear: eur("32.80")}}, EvidenceRuleInsufficient},
		{"stated over, last year's total over EUR 10,000", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{PreviousYear: eur("12000")}}, EvidenceRuleOneItem},
		{"stated over, this year's total over EUR 10,000", Seller{Country: "DE", OverThreshold: true, CrossBorder: &CrossBorderTotals{CurrentYear: eur("10000.01")}}, EvidenceRuleOneItem},
		{"not stated over, small totals", Seller{Country: "DE", CrossBorder: &CrossBorderTotals{CurrentYear: eur("32.80")}}, EvidenceRuleOneItem},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Determine(Input{
				Seller: c.seller,
				Buyer: Buyer{Country: "AT", Evidence: []Evidence{
					{Kind: EvidencePaymentCard, Country: "AT", Source: EvidenceSourceThirdParty, Provider: "card acquirer"},
				}},
				Supply: Supply{Kind: KindDigitalService, Date: at, GrossEUR: decimal.NewFromInt(10)},
			})
			got := ""
			if d.LocationEvidence != nil {
				got = d.LocationEvidence.Rule
			}
			if got != c.want {
				t.Fatalf("evidence rule %q (status %s); want %q", got, d.Status, c.want)
			}
			if c.want == EvidenceRuleInsufficient && (d.Status != StatusManualReview || !hasReason(d, ReasonLocationEvidenceInsufficient)) {
				t.Fatalf("status %s, reasons %v; want review with %s", d.Status, d.Reasons, ReasonLocationEvidenceInsufficient)
			}
		})
	}
}
