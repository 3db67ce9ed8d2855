package ubl

import "testing"

func TestAddressFromRegistry(t *testing.T) {
	for _, tc := range []struct {
		in                           string
		street, street2, line3, city string
	}{
		{"WIEDNER HAUPTSTRASSE 15\n1040 WIEN", "WIEDNER HAUPTSTRASSE 15", "", "", "1040 WIEN"},
		{"WIEDNER HAUPTSTRASSE 15\nSTIEGE 2, TOP 7\n1040 WIEN\n", "WIEDNER HAUPTSTRASSE 15", "STIEGE 2, TOP 7", "", "1040 WIEN"},
		{"A\r\nB\r\nC\r\nD\r\n1000 X", "A", "B", "C, D", "1000 X"},
		{"12 RUE DE L'EXEMPLE, 75001 PARIS", "12 RUE DE L'EXEMPLE", "", "", "75001 PARIS"},
		{"12 RUE DE L'EXEMPLE 75001 PARIS", "12 RUE DE L'EXEMPLE 75001 PARIS", "", "", ""},
		{"  KUNDENWEG   2 \n\n 80331   MÜNCHEN ", "KUNDENWEG 2", "", "", "80331 MÜNCHEN"},
		{"---", "", "", "", ""},
		{"", "", "", "", ""},
		{"TRAILING COMMA,", "TRAILING COMMA,", "", "", ""},
	} {
		p := AddressFromRegistry(tc.in)
		if p.Street != tc.street || p.AdditionalStreet != tc.street2 || p.AddressLine3 != tc.line3 || p.City != tc.city {
			t.Errorf("%q → %q / %q / %q / %q", tc.in, p.Street, p.AdditionalStreet, p.AddressLine3, p.City)
		}
	}
	// The ATU13585627 case of issue 18: the VIES address makes the
	// reverse-charge invoice complete under Art. 226(5).
	inv := lawB2B()
	a := AddressFromRegistry("WIEDNER HAUPTSTRASSE 15\n1040 WIEN")
	inv.Buyer = Party{Name: "BEISPIEL HANDELS GMBH", VATNumber: "ATU13585627", Country: "AT",
		Street: a.Street, AdditionalStreet: a.AdditionalStreet, AddressLine3: a.AddressLine3, City: a.City}
	if _, err := RenderInvoice(inv); err != nil {
		t.Errorf("VIES address: %v", err)
	}
}
