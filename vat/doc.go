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
// the EU VAT territory and to everything outside the EU and the UK, and the
// experimental ruleset [RulesetUK] ("uk-vat-2026.09") to customers in the UK
// VAT area (Great Britain, Northern Ireland for services, the Isle of Man) and
// to UK sellers whose customer is outside the EU. The rows are those of
// shared/research/vat.md section 7; S is the seller's member state, B the
// customer's (after special territories are resolved):
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
//	9   customer outside the EU VAT area     OUTSIDE_SCOPE, O, no rate, VATEX-EU-O, note
//	                                         "Not subject to EU VAT – ..." (Art. 44/58)
//	10  supply kind not covered              MANUAL_REVIEW_REQUIRED, supply_kind_not_covered
//	U1/U4 UK seller, UK customer             UK_DOMESTIC, 20 % (0 % Z for e-publications)
//	U2  non-UK seller, UK consumer           UK_B2C (NETP, no threshold), 20 % / 0 %
//	U3  non-UK seller, HMRC-confirmed B2B    UK_REVERSE_CHARGE, AE, 0, "Reverse charge:
//	                                         customer to account for VAT to HMRC"
//	U5  UK seller, customer outside UK/EU    OUTSIDE_SCOPE, O (UK ruleset); an EU
//	                                         customer of a UK seller gets rows 4/6
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
// open claim is only a note. A confirmed number of another state than the
// customer's attested location (vat_number_country_mismatch), a registry
// that confirmed a different number or cannot confirm that prefix
// (vat_number_registry_mismatch) are manual-review reasons. If the registry
// confirms a number that fails this package's check digits, the registry
// wins (note vat_number_check_digits_disagree).
//
// # Special territories
//
// Buyer.Country may name a territory (AX, IC, EA, GP, MQ, GF, RE, YT, MF, MC,
// IM, XI); otherwise Buyer.PostalCode is read for ES, FR, DE, IT, GR, FI, PT,
// AT, DK and GB (research section 1.4). Outside the EU VAT territory (row 9):
// Canary Islands (35, 38), Ceuta (51), Melilla (52), Mount Athos (63086),
// Åland (22xxx), the French overseas departments and collectivities (971–978,
// 984–988), Heligoland (27498), Büsingen (78266), Livigno (23041), Campione
// d'Italia (22061), San Marino (47890–47899) and the Vatican (00120) behind
// Italian codes, Greenland (39xx) and the Faroe Islands behind Danish codes,
// Jersey (JE) and Guernsey (GY), which are outside UK VAT too. Treated as
// their parent: Monaco (980xx, MC) as France, the Isle of Man (IM) as the UK.
// Own rates: the Azores (95xx–99xx, 16 %), Madeira (90xx–94xx, 22 %),
// Jungholz (6691) and Mittelberg (6991–6993, 19 %). Northern Ireland (BT, XI)
// follows EU rules for goods only, so its services are UK supplies. A postal
// code of one of those countries that cannot be read, or a German code of the
// Austrian communes, is a manual-review reason. Without a postal code the
// country decides. Determination.PlaceOfSupply is the territory's ISO 3166-1
// or 3166-2 code (AX, MC, ES-CN, PT-20, GB-NIR) when it has one.
//
// # Supply kinds and rates
//
// digital_service and saas take the standard rate; streaming too, except
// where a reduced broadcasting rate may apply and the research could not
// settle it (FI: rate_unverified). ebook and epublication take the member
// state's e-book or e-press rate from the table; a rate the research marked
// [verify] stops the determination with rate_unverified (the detail names the
// candidate rate and the source), and Ireland's e-press rate, which depends
// on the item, with rate_depends_on_item. A 0 % rate is category Z (BR-Z-05),
// never S (BR-S-05). Any other kind is supply_kind_not_covered.
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
// 12 % reduced rates from 2026-01-01, the Azores 16 %, Jungholz and
// Mittelberg, every e-book and e-press rate, the UK zero rate for
// e-publications. The generated file records both inputs' sha256; a test
// regenerates it and fails when it is stale. Version "vat-rates-2026.09.1"
// covers 2024-01-01 to 2026-12-31: the research checked every rate from
// 2024-01-01 and knows the law as of September 2026, and member states
// usually change rates on 1 January through budget laws, so a date from
// 2027-01-01 needs a new table. Outside the coverage the table answers
// [ErrDateNotCovered] and Determine answers date_outside_rate_table; the nearest
// known rate is never reused. Every charged rate carries a [RateSource] (table
// version, effective-from date, citation).
//
// # VAT numbers
//
// [NormalizeNumber] strips separators, upper-cases and writes GR as EL; it is
// idempotent. [ValidateNumber] checks prefix, syntax and check digits for the
// EU-27, XI, GB (9 and 12 digits, GD and HA) and EU (non-Union OSS, Art. 362),
// re-implemented from research section 4 and tested on all of its vectors. A
// valid number is well formed, not necessarily registered.
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
// invalid number.
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
// underlyingProvider {name, country, vatNumber}, legalBasis}; empty fields
// are omitted. ratePercent is a JSON number written from the decimal
// string ([Percent]), absent for category O. Greece is GR in country fields
// (ISO 3166-1) and EL only as a VAT-number prefix. With a manual review the
// invoice fields (category, rate, VATEX, texts, rate source) are empty; the
// other fields hold what was determined, as hints for the reviewer.
//
// # Not modelled
//
// The caller supplies the customer's country from its location evidence
// (Art. 24b, 24f Implementing Regulation 282/2011) and the Art. 59c totals
// from its ledger, deciding supplies of one seller in append order; intra-EU
// distance sales of goods count only through those totals. The threshold is
// compared in EUR: the national-currency equivalent a non-euro member state
// applies (Art. 59c(1)(c), (5)) is not held. Without Seller.Registrations the
// seller is assumed VAT-registered where it charges VAT; there is no
// small-business exemption and no UK registration threshold. The seller is
// assumed established in the mainland of its country. Use-and-enjoyment
// overrides (Art. 59a), Corsica's special rates and the IGIC or other non-EU
// taxes are not modelled; for category O the note local_tax_not_assessed
// says so.
package vat
