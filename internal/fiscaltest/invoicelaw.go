package fiscaltest

import (
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/vat"
	"github.com/fiscal402/fiscal402/vies"
)

// The invoicing-law table (issue 18): sellers established in many states,
// each with the account data every national rule asks for ("full") and
// with no more than a name, a country and a VAT number ("bare"), selling to
// consumers and businesses in many states. Tests of package fiscal and of
// the HTTP server run it; no combination may answer 500, every invoice
// issued must pass the validators, every other sale waits for review with
// reasons. The VAT numbers pass their check digits (package vat).

// LawSeller is a seller of the table.
type LawSeller struct {
	ID      string // account id: "<country>-full" or "<country>-bare"
	Country string
	Full    bool
	Seller  fiscal.Seller
}

// lawSellerFacts per country: the VAT number, and what the full account
// adds beyond the address, legal id and contact every full account has.
var lawSellerFacts = []struct {
	country, vat, legalID, legalScheme, taxRegID string
	endpoint                                     *fiscal.ElectronicAddress
}{
	{country: "IE", vat: "IE1234567T", legalID: "IE-CRO-654321"},
	{country: "DE", vat: "DE812847601", legalID: "HRB 12345 B"},
	{country: "NL", vat: "NL123456789B13", legalID: "12345678", legalScheme: "0106"}, // KvK (Peppol NL-R-003)
	{country: "GR", vat: "EL094259216", legalID: "GEMI 123456789000"},
	{country: "PL", vat: "PL1132191233", legalID: "KRS 0000123456"},
	// SE: organisation number (SE-R-003/013), F-tax (SE-R-005), an
	// explicit endpoint (Peppol has no EAS for SE VAT numbers).
	{country: "SE", vat: "SE556188840401", legalID: "5561888404", legalScheme: "0007", taxRegID: "Godkänd för F-skatt",
		endpoint: &fiscal.ElectronicAddress{ID: "5561888404", Scheme: "0007"}},
	// DK: CVR with scheme 0184 (DK-R-002, DK-R-014) and as endpoint.
	{country: "DK", vat: "DK36149213", legalID: "36149213", legalScheme: "0184", endpoint: &fiscal.ElectronicAddress{ID: "36149213", Scheme: "0184"}},
	{country: "FR", vat: "FR4Z123456782", legalID: "SIREN 123456782"},
	{country: "IT", vat: "IT02087050155", legalID: "REA MI-1234567"},
	{country: "CZ", vat: "CZ640903926", legalID: "IČO 64090392"},
	{country: "HU", vat: "HU10672101", legalID: "Cg. 01-09-123456"},
	{country: "RO", vat: "RO1234567897", legalID: "J40/1234/2020"},
	{country: "BG", vat: "BG8032056031", legalID: "UIC 803205603"},
	{country: "AT", vat: "ATU46080404", legalID: "FN 123456a"},
	{country: "ES", vat: "ESB64717838", legalID: "CIF B64717838"},
	{country: "GB", vat: "GB980780684", legalID: "CRN 01234567"},
	{country: "US", vat: "EU372022452", legalID: "EIN 12-3456789"}, // non-Union OSS number, identification IE
}

// LawSellers are the table's sellers, full and bare, in a fixed order.
func LawSellers() []LawSeller {
	var out []LawSeller
	for _, f := range lawSellerFacts {
		bare := fiscal.Seller{LegalName: "Bare " + f.country + " Seller", Country: f.country, VATNumber: f.vat, OverThreshold: true}
		full := fiscal.Seller{
			LegalName: "Full " + f.country + " Seller", Country: f.country, VATNumber: f.vat, OverThreshold: true,
			LegalID: f.legalID, LegalIDScheme: f.legalScheme, TaxRegistrationID: f.taxRegID, ElectronicAddress: f.endpoint,
			Address: fiscal.Address{Street: "1 Example Street", City: "Example City", PostalCode: "10115"},
			Contact: fiscal.Contact{Name: "Accounts", Telephone: "+49 30 1234567", Email: "accounts@example.com"},
			// A UK VRN for UK sales, with HMRC's agreement to the ECB
			// rate: UK invoices state the VAT in sterling.
			UKRateAgreement: "HMRC VWET agreement 2026/0001 (test)",
		}
		switch f.country {
		case "GB":
			full.Registrations = []vat.Registration{{Scheme: vat.RegistrationUKVRN, Country: "GB", Number: f.vat},
				{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: "EU372000041"}}
		case "US":
			full.Registrations = []vat.Registration{{Scheme: vat.RegistrationOSSNonUnion, Country: "IE", Number: f.vat},
				{Scheme: vat.RegistrationUKVRN, Country: "GB", Number: "GB100190874"}}
		default:
			full.Registrations = []vat.Registration{{Scheme: vat.RegistrationNational, Country: vatCountry(f.country)},
				{Scheme: vat.RegistrationOSSUnion, Country: vatCountry(f.country)}, {Scheme: vat.RegistrationUKVRN, Country: "GB", Number: "GB100190874"}}
		}
		lc := strings.ToLower(f.country)
		out = append(out, LawSeller{ID: lc + "-full", Country: f.country, Full: true, Seller: full},
			LawSeller{ID: lc + "-bare", Country: f.country, Seller: bare})
	}
	return out
}

// LawSellerOf is the seller of the table with id ("pl-full", "us-bare",
// ...); the test fails when there is none.
func LawSellerOf(t testing.TB, id string) fiscal.Seller {
	t.Helper()
	for _, s := range LawSellers() {
		if s.ID == id {
			return s.Seller
		}
	}
	t.Fatalf("fiscaltest: the law table has no seller %q", id)
	return fiscal.Seller{}
}

func vatCountry(c string) string {
	if c == "GR" {
		return "EL"
	}
	return c
}

// LawBuyer is a buyer country of the table with its business customer.
type LawBuyer struct {
	Country   string
	VATNumber string // "" : no business customer (outside the EU and UK)
	// Registry: what VIES (or HMRC) discloses about the business: "---"
	// where the member state does not disclose (DE, ES).
	RegistryName, RegistryAddress string
}

// LawBuyers are the table's buyer countries.
func LawBuyers() []LawBuyer {
	return []LawBuyer{
		{"DE", "DE136695976", "---", "---"},
		{"AT", "ATU13585627", "BEISPIEL HANDELS GMBH", "MARIAHILFER STRASSE 1\n1060 WIEN"},
		{"FR", "FRK7399859412", "SA EXEMPLE", "12 RUE DE L'EXEMPLE\n75001 PARIS"},
		{"IT", "IT00743110157", "ESEMPIO SRL", "VIA ROMA 1\n20121 MILANO MI"},
		{"NL", "NL004495445B01", "VOORBEELD B.V.", "DAMRAK 1\n1012LG AMSTERDAM"},
		{"PL", "PL5260250995", "PRZYKŁAD SP. Z O.O.", "UL. MARSZAŁKOWSKA 1\n00-001 WARSZAWA"},
		{"SE", "SE556036079301", "EXEMPEL AB", "DROTTNINGGATAN 1\n111 51 STOCKHOLM"},
		{"DK", "DK13585628", "EKSEMPEL APS", "STRØGET 1\n1160 KØBENHAVN K"},
		{"GR", "EL800123456", "ΠΑΡΑΔΕΙΓΜΑ ΑΕ", "ΟΔΟΣ ΣΤΑΔΙΟΥ 1\n10564 ΑΘΗΝΑ"},
		{"CZ", "CZ25123891", "PŘÍKLAD S.R.O.", "VÁCLAVSKÉ NÁMĚSTÍ 1\n110 00 PRAHA 1"},
		{"HU", "HU12892312", "PÉLDA KFT.", "VÁCI UTCA 1\n1052 BUDAPEST"},
		{"RO", "RO18547290", "EXEMPLU SRL", "STR. VICTORIEI 1\n010061 BUCUREȘTI"},
		{"BG", "BG175074752", "ПРИМЕР ЕООД", "УЛ. ВИТОША 1\n1000 СОФИЯ"},
		{"IE", "IE6433435F", "EXAMPLE CUSTOMER LIMITED", "1 CUSTOMER ROAD\nDUBLIN 2"},
		{"ES", "ES54362315K", "---", "---"},
		{"GB", "GB123456782", "EXAMPLE UK CUSTOMER LTD", "1 CUSTOMER LANE\nLONDON\nEC1A 1BB"},
		{"US", "", "", ""},
	}
}

// LawVIES answers every business customer of the table as valid, with
// what its registry discloses.
func LawVIES(at time.Time) *vies.Fake {
	fake := vies.NewFake()
	for _, b := range LawBuyers() {
		if b.VATNumber == "" {
			continue
		}
		registry := vies.RegistryVIES
		if b.Country == "GB" {
			registry = vies.RegistryHMRC
		}
		fake.Set(b.VATNumber, vies.Result{Status: vies.StatusValid, Registry: registry, CountryCode: b.VATNumber[:2], Number: b.VATNumber[2:],
			Name: b.RegistryName, Address: b.RegistryAddress, RequestIdentifier: "WAPI-" + b.VATNumber, RequestDate: at})
	}
	return fake
}

// LawRequest is settlement request n of the table: a sale on 2026-04-10
// to a consumer in b's country or, b2b, to its business customer. With
// full, the request gives the customer's name and address
// (consumerAddress).
func LawRequest(n int, b LawBuyer, b2b, full bool) fiscal.SettlementRequest {
	req := Request(n, "119.00", b.Country, "2026-04-10T14:30:00Z")
	if b2b {
		req.ConsumerVATNumber = b.VATNumber
	}
	if full {
		req.ConsumerName = "Customer in " + b.Country
		req.ConsumerAddress = &fiscal.Address{Street: "2 Customer Street", City: "Customer Town", PostalCode: lawPostalCodes[b.Country]}
	}
	return req
}

// lawPostalCodes are postal codes of each buyer country's capital (none of
// them in a special territory).
var lawPostalCodes = map[string]string{
	"DE": "10115", "AT": "1060", "FR": "75001", "IT": "20121", "NL": "1012 LG", "PL": "00-001", "SE": "111 51", "DK": "1160",
	"GR": "10564", "CZ": "110 00", "HU": "1052", "RO": "010061", "BG": "1000", "IE": "D02 X285", "ES": "28001", "GB": "EC1A 1BB", "US": "10001",
}
