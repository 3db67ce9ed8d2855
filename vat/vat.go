package vat

import (
	"time"

	"github.com/shopspring/decimal"
)

// Ruleset versions. A determination names the ruleset it was made under;
// the rules of a version never change, a correction makes a new version.
const (
	RulesetEU = "eu-vat-oss-2026.09"
	RulesetUK = "uk-vat-2026.09" // experimental (the jurisdictions of GET /v1/capabilities)
)

// Jurisdictions (as GET /v1/capabilities lists them).
const (
	JurisdictionEU = "eu-vat"
	JurisdictionUK = "uk-vat"
)

// Determination statuses.
const (
	StatusDetermined   = "DETERMINED"
	StatusManualReview = "MANUAL_REVIEW_REQUIRED"
)

// Regimes (Determination.Regime, JSON values).
const (
	RegimeOSSB2C           = "OSS_B2C"            // Art. 58 destination VAT, declared through the Union or non-Union OSS
	RegimeDomestic         = "DOMESTIC"           // VAT of the seller's own member state (or of a member state where it is established)
	RegimeReverseChargeB2B = "REVERSE_CHARGE_B2B" // Art. 44 + 196: the customer accounts for the VAT
	RegimeOutsideScope     = "OUTSIDE_SCOPE"      // place of supply outside the EU (or, under the UK ruleset, outside the UK)
	RegimeUKDomestic       = "UK_DOMESTIC"        // UK-established seller, UK customer
	RegimeUKB2C            = "UK_B2C"             // non-established taxable person (NETP) selling to a UK consumer
	RegimeUKReverseCharge  = "UK_REVERSE_CHARGE"  // overseas seller, UK business customer (VATA 1994 s.8)
)

// OSS schemes (Determination.Scheme, only with RegimeOSSB2C).
const (
	SchemeUnion    = "union"     // Art. 369a–369k: seller established in the EU
	SchemeNonUnion = "non-union" // Art. 358a–369: seller not established in the EU
)

// UNCL5305 duty or tax category codes used by the rulesets (EN 16931 BT-151).
const (
	CategoryStandard      = "S"  // standard or reduced rate > 0 (BR-S-05)
	CategoryZero          = "Z"  // zero rate (BR-Z-05)
	CategoryReverseCharge = "AE" // VAT reverse charge (BR-AE-05: rate 0)
	CategoryOutsideScope  = "O"  // services outside scope of tax (BR-O-05: no rate)
)

// VATEX exemption reason codes (CEF VATEX code list, EN 16931 BT-121).
const (
	VATEXReverseCharge = "VATEX-EU-AE"
	VATEXOutsideScope  = "VATEX-EU-O"
)

// Supply kinds (Supply.Kind). All are electronically supplied services
// (Art. 58, Annex II Directive 2006/112/EC; Art. 7 and Annex I of
// Implementing Regulation 282/2011). Any other kind is a manual-review
// reason: the place-of-supply rules for other services differ.
const (
	// KindDigitalService: an electronically supplied service (Annex II) at
	// the standard rate.
	KindDigitalService = "digital_service"
	// KindSaaS: software and its updates supplied electronically, hosting,
	// remote maintenance (Annex II points 1 and 2), standard rate.
	KindSaaS = "saas"
	// KindStreaming: on-demand streaming of music, films, games or
	// broadcasts (Annex II point 4), standard rate. Where a member state
	// applies a reduced rate to broadcasting (Annex III point 8) and no
	// source settles whether a stream qualifies (FI), the determination is
	// manual review.
	KindStreaming = "streaming"
	// KindEbook: electronically supplied books (Annex III point 6, as
	// amended by Directive 2018/1713): the member state's e-book rate.
	KindEbook = "ebook"
	// KindEpublication: electronically supplied newspapers and periodicals
	// (Annex III point 6): the member state's e-press rate.
	KindEpublication = "epublication"
)

// Buyer treatments (Determination.BuyerTreatment).
const (
	TreatmentB2C = "B2C"
	TreatmentB2B = "B2B"
)

// Rate kinds (Determination.RateKind): the rate type of the OSS return.
const (
	RateKindStandard = "standard"
	RateKindReduced  = "reduced"
	RateKindZero     = "zero"
)

// Registries and registry statuses (RegistryCheck).
const (
	RegistryVIES = "VIES"
	RegistryHMRC = "HMRC"

	RegistryValid       = "valid"
	RegistryInvalid     = "invalid"
	RegistryUnavailable = "unavailable"
)

// Seller is the merchant's VAT profile (account data tied to the ingest key,
// never a field of the settlement request).
type Seller struct {
	// Country is the ISO 3166-1 alpha-2 code of the seller's place of
	// establishment (GB for the United Kingdom; EL is accepted for Greece,
	// XI and IM are read as GB, MC as FR). Empty: manual review.
	Country string
	// OtherEstablishments lists further EU member states where the seller
	// has a fixed establishment. Any entry removes the Art. 59c threshold.
	OtherEstablishments []string
	// VATNumber is informational; the ruleset does not depend on it.
	VATNumber string
	// OverThreshold: the seller's cross-border B2C TBE supplies plus
	// intra-EU distance sales of goods exceeded EUR 10,000 (excluding VAT)
	// in this or the previous calendar year (Art. 59c(1)(c)): "already
	// over", also when CrossBorder is given (say, an opening statement).
	// Otherwise the threshold is decided from CrossBorder, or, without it,
	// the seller is taken to be within it.
	OverThreshold bool
	// OptedForDestination: the seller opted for destination taxation
	// (Art. 59c(3), binding for at least two calendar years). Same effect
	// as OverThreshold.
	OptedForDestination bool

	// CrossBorder holds the seller's running totals (EUR, exclusive of
	// VAT) of cross-border B2C supplies of telecommunications, broadcasting
	// and electronically supplied services, for the calendar year of the
	// supply in the seller's time zone (ThresholdYear) and the year before,
	// from the caller's ledger plus any opening figure. It serves two
	// limits: the EUR 10,000 threshold of Art. 59c Directive 2006/112/EC
	// (when OverThreshold and OptedForDestination are false, threshold.go,
	// with Supply.GrossEUR) and the EUR 100,000 limit of Art. 24b(d) second
	// subparagraph Implementing Regulation 282/2011, below which one item of
	// location evidence suffices (evidence.go). nil: unknown; the flags
	// decide the threshold and two items of evidence are needed.
	CrossBorder *CrossBorderTotals
	// Registrations lists where the seller is identified for VAT
	// (registration.go). nil: not stated, no check; non-nil: an outcome
	// needing a registration not listed is a manual review.
	Registrations []Registration
	// ElectronicInterface: the account is an electronic interface (a
	// marketplace of APIs or agent tools) taking part in others'
	// electronically supplied services; it is presumed to be the supplier
	// (Art. 9a(1) Implementing Regulation 282/2011, interface.go).
	ElectronicInterface bool
	// Art9aRebutted: the account attests the conditions of Art. 9a(1)
	// second subparagraph and that it neither authorises the charge or the
	// delivery nor sets the general terms (third subparagraph), so the
	// underlying provider is the supplier. Only read with
	// ElectronicInterface.
	Art9aRebutted bool

	// ReviewSpecialTerritories: the account chooses manual review
	// (special_territory_review_chosen) instead of category O for a
	// customer in a special territory outside the EU VAT area (Canary
	// Islands, Ceuta, Melilla, the French overseas departments, Büsingen,
	// Campione, Livigno, Heligoland, Mount Athos, Åland, ...).
	ReviewSpecialTerritories bool
}

// Buyer is what the merchant attests about the customer.
type Buyer struct {
	// Country is the ISO 3166-1 alpha-2 code where the customer is
	// established or usually resides, as established by the merchant's
	// location evidence (Art. 24b and 24f Implementing Regulation 282/2011).
	// EL and GR are Greece; XI is Northern Ireland; UK is read as GB;
	// AX, IC, EA, GP, MQ, GF, RE, YT, MF name special territories; MC and
	// IM are Monaco and the Isle of Man. Empty: manual review.
	Country string
	// PostalCode is optional; it reveals special territories (Art. 6 and 7
	// Directive 2006/112/EC, territory.go). Without it the country decides.
	PostalCode string
	// Business: the customer claims to be a taxable person (B2B).
	Business bool
	// VATNumber is the number the customer gave, optional. Giving a number
	// is a B2B claim (Art. 18(1) Implementing Regulation 282/2011).
	VATNumber string
	// Registry is the registry's answer about VATNumber, nil when no lookup
	// was made. The lookup itself is package vies.
	Registry *RegistryCheck

	// --- location evidence (evidence.go) ---

	// Evidence lists the items of location evidence (Art. 24f Implementing
	// Regulation 282/2011) the merchant holds. Empty: the location rests on
	// Country alone, the merchant's single assertion (a note says so).
	Evidence []Evidence
}

// RegistryCheck is a registry's answer about a VAT number, the proof that
// Art. 18(1) Implementing Regulation 282/2011 asks for.
type RegistryCheck struct {
	Status            string    // RegistryValid, RegistryInvalid or RegistryUnavailable
	Registry          string    // RegistryVIES or RegistryHMRC
	Number            string    // normalised number that was checked, with prefix
	CheckedAt         time.Time // when the registry answered
	RequestIdentifier string    // VIES requestIdentifier or HMRC consultationNumber
	Name, Address     string    // as the registry returned them
	Fault             string    // fault code when unavailable
}

// Supply is what was sold and when.
type Supply struct {
	Kind string // one of the Kind constants
	// Date is the chargeable event (Art. 63, 65 Directive 2006/112/EC); its
	// calendar day in the taxing territory's time zone selects the rate
	// (localday.go).
	Date time.Time
	// GrossEUR is the amount paid, VAT included, in EUR at full precision;
	// needed only with Seller.CrossBorder, to count the supply's value
	// exclusive of VAT toward the Art. 59c threshold.
	GrossEUR decimal.Decimal
	// Provider names the underlying provider when the seller is an
	// electronic interface (Seller.ElectronicInterface).
	Provider *Provider
	// Conditions lists the legal conditions of reduced rates the request or
	// the account attests for this supply (the Condition constants,
	// conditions.go); a conditional rate applies only when attested.
	Conditions []string
}

// Input is everything a determination depends on.
type Input struct {
	Seller Seller
	Buyer  Buyer
	Supply Supply
}

// Reason explains a manual review, or notes something about a determined
// result (for instance a B2B claim treated as B2C).
type Reason struct {
	Code   string `json:"code"`   // stable snake_case code; see the Reason constants
	Detail string `json:"detail"` // one human sentence
}

// Reason codes. Those marked "review" make the status StatusManualReview;
// the others are notes on a determined result.
const (
	ReasonSellerCountryMissing      = "seller_country_missing"               // review
	ReasonSellerCountryUnknown      = "seller_country_unknown"               // review: not an ISO 3166-1 code
	ReasonSellerSpecialTerritory    = "seller_in_special_territory"          // review: seller in a territory outside EU VAT but inside a member state
	ReasonSellerEstablishment       = "seller_establishment_invalid"         // review: an OtherEstablishments entry is not an EU member state
	ReasonBuyerCountryMissing       = "buyer_country_missing"                // review
	ReasonBuyerCountryUnknown       = "buyer_country_unknown"                // review: not an ISO 3166-1 code
	ReasonPostalCodeUnrecognised    = "postal_code_unrecognised"             // review: cannot tell whether a special territory applies
	ReasonBuyerLocationConflict     = "buyer_location_conflict"              // review: postal code of another country's territory
	ReasonSupplyKindNotCovered      = "supply_kind_not_covered"              // review
	ReasonSupplyDateMissing         = "supply_date_missing"                  // review
	ReasonDateOutsideRateTable      = "date_outside_rate_table"              // review
	ReasonRateUnverified            = "rate_unverified"                      // review: the rate that would apply is not confirmed by a source
	ReasonRateDependsOnItem         = "rate_depends_on_item"                 // review: several rates apply to the kind, the item decides
	ReasonVATNumberUnverified       = "vat_number_unverified"                // review (a note when B2B and B2C are taxed alike)
	ReasonVATNumberCountryMismatch  = "vat_number_country_mismatch"          // review
	ReasonVATNumberRegistryMismatch = "vat_number_registry_mismatch"         // review (a note when B2B and B2C are taxed alike)
	ReasonRegistryStatusUnknown     = "registry_status_unknown"              // review (a note when B2B and B2C are taxed alike)
	ReasonFixedEstablishment        = "fixed_establishment_in_buyer_country" // review for B2B (Art. 192a); a note for B2C
	ReasonVATNumberInvalid          = "vat_number_invalid"                   // note: treated as B2C
	ReasonVATNumberPrefixSupplied   = "vat_number_prefix_supplied"           // note: given without its country prefix, read under the buyer's country (QualifyNumber)
	ReasonB2BClaimWithoutNumber     = "b2b_claim_without_vat_number"         // note: treated as B2C
	ReasonCheckDigitsDisagree       = "vat_number_check_digits_disagree"     // note: registry says valid, check digits say not
	ReasonRegistryProofIncomplete   = "registry_proof_incomplete"            // note: no request identifier or check time
	ReasonOriginTaxation            = "origin_taxation_below_threshold"      // note: Art. 59c
	ReasonLocalTaxNotAssessed       = "local_tax_not_assessed"               // note: outside scope; the local tax there is not assessed
	ReasonRulesetExperimental       = "ruleset_experimental"                 // note: the UK ruleset
)

// Determination is the VAT treatment of one supply. Its JSON form is part
// of the API: the fiscal record embeds it as "classification".
type Determination struct {
	Status          string      `json:"status"`
	Reasons         []Reason    `json:"reasons,omitempty"`
	Ruleset         string      `json:"ruleset"`
	Jurisdiction    string      `json:"jurisdiction,omitempty"`
	Regime          string      `json:"regime,omitempty"`
	Scheme          string      `json:"ossScheme,omitempty"`
	Category        string      `json:"taxCategoryCode,omitempty"`
	RatePercent     *Percent    `json:"ratePercent,omitempty"`
	TaxingCountry   string      `json:"taxingCountry,omitempty"`
	PlaceOfSupply   string      `json:"placeOfSupply,omitempty"`
	Territory       string      `json:"territory,omitempty"`
	VATEX           string      `json:"vatex,omitempty"`
	ExemptionReason string      `json:"exemptionReason,omitempty"`
	InvoiceNote     string      `json:"invoiceNote,omitempty"`
	LegalBasis      string      `json:"legalBasis,omitempty"`
	BuyerTreatment  string      `json:"buyerTreatment,omitempty"`
	RateKind        string      `json:"rateKind,omitempty"`
	RateSource      *RateSource `json:"rateSource,omitempty"`

	// SupplyDate is the calendar day of the supply (YYYY-MM-DD) in
	// TimeZone, the IANA zone of the taxing territory (localday.go): the day
	// whose rate applies, the invoice's date of supply (BT-72) and the day
	// an OSS return dates the supply by.
	SupplyDate string `json:"supplyDate,omitempty"`
	TimeZone   string `json:"timeZone,omitempty"`
	// Threshold is the Art. 59c section (threshold.go), present with
	// Seller.CrossBorder for a seller established in one member state.
	Threshold *ThresholdCheck `json:"threshold,omitempty"`
	// Supplier is the Art. 9a section (interface.go), present for an
	// electronic interface.
	Supplier *SupplierRole `json:"supplier,omitempty"`

	// --- territories, conditions, coverage, evidence ---

	// RateCondition is the attested legal condition the reduced rate
	// rests on (conditions.go).
	RateCondition *RateCondition `json:"rateCondition,omitempty"`
	// LocalTax states the tax outside the EU and UK rulesets that may be
	// due where the place of supply is, or, with corridor_not_covered, the
	// law that governs the supply (localtax.go, coverage.go).
	LocalTax *LocalTax `json:"localTax,omitempty"`
	// LocationEvidence is the assessment of the customer's location
	// evidence (evidence.go).
	LocationEvidence *EvidenceAssessment `json:"locationEvidence,omitempty"`
}

// Determined reports whether Status is StatusDetermined.
func (d Determination) Determined() bool { return d.Status == StatusDetermined }

// ChargesVAT reports whether the seller charges VAT on the invoice: a
// determined result in category S, or Z with its 0 % rate.
func (d Determination) ChargesVAT() bool {
	return d.Determined() && d.RatePercent != nil && (d.Category == CategoryStandard || d.Category == CategoryZero)
}

// OmitVATIDs reports whether the invoice must carry no VAT identifiers:
// EN 16931 BR-O-02..04 forbid the seller's (BT-31), the tax
// representative's (BT-63) and the buyer's (BT-48) VAT ids on an invoice
// with category O. Identify the seller by its legal registration (BT-30).
func (d Determination) OmitVATIDs() bool { return d.Category == CategoryOutsideScope }
