// Package vat determines the EU (and experimental UK) VAT treatment of a digital
// supply: place of supply, regime, UNCL5305 category, rate on the supply date,
// VATEX code and invoice mention, and checks the syntax and check digits of
// VAT identification numbers.
//
// It is a set of pure functions over its inputs and an embedded, generated
// rate table: no network, no clock, no global mutable state. Where a tax fact
// is not established by a source, it answers "manual review" with a
// machine-readable reason instead of guessing. It is not tax advice.
//
// # Rulesets
//
// [Determine] applies ruleset [RulesetEU] ("eu-vat-oss-2026.09") to customers in
// the EU VAT territory and to EU-established sellers whose customer is
// outside the EU and the UK, and the experimental ruleset [RulesetUK]
// ("uk-vat-2026.09") to customers in the UK VAT area (Great Britain, Northern
// Ireland for services, the Isle of Man) and to UK sellers whose customer is
// outside the EU. Where neither governs – a seller established outside the
// EU and the UK selling to a customer outside both (CH→CH, US→US, US→Canary
// Islands) – [Coverage] and Determine answer that the corridor is not
// covered (row 11). The rows follow Art. 44, 58, 59c, 196 and 358a–369k
// Directive 2006/112/EC and VAT Notice 741A; S is the seller's member
// state, B the customer's (after special territories are resolved):
//
//	1   S = B, B2C or B2B                    DOMESTIC, rate of B (Art. 58 / 44)
//	2   EU seller in one member state only,  DOMESTIC, rate of S, note "Place of
//	    within the Art. 59c threshold (see   supply: S (Art. 59c ...)" (Art. 59c(1))
//	    below), not Opted, B2C
//	3   EU seller otherwise, B2C             OSS_B2C union, rate of B
//	4   non-EU seller (UK included), B2C     OSS_B2C non-union, rate of B, no threshold
//	5/6 registry-confirmed B2B, S ≠ B        REVERSE_CHARGE_B2B, AE, 0, VATEX-EU-AE,
//	                                         "Reverse charge" (Art. 44, 196, 226(11a))
//	7   B2B claim without a confirmed number treated as B2C, with a reason
//	8   number unchecked or registry down    MANUAL_REVIEW_REQUIRED, vat_number_unverified
//	9   EU seller, customer outside the EU   OUTSIDE_SCOPE, O, no rate, VATEX-EU-O, note
//	    VAT area                             "Not subject to EU VAT – ... Local tax: <tax>,
//	                                         not assessed" (Art. 44/58), LocalTax
//	10  supply kind not covered              MANUAL_REVIEW_REQUIRED, supply_kind_not_covered
//	11  seller outside the EU and the UK,    MANUAL_REVIEW_REQUIRED, corridor_not_covered;
//	    customer outside both                LocalTax names the law that governs
//	U1/U4 UK seller, UK customer             UK_DOMESTIC, 20 % (0 % Z for e-publications)
//	U2  non-UK seller, UK consumer           UK_B2C (NETP, no threshold), 20 % / 0 %
//	U3  non-UK seller, HMRC-confirmed B2B    UK_REVERSE_CHARGE, AE, 0, "Reverse charge:
//	                                         customer to account for VAT to HMRC"
//	U5  UK seller, customer outside UK/EU    OUTSIDE_SCOPE, O (UK ruleset), LocalTax; an
//	                                         EU customer of a UK seller gets rows 4/6
//
// # Coverage
//
// [Coverage] decides, for a seller and a buyer, whether the EU ruleset, the
// UK ruleset or neither governs the supply, with the rule Determine applies
// (coverage.go): the EU ruleset for an EU place of supply or an
// EU-established seller (main or fixed establishment), the UK ruleset for a
// UK place of supply or a UK seller, otherwise [CoverageNotCovered] with the
// governing law (Swiss VAT, US sales taxes, Norwegian VAT, Canadian
// GST/HST, Australian GST, Japanese consumption tax, Singapore GST, Indian
// IGST, the local tax of a special territory, or "the indirect-tax law of"
// the country). Determine answers such a corridor with manual review
// (corridor_not_covered), never with "not subject to VAT", and without
// category, rate or invoice text, so that no production receipt can claim
// it was determined; a distinct determination status was not introduced
// because every consumer already treats a manual review as not determined.
//
// A seller with a fixed establishment in B (Seller.OtherEstablishments)
// declares B2C supplies there in B's domestic return (DOMESTIC, Art. 369b
// excludes them from the OSS); for a business customer the reverse charge
// then depends on whether that establishment intervenes (Art. 192a), which is
// a manual-review reason. A non-EU seller with an EU establishment uses the
// Union scheme. Any establishment besides the main one removes the EUR 10,000
// threshold, as does being established outside the EU.
//
// # Business customers
//
// Giving a VAT number, or Buyer.Business, is a B2B claim. It is honoured
// only with a [RegistryCheck] whose Status is "valid" for that number (Art. 18(1)
// Implementing Regulation 282/2011); the lookup is package vies. A claim
// without a number, a number the registry called invalid, or one failing its
// check digits is treated as B2C with reason b2b_claim_without_vat_number or
// vat_number_invalid. A number not looked up (Registry nil) or a registry
// that was unavailable leaves the claim open: manual review, never reverse
// charge and never 0 %. Where B2B and B2C are taxed alike (rows 1, U1/U4) an
// open claim is only a note, unless its number was issued by another state
// than the customer's attested location: confirmed, it would move the place
// of supply, so the sale is held (vat_number_country_mismatch) until the
// registry answers or a person decides. Outside the EU an unconfirmed claim
// does not lift the location-evidence review. A confirmed number of another
// state than the customer's attested location (vat_number_country_mismatch), a registry
// that confirmed a different number or cannot confirm that prefix
// (vat_number_registry_mismatch) are manual-review reasons. If the registry
// confirms a number that fails this package's check digits, the registry
// wins (note vat_number_check_digits_disagree).
//
// # Special territories
//
// Buyer.Country may name a territory (AX, IC, EA, GP, MQ, GF, RE, YT, MF, MC,
// IM, XI; [BuyerCountry] accepts exactly these and the ISO 3166-1 codes);
// a postal code given with such a code must lie in that territory. Otherwise
// Buyer.PostalCode is read for ES, FR, DE, IT, GR, FI, PT, AT, DK and GB
// (Art. 6 and 7 Directive 2006/112/EC). Outside the EU VAT territory (row 9):
// Canary Islands (35, 38), Ceuta (51), Melilla (52), Mount Athos (63086, 63087),
// Åland (22xxx), the French overseas departments and collectivities (971–978,
// 984–988), Heligoland (27498), Büsingen (78266), Livigno (23041), Campione
// d'Italia (22061), San Marino (47890–47899) and the Vatican (00120) behind
// Italian codes, Greenland (39xx) and the Faroe Islands behind Danish codes,
// Jersey (JE), Guernsey (GY) and Gibraltar (GX), which are outside UK VAT too. Treated as
// their parent: Monaco (980xx, MC) as France, the Isle of Man (IM) as the UK.
// Own rates: the Azores (95xx–99xx, 16 %), Madeira (90xx–94xx, 22 %),
// Jungholz (6691) and Mittelberg (6991–6993, 19 %). Northern Ireland (BT, XI)
// follows EU rules for goods only, so its services are UK supplies. A postal
// code of one of those countries that cannot be read, one shared by a
// territory and the mainland (23030, Livigno's Trepalle and communes of
// Sondrio), or a German code of the Austrian communes, is a manual-review
// reason. Without a postal code the
// country decides. Determination.PlaceOfSupply is the territory's ISO 3166-1
// or 3166-2 code (AX, MC, ES-CN, PT-20, GB-NIR; EA for Ceuta and Melilla
// named together) when it has one.
//
// Category O says that EU VAT does not apply, not that no tax is due: the
// determination carries a [LocalTax] statement (localtax.go), the invoice
// note ends "Local tax: <tax>, not assessed", and the note
// local_tax_not_assessed repeats it with its source: IGIC in the Canary
// Islands (Ley 20/1991), IPSI in Ceuta and Melilla (Ley 8/1991), TVA DOM in
// the French overseas departments (articles 294, 296 CGI; octroi de mer
// taxes goods only), Swiss VAT in Büsingen (Art. 3 MWSTG), ILCC in Campione
// d'Italia (Law 160/2019), none in Livigno, Heligoland and on Mount Athos,
// Finnish VAT in Åland (Act 1266/1996). With Seller.ReviewSpecialTerritories
// the account chooses manual review (special_territory_review_chosen)
// instead of category O for these territories. Two sellers are established
// in the state whose own VAT law applies to services in its territory: a
// Finnish seller's supply to a customer in Åland is domestic Finnish VAT
// (the Finnish VAT Act applies in Åland; services between Åland and
// mainland Finland are domestic supplies, the tax border concerns goods –
// Finnish Tax Administration guidance VH/1343/00.01.00/2023, Government of
// Åland; the sources agree), and a French seller's supply to a customer in
// an overseas department is manual review (territory_vat_not_determined):
// French VAT applies there at DOM rates or, in French Guiana and Mayotte,
// not at all (BOI-TVA-GEO-20-40), which this ruleset does not determine.
//
// # Supply kinds and rates
//
// digital_service and saas take the standard rate; streaming too, except
// where a reduced broadcasting rate may apply and no source settles whether
// a stream qualifies (FI: rate_unverified). ebook and epublication take the
// member state's e-book or e-press rate from the table; a rate no source
// confirms stops the determination with rate_unverified (the detail names
// the candidate rate and the source), and Ireland's e-press rate, which
// depends on the item, with rate_depends_on_item. A reduced rate that rests
// on a legal condition (conditions.go: FR 2.1 % press recognised by the
// CPPAP, IT 4 % e-books and e-press with an ISBN or ISSN, DK 0 % for
// newspapers) applies only when Supply.Conditions attests it; otherwise
// manual review, reduced_rate_condition_unattested – the standard rate is not
// guessed either – and an unknown code is supply_condition_unknown. Danish
// e-books are at 25 % until 2025-12-31; the abolition of VAT on books
// announced with the Finance Bill for 2026 has no enacted effective date in
// the sources, so from 2026-01-01 the Danish e-book rate is rate_unverified.
// A 0 % rate is category Z (BR-Z-05), never S (BR-S-05). Any other kind is
// supply_kind_not_covered.
//
// # Day of supply
//
// The rate is that of the chargeable event (Art. 63, 65 and 93 Directive
// 2006/112/EC), on the calendar day of Supply.Date in the time zone of the
// taxing territory: the customer's member state or territory with its own
// rates (Atlantic/Azores, Atlantic/Madeira, Europe/Lisbon for mainland
// Portugal, Europe/Madrid, ...) under destination taxation and reverse
// charge, the seller's member state under origin (Art. 59c) or domestic
// taxation, Europe/London under the UK ruleset, the seller's member state
// for a supply outside the EU (UTC for a seller outside the EU and the UK).
// A supply exactly at local midnight belongs to the new day: at 21:30 UTC on
// 30 June 2025 an Estonian consumer pays 24 %, at 20:30 UTC 22 %.
// Determination.SupplyDate and TimeZone record the day and the IANA zone;
// the same day is the invoice's date of supply (Art. 226(7), EN 16931
// BT-72). The zones are the IANA tz database (release in TZDataRelease),
// copied from Go's zoneinfo.zip into vat/ratedata/tzdata and embedded; the
// system's tz database is never read. [RateTable.Standard] and
// [RateTable.Reduced] still take the UTC calendar day of their argument.
//
// # Art. 59c threshold
//
// With Seller.CrossBorder (the seller's running totals, EUR exclusive of
// VAT, of the supply's calendar year in the seller's zone,
// [Seller.ThresholdYear], and of the year before) and Supply.GrossEUR, an EU
// seller established in one member state is taxed where the consumer is
// when the previous year's total exceeded EUR 10,000, when this year's total
// before the supply exceeds it, or when this supply takes it over (Art.
// 59c(1)(c), (2)): "exceed" is strictly more, so EUR 10,000.00 is still
// within. Whether a supply crosses is tested with its value exclusive of VAT
// at the origin rate, and that value is counted for it; every other supply
// counts at the rate charged. OverThreshold (already over) and
// OptedForDestination (Art. 59c(3)) still lead to destination taxation.
// Determination.Threshold records the rule, the year, the totals before and
// after, the value counted and whether the supply counts at all (only B2C
// TBE supplies to a consumer in another member state's EU VAT territory
// do) and whether it crossed. Without CrossBorder the flags decide as
// before. A negative total or a missing amount is threshold_input_invalid.
// A supply dated before CrossBorderTotals.LatestCounted that would take its
// year over, or dated before CrossedAt, is threshold_order_in_doubt: Art. 58
// applies as of the time the threshold is exceeded, and the sums do not say
// which supply that was; a person's determination of either place stands
// (rule order_decided_manually). A caller that keeps the dates says so
// (CrossBorderTotals.DatesKept): a zero date is then "none since", and
// supplies counted before the dates were kept (beyond the opening figure,
// CrossBorderTotals.Opening), which no date covers, leave a supply taking
// the year over, or made in a year they took over, in doubt too.
//
// # Registrations
//
// Seller.Registrations (nil: not stated, no check) lists the Union and
// non-Union OSS with their member state of identification, the import
// scheme, national registrations and a UK VRN. Once the place of supply and
// the regime are decided, an outcome needing a registration the list lacks
// is seller_not_registered, naming it: DOMESTIC in X a national registration
// in X (Art. 214(1)(a)); OSS_B2C the Union OSS of the member state of
// identification of Art. 369a(2), the non-Union OSS, or a national
// registration in the state of consumption; an EU seller's reverse charge a
// national registration at home (Art. 214(1)(e)); UK_DOMESTIC and UK_B2C a
// UK VRN (VATA 1994 s.3, s.4, Sch. 1A). A list contradicting Art. 369a(2) or
// 358a(1) is seller_registrations_inconsistent.
//
// # Electronic interfaces
//
// An account with Seller.ElectronicInterface (a marketplace of APIs or agent
// tools taking part in others' electronically supplied services) is
// presumed to act in its own name (Art. 9a(1) Implementing Regulation
// 282/2011): under Art. 28 Directive 2006/112/EC it is the deemed supplier,
// its own profile decides the VAT, and Determination.Supplier names it so
// with the underlying provider (Supply.Provider; missing:
// underlying_provider_missing). With Seller.Art9aRebutted (the provider is
// explicitly indicated as the supplier in contracts, invoices and
// receipts, and the interface neither authorises the charge or the delivery
// nor sets the general terms, Art. 9a(1) second and third subparagraphs)
// the provider is the supplier: underlying_provider_is_supplier, and no VAT
// is charged in the interface's name. A party that only processes payments
// does not take part in the supply (Art. 9a(3)) and is not an interface.
//
// # Rate table
//
// [Rates] returns the table generated by go generate (vat/internal/ratesgen)
// from the ibericode/vat-rates snapshot in vat/ratedata/ibericode (commit 5abb1e1b,
// sha256 c94465fa…) and vat/ratedata/corrections.json, which adds what the
// snapshot lacks or gets wrong, each row with its source: FI 13.5 % and LT
// 12 % reduced rates from 2026-01-01, AT 4.9 % from 2026-07-01, RO 9 %
// beside 11 % until 2026-07-31, SK 5 % beside 10 % before 2025, CY 3 %, MT
// 12 % and Spain's temporary food rates of 2024, the Azores 16 %,
// Jungholz and Mittelberg, every e-book and e-press rate, the UK zero rate
// for e-publications, and the legal conditions of reduced rates
// ([RateTable.Conditions]). Every source is a public citation (law,
// official page, or a public file at a pinned commit) with an https
// address; the generator rejects a source, note or coverage text that
// points at a file beside the repository. The generated file records both
// inputs' sha256; a test regenerates it and fails when it is stale.
// Version "vat-rates-2026.12.3" covers 2024-01-01 to 2026-12-31: every rate
// from 2024-01-01 was checked against its cited source as of September
// 2026 (the ES, SK, CY and MT reduced lists, the FI e-book rate, every
// 2026 change to a reduced-rate set and the CY, LV, FI and BG
// e-publication rates again in December 2026), and member states usually change rates on
// 1 January through budget laws, so a date from 2027-01-01 needs a new
// table. Outside the coverage the table answers [ErrDateNotCovered] and
// Determine answers date_outside_rate_table; the nearest
// known rate is never reused. Every charged rate carries a [RateSource] (table
// version, effective-from date, citation).
//
// A newer table need not wait for a new build: [ParseRateTable] reads a
// whole table from a table file (the format [RateTable.File] writes; the
// embedded table's file is where the next one starts), checked as the
// generated table is, every row with its public source, and
// [RateTable.Determine] and [RateTable.DetermineManually] decide on it
// (the engine: fiscal.Config.Rates; the server: -vat-rates FILE). Records
// name the version they were decided with, so a file may not reuse the
// embedded table's version for other rows.
//
// # VAT numbers
//
// [NormalizeNumber] strips separators, upper-cases and writes GR as EL; it is
// idempotent. [ValidateNumber] checks prefix, syntax and check digits for the
// EU-27, XI, GB (9 and 12 digits, GD and HA) and EU (non-Union OSS, Art. 362),
// re-implemented from python-stdnum's algorithms (number_checks.go) and
// tested on its vectors. A valid number is well formed, not necessarily
// registered. [QualifyNumber] reads a number given without its prefix under
// the customer's attested country (EL for Greece, XI for Northern Ireland,
// GB for the UK; Art. 215); without a country, or under a territory's code,
// it supplies none. Determine reads the buyer's number so and notes it
// (vat_number_prefix_supplied).
//
// # Location evidence
//
// Buyer.Evidence lists items of location evidence (Art. 24f Implementing
// Regulation 282/2011: billing_address, ip_address, bank, payment_card,
// sim, fixed_line, other; merchant_attested is recorded but is no Art. 24f
// item), each with its country and source (third_party, merchant,
// customer). Two non-contradictory items of different Art. 24f points
// settle the location (Art. 24b(d)); one third-party item of points (a)–(e)
// suffices for a seller established in a member state while
// Seller.CrossBorder shows its cross-border TBE supplies within EUR 100,000
// in the current and the preceding year, this supply included (Art. 24b(d)
// second and third subparagraphs, added by Implementing Regulation
// 2017/2459: the supply that exceeds the limit needs two items); items that contradict each
// other or Buyer.Country are location_evidence_contradictory, too few items
// location_evidence_insufficient (not for a registry-confirmed business),
// a malformed item location_evidence_invalid naming buyer.evidence[i]. An
// item naming a state does not contradict one naming a special territory
// of it; the territory is settled. A territory with an ISO 3166-1 code of
// its own that a parent's postal code names (JE, GG, GI, SM, VA, GL, FO,
// BL, PM, TF, WF, PF, NC) is the same place as an item giving that code. Without items, Buyer.Country alone
// decides as today, and the note location_single_assertion says that the
// location rests on the merchant's single assertion. The assessment is
// Determination.LocationEvidence: the rule applied, the settled location and
// the items without their values (an IP address or a billing address is
// personal data: the caller keeps it on its record and puts only a keyed
// hash of it in a receipt).
//
// # Manual determinations
//
// A supply the rules left to review is resolved either by correcting its
// facts (the customer's country, the B2B claim with a VAT number and its
// registry check, items of location evidence) and running Determine again,
// or by a person's decision: [DetermineManually] takes the Input and a
// [Manual] (regime, taxing country, rate as a decimal string, reason,
// person) and returns a Determination written exactly as Determine writes
// that regime (manual.go reuses its steps): category S, Z for 0 %, AE or
// O, the rate's kind and source from the table, the Union or non-Union
// scheme, the day of supply in the taxing territory's zone, the Art. 59c
// section, the registration check, the Art. 9a section and the evidence
// assessment (rule manual_determination where the items did not settle
// the place), plus the note manual_determination quoting the person and
// the reason. The reason stays in that note; the legal basis only ends
// "determined manually", because invoices and receipts carry it.
//
// A person decides what the facts leave open: which of contradicting items
// is right, whether a fixed establishment intervenes (Art. 192a), that an
// open B2B claim is a consumer, a rate the table does not vouch for, a
// special territory the account chose to review. A choice the facts or the
// law contradict is refused with a *[ManualError] {code, field, fact,
// detail} wrapping [ErrManualRefused]; field is a JSON pointer into the
// resolution ("/determination/ratePercent"), or "/determination" when a
// fact must be corrected first. Refused, among others: an unknown regime;
// a taxing country that is missing, unknown, or outside the regime's area
// (an EU member state for DOMESTIC, OSS_B2C and REVERSE_CHARGE_B2B, GB for
// the UK regimes, none for OUTSIDE_SCOPE); a rate missing where VAT is
// charged, given where it is not, or not a rate of the table for the place
// (a territory with own rates by its own) on the local day – standard,
// reduced, or the supply kind's own rate, a conditional one only with its
// condition attested – the error listing those that are; a place of supply
// no fact of the record names, or in a territory outside the VAT area;
// OSS_B2C for a registry-confirmed business, in the seller's own state or
// one where it has a fixed establishment (Art. 369a point 1, 369b), for a
// seller within the Art. 59c threshold (its flags or totals), or for an
// unknown seller; REVERSE_CHARGE_B2B or UK_REVERSE_CHARGE for a consumer,
// without a VAT number of the taxing state a registry confirmed (Art.
// 18(1) Implementing Regulation 282/2011; Art. 214(1)(d), 226(4)), or in
// the seller's own state (Art. 196); DOMESTIC in a state that is neither
// the seller's, one of its establishments, nor where the facts place the
// customer, at origin for a business, a seller established twice or over
// the threshold (Art. 59c), or in the customer's state for a business the
// seller supplies from abroad (Art. 196) or for a consumer of a seller
// within the Art. 59c threshold, as for OSS_B2C; OUTSIDE_SCOPE for a corridor
// neither ruleset covers, Åland by a Finnish seller or Guadeloupe,
// Martinique and Réunion by a French one; UK_DOMESTIC for a seller
// belonging outside the UK and the other UK regimes for one belonging in
// it (VATA 1994 s.8, s.9); an outcome needing a registration
// Seller.Registrations lacks; a supply kind not covered, a missing or
// uncovered date, an interface that rebutted Art. 9a; a reason longer than
// MaxManualReasonLength (1,000) or an identifier longer than
// MaxManualDecidedByLength (128) characters, either empty, not UTF-8 or
// with control or format characters. Every determination Determine makes
// is accepted when repeated manually, with the same result but for the
// note and the last clause of the legal basis (a test checks it on every
// golden input).
//
// # Errors
//
// Determine returns no error: every problem is a [Reason] in a determination
// with Status [StatusManualReview] (see the Reason constants; each says
// whether it blocks or is a note). [ValidateNumber] returns a
// *[NumberError] whose Reason is one of [InvalidPrefix], [InvalidFormat],
// [InvalidLength], [InvalidChecksum] or [InvalidComponent] and which wraps
// [ErrInvalidNumber]. The rate table wraps [ErrCountryNotCovered] and
// [ErrDateNotCovered]. A registry that was unavailable is never reported as an
// invalid number. [DetermineManually] returns a *[ManualError] wrapping
// [ErrManualRefused]; its Code is one of the Manual constants or the Reason
// code of the check that refused (seller_not_registered,
// date_outside_rate_table, vat_number_unverified, ...).
//
// # Determinism
//
// The same Input gives the same Determination, byte for byte in JSON: no map
// order, clock, randomness or system time-zone database reaches the output;
// reasons come in a fixed order (manual-review reasons first, then notes).
// A supply's value exclusive of VAT is rounded to 10 decimal places,
// independently of decimal.DivisionPrecision.
//
// # Wire format
//
// A Determination marshals to the JSON object the fiscal record embeds as
// "classification": status, reasons [{code, detail}], ruleset, jurisdiction,
// regime, ossScheme, taxCategoryCode, ratePercent, taxingCountry,
// placeOfSupply, territory, vatex, exemptionReason, invoiceNote, legalBasis,
// buyerTreatment, rateKind, rateSource {table, effectiveFrom, source},
// supplyDate ("2025-07-01"), timeZone ("Europe/Tallinn"), threshold {rule,
// year, limit, previousYear, totalBefore, counts, counted, totalAfter,
// crossed, legalBasis} with amounts as decimal strings, supplier {role,
// underlyingProvider {name, country, vatNumber}, legalBasis},
// rateCondition {code, description, source, attested}, localTax {name,
// territory, authority, note, source}, locationEvidence {rule, country,
// items [{index, kind, country, source, provider, article, agrees,
// personal}], basis}; empty fields are omitted. [CorridorCoverage]
// marshals to {status, ruleset, jurisdiction, placeOfSupply, governing,
// reasons}. A [Manual] reads from {regime, taxingCountry, ratePercent (a
// decimal string), reason, decidedBy}, a [ManualError] marshals to
// {code, field, fact, detail}. ratePercent is a JSON number written from the decimal
// string ([Percent]), absent for category O. Greece is GR in country fields
// (ISO 3166-1) and EL only as a VAT-number prefix. With a manual review the
// invoice fields (category, rate, VATEX, texts, rate source, rate
// condition) are empty; the other fields hold what was determined, as hints
// for the reviewer.
//
// # Not modelled
//
// The caller supplies the customer's country or its items of location
// evidence, the Art. 59c totals and the Art. 24b(d) totals from its
// ledger, deciding supplies of one seller in append order; intra-EU
// distance sales of goods count only through those totals. The threshold
// is compared in EUR: the national-currency equivalent a non-euro member
// state applies (Art. 59c(1)(c), (5)) is not held. Without
// Seller.Registrations the seller is assumed VAT-registered where it
// charges VAT; there is no small-business exemption and no UK registration
// threshold. The seller is assumed established in the mainland of its
// country. Use-and-enjoyment overrides (Art. 59a), Corsica's special
// rates, the rebuttal of presumptions with three items (Art. 24d), the
// place-of-supply presumptions for fixed lines, SIM cards and decoders
// (Art. 24a, 24b(a)–(c)) and the UK's evidence rules beyond two items are
// not modelled. Taxes outside the EU and UK VAT rulesets (IGIC, IPSI, TVA
// DOM, ILCC, Swiss VAT, US sales taxes, ...) are named, never assessed: no
// rate or amount of them is computed.
package vat
