package wire

import (
	"errors"
	"testing"

	"github.com/fiscal402/fiscal402/vat"
)

// TestEvidenceKindAndSource: an item's kind and source are closed sets
// (vat.EvidenceKinds, vat.EvidenceSources; the OpenAPI document lists them),
// checked as the item arrives like its country: an unknown one is a field
// error naming it. Evidence passed them through, so a misspelt kind made a
// ledger record pending review (location_evidence_invalid) instead of a 400.
func TestEvidenceKindAndSource(t *testing.T) {
	item := func(kind, source string) vat.Evidence {
		return vat.Evidence{Kind: kind, Country: "DE", Source: source}
	}
	for _, k := range vat.EvidenceKinds() {
		for _, s := range vat.EvidenceSources() {
			if _, err := Evidence("/e", []vat.Evidence{item(k, s)}); err != nil {
				t.Errorf("kind %s, source %s: %v", k, s, err)
			}
		}
	}
	for _, c := range []struct {
		items []vat.Evidence
		field string
	}{
		{[]vat.Evidence{item("gps", vat.EvidenceSourceMerchant)}, "/e/0/kind"},
		{[]vat.Evidence{item(vat.EvidenceIPAddress, vat.EvidenceSourceMerchant), item(vat.EvidenceBank, "nsa")}, "/e/1/source"},
		{[]vat.Evidence{item("IP_ADDRESS", vat.EvidenceSourceMerchant)}, "/e/0/kind"},
	} {
		var fe *FieldError
		if _, err := Evidence("/e", c.items); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want an error on %s", c.items, err, c.field)
		}
	}
}
