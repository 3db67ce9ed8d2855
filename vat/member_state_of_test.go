package vat

import "testing"

// TestMemberStateOfAgreesWithDetermine: MemberStateOf places a seller and a
// buyer as Determine does. A seller is in a member state exactly when
// Determine decides its supply to a consumer in a third country under the
// EU ruleset as outside the scope of EU VAT (Art. 59 Directive
// 2006/112/EC), and a consumer is in one exactly when a US seller's
// supply to it is taxed there through the non-Union scheme (Art. 58, 358a).
func TestMemberStateOfAgreesWithDetermine(t *testing.T) {
	for _, cc := range []string{"FR", "fr", "MC", "IM", "GB", "UK", "XI", "EL", "GR", "IC", "EA", "AX", "GP", "RE", "US", "CH", "XX", ""} {
		state, ok := MemberStateOf(cc)
		if ok != IsMemberState(state) {
			t.Errorf("MemberStateOf(%q) = %q, %v: the state is not a member state", cc, state, ok)
		}
		sale := Determine(Input{Seller{Country: cc, OverThreshold: true}, Buyer{Country: "US"}, Supply{Kind: KindSaaS, Date: sep1}})
		if euSeller := sale.Ruleset == RulesetEU && sale.Regime == RegimeOutsideScope; euSeller != ok {
			t.Errorf("seller %q: MemberStateOf says %v, Determine %s", cc, ok, summary(sale))
		}
		sale = Determine(Input{Seller{Country: "US"}, Buyer{Country: cc}, Supply{Kind: KindSaaS, Date: sep1}})
		if euBuyer := sale.Regime == RegimeOSSB2C; euBuyer != ok || ok && sale.TaxingCountry != state {
			t.Errorf("buyer %q: MemberStateOf says %q %v, Determine %s", cc, state, ok, summary(sale))
		}
	}
}

// TestInUKVATAreaAgreesWithDetermine: InUKVATArea places a seller and a
// buyer in the UK VAT area as Determine does: a seller is there exactly
// when the UK ruleset governs its supply to a consumer in a third country,
// a consumer exactly when it governs a US seller's supply to it (VAT
// Notice 741A; the Isle of Man by Art. 7(1) Directive 2006/112/EC).
func TestInUKVATAreaAgreesWithDetermine(t *testing.T) {
	for _, cc := range []string{"GB", "gb", "UK", "XI", "IM", "JE", "GG", "GI", "FR", "MC", "IE", "US", "XX", ""} {
		uk := InUKVATArea(cc)
		sale := Determine(Input{Seller{Country: cc}, Buyer{Country: "US"}, Supply{Kind: KindSaaS, Date: sep1}})
		if ukSeller := sale.Ruleset == RulesetUK; ukSeller != uk {
			t.Errorf("seller %q: InUKVATArea says %v, Determine %s", cc, uk, summary(sale))
		}
		sale = Determine(Input{Seller{Country: "US"}, Buyer{Country: cc}, Supply{Kind: KindSaaS, Date: sep1}})
		if ukBuyer := sale.Jurisdiction == JurisdictionUK; ukBuyer != uk {
			t.Errorf("buyer %q: InUKVATArea says %v, Determine %s", cc, uk, summary(sale))
		}
	}
}
