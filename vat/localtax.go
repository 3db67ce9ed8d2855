package vat

import (
	"slices"
	"strings"
)

// Local taxes outside the EU and UK VAT rulesets.
//
// Category O says that a supply is not subject to EU (or UK) VAT; it does
// not say that no tax is due. Where the place of supply is a special
// territory outside the EU VAT area or a third country, the determination
// names the tax that may be due there (Determination.LocalTax), the invoice
// note says so, and the note local_tax_not_assessed repeats that this
// package does not assess it. Where neither ruleset governs the supply at
// all (coverage.go), the same statement names the law that does.
//
// A statement is never an assessment: it carries no rate and no amount,
// and "may be due" means that the local rules (registration thresholds,
// place-of-supply rules of that law) decide.

// LocalTax names a tax outside the EU and UK VAT rulesets that may be due
// on a supply, or the law that governs a corridor this package does not
// cover. Its JSON form is part of the record ("localTax").
type LocalTax struct {
	// Name of the tax or law, e.g. "IGIC (Impuesto General Indirecto
	// Canario)" or "Swiss VAT (MWSTG)".
	Name string `json:"name"`
	// Territory is the place-of-supply code whose law it is (ES-CN, CH,
	// US): ISO 3166-1 or 3166-2, or EA for Ceuta and Melilla.
	Territory string `json:"territory"`
	// Authority that administers it, when the source names one.
	Authority string `json:"authority,omitempty"`
	// Note says in one sentence when the tax is due or what the supplier
	// has to check.
	Note string `json:"note"`
	// Source cites the law or official page.
	Source string `json:"source"`
}

// Reason codes of local taxes and special territories.
const (
	// ReasonSpecialTerritoryReviewChosen: review. The account chose manual
	// review (Seller.ReviewSpecialTerritories) instead of category O for a
	// customer in a special territory outside the EU VAT area; the detail
	// names the local tax.
	ReasonSpecialTerritoryReviewChosen = "special_territory_review_chosen"
	// ReasonTerritoryVATNotDetermined: review. The seller is established in
	// the member state whose own VAT law applies to services supplied in
	// the territory although the territory is outside the EU VAT area (the
	// French overseas departments for a French seller), and this ruleset
	// does not determine that national VAT.
	ReasonTerritoryVATNotDetermined = "territory_vat_not_determined"
)

const (
	srcArt6  = "Art. 6 Directive 2006/112/EC (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)"
	srcUStG1 = "https://www.gesetze-im-internet.de/ustg_1980/__1.html (section 1(2) UStG: Büsingen and Heligoland are not part of the German VAT territory)"
	srcMWSTG = "https://www.fedlex.admin.ch/eli/cc/2009/615/de (MWSTG, SR 641.20: Art. 3 lit. a Swiss territory including the customs-connected areas, Art. 8(1) place of the recipient, Art. 25 rates)"
	srcDOM   = "https://bofip.impots.gouv.fr/doctrine/pgp/792-PGP (BOI-TVA-GEO-20-40: for services Guadeloupe, Martinique and Réunion are not third territories) ; https://impots.gouv.fr/portail/professionnel/tva-sur-prestations-de-services-metropoledom (DOM rates, article 296 CGI; no VAT in French Guiana and Mayotte, article 294(1) CGI)"
	srcDPR7  = "https://www.normattiva.it/uri-res/N2Ls?urn:nir:stato:decreto.del.presidente.della.repubblica:1972-10-26;633 (article 7(1)(a) DPR 633/1972: Livigno and Campione d'Italia are not part of the Italian VAT territory)"
	srcAland = "https://finlex.fi/fi/laki/alkup/2021/20210388 (Act 1266/1996 on the Åland exceptions to the VAT and excise legislation, as amended) ; https://vero.fi/syventavat-vero-ohjeet/ohje-hakusivu/48654/ahvenanmaan-veroraja--arvonlisaverotuksessa3 (Finnish Tax Administration, VH/1343/00.01.00/2023: the Finnish VAT Act applies in Åland) ; https://www.regeringen.ax/ekonomi/skattegransen/vad-innebar-skattegransen (goods and services taxable in Finland are taxable in Åland on the same bases and amounts)"
)

// domTax is the statement for the French overseas departments.
func domTax(code string) LocalTax {
	return LocalTax{
		Name: "French VAT of the overseas departments (TVA DOM)", Territory: code,
		Authority: "Direction générale des Finances publiques",
		Note: "French VAT applies in Guadeloupe, Martinique and Réunion at the DOM rates (article 296 CGI) and not at all in French Guiana and Mayotte (article 294(1) CGI); " +
			"for services these departments are not third territories of France, so a supplier may owe TVA DOM; octroi de mer taxes goods only.",
		Source: srcDOM,
	}
}

// territoryTaxes are the statements for the special territories outside
// the EU VAT area. A territory missing here gets the generic statement.
var territoryTaxes = map[*territory]LocalTax{
	tCanary: {
		Name: "IGIC (Impuesto General Indirecto Canario)", Territory: "ES-CN", Authority: "Agencia Tributaria Canaria",
		Note:   "The Canary Islands' general indirect tax applies instead of Spanish VAT; its place-of-supply rules (article 17 Ley 20/1991) reach services supplied to consumers in the islands, so the supplier may have to register for IGIC.",
		Source: "Ley 20/1991, articles 3, 4 and 17: https://www.supercontable.com/informacion/IVA_Impuesto_valor_a%C3%B1adido/Articulo_17_Ley_20-1991-_de_7_de_junio-_modificacion_.html ; https://www.gobiernodecanarias.org/tributos/portal/jsf/publico/infoTributaria/doctrina/ver.jsp?identificadorConsulta=46978 ; " + srcArt6,
	},
	tCeuta:    ipsi("ES-CE"),
	tMelilla:  ipsi("ES-ML"),
	tCeutaMel: ipsi("EA"),
	tAthos: {
		Name: "none (Greek VAT does not apply on Mount Athos)", Territory: "GR-69",
		Note:   "Mount Athos is excluded from the EU VAT area and from Greek VAT; no local indirect tax on services is known to this package.",
		Source: "Art. 6(1)(a) Directive 2006/112/EC (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)",
	},
	tAland: {
		Name: "Finnish VAT (arvonlisäverolaki 1501/1993) as applied in Åland", Territory: "AX", Authority: "Finnish Tax Administration (Verohallinto)",
		Note:   "The Finnish VAT Act applies in Åland, which is outside the EU VAT area only; a supplier established outside Finland may owe Finnish VAT on services to consumers in Åland by registering in Finland, not through the OSS.",
		Source: srcAland,
	},
	tGuadeloupe: domTax("GP"),
	tMartinique: domTax("MQ"),
	tGuiana:     domTax("GF"),
	tReunion:    domTax("RE"),
	tMayotte:    domTax("YT"),
	tBusingen: {
		Name: "Swiss VAT (MWSTG)", Territory: "DE", Authority: "Swiss Federal Tax Administration (ESTV)",
		Note:   "Büsingen am Hochrhein belongs to the Swiss VAT territory (Art. 3 lit. a MWSTG) and not to the German one; Swiss VAT (8.1 % standard rate since 2024-01-01) may be due by a supplier registered in Switzerland.",
		Source: srcMWSTG + " ; " + srcUStG1,
	},
	tHeligoland: {
		Name: "none (no VAT on Heligoland)", Territory: "DE",
		Note:   "Heligoland is outside the German VAT territory (section 1(2) UStG) and levies no VAT of its own.",
		Source: srcUStG1,
	},
	tLivigno: {
		Name: "none (Italian VAT does not apply in Livigno)", Territory: "IT",
		Note:   "Livigno is outside the Italian VAT territory (article 7 DPR 633/1972); no local consumption tax on services is known to this package.",
		Source: srcDPR7,
	},
	tCampione: {
		Name: "ILCC (imposta locale sul consumo di Campione d'Italia)", Territory: "IT", Authority: "Comune di Campione d'Italia",
		Note:   "Since 2020-01-01 neither Italian nor Swiss VAT applies in Campione d'Italia but the local consumption tax ILCC at the Swiss rates (article 1(559)-(572) Law 160/2019); whether it reaches electronic services of a supplier established outside Campione depends on its place-of-supply rules (article 1(562)).",
		Source: "https://www.finanze.gov.it/it/fiscalita-nazionale/manovra-di-bilancio/manovra-di-bilancio-2020/imposta-locale-sul-consumo-di-campione-ditalia-/ ; https://www.normattiva.it/uri-res/N2Ls?urn:nir:stato:legge:2019-12-27;160 ; " + srcDPR7,
	},
}

func ipsi(code string) LocalTax {
	return LocalTax{
		Name: "IPSI (Impuesto sobre la Producción, los Servicios y la Importación)", Territory: code,
		Authority: "Ciudad Autónoma de Ceuta / Ciudad Autónoma de Melilla",
		Note:      "Ceuta and Melilla levy the municipal IPSI on services instead of Spanish VAT (Ley 8/1991); whether it reaches a supplier established elsewhere depends on the cities' rules.",
		Source:    "https://boe.es/buscar/act.php?id=BOE-A-1991-7645 (Ley 8/1991) ; " + srcArt6,
	}
}

// countryTaxes are the statements for third countries: the law that
// governs a supply whose place of supply is there. Any other country gets
// the generic statement (genericTax).
var countryTaxes = map[string]LocalTax{
	"CH": {
		Name: "Swiss VAT (MWSTG)", Territory: "CH", Authority: "Swiss Federal Tax Administration (ESTV)",
		Note:   "Services to recipients in Switzerland are taxable there (Art. 8(1) MWSTG; 8.1 % standard rate since 2024-01-01); a foreign supplier registers once its worldwide turnover reaches CHF 100,000.",
		Source: srcMWSTG,
	},
	"LI": {
		Name: "Liechtenstein VAT (MWSTG, LGBl. 2009 Nr. 330)", Territory: "LI", Authority: "Steuerverwaltung Liechtenstein",
		Note:   "Liechtenstein forms one VAT area with Switzerland and applies the Swiss rates; the Swiss rules on services to recipients there apply alike.",
		Source: "LGBl. 2009 Nr. 330, https://www.gesetze.li ; " + srcMWSTG,
	},
	"US": {
		Name: "US state and local sales and use taxes", Territory: "US",
		Note:   "The United States levy no federal VAT; each state decides whether digital products are taxable and when a remote seller must collect (economic nexus, South Dakota v. Wayfair, 585 U.S. 162 (2018)).",
		Source: "https://www.supremecourt.gov/opinions/17pdf/17-494_j4el.pdf",
	},
	"NO": {
		Name: "Norwegian VAT (merverdiavgiftsloven)", Territory: "NO", Authority: "Skatteetaten",
		Note:   "Electronic services to consumers in Norway are taxable there; a foreign supplier above NOK 50,000 in twelve months registers (VOEC scheme).",
		Source: "https://lovdata.no/dokument/NL/lov/2009-06-19-58",
	},
	"CA": {
		Name: "Canadian GST/HST (Excise Tax Act, Part IX)", Territory: "CA", Authority: "Canada Revenue Agency",
		Note:   "Digital services to consumers in Canada are subject to GST/HST, and provincial sales taxes may apply; non-resident suppliers register under the simplified regime above CAD 30,000.",
		Source: "https://laws-lois.justice.gc.ca/eng/acts/E-15/",
	},
	"AU": {
		Name: "Australian GST (A New Tax System (Goods and Services Tax) Act 1999)", Territory: "AU", Authority: "Australian Taxation Office",
		Note:   "Digital services to Australian consumers are connected with Australia; a foreign supplier registers once its Australian-connected turnover reaches AUD 75,000.",
		Source: "https://www.legislation.gov.au/C2004A00446/latest/text",
	},
	"JP": {
		Name: "Japanese consumption tax (Consumption Tax Act, Act No. 108 of 1988)", Territory: "JP", Authority: "National Tax Agency",
		Note:   "Electronic services to consumers in Japan are taxable there (10 %); a foreign supplier above the taxable-sales threshold files and pays Japanese consumption tax.",
		Source: "https://www.nta.go.jp/english/taxes/consumption_tax/index.htm",
	},
	"SG": {
		Name: "Singapore GST (Goods and Services Tax Act 1993)", Territory: "SG", Authority: "Inland Revenue Authority of Singapore",
		Note:   "Digital services to consumers in Singapore are subject to GST under the overseas vendor registration regime once the supplier's global and Singapore thresholds are exceeded.",
		Source: "https://sso.agc.gov.sg/Act/GSTA1993",
	},
	"IN": {
		Name: "Indian IGST (Integrated Goods and Services Tax Act 2017)", Territory: "IN", Authority: "Central Board of Indirect Taxes and Customs",
		Note:   "Online information and database access or retrieval (OIDAR) services to non-taxable recipients in India are subject to IGST payable by the foreign supplier (section 14 IGST Act), without a threshold.",
		Source: "https://cbic-gst.gov.in/",
	},
}

// genericTax is the statement for a place whose tax this package does not
// describe.
func genericTax(code string) LocalTax {
	return LocalTax{
		Name:      "the indirect-tax law of " + code,
		Territory: code,
		Note:      "This package does not describe the taxes of " + code + "; the supplier has to check whether a VAT, GST or sales tax is due there.",
		Source:    "Art. 44 and Art. 58 Directive 2006/112/EC: the place of supply is outside the EU (https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32006L0112)",
	}
}

// localTaxFor returns the statement for the place of supply loc, which is
// outside the EU and UK VAT areas. The result is a fresh copy.
func localTaxFor(loc location) *LocalTax {
	if t := loc.territory; t != nil {
		if lt, ok := territoryTaxes[t]; ok {
			return &lt
		}
		lt := genericTax(loc.code())
		return &lt
	}
	if lt, ok := countryTaxes[loc.country]; ok {
		return &lt
	}
	lt := genericTax(loc.country)
	return &lt
}

// attachLocalTax records the local-tax statement of a supply outside the
// EU (and UK) VAT area: on the determination, in the invoice note and in
// the note local_tax_not_assessed. where names the place in the note.
func (r *rules) attachLocalTax(where string) {
	b := r.b
	lt := localTaxFor(r.buyer)
	b.d.LocalTax = lt
	switch {
	case b.d.InvoiceNote == "":
	case strings.HasPrefix(lt.Name, "none"):
		b.d.InvoiceNote += ". Local tax: " + lt.Name
	default:
		b.d.InvoiceNote += ". Local tax: " + lt.Name + ", not assessed"
	}
	b.note(ReasonLocalTaxNotAssessed, "The place of supply is %s, outside the %s, so this ruleset does not assess the tax there: %s (%s). %s", where, r.vatArea(), lt.Name, lt.Source, lt.Note)
}

// vatArea names the VAT area the current ruleset covers.
func (r *rules) vatArea() string {
	if r.b.d.Ruleset == RulesetUK {
		return "UK and EU VAT areas"
	}
	return "EU VAT territory"
}

// domTerritories are the French overseas departments, where French VAT
// law applies to services although they are outside the EU VAT area.
var domTerritories = []*territory{tGuadeloupe, tMartinique, tGuiana, tReunion, tMayotte}

// parentStateTerritory handles a seller established in the member state
// whose own VAT law applies in the buyer's special territory:
//
//   - Åland: the Finnish VAT Act applies in Åland (Act 1266/1996); supplies
//     of services between mainland Finland and Åland are domestic trade,
//     the tax border concerns goods (Finnish Tax Administration guidance
//     VH/1343/00.01.00/2023; Government of Åland). The sources agree, so a
//     Finnish seller's supply to a customer in Åland is domestic Finnish
//     VAT at the Finnish rate.
//   - French overseas departments: French VAT applies to services there
//     (BOI-TVA-GEO-20-40), at DOM rates in Guadeloupe, Martinique and
//     Réunion and not at all in French Guiana and Mayotte; this ruleset
//     does not hold the DOM rates nor the localisation of a B2C electronic
//     service between metropolitan France and a DOM, so manual review.
//
// It reports whether it handled the supply.
func (r *rules) parentStateTerritory() bool {
	b, loc, s := r.b, r.buyer, r.seller
	t := loc.territory
	if t == nil || !s.eu || s.country != t.parent {
		return false
	}
	switch {
	case t == tAland:
		b.d.Jurisdiction = JurisdictionEU
		b.d.PlaceOfSupply = loc.code()
		b.d.Territory = t.name
		st := checkBuyer(r.in.Buyer, loc)
		b.applyAlike(st)
		b.holdPending(st)
		b.d.Regime = RegimeDomestic
		b.d.TaxingCountry = "FI"
		b.d.LegalBasis = "Finnish VAT Act (arvonlisäverolaki 1501/1993) as applied in Åland by Act 1266/1996: services between mainland Finland and Åland are domestic supplies; Åland is outside the EU VAT territory only (Art. 6(1)(d) " + directive + ")"
		r.chargeRate("FI", nil)
		return true
	case slices.Contains(domTerritories, t):
		b.d.Jurisdiction = JurisdictionEU
		b.d.PlaceOfSupply = loc.code()
		b.d.Territory = t.name
		lt := localTaxFor(loc)
		b.d.LocalTax = lt
		b.review(ReasonTerritoryVATNotDetermined, "The seller is established in France, whose VAT law applies to services in %s although it is outside the EU VAT territory (%s); the rate or absence of French VAT for this supply is not determined by this ruleset: %s (%s). %s",
			t.name, t.basis, lt.Name, lt.Source, lt.Note)
		return true
	}
	return false
}
