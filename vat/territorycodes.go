package vat

import "strings"

// Country codes that name a territory (IC, EA, AX, GP, ..., MC, IM, XI)
// may come with a postal code. The postal code must then lie in that
// territory: "IC" with a Madrid postal code is a contradiction, not a
// customer in the Canary Islands (Art. 6 Directive 2006/112/EC puts the
// two on different sides of the EU VAT border).

// territoryCodePostal checks postal against the territory t that the
// buyer's country code named; it returns postalOK, postalUnrecognised,
// postalShared or postalConflict.
func territoryCodePostal(t *territory, postal string) int {
	if strings.TrimSpace(postal) == "" {
		return postalOK
	}
	found, status := postalTerritory(t.parent, postal)
	switch {
	case status != postalOK:
		return status
	case found == t, t == tCeutaMel && (found == tCeuta || found == tMelilla):
		return postalOK
	}
	return postalConflict
}

// BuyerCountry normalises a code for Buyer.Country (or Evidence.Country)
// and reports whether Determine accepts it: the ISO 3166-1 alpha-2 codes,
// EL and UK as aliases of GR and GB, and the codes that name a special
// territory although ISO 3166-1 only reserves them: XI (Northern Ireland),
// IC (Canary Islands) and EA (Ceuta and Melilla). A caller validating a
// request uses it so that it accepts exactly what Determine accepts.
func BuyerCountry(code string) (string, bool) {
	cc := normalizeCountry(code)
	_, _, known := resolveLocation(cc, "")
	return cc, known && cc != ""
}

// MemberStateOf is the member state a party established in, or a customer
// located in, code belongs to for VAT, read as Determine reads a country
// code without a postal code (resolveLocation): EL is Greece, Monaco is
// France (Art. 7(1) Directive 2006/112/EC), and a special territory
// outside the EU VAT territory (Art. 6: IC, AX, GP, ...) belongs to none.
// ok is false outside the EU VAT territory: a third country, the United
// Kingdom with Northern Ireland (XI, for services) and the Isle of Man
// (treated as the UK, Art. 7(1)), and a code Determine does not accept. A
// package deciding whether a seller or a buyer is in the EU calls it
// rather than testing the raw code with IsMemberState, which reads MC as
// a third country.
func MemberStateOf(code string) (state string, ok bool) {
	loc, _, known := resolveLocation(normalizeCountry(code), "")
	if !known || !loc.inEU() {
		return "", false
	}
	return loc.country, true
}

// InUKVATArea reports whether a party established in, or a customer located
// in, code is in the UK VAT area for services, read as Determine reads a
// country code without a postal code: Great Britain (GB, UK), Northern
// Ireland (XI, a UK place of supply for services) and the Isle of Man
// (treated as the UK, Art. 7(1) Directive 2006/112/EC; VAT Notice 741A);
// not Jersey, Guernsey or Gibraltar.
func InUKVATArea(code string) bool {
	loc, _, known := resolveLocation(normalizeCountry(code), "")
	return known && loc.inUK()
}
