package invoicelaw_test

import (
	"testing"

	"github.com/fiscal402/fiscal402/invoicelaw"
	"github.com/fiscal402/fiscal402/vat"
)

// TestOSSDeclaration: the basis of each law For gives an OSS_B2C supply
// reads back as the declaration it stands for (package returns relies on
// it to read what a past supply was declared under): through the scheme's
// member state of identification (Art. 219a(2)(b) Directive 2006/112/EC),
// nationally where it is consumed (Art. 219a(1), 214(1)(a)), or with no
// state of identification stated; and any other basis as none of them.
func TestOSSDeclaration(t *testing.T) {
	det := func(scheme string) vat.Determination {
		return vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: vat.RegimeOSSB2C, TaxingCountry: "FR", Scheme: scheme}
	}
	reg := func(scheme, country string) []vat.Registration {
		return []vat.Registration{{Scheme: scheme, Country: country}}
	}
	for _, c := range []struct {
		name                        string
		det                         vat.Determination
		seller                      invoicelaw.Seller
		throughOSS, national, unset bool
	}{
		{"Union, stated", det(vat.SchemeUnion), invoicelaw.Seller{Country: "DE", Registrations: reg(vat.RegistrationOSSUnion, "DE")}, true, false, false},
		{"Union, the state of establishment", det(vat.SchemeUnion), invoicelaw.Seller{Country: "IE"}, true, false, false},
		{"Union, the only fixed establishment", det(vat.SchemeUnion), invoicelaw.Seller{Country: "CH", OtherEstablishments: []string{"AT"}}, true, false, false},
		{"non-Union, stated", det(vat.SchemeNonUnion), invoicelaw.Seller{Country: "US", Registrations: reg(vat.RegistrationOSSNonUnion, "IE")}, true, false, false},
		{"national where consumed", det(vat.SchemeUnion), invoicelaw.Seller{Country: "DE", Registrations: reg(vat.RegistrationNational, "FR")}, false, true, false},
		{"non-Union, not stated", det(vat.SchemeNonUnion), invoicelaw.Seller{Country: "US"}, false, false, true},
		{"a domestic supply's law", vat.Determination{Jurisdiction: vat.JurisdictionEU, Regime: vat.RegimeDomestic, TaxingCountry: "FR"}, invoicelaw.Seller{Country: "FR"}, false, false, false},
	} {
		law := invoicelaw.For(c.det, c.seller)
		oss, national, unset := invoicelaw.OSSDeclaration(law.Basis)
		if oss != c.throughOSS || national != c.national || unset != c.unset {
			t.Errorf("%s: basis %q reads as OSS %v, national %v, unstated %v; want %v, %v, %v", c.name, law.Basis, oss, national, unset, c.throughOSS, c.national, c.unset)
		}
	}
}
