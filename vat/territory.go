package vat

import "strings"

// Special territories. Art. 6
// Directive 2006/112/EC excludes some parts of member states from the EU VAT
// territory; Art. 7 treats Monaco as France and the Isle of Man as the
// United Kingdom; the overseas countries and territories of Art. 355(2)
// TFEU are not part of the EU at all. Northern Ireland follows EU VAT rules
// for goods only (Windsor Framework); its services are UK supplies.
//
// A territory is found from the buyer's country code (AX, IC, EA, GP, MQ,
// GF, RE, YT, MF, MC, IM, XI) or from the postal code given with the
// parent's country code. Without a postal code the country decides.

// territoryKind says how a territory changes the determination.
type territoryKind int

const (
	// outsideEU: not in the EU VAT territory; TBE services to a customer
	// there are outside the scope of EU VAT (category O).
	outsideEU territoryKind = iota + 1
	// ownRates: inside, with regional rates in the rate table.
	ownRates
	// treatedAs: a country treated as its parent (Monaco → FR, Isle of
	// Man → GB; Art. 7).
	treatedAs
	// ukServices: Northern Ireland, a UK place of supply for services.
	ukServices
)

// territory describes one special territory.
type territory struct {
	name   string // English name, shown in Determination.Territory
	parent string // ISO 3166-1 code of the state whose territory or treatment applies
	code   string // place-of-supply code: ISO 3166-1 or 3166-2
	kind   territoryKind
	basis  string // legal citation
}

var (
	tCanary     = &territory{"Canary Islands", "ES", "ES-CN", outsideEU, "Art. 6(1)(b) Directive 2006/112/EC"}
	tCeuta      = &territory{"Ceuta", "ES", "ES-CE", outsideEU, "Art. 6(2)(c) Directive 2006/112/EC"}
	tMelilla    = &territory{"Melilla", "ES", "ES-ML", outsideEU, "Art. 6(2)(d) Directive 2006/112/EC"}
	tCeutaMel   = &territory{"Ceuta and Melilla", "ES", "EA", outsideEU, "Art. 6(2)(c) and (d) Directive 2006/112/EC"}
	tAthos      = &territory{"Mount Athos", "GR", "GR-69", outsideEU, "Art. 6(1)(a) Directive 2006/112/EC"}
	tAland      = &territory{"Åland Islands", "FI", "AX", outsideEU, "Art. 6(1)(d) Directive 2006/112/EC"}
	tGuadeloupe = &territory{"Guadeloupe", "FR", "GP", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tMartinique = &territory{"Martinique", "FR", "MQ", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tGuiana     = &territory{"French Guiana", "FR", "GF", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tReunion    = &territory{"Réunion", "FR", "RE", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tMayotte    = &territory{"Mayotte", "FR", "YT", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tStMartin   = &territory{"Saint-Martin", "FR", "MF", outsideEU, "Art. 6(1)(c) Directive 2006/112/EC"}
	tStBarth    = &territory{"Saint-Barthélemy", "FR", "BL", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tStPierre   = &territory{"Saint-Pierre and Miquelon", "FR", "PM", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tTAAF       = &territory{"French Southern Territories", "FR", "TF", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tWallis     = &territory{"Wallis and Futuna", "FR", "WF", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tPolynesia  = &territory{"French Polynesia", "FR", "PF", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tCaledonia  = &territory{"New Caledonia", "FR", "NC", outsideEU, "Art. 355(2) TFEU (overseas country or territory)"}
	tHeligoland = &territory{"Heligoland", "DE", "DE", outsideEU, "Art. 6(2)(a) Directive 2006/112/EC"}
	tBusingen   = &territory{"Büsingen am Hochrhein", "DE", "DE", outsideEU, "Art. 6(2)(b) Directive 2006/112/EC"}
	tLivigno    = &territory{"Livigno", "IT", "IT", outsideEU, "Art. 6(2)(e) Directive 2006/112/EC"}
	tCampione   = &territory{"Campione d'Italia", "IT", "IT", outsideEU, "Art. 6(1)(f) Directive 2006/112/EC"}
	tSanMarino  = &territory{"San Marino", "IT", "SM", outsideEU, "Art. 5 Directive 2006/112/EC (not part of a member state; Italian postal code)"}
	tVatican    = &territory{"Vatican City", "IT", "VA", outsideEU, "Art. 5 Directive 2006/112/EC (not part of a member state; Italian postal code)"}
	tGreenland  = &territory{"Greenland", "DK", "GL", outsideEU, "Art. 355(2) TFEU (overseas country or territory; Danish postal code)"}
	tFaroe      = &territory{"Faroe Islands", "DK", "FO", outsideEU, "Art. 355(5)(a) TFEU (Danish-style postal code)"}
	tJersey     = &territory{"Jersey", "GB", "JE", outsideEU, "Art. 6(1)(e) Directive 2006/112/EC; outside UK VAT (VAT Notice 741A)"}
	tGuernsey   = &territory{"Guernsey", "GB", "GG", outsideEU, "Art. 6(1)(e) Directive 2006/112/EC; outside UK VAT (VAT Notice 741A)"}
	// Gibraltar uses one UK-format postcode (GX11 1AA) but is not part of
	// the United Kingdom (Great Britain and Northern Ireland: HMRC manual
	// VATPOSG2300; Interpretation Act 1978 Sch. 1), was never in the EU
	// VAT territory (Art. 28 of the 1972 Act of Accession) and has no VAT.
	tGibraltar  = &territory{"Gibraltar", "GB", "GI", outsideEU, "not part of the EU or of the UK for VAT (HMRC VATPOSG2300)"}
	tAzores     = &territory{"Azores", "PT", "PT-20", ownRates, "regional rates of the Azores (article 18(3) Código do IVA)"}
	tMadeira    = &territory{"Madeira", "PT", "PT-30", ownRates, "regional rates of Madeira (article 18(3) Código do IVA)"}
	tJungholz   = &territory{"Jungholz", "AT", "AT", ownRates, "section 10(4) UStG 1994 (Austria)"}
	tMittelberg = &territory{"Mittelberg", "AT", "AT", ownRates, "section 10(4) UStG 1994 (Austria)"}
	tMonaco     = &territory{"Monaco", "FR", "MC", treatedAs, "Art. 7(1) Directive 2006/112/EC"}
	tIsleOfMan  = &territory{"Isle of Man", "GB", "IM", treatedAs, "Art. 7(1) Directive 2006/112/EC; UK VAT area (VAT Notice 741A)"}
	tNI         = &territory{"Northern Ireland", "GB", "GB-NIR", ukServices, "Windsor Framework: EU VAT rules for goods only (Art. 8 of the Protocol on Ireland/Northern Ireland)"}
)

// countryTerritories maps country codes that name a special territory to it.
var countryTerritories = map[string]*territory{
	"AX": tAland, "IC": tCanary, "EA": tCeutaMel,
	"GP": tGuadeloupe, "MQ": tMartinique, "GF": tGuiana, "RE": tReunion, "YT": tMayotte, "MF": tStMartin,
	"MC": tMonaco, "IM": tIsleOfMan, "XI": tNI,
}

// location is where a buyer (or seller) is for VAT purposes.
type location struct {
	country   string     // ISO 3166-1 alpha-2 of the state whose rules apply (GB for NI and the Isle of Man, FR for Monaco)
	territory *territory // special territory, or nil
}

// code is the place-of-supply code: the territory's code, else the country.
func (l location) code() string {
	if l.territory != nil {
		return l.territory.code
	}
	return l.country
}

func (l location) outsideEUVAT() bool {
	return l.territory != nil && l.territory.kind == outsideEU
}

// inEU reports whether the location is in the EU VAT territory.
func (l location) inEU() bool { return isEUMember(l.country) && !l.outsideEUVAT() }

// inUK reports whether the location is in the UK VAT area for services
// (Great Britain, Northern Ireland, the Isle of Man).
func (l location) inUK() bool { return l.country == "GB" && !l.outsideEUVAT() }

// postal-code resolution results other than a territory.
const (
	postalOK           = iota // no territory, or the territory found
	postalUnrecognised        // malformed for a country with special territories
	postalConflict            // the code belongs to another country's territory
	postalShared              // the code is shared by a special territory and its parent's mainland
)

// resolveLocation finds the location of an attested country code (already
// normalised) and optional postal code. ok is false for a code that is not
// an ISO 3166-1 code (nor IC, EA, XI).
func resolveLocation(cc, postal string) (loc location, postalStatus int, ok bool) {
	f := factsOf(cc) // countryfacts.go
	if t := f.territory; t != nil {
		return location{country: t.parent, territory: t}, territoryCodePostal(t, postal), true // territorycodes.go
	}
	if !f.iso {
		return location{}, postalOK, false
	}
	loc = location{country: cc}
	postal = strings.TrimSpace(postal)
	if postal == "" {
		return loc, postalOK, true
	}
	t, status := postalTerritory(cc, postal)
	if t != nil {
		loc.territory = t
	}
	return loc, status, true
}

// postalTerritory looks a postal code up for the countries that have
// special territories; other countries' postal codes are not examined.
func postalTerritory(cc, postal string) (*territory, int) {
	if cc == "GB" {
		return gbPostalTerritory(postal)
	}
	digits, ok := postalDigits(postal)
	check := func(lengths ...int) bool {
		if !ok {
			return false
		}
		for _, n := range lengths {
			if len(digits) == n {
				return true
			}
		}
		return false
	}
	switch cc {
	case "ES": // Canary Islands: provinces 35, 38; Ceuta 51; Melilla 52
		if !check(5) {
			return nil, postalUnrecognised
		}
		switch digits[:2] {
		case "35", "38":
			return tCanary, postalOK
		case "51":
			return tCeuta, postalOK
		case "52":
			return tMelilla, postalOK
		}
	case "FR": // overseas departments 971–976, collectivities 975, 977, 978, 984–988; Monaco 980
		if !check(5) {
			return nil, postalUnrecognised
		}
		switch {
		case digits == "97133":
			return tStBarth, postalOK
		case digits == "97150":
			return tStMartin, postalOK
		}
		switch digits[:3] {
		case "971":
			return tGuadeloupe, postalOK
		case "972":
			return tMartinique, postalOK
		case "973":
			return tGuiana, postalOK
		case "974":
			return tReunion, postalOK
		case "975":
			return tStPierre, postalOK
		case "976":
			return tMayotte, postalOK
		case "977":
			return tStBarth, postalOK
		case "978":
			return tStMartin, postalOK
		case "980":
			return tMonaco, postalOK
		case "984":
			return tTAAF, postalOK
		case "986":
			return tWallis, postalOK
		case "987":
			return tPolynesia, postalOK
		case "988":
			return tCaledonia, postalOK
		}
		if digits[0] == '9' && (digits[1] == '7' || digits[1] == '8' || digits[1] == '9') {
			return nil, postalUnrecognised // no metropolitan postal code starts 97–99
		}
	case "DE":
		if !check(5) {
			return nil, postalUnrecognised
		}
		switch digits {
		case "27498":
			return tHeligoland, postalOK
		case "78266":
			return tBusingen, postalOK
		case "87491", "87567", "87568", "87569":
			// German postal codes of the Austrian communes Jungholz and
			// Mittelberg (Kleinwalsertal): the buyer is in Austria.
			return nil, postalConflict
		}
	case "IT":
		if !check(5) {
			return nil, postalUnrecognised
		}
		switch {
		case digits == "23041":
			return tLivigno, postalOK
		case digits == "23030":
			// Shared: Trepalle, a frazione of Livigno, is addressed under
			// 23030, which also serves communes of the province of Sondrio
			// on the Italian mainland (Poste Italiane postal-code search,
			// https://www.poste.it/cerca/index.html#/risultati-cerca-cap).
			return nil, postalShared
		case digits == "22061":
			return tCampione, postalOK
		case digits >= "47890" && digits <= "47899":
			return tSanMarino, postalOK
		case digits == "00120":
			return tVatican, postalOK
		}
	case "GR": // Mount Athos: 630 86 Karyes and 630 87 Dafni (Hellenic Post postcode search, https://www.elta.gr/findapostcode.aspx)
		if !check(5) {
			return nil, postalUnrecognised
		}
		if digits == "63086" || digits == "63087" {
			return tAthos, postalOK
		}
	case "FI":
		if !check(5) {
			return nil, postalUnrecognised
		}
		if digits[:2] == "22" {
			return tAland, postalOK
		}
	case "PT": // NNNN or NNNN-NNN; Madeira 9000–9499, Azores 9500–9999
		if !check(4, 7) {
			return nil, postalUnrecognised
		}
		if digits[0] == '9' {
			if digits[1] <= '4' {
				return tMadeira, postalOK
			}
			return tAzores, postalOK
		}
	case "AT":
		if !check(4) {
			return nil, postalUnrecognised
		}
		switch digits {
		case "6691":
			return tJungholz, postalOK
		case "6991", "6992", "6993":
			return tMittelberg, postalOK
		}
	case "DK": // Denmark 4 digits; Greenland 39xx; Faroe Islands 3 digits
		if !check(3, 4) {
			return nil, postalUnrecognised
		}
		if len(digits) == 3 {
			return tFaroe, postalOK
		}
		if digits[:2] == "39" {
			return tGreenland, postalOK
		}
	}
	return nil, postalOK
}

// postalDigits strips a leading country marker ("D-", "AX-", "FI-"),
// spaces and dashes, and returns the digits.
func postalDigits(s string) (string, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if i := strings.IndexByte(s, '-'); i >= 1 && i <= 2 && isUpper(s[0]) && (i == 1 || isUpper(s[1])) {
		s = s[i+1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// gbPostalTerritory reads the area letters of a UK postcode (outward code
// "A9", "A99", "AA9", "AA99", "A9A" or "AA9A", optionally followed by the
// inward code "9AA"): BT is Northern Ireland, IM the Isle of Man, JE and GY
// the Channel Islands, GX Gibraltar.
func gbPostalTerritory(postal string) (*territory, int) {
	var b strings.Builder
	for i := 0; i < len(postal); i++ {
		c := upperASCII(postal[i])
		if c == ' ' {
			continue
		}
		b.WriteByte(c)
	}
	p := b.String()
	if len(p) >= 5 && isDigitByte(p[len(p)-3]) && isUpper(p[len(p)-2]) && isUpper(p[len(p)-1]) {
		p = p[:len(p)-3] // drop the inward code
	}
	area := 0
	for area < len(p) && area < 2 && isUpper(p[area]) {
		area++
	}
	rest := p[area:]
	if area == 0 || len(rest) == 0 || len(rest) > 2 || !isDigitByte(rest[0]) ||
		(len(rest) == 2 && !isDigitByte(rest[1]) && !isUpper(rest[1])) {
		return nil, postalUnrecognised
	}
	switch p[:area] {
	case "BT":
		return tNI, postalOK
	case "IM":
		return tIsleOfMan, postalOK
	case "JE":
		return tJersey, postalOK
	case "GY":
		return tGuernsey, postalOK
	case "GX":
		return tGibraltar, postalOK
	}
	return nil, postalOK
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }
