package vat

import "strings"

// iso3166Alpha2 lists the 249 officially assigned ISO 3166-1 alpha-2 codes
// (Debian iso-codes 4.15.0, /usr/share/iso-codes/json/iso_3166-1.json). A
// country code outside this list is a typo, not a third country, and is a
// manual-review reason rather than "outside the EU".
const iso3166Alpha2 = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ " +
	"BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR " +
	"CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ " +
	"LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ " +
	"MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF " +
	"PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI " +
	"SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR " +
	"TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"

// isoCountries is the set form of iso3166Alpha2, built once at package
// initialisation and only read afterwards.
var isoCountries = func() map[string]bool {
	m := make(map[string]bool, 249)
	for _, c := range strings.Fields(iso3166Alpha2) {
		m[c] = true
	}
	return m
}()

// IsISOCountry reports whether code, as given, is one of the 249
// officially assigned ISO 3166-1 alpha-2 codes of iso3166Alpha2 (upper
// case; no alias such as EL or UK). A package that validates a country
// field calls it so that the engine keeps one list of codes.
func IsISOCountry(code string) bool { return factsOf(code).iso } // countryfacts.go

// euMemberStates are the 27 member states (Art. 5 Directive 2006/112/EC,
// territory of the Community), as ISO 3166-1 codes: Greece is GR here and
// EL only as a VAT-number prefix.
var euMemberStates = map[string]bool{
	"AT": true, "BE": true, "BG": true, "CY": true, "CZ": true, "DE": true, "DK": true,
	"EE": true, "ES": true, "FI": true, "FR": true, "GR": true, "HR": true, "HU": true,
	"IE": true, "IT": true, "LT": true, "LU": true, "LV": true, "MT": true, "NL": true,
	"PL": true, "PT": true, "RO": true, "SE": true, "SI": true, "SK": true,
}

// IsMemberState reports whether code, as given (upper case, GR for
// Greece, not EL), is one of the 27 member states of euMemberStates
// (Art. 5 Directive 2006/112/EC). A package deciding by membership calls
// it so that the engine keeps one list of member states.
func IsMemberState(code string) bool { return isEUMember(code) } // countryfacts.go

// normalizeCountry trims and upper-cases an attested country code and maps
// the aliases the engine accepts: EL (Greece's VAT prefix) to GR and UK to
// GB. XI (Northern Ireland) and the special-territory codes are resolved by
// resolveLocation.
func normalizeCountry(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 2 || !isUpper(s[0]) || !isUpper(s[1]) {
		s = strings.ToUpper(s)
	}
	switch s {
	case "EL":
		return "GR"
	case "UK":
		return "GB"
	}
	return s
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}
