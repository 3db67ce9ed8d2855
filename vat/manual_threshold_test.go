package vat

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestManualDomesticInConsumerStateFollowsThreshold: a seller established
// in one member state only taxes its consumer sales to another member
// state at home while its Art. 59c totals stay within EUR 10,000 (Art.
// 59c(1)); only past them, or with the option, is the consumer's state the
// place of supply (Art. 58, 59c(2), (3)). Declaring that state's VAT in its
// own return (DOMESTIC there) instead of through the OSS changes the
// return, not the place of supply: the person's DOMESTIC DE must be
// refused exactly where OSS_B2C DE is, and where it is accepted the supply
// is a B2C supply to another member state that counts toward the totals.
func TestManualDomesticInConsumerStateFollowsThreshold(t *testing.T) {
	de := stdRate(t, "DE", sep1)
	buyer := Buyer{Country: "DE", Evidence: contradictory("DE", "FR")}
	supply := Supply{Kind: KindSaaS, Date: sep1, GrossEUR: counted}
	for _, c := range []struct {
		name   string
		seller Seller
		fact   string
	}{
		{"within by the totals", Seller{Country: "AT", CrossBorder: totals("0", "3000")}, "seller.crossBorder"},
		{"within by the account's flags", Seller{Country: "AT"}, "seller.overThreshold"},
	} {
		_, err := DetermineManually(Input{c.seller, buyer, supply}, manual(RegimeDomestic, "DE", de))
		var me *ManualError
		if !errors.As(err, &me) || me.Code != ManualContradictsLaw || me.Fact != c.fact || !strings.Contains(me.Detail, "Art. 59c(1)") {
			t.Errorf("%s: DOMESTIC DE for a seller within the threshold: %v, want %s refused on %s", c.name, err, ManualContradictsLaw, c.fact)
		}
	}

	// Over the threshold this year: accepted, and counted at the rate charged.
	d, err := DetermineManually(Input{Seller{Country: "AT", CrossBorder: totals("0", "12000")}, buyer, supply}, manual(RegimeDomestic, "DE", de))
	if err != nil {
		t.Fatal(err)
	}
	net := counted.Mul(decimal.NewFromInt(100)).DivRound(decimal.NewFromInt(100).Add(decimal.RequireFromString(de)), 10)
	if th := d.Threshold; th == nil || th.Rule != ThresholdCurrentYear || !th.Counts || th.Counted == nil || !th.Counted.Equal(net) {
		t.Errorf("threshold section %s, want current_year_exceeded counting %s", thresholdLine(th), net)
	}
}
