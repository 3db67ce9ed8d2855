package receipt

// The claims of a receipt: the signed payload. The package documentation
// (doc.go, "# Claims") is the normative description of every field; the
// comments here only say what Go type carries it.

const (
	// SpecV1 is the frozen receipt format: EU VAT, JWS alg "EdDSA".
	SpecV1 = "service.receipt/1.0.0"
	// SpecV2 is the experimental receipt format: UK VAT, JWS alg "Ed25519"
	// (RFC 9864), optional sterling figures. It may change before it is frozen.
	SpecV2 = "service.receipt/2.0.0"
	// SpecV3 is the receipt format the engine issued for receipts of both
	// jurisdictions before SpecV4: personal data only as salted commitments, the log
	// position outside the signature (bound by the inclusion proof), exact
	// figures beside the rounded ones, and an optional conversion to the
	// taxing state's currency. doc.go "# Version 3.0.0" says why.
	SpecV3 = "service.receipt/3.0.0"
	// SpecV4 is the receipt format the engine issues for new receipts:
	// 3.0.0's claims and rules, "signed by inclusion". The log leaf is the
	// claims' JSON itself (no JWS, no signature per receipt), and the
	// receipt key cosigns the log's checkpoints instead, one signature per
	// commit. doc.go "# Version 4.0.0" says why.
	SpecV4 = "service.receipt/4.0.0"

	// TypeV1 is the JWS "typ" header of a SpecV1 receipt (RFC 7515 §4.1.9).
	TypeV1 = "service.receipt+jws"
	// TypeV2 is the JWS "typ" header of a SpecV2 receipt.
	TypeV2 = "service.receipt.v2+jws"
	// TypeV3 is the JWS "typ" header of a SpecV3 receipt.
	TypeV3 = "service.receipt.v3+jws"

	// AlgEdDSA is the JWS alg of SpecV1 receipts (RFC 8037 §3.1). RFC 9864
	// deprecates it as polymorphic, but it is what every JOSE library of
	// 2026 implements, and for an OKP Ed25519 key it means exactly Ed25519.
	AlgEdDSA = "EdDSA"
	// AlgEd25519 is the JWS alg of SpecV2 and SpecV3 receipts (RFC 9864 §2).
	AlgEd25519 = "Ed25519"
)

// Environments (Claims.Environment). A sandbox receipt is signed by a key of
// the sandbox keyring, which is never in the production JWKS, and carries the
// SandboxWatermark claim.
const (
	EnvProduction = "production"
	EnvSandbox    = "sandbox"
)

// SandboxWatermark is the value of the "watermark" claim of every sandbox
// receipt (and of no production receipt): sandbox output is always
// watermarked (README "Sandbox"), visible to a human reading the claims.
const SandboxWatermark = "SANDBOX: not a fiscal record, not valid for tax purposes"

// Jurisdictions (Claims.Jurisdiction). Which spec version may carry which
// jurisdiction follows the jurisdiction table (catalog.Jurisdictions, served
// by GET /v1/capabilities): eu-vat has
// receipt_v1 supported and receipt_v2 unsupported; uk-vat the reverse;
// receipt_v3 serves both.
const (
	JurisdictionEUVAT = "eu-vat"
	JurisdictionUKVAT = "uk-vat"
)

// Review states (Claims.ReviewStatus): the two states of a fiscal record.
const (
	ReviewProcessed = "PROCESSED"
	ReviewPending   = "PENDING_MANUAL_REVIEW"
)

// CustodyNone is the only custody value: the service never holds funds, so
// custody is always "none".
const CustodyNone = "none"

// Chain verification outcomes (ChainFacts.Verification).
const (
	ChainVerified     = "verified"
	ChainNotPerformed = "not_performed"
)

// Claims is the signed payload of a receipt. It is serialised with
// encoding/json in struct field order: snake_case members, every amount and
// rate a decimal string, optional sections omitted when absent.
//
// A SpecV3 receipt is written from a Claims value in a form of its own
// (doc.go "# Version 3.0.0"): its personal fields (the ones Conceal moves)
// are empty and stand as commitments in Commitments, and Log.Index is not
// signed; Verify sets it from the inclusion proof. RecordSHA256,
// LocationEvidence, FXTaxCurrency, Commitments and the exact FX figures are
// SpecV3 members, refused in the older versions.
type Claims struct {
	Spec           string          `json:"spec"`
	ReceiptID      string          `json:"receipt_id"`
	EventID        string          `json:"event_id"`
	IssuedAt       int64           `json:"iat"`
	Issuer         string          `json:"iss,omitempty"`
	Environment    string          `json:"environment"`
	Watermark      string          `json:"watermark,omitempty"`
	Custody        string          `json:"custody"`
	Jurisdiction   string          `json:"jurisdiction"`
	Ruleset        string          `json:"ruleset"`
	ReviewStatus   string          `json:"review_status"`
	ReviewReasons  []string        `json:"review_reasons,omitempty"`
	Supersedes     string          `json:"supersedes,omitempty"`
	Settlement     Settlement      `json:"settlement"`
	Seller         Party           `json:"seller"`
	Buyer          Buyer           `json:"buyer"`
	Classification *Classification `json:"classification,omitempty"`
	FX             *FX             `json:"fx,omitempty"`
	FXGBP          *FXGBP          `json:"fx_gbp,omitempty"`
	FXTaxCurrency  *FXTaxCurrency  `json:"fx_tax_currency,omitempty"`
	Invoice        *Invoice        `json:"invoice,omitempty"`
	Fee            *Fee            `json:"fee,omitempty"`
	// RecordSHA256 is the lower-case hex SHA-256 of the record document
	// exactly as stored (SpecV3; committed, never signed in clear).
	RecordSHA256 string `json:"record_sha256,omitempty"`
	// Commitments maps the JSON pointer of each personal field to its
	// commitment, "sha256:" + base64url (SpecV3; see Commit).
	Commitments map[string]string `json:"commitments,omitempty"`
	Log         LogRef            `json:"log"`
}

// Settlement is the settled payment as submitted (and, when Chain says so,
// as proven on chain).
type Settlement struct {
	Protocol      string     `json:"protocol"`
	Network       string     `json:"network"`
	TxHash        string     `json:"tx_hash"`
	LogIndex      *int64     `json:"log_index,omitempty"`
	Asset         string     `json:"asset"`
	AssetContract string     `json:"asset_contract,omitempty"`
	AmountUSDC    string     `json:"amount_usdc"`
	Payer         string     `json:"payer"`
	Receiver      string     `json:"receiver"`
	Timestamp     string     `json:"timestamp"`
	Scheme        string     `json:"scheme,omitempty"`
	Chain         ChainFacts `json:"chain"`
}

// ChainFacts records whether the payment was proven on chain and, if so,
// where. With Verification == ChainNotPerformed every other field is empty.
type ChainFacts struct {
	Verification  string `json:"verification"`
	BlockNumber   uint64 `json:"block_number,omitempty"`
	BlockHash     string `json:"block_hash,omitempty"`
	BlockTime     string `json:"block_time,omitempty"`
	Confirmations uint64 `json:"confirmations,omitempty"`
	Finalized     *bool  `json:"finalized,omitempty"`
}

// Party is the seller, from the merchant account (account data tied to the
// ingest key, never a field of the settlement request).
type Party struct {
	LegalName string `json:"legal_name"`
	VATNumber string `json:"vat_number,omitempty"`
	Country   string `json:"country"`
}

// Buyer is the merchant-attested customer; every field is optional because a
// missing country is a review reason, not an error (the record is then
// PENDING_MANUAL_REVIEW).
type Buyer struct {
	Country    string         `json:"country,omitempty"`
	PostalCode string         `json:"postal_code,omitempty"`
	VATNumber  string         `json:"vat_number,omitempty"`
	Name       string         `json:"name,omitempty"`
	Registry   *RegistryProof `json:"registry,omitempty"`
	// LocationEvidence lists the items of evidence of the customer's
	// location the merchant relied on (SpecV3 only).
	LocationEvidence []LocationEvidence `json:"location_evidence,omitempty"`
}

// LocationEvidence is one item of evidence of where the customer is
// (Art. 24b and 24f Implementing Regulation (EU) No 282/2011): its kind and
// the country it points to stay in clear, its value (the address, IP
// address, bank or SIM data itself) is committed in a SpecV3 receipt.
type LocationEvidence struct {
	Kind    string `json:"kind"`
	Country string `json:"country,omitempty"`
	Value   string `json:"value,omitempty"`
}

// Evidence kinds of Art. 24f Implementing Regulation (EU) No 282/2011
// (points (a) to (f)). A receipt may name other kinds; these are the ones
// the regulation lists.
const (
	EvidenceBillingAddress    = "billing_address"     // (a) the customer's billing address
	EvidenceIPAddress         = "ip_address"          // (b) the IP address of the device used
	EvidenceBankDetails       = "bank_details"        // (c) location of the bank / billing address the bank holds
	EvidenceSIMCountryCode    = "sim_country_code"    // (d) mobile country code of the SIM card
	EvidenceFixedLineLocation = "fixed_line_location" // (e) location of the fixed land line
	EvidenceOther             = "other"               // (f) other commercially relevant information
)

// RegistryProof is the answer of a VAT-number registry (VIES, HMRC) that the
// classification relied on, kept on the record because the confirmation
// obtained at the time of the sale is the supplier's evidence (Art. 18(1) and
// Art. 25 Implementing Regulation 282/2011,
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:32011R0282).
type RegistryProof struct {
	Registry          string `json:"registry"`
	Status            string `json:"status"`
	Number            string `json:"number"`
	RequestIdentifier string `json:"request_identifier,omitempty"`
	CheckedAt         string `json:"checked_at"`
}

// Classification is the VAT determination of the ruleset named by
// Claims.Ruleset.
type Classification struct {
	Status            string   `json:"status"`
	Regime            string   `json:"regime,omitempty"`
	OSSScheme         string   `json:"oss_scheme,omitempty"`
	Category          string   `json:"category,omitempty"`
	RatePercent       string   `json:"rate_percent,omitempty"`
	TaxingCountry     string   `json:"taxing_country,omitempty"`
	VATEX             string   `json:"vatex,omitempty"`
	LegalBasis        string   `json:"legal_basis,omitempty"`
	InvoiceNote       string   `json:"invoice_note,omitempty"`
	BuyerTreatment    string   `json:"buyer_treatment,omitempty"`
	RateTable         string   `json:"rate_table,omitempty"`
	RateEffectiveFrom string   `json:"rate_effective_from,omitempty"`
	Reasons           []string `json:"reasons,omitempty"`
}

// FX is the conversion of the settled USDC amount to EUR with its provenance.
type FX struct {
	Pair          string `json:"pair"`
	AmountUSDC    string `json:"amount_usdc"`
	USDCUSDRate   string `json:"usdc_usd_rate"`
	USDCUSDSource string `json:"usdc_usd_source"`
	USDPerEUR     FXRate `json:"usd_per_eur"`
	GrossEUR      string `json:"gross_eur"`
	NetEUR        string `json:"net_eur,omitempty"`
	VATEUR        string `json:"vat_eur,omitempty"`
	// The unrounded figures (SpecV3 only): decimal strings with at most
	// 12 decimals, net + vat = gross exactly.
	GrossEURExact string `json:"gross_eur_exact,omitempty"`
	NetEURExact   string `json:"net_eur_exact,omitempty"`
	VATEURExact   string `json:"vat_eur_exact,omitempty"`
	Rounding      string `json:"rounding"`
}

// FXGBP is the conversion to pounds sterling of a SpecV2 (UK VAT) receipt.
// It has the shape of FX with GBP amounts.
type FXGBP struct {
	Pair          string `json:"pair"`
	AmountUSDC    string `json:"amount_usdc"`
	USDCUSDRate   string `json:"usdc_usd_rate"`
	USDCUSDSource string `json:"usdc_usd_source"`
	USDPerGBP     FXRate `json:"usd_per_gbp"`
	GrossGBP      string `json:"gross_gbp"`
	NetGBP        string `json:"net_gbp,omitempty"`
	VATGBP        string `json:"vat_gbp,omitempty"`
	Rounding      string `json:"rounding"`
}

// FXTaxCurrency is the conversion of a SpecV3 receipt to the national
// currency of the taxing state, in which the VAT payable must be expressed
// (Art. 230 Directive 2006/112/EC, with the conversion of Art. 91(2)); it
// generalises SpecV2's FXGBP (sterling for UK VAT). USDPerUnit is US
// dollars per one unit of Currency.
type FXTaxCurrency struct {
	Currency      string `json:"currency"`
	Pair          string `json:"pair"`
	AmountUSDC    string `json:"amount_usdc"`
	USDCUSDRate   string `json:"usdc_usd_rate"`
	USDCUSDSource string `json:"usdc_usd_source"`
	USDPerUnit    FXRate `json:"usd_per_unit"`
	Gross         string `json:"gross"`
	Net           string `json:"net,omitempty"`
	VAT           string `json:"vat,omitempty"`
	GrossExact    string `json:"gross_exact,omitempty"`
	NetExact      string `json:"net_exact,omitempty"`
	VATExact      string `json:"vat_exact,omitempty"`
	Rounding      string `json:"rounding"`
}

// FXRate is one published reference rate and how it was chosen.
type FXRate struct {
	Raw           string `json:"raw"`
	RateDate      string `json:"rate_date"`
	RequestedDate string `json:"requested_date"`
	Policy        string `json:"policy"`
	Source        string `json:"source"`
	Snapshot      string `json:"snapshot,omitempty"`
}

// Invoice binds the receipt to the exact bytes of the UBL document. In a
// SpecV3 receipt the hash is committed, not signed in clear.
type Invoice struct {
	ID        string `json:"id"`
	UBLSHA256 string `json:"ubl_sha256"`
}

// Fee is the service fee accrued on this record (the pricing policy of GET
// /v1/pricing).
type Fee struct {
	Model      string `json:"model"`
	BPS        string `json:"bps"`
	AccruedEUR string `json:"accrued_eur"`
	Label      string `json:"label,omitempty"`
}

// LogRef names the Merkle log entry whose leaf is this receipt's JWS. A
// SpecV3 receipt signs only Origin; Verify fills Index from the proof.
type LogRef struct {
	Origin string `json:"origin"`
	Index  int64  `json:"index"`
}
