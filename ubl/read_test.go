package ubl

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSellerTaxIDs reads the seller's identifiers back from rendered
// goldens: the VAT identifier (not the buyer's), and a non-Union OSS
// number stated as BT-32.
func TestSellerTaxIDs(t *testing.T) {
	for _, c := range []struct{ golden, vat, taxReg string }{
		{"ae-b2b-dk-de", "DK12345678", ""},
		{"s-b2c-fr-20-non-union-oss", "", "EU372022452"},
	} {
		doc, err := os.ReadFile(filepath.Join(goldenDir, c.golden+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		v, r, err := SellerTaxIDs(doc)
		if err != nil || v != c.vat || r != c.taxReg {
			t.Errorf("%s: %q, %q, %v; want %q, %q", c.golden, v, r, err, c.vat, c.taxReg)
		}
	}
	if _, _, err := SellerTaxIDs([]byte("<Invoice")); err == nil {
		t.Error("an unreadable document gave no error")
	}
}
