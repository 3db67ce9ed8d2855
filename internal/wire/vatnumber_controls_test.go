package wire

import "testing"

// TestVATNumberRefusesFormattingControls: a VAT number carrying a
// bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE and its kin), a line
// or paragraph separator or a C1 control is refused: such a character
// makes an invoice or a receipt display another number than the one
// stored and checked (the "Trojan Source" reordering, CVE-2021-42574;
// Unicode Standard Annex #9 lists the controls). Spaces and zero-width
// characters a copy-paste leaves stay accepted: the vat package strips
// them when it reads the number.
func TestVATNumberRefusesFormattingControls(t *testing.T) {
	for _, v := range []string{"DE\u202e123456789", "DE123\u2066456789", "DE123456789\u200f", "DE\u2028123456789", "DE\u0085123456789", "DE\u061c123456789"} {
		if _, err := VATNumber("/consumerVatNumber", v); err == nil {
			t.Errorf("%+q accepted", v)
		}
	}
	for _, v := range []string{"DE 123 456 789", "DE\u200b123456789", "\ufeffDE123456789", "CHE-123.456.789 MWST"} {
		if _, err := VATNumber("/consumerVatNumber", v); err != nil {
			t.Errorf("%+q refused: %v", v, err)
		}
	}
}
