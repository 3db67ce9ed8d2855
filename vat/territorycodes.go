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
