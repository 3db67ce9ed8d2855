package vat

import "testing"

// TestStateOfPlaceAgreesWithMemberStateOf: stateOfPlace, which RecordedCount
// reads a place of supply and a seller's country by, places every country
// code as MemberStateOf and InUKVATArea do, so that the Art. 59c total
// counts what Determine decided: a member state for a code in the EU VAT
// territory (Monaco France, Art. 7(1) Directive 2006/112/EC), the United
// Kingdom for one in the UK VAT area (the Isle of Man, Art. 7(1); XI), and
// no member state for any other (a territory of Art. 6 or a third country).
// The ISO 3166-2 codes of the territories with a place-of-supply code of
// their own are checked against the territory's kind.
func TestStateOfPlaceAgreesWithMemberStateOf(t *testing.T) {
	codes := []string{"", "EL", "UK", "el", "mc", " FR ", "X", "FRA", "1A"}
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			codes = append(codes, string([]rune{a, b}))
		}
	}
	for _, cc := range codes {
		got := stateOfPlace(cc)
		state, eu := MemberStateOf(cc)
		switch {
		case eu && got != state:
			t.Errorf("stateOfPlace(%q) = %q; MemberStateOf says %q", cc, got, state)
		case !eu && InUKVATArea(cc) && got != "GB":
			t.Errorf("stateOfPlace(%q) = %q; InUKVATArea says the United Kingdom", cc, got)
		case !eu && !InUKVATArea(cc) && (IsMemberState(got) || got == "GB"):
			t.Errorf("stateOfPlace(%q) = %q; MemberStateOf and InUKVATArea place it in neither the EU nor the UK", cc, got)
		}
	}
	for code, want := range map[string]string{"ES-CN": "", "ES-CE": "", "ES-ML": "", "GR-69": "", "PT-20": "PT", "PT-30": "PT", "GB-NIR": "GB", "es-cn": "", "pt-20": "PT"} {
		if got := stateOfPlace(code); got != want {
			t.Errorf("stateOfPlace(%q) = %q, want %q", code, got, want)
		}
	}
}
