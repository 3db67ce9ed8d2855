package vat

import "testing"

// TestMonacoRegistrationIsFrance: transactions originating in or intended
// for Monaco are treated as originating in or intended for France (Art.
// 7(1) Directive 2006/112/EC); a business established in Monaco is
// identified for VAT within the French VAT territory (its number is an FR
// one), and the engine reads a seller or a customer in MC as French. A
// registration the seller states in MC (national, or the Union OSS) is so
// read too, as the OSS return reads it (returns: the state a
// registration's country names for VAT), instead of being "not an EU
// member state" that sends every sale to review and leaves the seller
// unregistered in its own state.
func TestMonacoRegistrationIsFrance(t *testing.T) {
	inMC := func(over bool, g ...Registration) Seller {
		return Seller{Country: "MC", OverThreshold: over, Registrations: g}
	}
	asFR := func(s Seller) Seller {
		out := s
		out.Registrations = nil
		for _, g := range s.Registrations {
			g.Country = "FR"
			out.Registrations = append(out.Registrations, g)
		}
		return out
	}
	national := Registration{Scheme: RegistrationNational, Country: "MC"}
	union := Registration{Scheme: RegistrationOSSUnion, Country: "mc"}
	cases := []struct {
		name string
		in   Input
	}{
		{"domestic sale to a Monaco consumer", Input{inMC(false, national), b2c("MC"), digital}},
		{"domestic sale to a French consumer", Input{inMC(false, national), b2c("FR"), digital}},
		{"origin taxation below the threshold", Input{inMC(false, national), b2c("DE"), digital}},
		{"Union OSS identified in Monaco", Input{inMC(true, national, union), b2c("DE"), digital}},
	}
	for _, c := range cases {
		got := Determine(c.in)
		fr := c.in
		fr.Seller = asFR(c.in.Seller)
		want := Determine(fr)
		if want.Status != StatusDetermined {
			t.Fatalf("%s: the same registrations named FR are not determined: %s %v", c.name, summaryPlace(want), want.Reasons)
		}
		if summaryPlace(got) != summaryPlace(want) {
			t.Errorf("%s:\n got  %s %v\n want %s (as registered in FR)", c.name, summaryPlace(got), got.Reasons, summaryPlace(want))
		}
	}
	// A registration in a special territory outside the EU VAT territory
	// (the Canary Islands) is still none of a member state.
	d := Determine(Input{Seller{Country: "ES", Registrations: []Registration{{Scheme: RegistrationNational, Country: "IC"}}}, b2c("ES"), digital})
	if !hasReason(d, ReasonSellerRegistrationsInconsistent) || !hasReason(d, ReasonSellerNotRegistered) {
		t.Errorf("a national registration in IC for a sale in mainland Spain: %s %v", summaryPlace(d), d.Reasons)
	}
}
