package ubl

import (
	"fmt"
	"math/rand/v2"

	"github.com/shopspring/decimal"
)

// Test fixtures: parties and builders shared by the golden, validation and
// fuzz tests. VAT numbers are syntactically valid but fictitious; the
// identifiers Peppol checks (P.IVA, GLN, Swedish organisation number) have
// valid check digits.

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var (
	sellerIE = Party{
		Name: "Example Payments Ltd", VATNumber: "IE1234567T", LegalID: "654321",
		Street: "1 Example Street", City: "Dublin", PostalCode: "D02 XY00", Country: "IE",
	}
	sellerDE = Party{
		Name: "Beispiel Software GmbH", VATNumber: "DE123456789", LegalID: "HRB 12345",
		Street: "Musterstraße 1", City: "Berlin", PostalCode: "10115", Country: "DE",
		Contact: Contact{Name: "Buchhaltung", Telephone: "+49 30 1234567", Email: "rechnung@beispiel.example"},
	}
	sellerFR = Party{
		Name: "Exemple Logiciel SAS", VATNumber: "FR40123456789", LegalID: "123456789", LegalIDScheme: "0002",
		Street: "1 rue de l'Exemple", City: "Paris", PostalCode: "75001", Country: "FR",
	}
	sellerDK = Party{
		Name: "Eksempel ApS", VATNumber: "DK12345678", LegalID: "12345678", LegalIDScheme: "0184",
		EndpointID: "12345678", EndpointScheme: "0184",
		Street: "Eksempelvej 1", City: "København", PostalCode: "1050", Country: "DK",
	}
	sellerSE = Party{
		Name: "Exempel AB", VATNumber: "SE556123456701", LegalID: "5561234567", LegalIDScheme: "0007",
		EndpointID: "5561234567", EndpointScheme: "0007",
		Street: "Exempelgatan 1", City: "Stockholm", PostalCode: "111 22", Country: "SE",
	}
	sellerGR = Party{
		Name: "Παράδειγμα Υπηρεσίες Α.Ε.", VATNumber: "EL998877666", LegalID: "123456701000",
		Street: "Οδός Παραδείγματος 1", City: "Αθήνα", PostalCode: "10558", Country: "GR",
	}
	sellerPL = Party{
		Name: "Przykład Sp. z o.o.", VATNumber: "PL7770001111", LegalID: "0000123456",
		Street: "ul. Przykładowa 1", City: "Warszawa", PostalCode: "00-001", Country: "PL",
	}
	sellerNL = Party{
		Name: "Voorbeeld B.V.", VATNumber: "NL123456789B01", LegalID: "12345678", LegalIDScheme: "0106",
		Street: "Voorbeeldstraat 1", City: "Amsterdam", PostalCode: "1011 AA", Country: "NL",
	}
	// sellerUSUK is a US company registered for the non-Union OSS scheme
	// (its EU number) and for UK VAT (its GB VRN); on UK invoices it is
	// identified by the VRN only (VAT-Art362, UK-VATReg14).
	sellerUSUK = Party{
		Name: "Example API Inc.", VATNumber: "GB123456782", LegalID: "EIN 12-3456789",
		Street: "1 Market Street", City: "San Francisco", PostalCode: "94105", Subdivision: "CA", Country: "US",
	}
	buyerATBusiness = Party{ // as VIES answers for ATU13585627: name and address
		Name: "Beispiel Handels GmbH", VATNumber: "ATU13585627",
		Street: "Wiedner Hauptstraße 15", AdditionalStreet: "Stiege 2, Top 7", PostalCode: "1040", City: "Wien", Subdivision: "Wien", Country: "AT",
	}
	buyerGRBusiness = Party{
		Name: "Πελάτης Ε.Π.Ε.", VATNumber: "EL800123456",
		Street: "Λεωφόρος Πελατών 5", City: "Θεσσαλονίκη", PostalCode: "54624", Country: "GR",
	}
	buyerPLBusiness = Party{
		Name: "Klient S.A.", VATNumber: "PL9510002221",
		Street: "ul. Kliencka 5", City: "Kraków", PostalCode: "30-001", Country: "PL",
	}
	buyerNLBusiness = Party{
		Name: "Klant B.V.", VATNumber: "NL987654321B02", LegalID: "87654321", LegalIDScheme: "0106",
		Street: "Klantweg 2", City: "Utrecht", PostalCode: "3511 AA", Country: "NL",
	}
	buyerGBBusiness = Party{
		Name: "Customer Ltd", VATNumber: "GB987654321",
		Street: "2 Client Road", City: "London", PostalCode: "EC1A 1BB", Country: "GB",
	}
	buyerDEBusiness = Party{
		Name: "Kunde GmbH", VATNumber: "DE987654321",
		Street: "Kundenweg 2", City: "München", PostalCode: "80331", Country: "DE",
	}
	buyerIEBusiness = Party{
		Name: "Customer Ltd", VATNumber: "IE7654321A", Street: "2 Client Road", City: "Cork", Country: "IE",
	}
	buyerITBusiness = Party{
		Name: "Cliente S.r.l.", VATNumber: "IT12345678903", Street: "Via Esempio 3", City: "Milano", PostalCode: "20121", Country: "IT",
	}
	buyerCHBusiness = Party{
		Name: "Kunde AG", LegalID: "CHE-123.456.789",
		EndpointID: "7612345678900", EndpointScheme: "0088",
		City: "Zürich", Country: "CH",
	}
)

func consumer(country string) Party {
	return Party{Name: "Private customer", Country: country}
}

func settlementNote(paidOn, amount, tx, rate, rateDate string) string {
	n, err := SettlementNote("EUR", Settlement{
		PaidOn: paidOn, Amount: amount, Asset: "USDC", Network: "eip155:8453", TxHash: tx,
		Rate: rate, RateCurrency: "USD", RateDate: rateDate,
		RateSource: "ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD",
	})
	if err != nil {
		panic(err)
	}
	return n
}

const txA = "0x3f5c0d1e2a4b6c8d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f"

func usdcMeans(tx string) *PaymentMeans {
	return &PaymentMeans{Code: "ZZZ", Name: "USDC stablecoin transfer", PaymentID: tx}
}

// line is a one-unit line whose price is its net amount.
func line(name, net, cat, rate string) Line {
	return Line{Name: name, Quantity: d("1"), PriceAmount: d(net), NetAmount: d(net), Category: cat, RatePercent: d(rate)}
}

// b2c is an OSS consumer sale: IE seller, plain EN 16931, settled in USDC.
func b2c(id, country, rate, net string) Invoice {
	return Invoice{
		Profile: ProfileEN16931, ID: id, IssueDate: "2026-11-20", Currency: "EUR",
		Note:   settlementNote("2026-11-20", "119.000000", txA, "1.0512", "2026-11-19"),
		Seller: sellerIE, Buyer: consumer(country),
		Lines:        []Line{line("API access, 1 request", net, "S", rate)},
		PaymentMeans: usdcMeans(txA), PaidInFull: true,
	}
}

// b2b is a Peppol sale to a business buyer.
func b2b(id string, seller, buyer Party, lines ...Line) Invoice {
	return Invoice{
		Profile: ProfilePeppol, ID: id, IssueDate: "2026-11-20", Currency: "EUR",
		Note:           settlementNote("2026-11-20", "1000.000000", txA, "1.0512", "2026-11-19"),
		BuyerReference: "order-42",
		Seller:         seller, Buyer: buyer, Lines: lines,
		PaymentMeans: usdcMeans(txA), PaidInFull: true,
	}
}

// goldenCase is one golden file pair: testdata/golden/<Name>.json (the
// input) and <Name>.xml (the output).
type goldenCase struct {
	Name        string
	Description string
	Peppol      bool // validated with the Peppol layer too
	Invoice     *Invoice
	CreditNote  *CreditNote
}

func goldenCases() []goldenCase {
	var cs []goldenCase
	add := func(name, desc string, inv Invoice) {
		cs = append(cs, goldenCase{Name: name, Description: desc, Peppol: inv.Profile == ProfilePeppol, Invoice: &inv})
	}
	addCN := func(name, desc string, cn CreditNote) {
		cs = append(cs, goldenCase{Name: name, Description: desc, Peppol: cn.Profile == ProfilePeppol, CreditNote: &cn})
	}

	// S, B2C (OSS): several member states and rates, VAT computed per group.
	add("s-b2c-de-19", "OSS B2C, consumer in Germany, 19 %", b2c("x402-de19", "DE", "19", "100.00"))
	add("s-b2c-fr-20", "OSS B2C, consumer in France, 20 %", b2c("x402-fr20", "FR", "20", "99.17"))
	add("s-b2c-fi-25.5", "OSS B2C, consumer in Finland, 25.5 % (fractional rate)", b2c("x402-fi255", "FI", "25.5", "94.82"))
	add("s-b2c-lu-17", "OSS B2C, consumer in Luxembourg, 17 %", b2c("x402-lu17", "LU", "17", "101.71"))
	add("s-b2c-hu-27", "OSS B2C, consumer in Hungary, 27 %", b2c("x402-hu27", "HU", "27", "93.70"))
	nonUnion := b2c("x402-fr20-us", "FR", "20", "99.17")
	nonUnion.Seller = Party{Name: "Example API Inc.", TaxRegistrationID: "EU372022452", LegalID: "EIN 12-3456789",
		Street: "1 Market Street", City: "San Francisco", PostalCode: "94105", Country: "US"}
	add("s-b2c-fr-20-non-union-oss", "non-Union OSS: a US seller's EU372022452 is its tax registration id (BT-32), not a VAT id (BR-CO-09)", nonUnion)

	multi := b2c("x402-de-multi", "DE", "19", "10.00")
	multi.Lines = []Line{
		line("E-book", "9.35", "S", "7"),
		line("Streaming, 1 month", "8.40", "S", "19"),
		line("E-book, second volume", "4.67", "S", "7"),
	}
	add("s-b2c-de-two-rates", "OSS B2C, two rates in one invoice: one subtotal per rate, VAT rounded per group", multi)

	// S, B2B domestic (Peppol).
	add("s-b2b-ie-domestic-23", "domestic B2B in Ireland, 23 %, endpoints derived from VAT numbers (9935)",
		b2b("x402-ie23", sellerIE, buyerIEBusiness, line("Consulting via API", "813.01", "S", "23")))
	deDomestic := b2b("x402-de19-b2b", sellerDE, buyerDEBusiness, line("API-Zugang, November 2026", "840.34", "S", "19"))
	add("s-b2b-de-domestic-19", "domestic B2B in Germany: Peppol DE national rules (contact, city, post code, payment means)", deDomestic)

	// AE reverse charge (Peppol).
	add("ae-b2b-ie-de", "reverse charge, Irish seller to German business (9935 → 9930)",
		b2b("x402-ae-iede", sellerIE, buyerDEBusiness, line("API access, November 2026", "951.29", "AE", "0")))
	add("ae-b2b-fr-it", "reverse charge, French seller to Italian business (9957 → 0211 with P.IVA check digit)",
		b2b("x402-ae-frit", sellerFR, buyerITBusiness, line("Licence logicielle", "951.29", "AE", "0")))
	add("ae-b2b-dk-de", "reverse charge, Danish seller (explicit 0184 endpoint and CVR, DK-R-002/014) to German business",
		b2b("x402-ae-dkde", sellerDK, buyerDEBusiness, line("Dataadgang", "951.29", "AE", "0")))
	add("ae-b2b-se-de", "reverse charge, Swedish seller (0007 organisation number, SE-R-001..013) to German business",
		b2b("x402-ae-sede", sellerSE, buyerDEBusiness, line("Datatjänst", "951.29", "AE", "0")))

	// O outside scope: no VAT ids anywhere, seller identified by its legal id.
	o := b2c("x402-o-us", "US", "0", "119.00")
	o.Lines = []Line{line("API access, 1 request", "119.00", "O", "0")}
	add("o-b2c-outside-scope", "outside the scope of EU VAT, consumer in the United States: no VAT ids, VATEX-EU-O", o)
	oB2B := b2b("x402-o-ch", sellerIE, buyerCHBusiness, line("API access, November 2026", "951.29", "O", "0"))
	oB2B.Seller.EndpointID, oB2B.Seller.EndpointScheme = "5391234500004", "0088"
	add("o-b2b-outside-scope", "outside the scope of EU VAT, Swiss business buyer over Peppol: explicit GLN endpoints, no VAT ids", oB2B)

	// Z zero-rated e-book.
	z := b2c("x402-z-ie", "IE", "0", "15.00")
	z.Lines = []Line{line("E-book: The Example", "15.00", "Z", "0")}
	add("z-b2c-ie-ebook", "zero-rated e-publication, consumer in Ireland (0 %)", z)

	// Credit notes (381) for an S and an AE invoice.
	addCN("cn-s-b2c-de-19", "refund of s-b2c-de-19, returned in USDC",
		CreditNote{Invoice: refund(b2c("x402-de19-r1", "DE", "19", "100.00")), InvoiceRef: "x402-de19", InvoiceIssueDate: "2026-11-20"})
	addCN("cn-ae-b2b-ie-de", "refund of ae-b2b-ie-de over Peppol",
		CreditNote{Invoice: refund(b2b("x402-ae-iede-r1", sellerIE, buyerDEBusiness, line("API access, November 2026", "951.29", "AE", "0"))),
			InvoiceRef: "x402-ae-iede", InvoiceIssueDate: "2026-11-20"})

	// Rounding edges.
	tiny := b2c("x402-tiny", "DE", "19", "0.00")
	tiny.Note = settlementNote("2026-11-20", "0.000001", txA, "1.0512", "2026-11-19")
	add("edge-0.000001-usdc", "0.000001 USDC converts to 0.00 EUR: a zero invoice that still validates", tiny)
	half := b2c("x402-half", "HR", "25", "0.98")
	add("edge-vat-half-cent", "VAT lands on .005 (0.98 × 25 % = 0.245) and rounds half away from zero to 0.25 (banker's rounding would give 0.24)", half)
	halfSum := b2c("x402-half-sum", "DE", "19", "0.50")
	halfSum.Lines = []Line{line("Request 1", "0.50", "S", "19"), line("Request 2", "0.50", "S", "19"), line("Request 3", "0.50", "S", "19")}
	add("edge-vat-rounded-once", "three lines of 0.50 at 19 %: VAT is round(1.50 × 19 %) = 0.29, not 3 × round(0.095) = 0.30", halfSum)
	incl := b2c("x402-incl", "DE", "19", "8.40")
	incl.Note = settlementNote("2026-11-20", "10.512000", txA, "1.0512", "2026-11-19")
	incl.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("8.40"), TaxAmount: d("1.60")}}
	add("edge-tax-inclusive", "tax-inclusive price: 10.00 EUR gross → net 8.40, VAT 1.60 = gross − net (exact 1.596), subtotal given by the caller", incl)
	// 999999999.999999 USDC / 1.0512 = 951293759.51 EUR gross; at 19 %:
	// net = round(951293759.51 / 1.19) = 799406520.60, VAT = gross − net.
	max := b2c("x402-max", "DE", "19", "799406520.60")
	max.Note = settlementNote("2026-11-20", "999999999.999999", txA, "1.0512", "2026-11-19")
	max.Subtotals = []TaxSubtotal{{Category: "S", RatePercent: d("19"), TaxableAmount: d("799406520.60"), TaxAmount: d("151887238.91")}}
	add("edge-999999999.999999-usdc", "largest settlement in the tests: 999999999.999999 USDC, tax-inclusive", max)

	// XML safety: markup characters, quotes, emoji and right-to-left text.
	sp := b2c("x402-special", "DE", "19", "100.00")
	sp.Seller.Name = `Tom & Jerry's <"Best"> Café ☕ 🚀`
	sp.Seller.Street = "1 <Main> & \"Side\" Street"
	sp.Buyer.Name = "שלום עולם – مرحبا بالعالم"
	sp.Lines = []Line{line(`Widget "Deluxe" <v2> & more 🎉 — עברית`, "100.00", "S", "19")}
	sp.Note = `Paid in full: 119.000000 USDC & "quoted" <text>; tab	and CR` + "\r" + `LF` + "\n" + `end`
	add("s-b2c-special-characters", "names and texts with &, <, >, quotes, emoji, right-to-left scripts, tab, CR and LF", sp)

	// Invoicing law (TaxCountry): VAT in the national currency (Art. 230),
	// date of supply (Art. 226(7)), customer address (Art. 226(5)).
	pl := b2c("F402-2026-000123", "PL", "23", "100.00")
	pl.Seller, pl.TaxCountry, pl.SupplyDate = sellerPL, "PL", "2026-11-19"
	pl.Note = settlementNote("2026-11-20", "129.299000", txA, "1.0512", "2026-11-19")
	pl.TaxCurrency = nbpRate()
	add("s-b2c-pl-23-pln", "domestic sale of a Polish seller, 23 %: VAT also in PLN at the NBP rate (Art. 230, Polish VAT Act Art. 106e(11), 31a), date of supply (BT-72) the day before the issue date", pl)

	se := b2c("F402-2026-000124", "SE", "25", "80.00")
	se.Seller, se.TaxCountry, se.SupplyDate = sellerSE, "SE", "2026-11-20"
	se.Note = settlementNote("2026-11-20", "105.120000", txA, "1.0512", "2026-11-19")
	se.TaxCurrency = &TaxCurrency{Code: "SEK", Rate: d("10.9345"), RateDate: "2026-11-19", RateSource: "ECB euro foreign exchange reference rate"}
	add("s-b2c-se-25-sek", "domestic sale of a Swedish seller, 25 %: VAT also in SEK (Art. 230)", se)

	uk := b2c("F402-2026-000125", "GB", "20", "100.00")
	uk.Seller, uk.TaxCountry, uk.SupplyDate = sellerUSUK, "GB", "2026-11-20"
	uk.Note = settlementNote("2026-11-20", "126.144000", txA, "1.0512", "2026-11-19")
	uk.TaxCurrency = &TaxCurrency{Code: "GBP", Rate: d("0.8712"), RateDate: "2026-11-01", RateSource: "HMRC monthly exchange rate for November 2026"}
	add("s-b2c-gb-20-gbp", "UK_B2C: a US seller's UK sale to a consumer, 20 %: its GB VRN as VAT id, VAT also in sterling (VAT Regulations 1995 reg. 14)", uk)

	ukRC := b2b("F402-2026-000126", sellerUSUK, buyerGBBusiness, line("API access, November 2026", "500.00", "AE", "0"))
	ukRC.TaxCountry, ukRC.SupplyDate = "GB", "2026-11-20"
	ukRC.TaxCurrency = &TaxCurrency{Code: "GBP", Rate: d("0.8712"), RateDate: "2026-11-01", RateSource: "HMRC monthly exchange rate for November 2026"}
	add("ae-b2b-gb-reverse-charge", "UK reverse charge: no VATEX-EU-AE, the legend in text (BR-AE-10), GB VRN as seller VAT id, BT-111 0.00 GBP", ukRC)

	ieat := b2b("F402-2026-000127", sellerIE, buyerATBusiness, line("API access, November 2026", "951.29", "AE", "0"))
	ieat.TaxCountry, ieat.SupplyDate = "IE", "2026-11-18"
	add("ae-b2b-ie-at-address", "reverse charge, Irish seller to Austrian business: the customer's full name and address from VIES (Art. 226(5), Art. 220a(2))", ieat)

	dedeP := b2b("F402-2026-000129", sellerDE, buyerDEBusiness, line("API-Zugang, November 2026", "840.34", "S", "19"))
	dedeP.TaxCountry, dedeP.SupplyDate = "DE", "2026-11-19"
	add("s-b2b-de-de-peppol", "domestic B2B in Germany over Peppol: DE-R-001..009 (payment means, seller contact, cities, post codes), DE-R-015, DE-R-016", dedeP)

	grID, err := GreekInvoiceNumber("998877666", "2026-11-20", 0, GreekDocTypeServices, "F402", "000130")
	if err != nil {
		panic(err)
	}
	gr := b2b(grID, sellerGR, buyerGRBusiness, line("Πρόσβαση API, Νοέμβριος 2026", "806.45", "S", "24"))
	gr.TaxCountry, gr.SupplyDate = "GR", "2026-11-20"
	gr.MyDATA = &MyDATA{MARK: "400001234567890", URL: "https://invoices.example.gr/998877666/400001234567890"}
	add("s-b2b-gr-gr-24", "Greek B2B over Peppol: myDATA number form (GR-R-001), PartyName (GR-R-002/005), EL TINs (GR-R-003/006), M.AR.K and URL (GR-R-004, GR-S-008), 9933 TIN endpoints (GR-R-009/010)", gr)

	nl := b2b("F402-2026-000131", sellerNL, buyerNLBusiness, line("API-toegang, november 2026", "826.45", "S", "21"))
	nl.TaxCountry, nl.SupplyDate = "NL", "2026-11-20"
	nl.PaymentMeans = StablecoinPaymentMeans("NL", "NL", txA)
	add("s-b2b-nl-nl-21", "Dutch B2B over Peppol: KvK with scheme 0106 (NL-R-003, NL-R-005), addresses (NL-R-002, NL-R-004), no payment means between Dutch parties (NL-R-008)", nl)

	// Summary invoices (Art. 223): 10,000 micro-supplies per rate, and a
	// line per supply.
	micro := b2c("F402-2026-000132", "DE", "19", "1.00")
	sum, err := Summarize("API requests", SummaryPerRate, microSupplies(10000))
	if err != nil {
		panic(err)
	}
	micro.Lines, micro.Subtotals, micro.Period = sum.Lines, sum.Subtotals, &sum.Period
	micro.TaxCountry = "IE"
	micro.Note = "Summary invoice for November 2026 (Art. 223 Directive 2006/112/EC): 10000 requests paid in USDC; VAT on the exact amounts."
	add("summary-10000-micro-per-rate", "summary invoice of 10,000 sub-cent supplies at 19 % and 7 %: one line per rate, exact sum as price, VAT on the exact sums", micro)

	microB2B := b2b("F402-2026-000134", sellerDE, buyerDEBusiness)
	microB2B.Lines, microB2B.Subtotals, microB2B.Period = sum.Lines, sum.Subtotals, &sum.Period
	microB2B.TaxCountry = "DE"
	microB2B.Note = micro.Note
	add("summary-10000-micro-peppol", "the 10,000-supply summary as a German B2B invoice over Peppol (DE-R-* apply)", microB2B)

	perSupply := b2b("F402-2026-000133", sellerIE, buyerATBusiness)
	sum2, err := Summarize("API request", SummaryPerSupply, centSupplies(30))
	if err != nil {
		panic(err)
	}
	perSupply.Lines, perSupply.Subtotals, perSupply.Period = sum2.Lines, sum2.Subtotals, &sum2.Period
	perSupply.TaxCountry = "IE"
	add("summary-per-supply-ae", "summary invoice over Peppol, one line per supply with its day as line period (R110, R111), reverse charge", perSupply)

	// Credit note in PLN: the refund of a Polish B2B invoice with two rates,
	// at the invoice's own NBP rate (BillingReference, BT-6, BT-111).
	plB2B := b2b("F402-2026-K000007", sellerPL, buyerPLBusiness,
		line("Dostęp API, listopad 2026", "100.00", "S", "23"),
		line("E-book: Przykład", "40.00", "S", "5"))
	plB2B.TaxCountry, plB2B.SupplyDate, plB2B.TaxCurrency = "PL", "2026-11-19", nbpRate()
	addCN("cn-s-b2b-pl-pln", "refund of a Polish B2B invoice with 23 % and 5 % lines: VAT also in PLN at the original NBP rate, customer address, date of supply",
		CreditNote{Invoice: refund(plB2B), InvoiceRef: "F402-2026-000120", InvoiceIssueDate: "2026-11-20"})

	grCNID, err := GreekInvoiceNumber("998877666", "2026-11-25", 0, GreekDocTypeCreditNote, "F402-CN", "000001")
	if err != nil {
		panic(err)
	}
	grCN := refund(gr)
	grCN.ID = grCNID
	grCN.MyDATA = &MyDATA{MARK: "400001234567999", URL: "https://invoices.example.gr/998877666/400001234567999"}
	addCN("cn-s-b2b-gr-gr-24", "refund of s-b2b-gr-gr-24: myDATA type 5.1 (credit invoice referring to the invoice) in the number, its own M.AR.K",
		CreditNote{Invoice: grCN, InvoiceRef: grID, InvoiceIssueDate: "2026-11-20"})

	// Sandbox documents carry a watermark in the note.
	sb := b2c("x402-sandbox", "DE", "19", "100.00")
	sbNote, err := SettlementNote("EUR", Settlement{
		PaidOn: "2026-11-20", Amount: "119.000000", Asset: "USDC", Network: "eip155:8453", TxHash: txA,
		Rate: "1.0512", RateCurrency: "USD", RateDate: "2026-11-19", RateSource: "ECB euro foreign exchange reference rate; 1 USDC taken as 1 USD",
		Sandbox: true,
	})
	if err != nil {
		panic(err)
	}
	sb.Note = sbNote
	add("s-b2c-sandbox", "sandbox output: watermark at the start of the note", sb)
	return cs
}

// nbpRate is a Polish tax currency: the NBP average rate of the last
// working day before the supply (Polish VAT Act Art. 31a(1)).
func nbpRate() *TaxCurrency {
	return &TaxCurrency{Code: "PLN", Rate: d("4.2655"), RateDate: "2026-11-18",
		RateSource: "NBP average rate, table 223/A/NBP/2026, last working day before the supply (Art. 31a VAT Act)"}
}

// microSupplies are n seeded sub-cent supplies (0.000001 to 0.009999 EUR,
// 6 decimals) on the days of November 2026, at 19 % and (every fifth) 7 %.
func microSupplies(n int) []Supply {
	r := rand.New(rand.NewPCG(223, 2026))
	out := make([]Supply, n)
	for i := range out {
		rate := "19"
		if i%5 == 4 {
			rate = "7"
		}
		out[i] = Supply{
			Date:      fmt.Sprintf("2026-11-%02d", 1+i*30/n),
			NetAmount: decimal.New(1+r.Int64N(9999), -6),
			Category:  "S", RatePercent: d(rate),
		}
	}
	return out
}

// centSupplies are n supplies of whole cents, one a day, reverse-charged.
func centSupplies(n int) []Supply {
	out := make([]Supply, n)
	for i := range out {
		out[i] = Supply{Date: fmt.Sprintf("2026-11-%02d", 1+i%30), NetAmount: decimal.New(int64(25+i), -2), Category: "AE"}
	}
	return out
}

// refund turns an invoice into the body of the credit note that refunds it.
func refund(inv Invoice) Invoice {
	inv.IssueDate = "2026-11-25"
	inv.Note = "Refund of the invoice, returned in full in USDC on 2026-11-25, tx 0x9e8d7c6b5a49382716051a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f."
	return inv
}
