package ubl

import (
	"slices"
	"strings"
)

// The code lists in codelists_gen.go are extracted from the compiled
// validation artefacts that testdata/conformance/validate-ubl runs (CEN 1.3.16,
// Peppol BIS 3.0.21), so the renderer accepts exactly what they accept.
// Regenerate them after an artefact upgrade:
//
//go:generate go run ./internal/gencodelists -cen $EN16931_XSLT -peppol $PEPPOL_XSLT -o codelists_gen.go

// inList reports whether code is in the sorted list.
func inList(list []string, code string) bool {
	_, ok := slices.BinarySearch(list, code)
	return ok
}

// nonFiatCurrencies are ISO 4217 codes that both artefact lists accept but
// that are not a currency a merchant can invoice in: precious metals (XAU,
// XAG, XPD, XPT), the testing and "no currency" codes (XTS, XXX), bond-market
// and fund units (XBA…XBD, XDR, XSU, XUA) and the ISO 4217 fund codes
// (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW). Source: ISO 4217 list one,
// entries marked as funds or with no country, as published by SIX
// (https://www.six-group.com/en/products-services/financial-information/data-standards.html).
var nonFiatCurrencies = []string{
	"BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "UYI", "UYW",
	"XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX",
}

// isFiatCurrency reports whether c may be the document currency (BT-5): in
// the ISO 4217 lists of both BR-CL-04 and PEPPOL-EN16931-CL007, and not a
// non-fiat unit. Crypto-assets such as USDC are in neither list.
func isFiatCurrency(c string) bool {
	return inList(cenCurrencyCodes, c) && inList(peppolCurrencyCodes, c) && !inList(nonFiatCurrencies, c)
}

// easAllowed reports whether scheme is an electronic address scheme the
// profile's validators accept: BR-CL-25 for EN 16931, and additionally
// PEPPOL-EN16931-CL008 for Peppol (which drops e.g. EM, e-mail).
func easAllowed(p Profile, scheme string) bool {
	if !inList(cenEASCodes, scheme) {
		return false
	}
	return p != ProfilePeppol || inList(peppolEASCodes, scheme)
}

// vatEAS maps a VAT identifier prefix (BR-CO-09) to the Peppol EAS code whose
// identifiers are that country's VAT numbers, prefix included.
//
// Source: OpenPEPPOL peppol-bis-invoice-3 structure/codelist/eas.xml (names
// "Belgium VAT number" … "French VAT number", and 0211 "PARTITA IVA"),
// restricted to the codes still accepted by Peppol BIS 3.0.21
// (PEPPOL-EN16931-CL008, the eaid variable of PEPPOL-EN16931-UBL.xslt) and
// by CEN BR-CL-25; TestVATEASInBothLists checks that restriction.
//
// Not derivable, so absent: DK (0184 is the CVR number, which is not always
// the VAT number), FI (0213 "Finnish VAT" was withdrawn in Peppol 3.0.21; 0216
// OVT is a different identifier) and SE (the Swedish VAT scheme was withdrawn;
// 0007 is the organisation number). Sellers and buyers there must give
// EndpointID and EndpointScheme explicitly.
//
// XI (Northern Ireland) numbers are UK VAT registrations shown with an XI
// prefix, so they map to 9932 "United Kingdom VAT number" like GB.
var vatEAS = []struct{ prefix, scheme string }{
	{"AT", "9914"}, // Österreichische Umsatzsteuer-Identifikationsnummer
	{"BE", "9925"}, // Belgium VAT number
	{"BG", "9926"}, // Bulgaria VAT number
	{"CY", "9928"}, // Cyprus VAT number
	{"CZ", "9929"}, // Czech Republic VAT number
	{"DE", "9930"}, // Germany VAT number
	{"EE", "9931"}, // Estonia VAT number
	{"EL", "9933"}, // Greece VAT number
	{"ES", "9920"}, // Agencia Española de Administración Tributaria
	{"FR", "9957"}, // French VAT number
	{"GB", "9932"}, // United Kingdom VAT number
	{"HR", "9934"}, // Croatia VAT number
	{"HU", "9910"}, // Hungary VAT number
	{"IE", "9935"}, // Ireland VAT number
	{"IT", "0211"}, // PARTITA IVA (IT + 11 digits, PEPPOL-COMMON-R047)
	{"LT", "9937"}, // Lithuania VAT number
	{"LU", "9938"}, // Luxemburg VAT number
	{"LV", "9939"}, // Latvia VAT number
	{"MT", "9943"}, // Malta VAT number
	{"NL", "9944"}, // Netherlands VAT number (NL999999999B99, PEPPOL-COMMON-R056)
	{"PL", "9945"}, // Poland VAT number
	{"PT", "9946"}, // Portugal VAT number
	{"RO", "9947"}, // Romania VAT number
	{"SI", "9949"}, // Slovenia VAT number
	{"SK", "9950"}, // Slovakia VAT number
	{"XI", "9932"}, // Northern Ireland: a UK VAT registration
}

// EASForVATNumber returns the Peppol electronic address scheme (EAS) under
// which a VAT number is itself a Peppol participant identifier, e.g.
// DE123456789 → 9930, IE1234567T → 9935, IT… → 0211. For EL (9933) the
// participant identifier is the TIN without the prefix (GR-R-009,
// GR-R-010), and that is what the renderer derives. ok is false for
// prefixes without such a scheme (DK, FI, SE, non-EU countries other than
// GB) and for strings that do not start with two upper-case letters.
func EASForVATNumber(vatNumber string) (scheme string, ok bool) {
	if len(vatNumber) < 3 {
		return "", false
	}
	prefix := vatNumber[:2]
	if strings.ToUpper(prefix) != prefix {
		return "", false
	}
	i, found := slices.BinarySearchFunc(vatEAS, prefix, func(e struct{ prefix, scheme string }, p string) int {
		return strings.Compare(e.prefix, p)
	})
	if !found {
		return "", false
	}
	return vatEAS[i].scheme, true
}

// Payment means codes (UNCL4461, BR-CL-16) that describe a stablecoin
// transfer without bank-account data: ZZZ "mutually defined", 68 "online
// payment service", 1 "instrument not defined"
// (https://docs.peppol.eu/poacc/billing/3.0/codelist/UNCL4461/). The list has
// no crypto-asset code, and the credit-transfer codes 30 and 58 would need an
// account identifier (BR-50, BR-61).
var paymentMeansCodes = []string{"1", "68", "ZZZ"}

// Exemption codes (VATEX, BR-CL-22) and the code list's own names, used as
// defaults for the only two exempt categories this renderer writes.
const (
	vatexAE       = "VATEX-EU-AE"
	vatexAEReason = "Reverse charge"
	vatexO        = "VATEX-EU-O"
	vatexOReason  = "Not subject to VAT"
)

// Defaults for invoices under UK law (Invoice.TaxCountry "GB"): no VATEX
// code, which names EU law; BR-AE-10 and BR-O-10 accept the text alone.
// The wording of the reverse-charge legend is not prescribed; HMRC asks
// that it make clear that the reverse charge applies and that the customer
// accounts for the VAT (VATREC6060,
// https://www.gov.uk/hmrc-internal-manuals/vat-trader-records/vatrec6060).
const (
	ukReverseChargeReason = "Reverse charge: the customer accounts for the VAT to HMRC"
	ukOutsideScopeReason  = "Outside the scope of UK VAT"
)
