package vat

import "testing"

// TestIsleOfManVRNIsUK: the Isle of Man is treated as the United Kingdom
// for VAT (Art. 7(1) Directive 2006/112/EC; HMRC VAT Notice 741A), one VAT
// area whose registration numbers are GB ones, and the engine reads a
// seller or customer there as in the UK. A UK VRN the seller states with
// country IM is so read (as XI already is), instead of "a UK VRN but names
// IM" sending its UK sales to review as unregistered.
func TestIsleOfManVRNIsUK(t *testing.T) {
	for _, seller := range []string{"IM", "GB"} {
		im := Seller{Country: seller, Registrations: []Registration{{Scheme: RegistrationUKVRN, Country: "IM"}}}
		gb := Seller{Country: seller, Registrations: []Registration{{Scheme: RegistrationUKVRN, Country: "GB"}}}
		for _, buyer := range []string{"GB", "IM"} {
			got, want := Determine(Input{im, b2c(buyer), digital}), Determine(Input{gb, b2c(buyer), digital})
			if want.Status != StatusDetermined {
				t.Fatalf("seller %s, consumer %s with a GB VRN: %s %v", seller, buyer, summaryPlace(want), want.Reasons)
			}
			if summaryPlace(got) != summaryPlace(want) {
				t.Errorf("seller %s, consumer %s, VRN stated in IM:\n got  %s %v\n want %s", seller, buyer, summaryPlace(got), got.Reasons, summaryPlace(want))
			}
		}
	}
	// Jersey is outside the UK VAT area: a VRN there is none.
	d := Determine(Input{Seller{Country: "GB", Registrations: []Registration{{Scheme: RegistrationUKVRN, Country: "JE"}}}, b2c("GB"), digital})
	if !hasReason(d, ReasonSellerRegistrationsInconsistent) {
		t.Errorf("a UK VRN stated in Jersey: %s %v", summaryPlace(d), d.Reasons)
	}
}
