package vat

import "testing"

// TestXINumberConfirmedByHMRC: HMRC issues a Northern Ireland trader's XI
// number as "XI" in front of its usual VAT registration number, "XI
// 123456789 instead of GB 123456789"
// (https://www.gov.uk/vat-registration/selling-or-moving-goods-in-northern-ireland),
// so HMRC's check of that VRN, which answers it under GB, confirms the XI
// number (expectedRegistry accepts HMRC for XI). The answer must be read
// as a confirmation of the number the buyer gave, not as a registry that
// confirmed another number; another VRN, or a VIES answer naming GB, is
// still a mismatch.
func TestXINumberConfirmedByHMRC(t *testing.T) {
	for _, c := range []struct {
		registry, checked string
		confirmed         bool
	}{
		{RegistryHMRC, "GB432525179", true},
		{RegistryHMRC, "XI432525179", true},
		{RegistryVIES, "XI432525179", true},
		{RegistryHMRC, "GB980780684", false},
		{RegistryVIES, "GB432525179", false},
	} {
		in := Input{Seller: Seller{Country: "DE"}, Buyer: Buyer{Country: "XI", VATNumber: "XI 432 5251 79", Registry: confirmed(c.registry, c.checked)}, Supply: Supply{Kind: KindSaaS, Date: day(2026, 9, 1)}}
		d := Determine(in)
		got := d.Status == StatusDetermined && d.Regime == RegimeUKReverseCharge && d.BuyerTreatment == TreatmentB2B
		if got != c.confirmed {
			t.Errorf("%s answered %s for XI432525179: %s; want confirmed=%v", c.registry, c.checked, summary(d), c.confirmed)
		}
	}
}
