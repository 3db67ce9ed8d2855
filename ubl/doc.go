// Package ubl renders deterministic UBL 2.1 invoices and credit notes that
// conform to EN 16931 (and to Peppol BIS Billing 3.0 for business buyers).
//
// The input is an [Invoice] (or a [CreditNote] that refunds one) in which
// every tax decision is already taken: VAT category and rate per line, the
// amounts in the invoice currency. The package decides no tax question. It
// validates the input against the rules the official validation artefacts
// apply, computes the VAT breakdown and the document totals, and writes the
// XML with a direct writer (xmlwriter.go) that appends escaped text to one
// buffer; its output is byte-identical to the etree renderer it replaced
// and about 3× faster. What it writes passes the OASIS UBL 2.1
// schemas, the CEN EN 16931 schematron 1.3.16 and, for [ProfilePeppol],
// Peppol BIS Billing 3.0.21, with no fatal finding and no warning; what
// would not pass is rejected before anything is written.
//
// # Profiles
//
// [ProfileEN16931] is for consumers (B2C): CustomizationID
// urn:cen.eu:en16931:2017, no ProfileID, and no buyer electronic address,
// since consumers are not Peppol participants (PEPPOL-EN16931-R010 would
// reject the Peppol form). [ProfilePeppol] is for business buyers (B2B): the
// Peppol CustomizationID and ProfileID, both electronic addresses (R010,
// R020), a buyer reference (R003), and the Peppol national rules of the
// parties' countries.
//
// # Currency and settlement
//
// The document currency must be an ISO 4217 fiat currency, EUR for this
// product; USDC is in no ISO 4217 list (BR-CL-04). A stablecoin settlement
// is stated in the single note (BT-22, Peppol R002), see [SettlementNote]:
// amount, network, transaction hash, and the exchange rate with its date and
// source. A paid invoice has PrepaidAmount = TaxInclusiveAmount and
// PayableAmount = 0.00 (BR-CO-16). Payment means (BG-16) are optional; UNCL4461
// has no crypto-asset code, so only ZZZ, 68 and 1 are accepted, named e.g.
// "USDC stablecoin transfer", with the transaction hash as payment id.
//
// # VAT categories
//
// Lines carry one of the UNCL5305 categories S (standard rate), Z (zero
// rate), AE (reverse charge) or O (not subject to VAT); E, K, G, L, M and B
// are valid codes that this renderer does not produce and are rejected with
// [ErrUnsupported].
//
//   - S: rate > 0; the seller's VAT identifier is required (BR-S-02).
//   - Z: rate 0, no exemption reason (BR-Z-10).
//   - AE: rate 0; the breakdown states VATEX-EU-AE and "Reverse charge"
//     unless the caller gives its own text (BR-AE-10); seller VAT identifier
//     and buyer VAT or legal identifier are required (BR-AE-02).
//   - O: no rate (BR-O-05), VATEX-EU-O and "Not subject to VAT"; no other
//     category in the same invoice (BR-O-11..14); no VAT identifier is
//     written (BR-O-02..04) and none is turned into an electronic address,
//     so the seller needs a legal registration identifier (BR-CO-26) and a
//     Peppol O invoice needs explicit endpoints.
//
// # Arithmetic
//
// Amounts are [decimal.Decimal], never floats. Line net amounts and caller
// subtotals have at most 2 decimals (BR-DEC-*); unit prices and quantities
// at most 6; rates at most 4. Without caller subtotals the VAT of each
// (category, rate) group is round(Σ net × rate / 100), rounded once, half
// away from zero, in roundMoney, the package's only rounding. Totals are
// sums of those rounded values and satisfy BR-CO-10 … BR-CO-16 exactly.
// With caller subtotals (tax-inclusive prices: VAT = gross − net), each
// group needs exactly one, its base must equal the lines' sum, and its VAT
// must be within 0.01 of base × rate (stricter than BR-CO-17's 1.00) and 0
// for Z, AE and O. A line's net amount must be within 0.02 of quantity ×
// price (PEPPOL-EN16931-R120) under both profiles. All amounts are >= 0 (a
// credit note's type code gives the sign) and below 10^15.
//
// # Electronic addresses
//
// Under [ProfilePeppol] a party without EndpointID gets its VAT number under
// the Peppol EAS code of the VAT prefix ([EASForVATNumber]; e.g. 9930 for
// DE, 9935 for IE, 0211 for IT). DK, FI and SE have no such code in Peppol
// 3.0.21, and category-O invoices derive none: those parties must give
// EndpointID and EndpointScheme. Schemes must be in the profile's EAS list
// (BR-CL-25; Peppol CL008 also excludes EM), legal-identifier schemes in the
// ISO 6523 ICD list (BR-CL-11), and identifiers of schemes with a Peppol
// syntax rule (PEPPOL-COMMON-R040..R057: GLN, KvK, P.IVA, Swedish and
// Norwegian organisation numbers, ...) must pass it, under both profiles.
//
// # Peppol national rules
//
// Under [ProfilePeppol] the renderer applies the national rules of Peppol
// 3.0.21 that can fire on its output: DE (both parties in Germany: payment
// means, seller contact with name, telephone and e-mail, seller and buyer
// city and post code; category O impossible), NL (addresses, KvK/OIN legal
// ids, payment means), DK (CVR with scheme 0184; payment means code 1 only
// between Danish parties), IT, IS, NO, SE. Greek sellers are rejected with
// [ErrUnsupported]: GR-R-001 and GR-R-004 require a myDATA invoice number and
// M.AR.K that this product does not obtain.
//
// # Errors
//
// RenderInvoice, RenderCreditNote, [Invoice.Totals] and [SettlementNote]
// return a *[ValidationError] listing every problem, in a fixed order, and
// no XML. Each problem is a *[FieldError] with the input field
// ("Lines[2].NetAmount"), the EN 16931 or Peppol rule it would break
// ("BR-DEC-23"; empty for the renderer's own limits) and one sentinel:
// [ErrRequired], [ErrFormat], [ErrCode], [ErrDecimals], [ErrRange],
// [ErrMismatch], [ErrForbidden], [ErrXMLChar] or [ErrUnsupported]. Branch
// with errors.Is and errors.As, never on the message. Text containing
// invalid UTF-8 or a character XML 1.0 forbids (controls other than TAB, LF,
// CR; U+FFFE, U+FFFF; lone surrogates) is rejected with [ErrXMLChar] naming
// the field, never dropped or replaced. Cross-field rules run only once every
// value is sound, so one mistake does not produce a cascade of follow-on
// errors.
//
// # Determinism
//
// The output depends on the input only: no clock, no randomness, no map
// iteration. Equal inputs give byte-identical output, also when rendered
// concurrently. The VAT breakdown lists groups in the order they first
// occur in the lines, whatever the order of caller subtotals.
//
// # Wire format
//
// UTF-8 with the declaration <?xml version="1.0" encoding="UTF-8"?>, the
// default namespace of the UBL Invoice-2 or CreditNote-2 document, prefixes
// cac and cbc, elements in the order of the UBL 2.1 XSD, two-space
// indentation, LF line ends and a final newline. Text escapes &, < and > (and
// CR as &#xD; so it survives parsing); attributes escape &, <, " and TAB,
// LF, CR. Amounts have exactly 2 decimals with currencyID = the document
// currency; rates, quantities and prices are written without trailing
// zeros (prices with at least 2 decimals). Invoice type code 380, credit
// note 381 with BillingReference to the corrected invoice.
//
// # Conformance
//
// The code lists (currencies, countries, VAT prefixes, ICD, EAS) are
// generated from the compiled artefacts by ./internal/gencodelists (go
// generate), and a test compares them when EN16931_XSLT and PEPPOL_XSLT are
// set. The goldens under testdata/golden (rewritten with go test -update)
// and a seeded random sample are run through testdata/conformance/validate-ubl:
// the XSD layer always, the CEN and Peppol layers when those variables point
// at the compiled schematron.
package ubl
