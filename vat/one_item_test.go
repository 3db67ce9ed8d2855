package vat

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestOneItemRuleOnlyForSellerEstablishedInOneMemberState: Art. 24b(d)
// second subparagraph (Implementing Regulation (EU) No 282/2011, as amended
// by Regulation (EU) 2017/2459) lets a supplier established in only one
// member state, within EUR 100,000 of cross-border TBE supplies, rely on one
// item of evidence from a third party. A seller with a fixed establishment
// in a second member state may not: its one card item is insufficient and
// the supply goes to review. A review found the rule applied to it.
func TestOneItemRuleOnlyForSellerEstablishedInOneMemberState(t *testing.T) {
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		seller Seller
		want   string
	}{
		{"DE only", Seller{Country: "DE", CrossBorder: &CrossBorderTotals{}}, EvidenceRuleOneItem},
		{"DE with a fixed establishment in FR", Seller{Country: "DE", OtherEstablishments: []string{"FR"}, CrossBorder: &CrossBorderTotals{}}, EvidenceRuleInsufficient},
		{"DE with fixed establishments in FR and IT", Seller{Country: "DE", OtherEstablishments: []string{"FR", "IT"}, CrossBorder: &CrossBorderTotals{}}, EvidenceRuleInsufficient},
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
				t.Fatalf("evidence rule %q (status %s, regime %s); want %q", got, d.Status, d.Regime, c.want)
			}
			if c.want == EvidenceRuleInsufficient && d.Status != StatusManualReview {
				t.Fatalf("status %s on one item; want %s", d.Status, StatusManualReview)
			}
		})
	}
}
