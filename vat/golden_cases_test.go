package vat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// issueCases are the cases of the review of territories, conditional
// rates, corridors and location evidence: one golden line each, with the
// source the expected result rests on. Expected lines are written by hand
// from those sources, not produced by the code.
var issueCases = []struct {
	name string
	in   Input
	want string
	cite string
}{
	// Territories outside the EU VAT area, seller inside and outside the member state.
	{"Canary Islands by IC, Spanish seller", Input{Seller{Country: "ES"}, b2c("IC"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(b) Directive 2006/112/EC; IGIC: Ley 20/1991 articles 3, 4, 17"},
	{"Canary Islands by IC, German seller", Input{Seller{Country: "DE", OverThreshold: true}, b2c("IC"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(b), Art. 58 Directive 2006/112/EC; IGIC: Ley 20/1991 article 17"},
	{"Canary Islands, account chose review", Input{Seller{Country: "DE", ReviewSpecialTerritories: true}, Buyer{Country: "ES", PostalCode: "35001"}, digital},
		"MANUAL_REVIEW_REQUIRED OUTSIDE_SCOPE - - - pos=ES-CN - B2C [special_territory_review_chosen,location_single_assertion,local_tax_not_assessed]",
		"Seller.ReviewSpecialTerritories; Art. 6(1)(b) Directive 2006/112/EC"},
	{"Canary Islands, US seller: not covered", Input{Seller{Country: "US"}, b2c("IC"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=ES-CN - - [corridor_not_covered,location_single_assertion]",
		"Art. 6(1)(b), Art. 58 Directive 2006/112/EC (no EU place of supply, no EU establishment); IGIC: Ley 20/1991"},
	{"Ceuta and Melilla by EA, Spanish seller", Input{Seller{Country: "ES"}, b2c("EA"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=EA VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(c), (d) Directive 2006/112/EC; IPSI: Ley 8/1991"},
	{"Melilla by postal code, Italian seller", Input{Seller{Country: "IT", OverThreshold: true}, Buyer{Country: "ES", PostalCode: "52001"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=ES-ML VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(d) Directive 2006/112/EC; IPSI: Ley 8/1991"},
	{"EA with a Ceuta postal code", Input{Seller{Country: "ES"}, Buyer{Country: "EA", PostalCode: "51001"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=EA VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(c) Directive 2006/112/EC"},
	{"IC with a Madrid postal code", Input{Seller{Country: "ES"}, Buyer{Country: "IC", PostalCode: "28001"}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=- - - [buyer_location_conflict]",
		"Art. 6(1)(b) Directive 2006/112/EC: Madrid (28xxx) is in the EU VAT territory, the Canary Islands (35, 38) are not"},
	{"Guadeloupe, German seller", Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "FR", PostalCode: "97110"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=GP VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(c) Directive 2006/112/EC; TVA DOM: articles 294, 296 CGI"},
	{"French Guiana, German seller", Input{Seller{Country: "DE", OverThreshold: true}, b2c("GF"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=GF VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(c) Directive 2006/112/EC; no VAT in French Guiana: article 294(1) CGI"},
	{"Mayotte, French seller", Input{Seller{Country: "FR"}, b2c("YT"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=YT - - [territory_vat_not_determined,location_single_assertion]",
		"BOI-TVA-GEO-20-40 (DOM not third territories for services); article 294(1) CGI"},
	{"Martinique, French seller", Input{Seller{Country: "FR"}, b2c("MQ"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=MQ - - [territory_vat_not_determined,location_single_assertion]",
		"BOI-TVA-GEO-20-40; DOM rates: article 296 CGI"},
	{"Büsingen, German seller", Input{Seller{Country: "DE"}, Buyer{Country: "DE", PostalCode: "78266"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=DE VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(b) Directive 2006/112/EC; section 1(2) UStG; Swiss VAT: Art. 3 lit. a MWSTG"},
	{"Büsingen, Austrian seller", Input{Seller{Country: "AT", OverThreshold: true}, Buyer{Country: "DE", PostalCode: "78266"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=DE VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(b) Directive 2006/112/EC; Swiss VAT: Art. 3 lit. a, Art. 8 MWSTG"},
	{"Büsingen, Swiss seller: not covered", Input{Seller{Country: "CH"}, Buyer{Country: "DE", PostalCode: "78266"}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=DE - - [corridor_not_covered,location_single_assertion]",
		"Art. 6(2)(b) Directive 2006/112/EC; Swiss VAT governs: Art. 3 lit. a, Art. 8 MWSTG"},
	{"Campione d'Italia, Italian seller", Input{Seller{Country: "IT"}, Buyer{Country: "IT", PostalCode: "22061"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=IT VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(f) Directive 2006/112/EC; article 7 DPR 633/1972; ILCC: article 1(559)-(572) Law 160/2019"},
	{"Campione d'Italia, French seller", Input{Seller{Country: "FR", OverThreshold: true}, Buyer{Country: "IT", PostalCode: "22061"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=IT VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(f) Directive 2006/112/EC; ILCC: article 1(559)-(572) Law 160/2019"},
	{"Livigno, Italian seller", Input{Seller{Country: "IT"}, Buyer{Country: "IT", PostalCode: "23041"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=IT VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(e) Directive 2006/112/EC; article 7 DPR 633/1972"},
	{"Livigno, Dutch seller", Input{Seller{Country: "NL", OverThreshold: true}, Buyer{Country: "IT", PostalCode: "23041"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=IT VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(e) Directive 2006/112/EC"},
	{"Heligoland, German seller", Input{Seller{Country: "DE"}, Buyer{Country: "DE", PostalCode: "27498"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=DE VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(a) Directive 2006/112/EC; section 1(2) UStG"},
	{"Heligoland, Polish seller", Input{Seller{Country: "PL", OverThreshold: true}, Buyer{Country: "DE", PostalCode: "27498"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=DE VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(2)(a) Directive 2006/112/EC"},
	{"Mount Athos, Greek seller", Input{Seller{Country: "GR"}, Buyer{Country: "GR", PostalCode: "63086"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=GR-69 VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(a) Directive 2006/112/EC"},
	{"Mount Athos, Bulgarian seller", Input{Seller{Country: "BG", OverThreshold: true}, Buyer{Country: "GR", PostalCode: "63086"}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=GR-69 VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(a) Directive 2006/112/EC"},
	{"Åland by AX, Finnish seller: domestic", Input{Seller{Country: "FI"}, b2c("AX"), digital},
		"DETERMINED DOMESTIC S 25.5 FI pos=AX - B2C [location_single_assertion]",
		"Act 1266/1996; Finnish Tax Administration VH/1343/00.01.00/2023; Government of Åland: services between Åland and mainland Finland are domestic"},
	{"Åland, Finnish seller, business customer", Input{Seller{Country: "FI"}, Buyer{Country: "AX", VATNumber: "FI20774740", Registry: confirmed("VIES", "FI20774740")}, digital},
		"DETERMINED DOMESTIC S 25.5 FI pos=AX - B2B [location_single_assertion]",
		"Act 1266/1996: the Finnish VAT Act applies in Åland, domestic B2B"},
	{"Åland, Swedish seller", Input{Seller{Country: "SE", OverThreshold: true}, b2c("AX"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=AX VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 6(1)(d) Directive 2006/112/EC; Finnish VAT may be due outside the OSS: Act 1266/1996"},
	{"Åland, US seller: not covered", Input{Seller{Country: "US"}, b2c("AX"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=AX - - [corridor_not_covered,location_single_assertion]",
		"Art. 6(1)(d) Directive 2006/112/EC; Finnish VAT governs: Act 1266/1996"},
	{"Canary Islands, UK seller", Input{Seller{Country: "GB"}, b2c("IC"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [location_single_assertion,ruleset_experimental,local_tax_not_assessed]",
		"VATA 1994 s.7A (VAT Notice 741A); IGIC: Ley 20/1991"},

	// Conditional reduced rates.
	{"FR e-press without CPPAP attestation", Input{Seller{Country: "DE", OverThreshold: true}, b2c("FR"), Supply{Kind: KindEpublication, Date: sep1}},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - FR pos=FR - B2C [reduced_rate_condition_unattested,location_single_assertion]",
		"article 298 septies CGI; BOI-TVA-SECT-40-40 (CPPAP recognition)"},
	{"FR e-press, CPPAP attested", Input{Seller{Country: "DE", OverThreshold: true}, b2c("FR"), Supply{Kind: KindEpublication, Date: sep1, Conditions: []string{ConditionFRPressCPPAP}}},
		"DETERMINED OSS_B2C/union S 2.1 FR pos=FR - B2C [location_single_assertion]",
		"article 298 septies CGI; BOI-TVA-SECT-40-40"},
	{"IT e-book without ISBN attestation", Input{Seller{Country: "US"}, b2c("IT"), ebook},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - IT pos=IT - B2C [reduced_rate_condition_unattested,location_single_assertion]",
		"Tabella A parte II n. 18 DPR 633/1972; article 1(667) Law 190/2014 as amended by article 1(637) Law 208/2015"},
	{"IT e-book, ISBN attested", Input{Seller{Country: "US"}, b2c("IT"), Supply{Kind: KindEbook, Date: sep1, Conditions: []string{ConditionITISBNISSN}}},
		"DETERMINED OSS_B2C/non-union S 4 IT pos=IT - B2C [location_single_assertion]",
		"article 1(667) Law 190/2014 as amended by article 1(637) Law 208/2015"},
	{"IT e-press, ISSN attested", Input{Seller{Country: "US"}, b2c("IT"), Supply{Kind: KindEpublication, Date: sep1, Conditions: []string{ConditionITISBNISSN}}},
		"DETERMINED OSS_B2C/non-union S 4 IT pos=IT - B2C [location_single_assertion]",
		"article 1(637) Law 208/2015 (ISSN)"},
	{"DK e-newspaper without attestation", Input{Seller{Country: "US"}, b2c("DK"), Supply{Kind: KindEpublication, Date: sep1}},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DK pos=DK - B2C [reduced_rate_condition_unattested,location_single_assertion]",
		"momsloven § 34(1)(18) as amended by L 222 (2018-19): newspapers only"},
	{"DK e-newspaper attested", Input{Seller{Country: "US"}, b2c("DK"), Supply{Kind: KindEpublication, Date: sep1, Conditions: []string{ConditionDKNewspaper}}},
		"DETERMINED OSS_B2C/non-union Z 0 DK pos=DK - B2C [location_single_assertion]",
		"momsloven § 34(1)(18) as amended by L 222 (2018-19), in force 2019-07-01"},
	{"condition attested for another country's rate is harmless", Input{Seller{Country: "DE"}, b2c("FR"), Supply{Kind: KindEpublication, Date: sep1, Conditions: []string{ConditionFRPressCPPAP}}},
		"DETERMINED DOMESTIC S 7 DE pos=DE - B2C [location_single_assertion,origin_taxation_below_threshold]",
		"Art. 59c(1) Directive 2006/112/EC; section 12(2) no. 14 UStG"},
	{"unknown condition code", Input{Seller{Country: "US"}, b2c("IT"), Supply{Kind: KindEbook, Date: sep1, Conditions: []string{"isbn"}}},
		"MANUAL_REVIEW_REQUIRED - - - - pos=- - - [supply_condition_unknown,location_single_assertion]",
		"Supply.Conditions codes (conditions.go)"},

	// Denmark: books and e-books at 25 %; the zero rate announced for 2026 has no enacted date.
	{"DK e-book on 2025-12-31", Input{Seller{Country: "US"}, b2c("DK"), Supply{Kind: KindEbook, Date: day(2025, time.December, 31)}},
		"DETERMINED OSS_B2C/non-union S 25 DK pos=DK - B2C [location_single_assertion]",
		"skat.dk: one 25 % rate (momsloven § 33)"},
	{"DK e-book on 2026-01-01", Input{Seller{Country: "US"}, b2c("DK"), Supply{Kind: KindEbook, Date: day(2026, time.January, 1)}},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - DK pos=DK - B2C [rate_unverified,location_single_assertion]",
		"Finance Bill for 2026 (2025-08-29): VAT on books to be abolished, no enacted effective date found"},

	// Corridors the rulesets do not cover, and their covered neighbours.
	{"CH seller, CH consumer", Input{Seller{Country: "CH"}, b2c("CH"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=CH - - [corridor_not_covered,location_single_assertion]",
		"Swiss VAT governs: Art. 8(1) MWSTG"},
	{"US seller, US consumer", Input{Seller{Country: "US"}, b2c("US"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=US - - [corridor_not_covered,location_single_assertion]",
		"US state sales taxes govern: South Dakota v. Wayfair, 585 U.S. 162 (2018)"},
	{"CH seller, US consumer", Input{Seller{Country: "CH"}, b2c("US"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=US - - [corridor_not_covered,location_single_assertion]",
		"US state sales taxes at the place of supply; Swiss VAT for the seller at home"},
	{"US seller, CH consumer", Input{Seller{Country: "US"}, b2c("CH"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=CH - - [corridor_not_covered,location_single_assertion]",
		"Swiss VAT: Art. 8(1) MWSTG"},
	{"CH seller, LI consumer", Input{Seller{Country: "CH"}, b2c("LI"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=LI - - [corridor_not_covered,location_single_assertion]",
		"Liechtenstein VAT (LGBl. 2009 Nr. 330), one VAT area with Switzerland"},
	{"NO seller, NO consumer", Input{Seller{Country: "NO"}, b2c("NO"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=NO - - [corridor_not_covered,location_single_assertion]",
		"merverdiavgiftsloven (LOV-2009-06-19-58)"},
	{"CA seller, CA consumer", Input{Seller{Country: "CA"}, b2c("CA"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=CA - - [corridor_not_covered,location_single_assertion]",
		"Excise Tax Act, Part IX (GST/HST)"},
	{"AU seller, AU consumer", Input{Seller{Country: "AU"}, b2c("AU"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=AU - - [corridor_not_covered,location_single_assertion]",
		"A New Tax System (Goods and Services Tax) Act 1999"},
	{"JP seller, JP consumer", Input{Seller{Country: "JP"}, b2c("JP"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=JP - - [corridor_not_covered,location_single_assertion]",
		"Consumption Tax Act (Act No. 108 of 1988)"},
	{"SG seller, SG consumer", Input{Seller{Country: "SG"}, b2c("SG"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=SG - - [corridor_not_covered,location_single_assertion]",
		"Goods and Services Tax Act 1993"},
	{"IN seller, IN consumer", Input{Seller{Country: "IN"}, b2c("IN"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=IN - - [corridor_not_covered,location_single_assertion]",
		"IGST Act 2017"},
	{"BR seller, BR consumer: generic statement", Input{Seller{Country: "BR"}, b2c("BR"), digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=BR - - [corridor_not_covered,location_single_assertion]",
		"Art. 44, 58 Directive 2006/112/EC: the place of supply is outside the EU; the law of BR governs"},
	{"US seller, Jersey consumer", Input{Seller{Country: "US"}, Buyer{Country: "GB", PostalCode: "JE2 3AB"}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=JE - - [corridor_not_covered,location_single_assertion]",
		"Art. 6(1)(e) Directive 2006/112/EC; outside UK VAT (VAT Notice 741A)"},
	{"DE seller, CH consumer: EU ruleset, outside scope", Input{Seller{Country: "DE"}, b2c("CH"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=CH VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 58 Directive 2006/112/EC; Swiss VAT may be due: Art. 8(1) MWSTG"},
	{"GB seller, CH consumer: UK ruleset, outside scope", Input{Seller{Country: "GB"}, b2c("CH"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=CH VATEX-EU-O B2C [location_single_assertion,ruleset_experimental,local_tax_not_assessed]",
		"VATA 1994 s.7A (VAT Notice 741A); Swiss VAT may be due"},
	{"US seller with an Irish establishment, US consumer: EU ruleset", Input{Seller{Country: "US", OtherEstablishments: []string{"IE"}}, b2c("US"), digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=US VATEX-EU-O B2C [location_single_assertion,local_tax_not_assessed]",
		"Art. 58 Directive 2006/112/EC: a supplier established in the EU, place of supply outside it"},
	{"CH seller, DE consumer: EU ruleset", Input{Seller{Country: "CH"}, b2c("DE"), digital},
		"DETERMINED OSS_B2C/non-union S 19 DE pos=DE - B2C [location_single_assertion]",
		"Art. 58, Art. 358a-369 Directive 2006/112/EC"},

	// Customer-location evidence (Art. 24b, 24d, 24f Implementing Regulation 282/2011).
	{"two agreeing items", Input{Seller{Country: "US"}, Buyer{Country: "DE", Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "DE", Source: EvidenceSourceCustomer, Value: "Hauptstr. 1, 10115 Berlin"},
		{Kind: EvidenceIPAddress, Country: "DE", Source: EvidenceSourceMerchant, Provider: "MaxMind GeoIP2", Value: "198.51.100.7"}}}, digital},
		"DETERMINED OSS_B2C/non-union S 19 DE pos=DE - B2C []",
		"Art. 24b(d) first subparagraph, Art. 24f(a), (b) Implementing Regulation 282/2011"},
	{"two agreeing items without a consumer country", Input{Seller{Country: "US"}, Buyer{Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty, Provider: "card issuer BIN"},
		{Kind: EvidenceSIM, Country: "FR", Source: EvidenceSourceThirdParty}}}, digital},
		"DETERMINED OSS_B2C/non-union S 20 FR pos=FR - B2C []",
		"Art. 24b(d), Art. 24f(c), (d) Implementing Regulation 282/2011"},
	{"contradicting items", Input{Seller{Country: "US"}, Buyer{Country: "DE", Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "DE", Source: EvidenceSourceCustomer},
		{Kind: EvidenceIPAddress, Country: "FR", Source: EvidenceSourceThirdParty, Provider: "MaxMind GeoIP2"}}}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=- - - [location_evidence_contradictory]",
		"Art. 24b(d) Implementing Regulation 282/2011: two items of non-contradictory evidence"},
	{"items agree, consumer country contradicts", Input{Seller{Country: "US"}, Buyer{Country: "AT", Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "DE", Source: EvidenceSourceCustomer},
		{Kind: EvidenceBank, Country: "DE", Source: EvidenceSourceThirdParty}}}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=- - - [location_evidence_contradictory]",
		"Art. 24b(d) Implementing Regulation 282/2011"},
	{"state and territory do not contradict", Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "IC", Source: EvidenceSourceCustomer},
		{Kind: EvidenceIPAddress, Country: "ES", Source: EvidenceSourceThirdParty}}}, digital},
		"DETERMINED OUTSIDE_SCOPE O - - pos=ES-CN VATEX-EU-O B2C [local_tax_not_assessed]",
		"Art. 24b(d), 24f(a), (b) Implementing Regulation 282/2011; Art. 6(1)(b) Directive 2006/112/EC"},
	{"one third-party item below EUR 100,000", Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("40000", "55000")}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty, Provider: "Stripe"}}}, digitalCounted},
		"DETERMINED OSS_B2C/union S 20 FR pos=FR - B2C []",
		"Art. 24b(d) second subparagraph Implementing Regulation 282/2011 (Implementing Regulation 2017/2459)"},
	{"one third-party item above EUR 100,000", Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("120000", "55000")}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty, Provider: "Stripe"}}}, digitalCounted},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - FR pos=FR - B2C [location_evidence_insufficient]",
		"Art. 24b(d) Implementing Regulation 282/2011: above EUR 100,000 two items"},
	{"one item, this supply takes the year from exactly EUR 100,000 over it", Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("100000", "100000.00")}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty}}}, digitalCounted},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - FR pos=FR - B2C [location_evidence_insufficient]",
		"Art. 24b(d) third subparagraph (Implementing Regulation 2017/2459): the limit exceeded during the year ends the one-item rule from that time, this supply included"},
	{"one item, totals unknown", Input{Seller{Country: "DE", OverThreshold: true}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty}}}, digital},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - FR pos=FR - B2C [location_evidence_insufficient]",
		"Art. 24b(d) Implementing Regulation 282/2011"},
	{"one item, seller outside the EU", Input{Seller{Country: "US", CrossBorder: totals("0", "0")}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidencePaymentCard, Country: "FR", Source: EvidenceSourceThirdParty}}}, digitalCounted},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - FR pos=FR - B2C [location_evidence_insufficient]",
		"Art. 24b(d) second subparagraph: suppliers established in a member state only"},
	{"one item from the customer", Input{Seller{Country: "DE", OverThreshold: true, CrossBorder: totals("1000", "1000")}, Buyer{Country: "FR", Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "FR", Source: EvidenceSourceCustomer}}}, digitalCounted},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/union - - FR pos=FR - B2C [location_evidence_insufficient]",
		"Art. 24b(d) second subparagraph: evidence provided by a person other than supplier or customer"},
	{"one item, confirmed business customer", Input{Seller{Country: "DE", CrossBorder: totals("500000", "0")}, Buyer{Country: "AT", VATNumber: "ATU13585627", Registry: confirmed("VIES", "ATU13585627"), Evidence: []Evidence{
		{Kind: EvidenceBillingAddress, Country: "AT", Source: EvidenceSourceCustomer}}}, digitalCounted},
		"DETERMINED REVERSE_CHARGE_B2B AE 0 AT pos=AT VATEX-EU-AE B2B []",
		"Art. 18(1), Art. 44 Directive 2006/112/EC and Implementing Regulation 282/2011: the confirmed number establishes the customer"},
	{"two items of the same Art. 24f point", Input{Seller{Country: "US"}, Buyer{Country: "NL", Evidence: []Evidence{
		{Kind: EvidenceBank, Country: "NL", Source: EvidenceSourceThirdParty},
		{Kind: EvidencePaymentCard, Country: "NL", Source: EvidenceSourceThirdParty}}}, digital},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - NL pos=NL - B2C [location_evidence_insufficient]",
		"Art. 24f(c): bank details and the card issuer are one item"},
	{"merchant statement is no Art. 24f item", Input{Seller{Country: "US"}, Buyer{Country: "NL", Evidence: []Evidence{
		{Kind: EvidenceMerchantAttested, Country: "NL", Source: EvidenceSourceMerchant},
		{Kind: EvidenceIPAddress, Country: "NL", Source: EvidenceSourceThirdParty}}}, digital},
		"MANUAL_REVIEW_REQUIRED OSS_B2C/non-union - - NL pos=NL - B2C [location_evidence_insufficient]",
		"Art. 24f Implementing Regulation 282/2011"},
	{"malformed item", Input{Seller{Country: "US"}, Buyer{Country: "NL", Evidence: []Evidence{
		{Kind: "geo", Country: "NL", Source: EvidenceSourceThirdParty},
		{Kind: EvidenceIPAddress, Country: "Netherlands", Source: EvidenceSourceThirdParty}}}, digital},
		"MANUAL_REVIEW_REQUIRED - - - - pos=- - - [location_evidence_invalid,location_evidence_invalid]",
		"Art. 24f Implementing Regulation 282/2011; ISO 3166-1"},
	{"consumer country alone: the merchant's single assertion", Input{Seller{Country: "US"}, b2c("NL"), digital},
		"DETERMINED OSS_B2C/non-union S 21 NL pos=NL - B2C [location_single_assertion]",
		"Art. 24b(d), 24f Implementing Regulation 282/2011 (evidence held by the merchant)"},
}

func totals(prev, cur string) *CrossBorderTotals {
	return &CrossBorderTotals{PreviousYear: decimal.RequireFromString(prev), CurrentYear: decimal.RequireFromString(cur)}
}

func TestIssueCases(t *testing.T) {
	for _, c := range issueCases {
		t.Run(c.name, func(t *testing.T) {
			got := Determine(c.in)
			if s := summary(got); s != c.want {
				t.Errorf("Determine(%s)\n got  %s\n want %s", describe(c.in), s, c.want)
				for _, r := range got.Reasons {
					t.Logf("  %s: %s", r.Code, r.Detail)
				}
			}
			checkInvariants(t, c.in, got)
			checkNewInvariants(t, c.in, got)
		})
	}
}

// checkNewInvariants: the statements this review added hold whatever the
// input.
func checkNewInvariants(t *testing.T, in Input, d Determination) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s: %s\n%s", describe(in), fmt.Sprintf(format, args...), summary(d))
	}
	codes := reasonCodes(d)
	if d.Category == CategoryOutsideScope && (d.LocalTax == nil || !strings.Contains(d.InvoiceNote, "Local tax: "+d.LocalTax.Name)) {
		fail("category O without the local-tax statement in the record and the invoice note")
	}
	if strings.Contains(codes, ReasonCorridorNotCovered) {
		if d.Status != StatusManualReview || d.Category != "" || d.Regime != "" || d.LocalTax == nil || d.InvoiceNote != "" {
			fail("a corridor not covered must be a review without regime or invoice data, naming the governing law")
		}
	}
	if d.RateCondition != nil && (!d.ChargesVAT() || !d.RateCondition.Attested) {
		fail("a rate condition on a determination that charges no conditional rate")
	}
	if ev := d.LocationEvidence; ev != nil {
		for _, it := range ev.Items {
			if it.Kind == "" {
				fail("evidence item without kind")
			}
		}
		if d.Determined() && ev.Rule != EvidenceRuleTwoItems && ev.Rule != EvidenceRuleOneItem && ev.Rule != EvidenceRuleMerchantAssertion &&
			!(ev.Rule == EvidenceRuleInsufficient && d.BuyerTreatment == TreatmentB2B) &&
			!(ev.Rule == EvidenceRuleManual && strings.Contains(codes, ReasonManualDetermination)) {
			fail("determined on evidence rule %q", ev.Rule)
		}
	}
	for _, e := range in.Buyer.Evidence {
		if e.Value != "" {
			if b, _ := json.Marshal(d); bytes.Contains(b, []byte(e.Value)) {
				fail("the determination carries the personal value %q of an evidence item", e.Value)
			}
		}
	}
}

func reasonCodes(d Determination) string {
	var cs []string
	for _, r := range d.Reasons {
		cs = append(cs, r.Code)
	}
	return strings.Join(cs, ",")
}

func describeSellerExtra(s Seller) string {
	var b strings.Builder
	if s.ReviewSpecialTerritories {
		b.WriteString(":review-territories")
	}
	if t := s.CrossBorder; t != nil {
		fmt.Fprintf(&b, ":cross-border=%s/%s", t.PreviousYear.String(), t.CurrentYear.String())
	}
	return b.String()
}

func describeBuyerExtra(by Buyer) string {
	if len(by.Evidence) == 0 {
		return ""
	}
	parts := make([]string, len(by.Evidence))
	for i, e := range by.Evidence {
		parts[i] = e.Kind + ":" + dashIfEmpty(e.Country) + ":" + e.Source
	}
	return " evidence=" + strings.Join(parts, "+")
}

// goldenExtra shows what the summary line does not: the evidence rule, the
// attested condition, the local-tax statement.
func goldenExtra(d Determination) string {
	var b strings.Builder
	if ev := d.LocationEvidence; ev != nil && ev.Rule != EvidenceRuleMerchantAssertion {
		fmt.Fprintf(&b, " evidence=%s", ev.Rule)
	}
	if c := d.RateCondition; c != nil {
		fmt.Fprintf(&b, " condition=%s", c.Code)
	}
	if lt := d.LocalTax; lt != nil {
		fmt.Fprintf(&b, " localTax=%q", lt.Name)
	}
	return b.String()
}

// writeIssueGolden adds the issue's cases to the golden table, each with
// its source.
func writeIssueGolden(t *testing.T, b *bytes.Buffer) {
	fmt.Fprintf(b, "\n# Territories, conditional rates, corridors, location evidence: input → result [extra] ‖ source.\n")
	for _, c := range issueCases {
		d := Determine(c.in)
		checkInvariants(t, c.in, d)
		fmt.Fprintf(b, "%s → %s%s ‖ %s\n", describe(c.in), summary(d), goldenExtra(d), c.cite)
	}
}
