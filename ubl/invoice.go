package ubl

import "github.com/shopspring/decimal"

// Profile selects the specification an invoice is rendered for. Its value is
// the CustomizationID (BT-24) written into the document.
type Profile string

const (
	// ProfileEN16931 is the plain European standard (CEN EN 16931-1), used for
	// consumers (B2C): no ProfileID, no buyer electronic address. Consumers are
	// not Peppol participants, so a Peppol CustomizationID would be rejected by
	// PEPPOL-EN16931-R010, "Buyer electronic address MUST be provided"
	// (https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-peppol/PEPPOL-EN16931-R010/).
	ProfileEN16931 Profile = "urn:cen.eu:en16931:2017"

	// ProfilePeppol is Peppol BIS Billing 3.0, used for business buyers (B2B).
	// It adds ProfileID (R001), both electronic addresses (R010, R020), the
	// buyer reference (R003) and the Peppol national rules of the seller's
	// country.
	ProfilePeppol Profile = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"
)

// peppolProfileID is BT-23 for Peppol BIS Billing 3.0 (PEPPOL-EN16931-R001, R007).
const peppolProfileID = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"

// Invoice is the input of RenderInvoice: everything a UBL 2.1 invoice states,
// already decided by the caller (classification, conversion to the invoice
// currency). The renderer validates it, computes the VAT breakdown and the
// document totals, and writes the XML; it decides no tax question itself.
type Invoice struct {
	Profile Profile `json:",omitzero"`

	// ID is the invoice number (BT-1), e.g. the event id "x402-…".
	ID string `json:",omitzero"`

	// IssueDate is BT-2 in the form YYYY-MM-DD (PEPPOL-EN16931-F001).
	IssueDate string `json:",omitzero"`

	// Currency is the document currency (BT-5). It must be an ISO 4217 fiat
	// currency code; "USDC" is not one and is rejected (BR-CL-04). The
	// stablecoin settlement belongs in Note.
	Currency string `json:",omitzero"`

	// Note is the single invoice note (BT-22; Peppol allows one, R002): the
	// settlement statement, see SettlementNote. Empty means no note.
	Note string `json:",omitzero"`

	// BuyerReference is BT-10, e.g. the order id. Required by Peppol (R003).
	BuyerReference string `json:",omitzero"`

	Seller Party `json:",omitzero"` // BG-4
	Buyer  Party `json:",omitzero"` // BG-7

	// Lines are the invoice lines (BG-25), at least one (BR-16).
	Lines []Line `json:",omitzero"`

	// Subtotals is the VAT breakdown (BG-23). When empty it is computed from
	// the lines: one subtotal per (category, rate) with VAT =
	// round(base × rate / 100) (see roundMoney). When given (tax-inclusive
	// pricing, where VAT = gross − net), there must be exactly one per
	// (category, rate) of the lines, its TaxableAmount must equal the sum of
	// those lines' net amounts, and its TaxAmount must be within 0.01 of
	// base × rate / 100 (stricter than the 1.00 of BR-CO-17).
	Subtotals []TaxSubtotal `json:",omitzero"`

	// PaymentMeans is BG-16, optional. For a stablecoin transfer use code
	// "ZZZ" named "USDC stablecoin transfer" with the transaction hash as
	// PaymentID (BT-82 is the code's name attribute, BT-83 the PaymentID:
	// https://docs.peppol.eu/poacc/billing/3.0/syntax/ubl-invoice/cac-PaymentMeans/;
	// code list https://docs.peppol.eu/poacc/billing/3.0/codelist/UNCL4461/).
	PaymentMeans *PaymentMeans `json:",omitzero"`

	// PaidInFull states that the amount was already paid: PrepaidAmount
	// (BT-113) = TaxInclusiveAmount and PayableAmount (BT-115) = 0.00
	// (BR-CO-16). When false, no PrepaidAmount is written and the whole
	// total is payable.
	PaidInFull bool `json:",omitzero"`

	// TaxCountry is the country whose VAT law governs the invoice: the
	// member state whose invoicing rules apply (Art. 219a VAT Directive)
	// and in whose national currency the VAT payable is stated (Art. 230),
	// or "GB" for an invoice under UK VAT law. ISO 3166-1 alpha-2 (GR, not
	// EL). Empty means no law-level checks (the behaviour before this field
	// existed); when set, the renderer also applies the invoicing rules it
	// can check (see doc.go, "Invoicing law"), each reported with a Rule*
	// identifier: the VAT in the national currency (RuleArt230), the date
	// of supply (RuleArt226_7), the customer's address on a business sale
	// (RuleArt226_5), no non-Union OSS number outside that scheme
	// (RuleArt362), and for GB the VRN and no EU VATEX codes (RuleUKReg14).
	TaxCountry string `json:",omitzero"`

	// TaxCurrency states the VAT in a second currency (BT-6, BT-111), e.g.
	// PLN for VAT due in Poland on an invoice in EUR (Art. 230, Art. 91).
	// nil means none. The renderer converts each VAT breakdown amount at
	// TaxCurrency.Rate (see doc.go, "Arithmetic") and appends the rate and
	// the converted amounts to the note (UBL-CR-490 keeps the rate out of
	// cac:TaxExchangeRate).
	TaxCurrency *TaxCurrency `json:",omitzero"`

	// SupplyDate is the date of the supply (BT-72, cac:Delivery/
	// cbc:ActualDeliveryDate), YYYY-MM-DD: the local day of the supply in
	// the taxing state (Art. 226(7)). Written whenever given.
	SupplyDate string `json:",omitzero"`

	// Period is the invoicing period (BG-14), e.g. the calendar month of a
	// summary invoice (Art. 223). nil means none.
	Period *Period `json:",omitzero"`

	// MyDATA carries the references the Greek tax authority's myDATA
	// platform returns for a Greek seller's invoice (Peppol GR-R-004,
	// GR-S-008). Required for a Greek seller (postal country GR) under
	// ProfilePeppol, not allowed for other sellers.
	MyDATA *MyDATA `json:",omitzero"`
}

// TaxCurrency is the VAT accounting currency (BT-6) with the rate that
// converts the document currency into it.
type TaxCurrency struct {
	// Code is the ISO 4217 code (BR-CL-05), different from Invoice.Currency
	// (PEPPOL-EN16931-R005), e.g. "PLN", "SEK", "GBP".
	Code string `json:",omitzero"`

	// Rate is how many units of Code one unit of the document currency is
	// worth, e.g. 4.2655 for 1 EUR = 4.2655 PLN; > 0, at most 10 decimals.
	// For a credit note it is the rate of the invoice being corrected.
	Rate decimal.Decimal `json:",omitzero"`

	// RateDate is the date of the rate, YYYY-MM-DD.
	RateDate string `json:",omitzero"`

	// RateSource names the rate and the rule that selects it, e.g. "NBP
	// average rate, table 224/A/NBP/2026 (last working day before the
	// supply, Art. 31a VAT Act)". Required.
	RateSource string `json:",omitzero"`

	// Stated is the breakdown in Code as the caller states it, one per
	// VAT subtotal in order, in place of each group's conversion at Rate:
	// a credit note crediting the running difference of what an invoice
	// stated in the national currency (its credit notes' totals then
	// telescope to the invoice's, where converting each one's own share
	// would drift a unit of 0.01 per note). Each amount is within 0.01 of
	// the converted one, and not negative; nil: converted.
	Stated []StatedAmount `json:",omitzero"`

	// Exact is, one per VAT subtotal in order, its taxable amount and VAT
	// in the document currency before they were rounded to the cent (a
	// supply's exact EUR net and VAT): each is then converted at Rate and
	// rounded once in Code, not its cents converted and rounded again,
	// which moves the figure by up to half a cent times Rate (Art. 230
	// Directive 2006/112/EC states the VAT payable in the national
	// currency; EN 16931 has no rule relating BT-111 to BT-110). Each is
	// not negative and within ExactTolerance of its subtotal's amount (a
	// credit note's cents, a running difference, are its exact share
	// rounded to within 0.02); Stated, when also given, is then within
	// 0.01 of these conversions. nil: the subtotals' cents are converted.
	Exact []StatedAmount `json:",omitzero"`
}

// StatedAmount is one VAT subtotal's taxable amount and VAT in the tax
// currency as the caller states them (TaxCurrency.Stated).
type StatedAmount struct {
	TaxableAmount decimal.Decimal `json:",omitzero"`
	TaxAmount     decimal.Decimal `json:",omitzero"`
}

// Period is a date range (BG-14 for the invoice, BG-26 for a line). At
// least one of Start and End is required (BR-CO-19, BR-CO-20); when both
// are given End is not before Start (BR-29, BR-30).
type Period struct {
	Start string `json:",omitzero"` // BT-73 / BT-134, YYYY-MM-DD
	End   string `json:",omitzero"` // BT-74 / BT-135, YYYY-MM-DD
}

// MyDATA holds what AADE's myDATA platform assigns to a Greek invoice once
// it is transmitted. Both are written as additional supporting documents
// (BG-24) with the descriptions the Peppol Greek rules look for.
type MyDATA struct {
	// MARK is the unique registration number (M.AR.K), a positive integer
	// (GR-R-004-1, GR-R-004-2).
	MARK string `json:",omitzero"`

	// URL is the address of the invoice's published copy (GR-S-008-1,
	// GR-R-008-3).
	URL string `json:",omitzero"`
}

// Party is the seller (BG-4) or the buyer (BG-7).
type Party struct {
	// Name is the legal registration name (BT-27 / BT-44), required (BR-06,
	// BR-07). For an anonymous consumer use the name given at checkout or a
	// neutral "Private customer": EN 16931 requires a buyer name (BR-07,
	// https://docs.peppol.eu/poacc/billing/3.0/rules/ubl-tc434/BR-07/) but no
	// identifier for a consumer.
	Name string `json:",omitzero"`

	// VATNumber is the VAT identifier (BT-31 / BT-48) with its country prefix
	// (ISO 3166-1 alpha-2, EL for Greece, XI for Northern Ireland; BR-CO-09).
	// It is never written on an invoice containing category O (BR-O-02..04);
	// the seller then needs LegalID (BR-CO-26).
	VATNumber string `json:",omitzero"`

	// TaxRegistrationID is the seller's tax registration identifier (BT-32),
	// written as a second PartyTaxScheme whose TaxScheme is "TAX" (not VAT).
	// Sellers only. It is where a non-EU seller's non-Union OSS number
	// ("EU" + 9 digits) goes: BR-CO-09 keeps it out of BT-31, while BR-S-02,
	// BR-Z-02 and BR-AE-02 accept BT-32 as the seller's identification.
	// It does not satisfy BR-CO-26: such a seller also needs LegalID.
	TaxRegistrationID string `json:",omitzero"`

	// LegalID is the legal registration identifier (BT-30 / BT-47), written
	// as PartyLegalEntity/CompanyID. Required for the seller when no VAT
	// identifier is written (BR-CO-26).
	LegalID string `json:",omitzero"`

	// LegalIDScheme is the optional ISO 6523 ICD of LegalID (BR-CL-11), e.g.
	// "0184" for a Danish CVR number or "0106" for a Dutch KvK number.
	LegalIDScheme string `json:",omitzero"`

	// EndpointID and EndpointScheme are the electronic address (BT-34 /
	// BT-49) and its EAS code (BR-62, BR-63). Under ProfilePeppol an empty
	// EndpointID is derived from VATNumber and EASForVATNumber (never on a
	// category-O invoice, which carries no VAT identifiers). Under
	// ProfileEN16931 they are written only when given.
	EndpointID     string `json:",omitzero"`
	EndpointScheme string `json:",omitzero"`

	// Postal address (BG-5 / BG-8). Country (BT-40 / BT-55) is required
	// (BR-08, BR-09, BR-10, BR-11); the other fields are optional unless a
	// Peppol national rule of the seller's country requires them or, with
	// Invoice.TaxCountry set, the buyer's street and town on a business
	// sale (RuleArt226_5).
	//
	// An address from a registry answer (VIES returns one free-text block)
	// goes line by line into Street, AdditionalStreet and AddressLine3,
	// with the town in City: see AddressFromRegistry.
	Street           string `json:",omitzero"` // BT-35 / BT-50
	AdditionalStreet string `json:",omitzero"` // BT-36 / BT-51
	AddressLine3     string `json:",omitzero"` // BT-162 / BT-163
	City             string `json:",omitzero"` // BT-37 / BT-52
	PostalCode       string `json:",omitzero"` // BT-38 / BT-53
	Subdivision      string `json:",omitzero"` // BT-39 / BT-54, e.g. a county, region or state
	Country          string `json:",omitzero"` // BT-40 / BT-55, ISO 3166-1 alpha-2 (BR-CL-14)

	// Contact is BG-6 / BG-9, written when any of its fields is set.
	// Peppol requires the seller's contact when seller and buyer are both
	// in Germany (DE-R-002, DE-R-005..007).
	Contact Contact `json:",omitzero"`
}

// Contact is a party's contact point (BG-6 for the seller, BG-9 for the buyer).
type Contact struct {
	Name      string `json:",omitzero"` // BT-41 / BT-56
	Telephone string `json:",omitzero"` // BT-42 / BT-57
	Email     string `json:",omitzero"` // BT-43 / BT-58
}

// Line is one invoice line (BG-25).
type Line struct {
	// ID is BT-126; empty means the line's 1-based position. IDs must be
	// unique within the document.
	ID string `json:",omitzero"`

	// Name is the item name (BT-153), required (BR-25).
	Name string `json:",omitzero"`

	// Quantity is BT-129 in unit C62 ("one"); must be > 0.
	Quantity decimal.Decimal `json:",omitzero"`

	// PriceAmount is the net unit price (BT-146), >= 0 (BR-27); it may have
	// more than 2 decimals (at most 6 here).
	PriceAmount decimal.Decimal `json:",omitzero"`

	// NetAmount is the line net amount (BT-131), >= 0, at most 2 decimals
	// (BR-DEC-23), within 0.02 of Quantity × PriceAmount
	// (PEPPOL-EN16931-R120).
	NetAmount decimal.Decimal `json:",omitzero"`

	// Category is the UNCL5305 VAT category code (BT-151): S, Z, AE or O.
	Category string `json:",omitzero"`

	// RatePercent is the VAT rate (BT-152): > 0 for S, 0 for Z and AE;
	// ignored and not written for O (BR-O-05).
	RatePercent decimal.Decimal `json:",omitzero"`

	// ExemptionCode and ExemptionReason go into the VAT breakdown of the
	// line's category (BT-121, BT-120). Only AE and O have them (BR-S-10,
	// BR-Z-10); empty values default to VATEX-EU-AE / "Reverse charge" and
	// VATEX-EU-O / "Not subject to VAT", the VATEX code list's own names.
	ExemptionCode   string `json:",omitzero"`
	ExemptionReason string `json:",omitzero"`

	// Period is the line's invoicing period (BG-26), e.g. the day of one
	// supply on a summary invoice. nil means none. Within Invoice.Period
	// when both are given (PEPPOL-EN16931-R110, R111).
	Period *Period `json:",omitzero"`
}

// TaxSubtotal is one entry of the VAT breakdown (BG-23).
type TaxSubtotal struct {
	Category        string          `json:",omitzero"` // BT-118
	RatePercent     decimal.Decimal `json:",omitzero"` // BT-119; not written for O
	TaxableAmount   decimal.Decimal `json:",omitzero"` // BT-116, 2 decimals
	TaxAmount       decimal.Decimal `json:",omitzero"` // BT-117, 2 decimals
	ExemptionCode   string          `json:",omitzero"` // BT-121
	ExemptionReason string          `json:",omitzero"` // BT-120
}

// PaymentMeans is BG-16. UNCL4461 has no code for a crypto-asset transfer;
// the renderer accepts only codes that describe one without bank-account
// data: "ZZZ" (mutually defined, the default choice), "68" (online payment
// service) and "1" (instrument not defined). Credit-transfer codes 30 and 58
// would require a bank account (BR-61) and are rejected.
type PaymentMeans struct {
	Code      string `json:",omitzero"` // BT-81
	Name      string `json:",omitzero"` // BT-82, the code's text, e.g. "USDC stablecoin transfer"
	PaymentID string `json:",omitzero"` // BT-83, e.g. the transaction hash
}

// CreditNote is the input of RenderCreditNote: a UBL CreditNote with type
// code 381 that corrects (refunds) an earlier invoice. Its ID is the credit
// note's own number; lines and amounts are positive, the document type gives
// the sign (UBL 2.1 CreditNote, type code 381 of UNCL1001; the syntax binding
// is https://docs.peppol.eu/poacc/billing/3.0/syntax/ubl-creditnote/tree/).
type CreditNote struct {
	Invoice

	// InvoiceRef is the number of the invoice being corrected (BT-25),
	// required (BR-55 requires it once BillingReference is written).
	InvoiceRef string `json:",omitzero"`

	// InvoiceIssueDate is that invoice's issue date (BT-26), YYYY-MM-DD, optional.
	InvoiceIssueDate string `json:",omitzero"`
}
