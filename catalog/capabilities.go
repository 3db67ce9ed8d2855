package catalog

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/settlement"
	"github.com/fiscal402/fiscal402/vat"
)

// This file holds the values that describe what the service does: its
// versions, capability tokens, payment protocols, chains and assets,
// jurisdictions and receipt versions. The published documents (manifest,
// capability catalog, OpenAPI document) are computed from them, and the
// engine's behaviour uses the same values (request validation reads
// settlement's USDC contract table, receipts take their version from the
// jurisdiction table), so what the service says and what it does cannot
// drift apart.

// Versions of the service description (fields may be added, none renamed).
const (
	// APIVersion is the version of the HTTP API description
	// (/openapi.json info.version).
	APIVersion = "0.3.0"
	// ProtocolVersion is the manifest's protocol_version.
	ProtocolVersion = "0.3.0"
	// ManifestSchemaVersion is the manifest's schema_version.
	ManifestSchemaVersion = "1.0"
	// ManifestSpec is the manifest's spec identifier (its "spec" key).
	ManifestSpec = "service.well-known"
)

// Identity of the service in its published documents.
const (
	ServiceName     = "fiscal402"
	ServiceCategory = "eu_fiscal_compliance" // the category token
	// CustodyToken is the manifest's custody value; CustodyNone is the value
	// every record, receipt and the manifest's security block carry.
	CustodyToken = "non_custodial"
	CustodyNone  = fiscal.CustodyNone
	// ServicePurpose is the one-paragraph description every document uses.
	ServicePurpose = "Non-custodial, post-settlement fiscal adapter for x402 payments: it classifies a stablecoin payment that has already settled (USDC on Base and Ethereum) for EU VAT, converts it to EUR at the ECB reference rate, renders a UBL 2.1 invoice, appends everything to a tamper-evident ledger and issues an Ed25519-signed receipt that anyone can verify offline. It never holds funds and is not tax advice."
)

// Header names of the HTTP API (README "Who needs a key", "Webhooks").
const (
	HeaderServiceKey       = "X-Service-Key"       // ingest key
	HeaderIdempotencyKey   = "Idempotency-Key"     // optional on ingest
	HeaderWebhookSignature = "X-Service-Signature" // v1=<hex HMAC-SHA256> per active secret (issue 9)
	HeaderWebhookTimestamp = "X-Service-Timestamp" // unix seconds, the "timestamp" of timestamp.rawBody
)

// Support is the status of a protocol, jurisdiction, artifact or receipt
// version in the service's tables (supported, experimental, planned,
// unsupported).
type Support string

const (
	Supported    Support = "supported"
	Experimental Support = "experimental"
	Planned      Support = "planned"
	Unsupported  Support = "unsupported"
)

// Payment protocols and schemes (the table PaymentProtocols returns).
const (
	SchemeExact         = "exact"
	ProtocolX402        = "x402"
	ProtocolEVMTransfer = "evm-transfer"
	ProtocolMPP         = "mpp"
	ProtocolAP2         = "ap2"
	SchemeERC20Transfer = "erc20-transfer"
)

// Ingest paths of a payment protocol: over the HTTP API, through
// the Go library only, or not at all yet.
const (
	IngestHTTP    = "http"
	IngestLibrary = "library"
	IngestNone    = "none"
)

// PaymentProtocol is one row of the payment protocol table.
type PaymentProtocol struct {
	Protocol string   `json:"protocol"`
	Status   Support  `json:"status"`
	Versions []string `json:"versions"`
	Schemes  []string `json:"schemes"`
	Ingest   string   `json:"ingest"`
}

// PaymentProtocols returns the payment protocol table: x402 v2
// "exact" over HTTP; plain ERC-20 transfers through the library; MPP and
// AP2 planned.
func PaymentProtocols() []PaymentProtocol {
	return []PaymentProtocol{
		{Protocol: ProtocolX402, Status: Supported, Versions: []string{"2"}, Schemes: []string{SchemeExact}, Ingest: IngestHTTP},
		{Protocol: ProtocolEVMTransfer, Status: Supported, Versions: []string{"1"}, Schemes: []string{SchemeERC20Transfer}, Ingest: IngestLibrary},
		{Protocol: ProtocolMPP, Status: Planned, Versions: []string{}, Schemes: []string{}, Ingest: IngestNone},
		{Protocol: ProtocolAP2, Status: Planned, Versions: []string{}, Schemes: []string{}, Ingest: IngestNone},
	}
}

func paymentProtocol(name string) (PaymentProtocol, bool) {
	for _, p := range PaymentProtocols() {
		if p.Protocol == name {
			return p, true
		}
	}
	return PaymentProtocol{}, false
}

// SupportedNetworks returns the CAIP-2 ids of the networks whose settlements
// the engine accepts: exactly the networks of the USDC contract table that
// request validation uses, in ascending order.
func SupportedNetworks() []string {
	return settlement.Networks()
}

// Asset is a supported asset on one network.
type Asset struct {
	Symbol   string  `json:"symbol"`
	Network  string  `json:"network"`  // CAIP-2
	Contract string  `json:"contract"` // lower-case token contract address
	Decimals int     `json:"decimals"`
	Status   Support `json:"status"`
}

// SupportedAssets returns USDC on each supported network, from the same
// contract table that request validation uses.
func SupportedAssets() []Asset {
	var out []Asset
	for _, n := range SupportedNetworks() {
		out = append(out, Asset{Symbol: AssetUSDC, Network: n, Contract: settlement.USDCContract(n), Decimals: usdcDecimals, Status: Supported})
	}
	return out
}

// Chain is a supported network with how the engine treats its settlements.
type Chain struct {
	Network string   `json:"network"` // CAIP-2
	Name    string   `json:"name"`
	Status  Support  `json:"status"`
	Assets  []string `json:"assets"`
	// Verification is "required" when this engine proves each settlement
	// on chain before recording it (evmverify), "off" when it records the
	// merchant's claim and says so on the record and receipt
	// (verification.chain "not_performed").
	Verification string `json:"verification"`
}

// networkNames are the human names of the supported networks.
var networkNames = map[string]string{evmverify.NetworkBase: "Base", evmverify.NetworkEthereum: "Ethereum"}

// Chains returns the supported networks with this engine's chain
// verification policy for each.
func (s *Service) Chains() []Chain {
	var out []Chain
	for _, n := range SupportedNetworks() {
		mode := "off"
		if s.set.Chain != nil && s.set.Chain.Mode(n) == evmverify.ModeRequired {
			mode = string(evmverify.ModeRequired)
		}
		out = append(out, Chain{Network: n, Name: networkNames[n], Status: Supported, Assets: []string{AssetUSDC}, Verification: mode})
	}
	return out
}

// Jurisdiction is one row of the jurisdiction table (Jurisdictions).
type Jurisdiction struct {
	ID             string  `json:"id"` // "eu-vat", "uk-vat"
	Status         Support `json:"status"`
	RulesetVersion string  `json:"ruleset_version"`
	Determination  Support `json:"determination"`
	Artifacts      Support `json:"artifacts"` // UBL invoices
	ReceiptV1      Support `json:"receipt_v1"`
	ReceiptV2      Support `json:"receipt_v2"`
	// ReceiptV3 is service.receipt/3.0.0, issued for every record before
	// 4.0.0: no personal data in clear, signed before the log position is
	// known.
	ReceiptV3 Support `json:"receipt_v3"`
	// ReceiptV4 is service.receipt/4.0.0, issued for every new record:
	// 3.0.0's claims, logged as they are and signed through the log
	// checkpoint the receipt key cosigns (one signature per commit).
	ReceiptV4 Support `json:"receipt_v4"`
	// DefaultReceiptVersion is the receipt version a record of this
	// jurisdiction is signed with (the manifest's receipt_versions).
	DefaultReceiptVersion string `json:"default_receipt_version"`
}

// Jurisdictions returns the jurisdiction table (eu-vat supported, uk-vat
// experimental); the ruleset
// versions are those of package vat.
func Jurisdictions() []Jurisdiction {
	return []Jurisdiction{
		{ID: vat.JurisdictionEU, Status: Supported, RulesetVersion: vat.RulesetEU, Determination: Supported, Artifacts: Supported,
			ReceiptV1: Supported, ReceiptV2: Unsupported, ReceiptV3: Supported, ReceiptV4: Supported, DefaultReceiptVersion: receiptVersionOf(fiscal.ReceiptSpec(vat.JurisdictionEU))},
		{ID: vat.JurisdictionUK, Status: Experimental, RulesetVersion: vat.RulesetUK, Determination: Supported, Artifacts: Experimental,
			ReceiptV1: Unsupported, ReceiptV2: Experimental, ReceiptV3: Experimental, ReceiptV4: Experimental, DefaultReceiptVersion: receiptVersionOf(fiscal.ReceiptSpec(vat.JurisdictionUK))},
	}
}

func jurisdiction(id string) (Jurisdiction, bool) {
	for _, j := range Jurisdictions() {
		if j.ID == id {
			return j, true
		}
	}
	return Jurisdiction{}, false
}

// receiptSupport is the jurisdiction's support for a receipt version.
func (j Jurisdiction) receiptSupport(version string) Support {
	switch version {
	case receiptVersionOf(receipt.SpecV1):
		return j.ReceiptV1
	case receiptVersionOf(receipt.SpecV2):
		return j.ReceiptV2
	case receiptVersionOf(receipt.SpecV3):
		return j.ReceiptV3
	case receiptVersionOf(receipt.SpecV4):
		return j.ReceiptV4
	}
	return Unsupported
}

// ReceiptVersion describes one receipt format.
type ReceiptVersion struct {
	Spec       string   `json:"spec"` // "service.receipt/1.0.0"
	Status     Support  `json:"status"`
	Frozen     bool     `json:"frozen"`      // a frozen format never changes; a breaking change gets a new version
	DefaultFor []string `json:"default_for"` // jurisdictions whose records are signed with it
	// JWSAlg and JWSType are the JWS header of a receipt signed one by one
	// (1.0.0 to 3.0.0); absent for 4.0.0, which has no JWS.
	JWSAlg  string `json:"jws_alg,omitempty"`
	JWSType string `json:"jws_typ,omitempty"`
	// Signature is how a version without a JWS is signed: for 4.0.0
	// SignatureCheckpointCosignature.
	Signature string `json:"signature,omitempty"`
}

// SignatureCheckpointCosignature is the signature of a 4.0.0 receipt: the
// receipt key's C2SP signed-note cosignature (key name its kid) of the log
// checkpoint its inclusion proof leads to (receipt doc.go "# Version
// 4.0.0").
const SignatureCheckpointCosignature = "checkpoint-cosignature"

// ReceiptVersions returns the receipt versions (the manifest's
// receipt_versions), keyed by
// version ("1.0.0", "2.0.0", "3.0.0", "4.0.0"): 4.0.0 supported and
// frozen, the default for both jurisdictions (receipts of earlier versions
// keep verifying); 1.0.0 and 3.0.0 supported and frozen; 2.0.0
// experimental.
func ReceiptVersions() map[string]ReceiptVersion {
	out := map[string]ReceiptVersion{
		receiptVersionOf(receipt.SpecV1): {Spec: receipt.SpecV1, Status: Supported, Frozen: true, DefaultFor: []string{}, JWSAlg: receipt.AlgEdDSA, JWSType: receipt.TypeV1},
		receiptVersionOf(receipt.SpecV2): {Spec: receipt.SpecV2, Status: Experimental, Frozen: false, DefaultFor: []string{}, JWSAlg: receipt.AlgEd25519, JWSType: receipt.TypeV2},
		receiptVersionOf(receipt.SpecV3): {Spec: receipt.SpecV3, Status: Supported, Frozen: true, DefaultFor: []string{}, JWSAlg: receipt.AlgEd25519, JWSType: receipt.TypeV3},
		receiptVersionOf(receipt.SpecV4): {Spec: receipt.SpecV4, Status: Supported, Frozen: true, DefaultFor: []string{}, Signature: SignatureCheckpointCosignature},
	}
	for _, j := range Jurisdictions() {
		v := out[j.DefaultReceiptVersion]
		v.DefaultFor = append(v.DefaultFor, j.ID)
		out[j.DefaultReceiptVersion] = v
	}
	return out
}

// receiptVersionOf is the version part of a receipt spec identifier.
func receiptVersionOf(spec string) string {
	_, v, _ := strings.Cut(spec, "/")
	return v
}

// receiptFormat returns the receipt jurisdiction and spec for a
// determination's jurisdiction: the jurisdiction table's default receipt
// version. A determination without a jurisdiction (a manual review before
// the place of supply is known) is recorded under eu-vat, the service's
// supported jurisdiction.
func receiptFormat(detJurisdiction string) (jurisdictionID, spec string) {
	j, ok := jurisdiction(detJurisdiction)
	if !ok {
		j, _ = jurisdiction(vat.JurisdictionEU)
	}
	return j.ID, fiscal.ReceiptSpec(j.ID)
}

// Capability tokens (the ten the service publishes).
const (
	CapVATClassification = "vat_classification"
	CapVIESLookup        = "vies_lookup"
	CapOSSB2C            = "oss_b2c"
	CapReverseChargeB2B  = "reverse_charge_b2b"
	CapUBL21             = "ubl_2_1"
	CapHistoricalFX      = "historical_fx"
	CapAuditLedger       = "audit_ledger"
	CapSignedWebhooks    = "signed_webhooks"
	CapSignedReceipt     = "signed_receipt"
	CapSandboxSimulate   = "sandbox_simulate"
)

// Capability availability.
const (
	Available   = "available"
	Unavailable = "unavailable"
)

// Reason codes of an unavailable capability.
const (
	ReasonNotConfigured = "not_configured"
)

// Capability is one capability token with what it means and whether this
// engine, as configured, delivers it.
type Capability struct {
	Token       string       `json:"token"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Status      string       `json:"status"` // Available or Unavailable
	Reasons     []vat.Reason `json:"reasons,omitempty"`
}

// capabilityTable is the list of the ten capability tokens, in their
// published order.
func capabilityTable() []Capability {
	return []Capability{
		{Token: CapVATClassification, Name: "EU VAT classification",
			Description: "Place of supply, regime, UNCL5305 category and rate on the settlement date under ruleset " + vat.RulesetEU + " (UK VAT " + vat.RulesetUK + " experimental); manual review with a machine-readable reason wherever the facts do not allow a determination."},
		{Token: CapVIESLookup, Name: "VAT-number registry lookup",
			Description: "A business buyer's VAT number is checked with EU VIES (UK: HMRC); the tri-state answer (valid, invalid, unavailable) and its consultation identifier are kept on the record and signed into the receipt."},
		{Token: CapOSSB2C, Name: "OSS B2C",
			Description: "Sales of electronically supplied services to EU consumers taxed at the consumer's member state rate (Art. 58 Directive 2006/112/EC), for the Union or non-Union One-Stop Shop return."},
		{Token: CapReverseChargeB2B, Name: "B2B reverse charge",
			Description: "Cross-border sales to EU businesses under the reverse charge (Art. 44 and 196), only with a VAT number a registry confirmed (Art. 18(1) Implementing Regulation 282/2011)."},
		{Token: CapUBL21, Name: "UBL 2.1 invoice",
			Description: "A deterministic UBL 2.1 invoice per processed record (EN 16931; Peppol BIS Billing 3.0 for business buyers), in EUR, stating the USDC settlement."},
		{Token: CapHistoricalFX, Name: "Historical FX",
			Description: "Conversion to EUR at the ECB euro reference rate for the settlement date (Art. 91(2)), USDC at an explicit, recorded 1:1 USD peg, with the rate's provenance on every record; never a rate past the last known publication."},
		{Token: CapAuditLedger, Name: "Audit ledger",
			Description: "Every record state is appended to a ledger with an RFC 6962 Merkle log and signed C2SP checkpoints; inclusion and consistency proofs are public."},
		{Token: CapSignedWebhooks, Name: "Signed webhooks",
			Description: "Events written in the same ledger transaction as the record, delivered at least once, signed with HMAC-SHA256 over timestamp.rawBody."},
		{Token: CapSignedReceipt, Name: "Signed receipt",
			Description: "A receipt (" + receipt.SpecV4 + ") per record, signed through the log checkpoint the Ed25519 receipt key cosigns, with its proof of inclusion in the log; verifiable offline with the public JWKS and log key."},
		{Token: CapSandboxSimulate, Name: "Sandbox simulation",
			Description: "Classification previews and watermarked sandbox invoices and receipts, signed by a key that is never in the production JWKS."},
	}
}

// Capabilities returns the ten capability tokens with their status
// in this engine. A token is unavailable when the engine's configuration
// cannot deliver it: without a registry that can confirm VAT numbers
// (Config.VIES nil, or a vies.Service with lookups off) no buyer number is
// ever confirmed, so there is no registry lookup and no B2B reverse charge
// (such records stay PENDING_MANUAL_REVIEW).
func (s *Service) Capabilities() []Capability {
	caps := capabilityTable()
	notConfigured := func(detail string) []vat.Reason {
		return []vat.Reason{{Code: ReasonNotConfigured, Detail: detail}}
	}
	for i := range caps {
		caps[i].Status = Available
		switch caps[i].Token {
		case CapVIESLookup:
			eu, uk := s.canConfirm(vat.RegistryVIES), s.canConfirm(vat.RegistryHMRC)
			switch {
			case !eu && !uk:
				caps[i].Status = Unavailable
				caps[i].Reasons = notConfigured("No VAT-number registry (VIES, HMRC) answers on this service: a buyer's VAT number is never confirmed, so such records stay PENDING_MANUAL_REVIEW (vat_number_unverified) and are never reverse-charged on trust.")
			case !uk:
				caps[i].Reasons = notConfigured("HMRC lookups are off: GB numbers are not confirmed (their records stay PENDING_MANUAL_REVIEW); EU numbers are checked with VIES.")
			case !eu:
				caps[i].Reasons = notConfigured("VIES lookups are off: EU numbers are not confirmed (their records stay PENDING_MANUAL_REVIEW); GB numbers are checked with HMRC.")
			}
		case CapReverseChargeB2B:
			if !s.canConfirm(vat.RegistryVIES) {
				caps[i].Status = Unavailable
				caps[i].Reasons = notConfigured("VIES lookups are off on this service: no EU business buyer's VAT number is confirmed, so no sale is reverse-charged (Art. 18(1) Implementing Regulation 282/2011); such records stay PENDING_MANUAL_REVIEW.")
			}
		}
	}
	return caps
}

// canConfirm reports whether this engine's VAT-number checker can confirm
// numbers of a registry (vat.RegistryVIES or vat.RegistryHMRC), without
// asking it anything: a checker that lists its registries (vies.Service)
// is taken at its word; any other configured checker is assumed to answer.
func (s *Service) canConfirm(registry string) bool {
	if s.set.VIES == nil {
		return false
	}
	if l, ok := s.set.VIES.(interface{ Registries() []string }); ok {
		return slices.Contains(l.Registries(), registry)
	}
	return true
}

// AvailableCapabilities returns the tokens of the available capabilities,
// in their published order: what the manifest publishes.
func (s *Service) AvailableCapabilities() []string {
	var out []string
	for _, c := range s.Capabilities() {
		if c.Status == Available {
			out = append(out, c.Token)
		}
	}
	return out
}

// SupplyTypes are the supply kinds the rulesets determine (package vat,
// "Supply kinds"); any other kind is recorded pending manual review.
func SupplyTypes() []string {
	return []string{vat.KindDigitalService, vat.KindSaaS, vat.KindStreaming, vat.KindEbook, vat.KindEpublication}
}

// BuyerTypes are the buyer types a capability check accepts.
func BuyerTypes() []string { return []string{vat.TreatmentB2C, vat.TreatmentB2B} }

// Security is the security block of the manifest.
type Security struct {
	Custody          string           `json:"custody"`       // "none"
	IngestHeader     string           `json:"ingest_header"` // "X-Service-Key"
	WebhookSignature WebhookSignature `json:"webhook_signature"`
	ReceiptSignature string           `json:"receipt_signature"` // "ed25519"
	Idempotency      Idempotency      `json:"idempotency"`
}

// WebhookSignature says how outbound webhooks are signed (README "Webhooks").
type WebhookSignature struct {
	Algorithm       string `json:"algorithm"`        // "HMAC-SHA256"
	SignedPayload   string `json:"signed_payload"`   // "timestamp.rawBody"
	Header          string `json:"header"`           // X-Service-Signature
	TimestampHeader string `json:"timestamp_header"` // X-Service-Timestamp
	Format          string `json:"format"`
}

// Idempotency says what makes an ingest unique: (network, txHash), and the
// optional Idempotency-Key.
type Idempotency struct {
	UniquePer []string `json:"unique_per"` // ["network", "txHash"]
	Header    string   `json:"header"`     // Idempotency-Key
	Scope     string   `json:"scope"`
	Retention string   `json:"retention"`
}

// SecurityBlock returns the manifest's security block. The idempotency
// fields name the members of the payment claim the engine takes
// (settlementClaims: network ":" txHash).
func SecurityBlock() Security {
	return Security{
		Custody:      CustodyNone,
		IngestHeader: HeaderServiceKey,
		WebhookSignature: WebhookSignature{
			Algorithm:       "HMAC-SHA256",
			SignedPayload:   "timestamp.rawBody",
			Header:          HeaderWebhookSignature,
			TimestampHeader: HeaderWebhookTimestamp,
			Format:          "v1=<hex HMAC-SHA256(secret, timestamp + \".\" + rawBody)>, one per active secret, comma-separated",
		},
		ReceiptSignature: "ed25519",
		Idempotency: Idempotency{
			UniquePer: []string{"network", "txHash"},
			Header:    HeaderIdempotencyKey,
			Scope:     "the (network, txHash) pair is recorded once across all accounts; an Idempotency-Key is scoped to the account",
			Retention: "forever: keys and payment claims live in the ledger and are never expired",
		},
	}
}

// Catalog is the capability catalog (GET /v1/capabilities): every table
// of this file, with this engine's configuration applied.
type Catalog struct {
	Service          string                    `json:"service"`
	APIVersion       string                    `json:"api_version"`
	Category         string                    `json:"category"`
	Custody          string                    `json:"custody"`
	Capabilities     []Capability              `json:"capabilities"`
	PaymentProtocols []PaymentProtocol         `json:"payment_protocols"`
	Jurisdictions    []Jurisdiction            `json:"jurisdictions"`
	ReceiptVersions  map[string]ReceiptVersion `json:"receipt_versions"`
	Chains           []Chain                   `json:"chains"`
	Assets           []Asset                   `json:"assets"`
	SupplyTypes      []string                  `json:"supply_types"`
	BuyerTypes       []string                  `json:"buyer_types"`
	RateTable        RateTableInfo             `json:"vat_rate_table"`
	FX               FXInfo                    `json:"fx"`
}

// RateTableInfo names the VAT rate table the engine decides with (the
// embedded one, or the one the operator loaded) and the days it vouches
// for; a supply dated outside them is recorded pending manual review.
type RateTableInfo struct {
	Version      string `json:"version"`
	CoverageFrom string `json:"coverage_from"`
	CoverageTo   string `json:"coverage_to"`
}

// FXInfo describes the conversion source.
type FXInfo struct {
	Source string `json:"source"` // "ECB euro foreign exchange reference rates (USD)"
	Policy string `json:"policy"`
	Peg    string `json:"usdc_usd"`
	// RatesFrom and RatesThrough bound the publications this engine knows
	// (absent when its rate source cannot tell); a settlement dated after
	// RatesThrough is recorded with reason fx_rate_unavailable.
	RatesFrom    string `json:"rates_from,omitempty"`
	RatesThrough string `json:"rates_through,omitempty"`
}

// Catalog returns the capability catalog of this engine.
func (s *Service) Catalog() Catalog {
	rates := cmp.Or(s.set.Rates, vat.Rates())
	from, to := rates.Coverage()
	c := Catalog{
		Service:          ServiceName,
		APIVersion:       APIVersion,
		Category:         ServiceCategory,
		Custody:          CustodyToken,
		Capabilities:     s.Capabilities(),
		PaymentProtocols: PaymentProtocols(),
		Jurisdictions:    Jurisdictions(),
		ReceiptVersions:  ReceiptVersions(),
		Chains:           s.Chains(),
		Assets:           SupportedAssets(),
		SupplyTypes:      SupplyTypes(),
		BuyerTypes:       BuyerTypes(),
		RateTable:        RateTableInfo{Version: rates.Version(), CoverageFrom: from.Format(time.DateOnly), CoverageTo: to.Format(time.DateOnly)},
		FX:               FXInfo{Source: "ECB euro foreign exchange reference rates, USD per EUR", Policy: string(s.set.FXPolicy), Peg: "1 USDC = 1 USD, an explicit, recorded peg assumption"},
	}
	if r, ok := s.set.FX.(interface{ Range() (string, string) }); ok {
		c.FX.RatesFrom, c.FX.RatesThrough = r.Range()
	}
	return c
}

var yearMonthRE = regexp.MustCompile(`(\d{4})\.(\d{2})`)

// DescriptionDate is the date the service description last changed in
// substance: the first day of the month of the newest ruleset or of the
// version of the VAT rate table this engine decides with, the embedded one
// or one loaded at start ("eu-vat-oss-2026.09" → 2026-09-01;
// "acme-vat-rates-2027.01.1" → 2027-01-01). It is the manifest's
// updated_at: deterministic for a build and its rate table, never the
// clock.
func (s *Service) DescriptionDate() time.Time {
	var newest time.Time
	for _, v := range []string{vat.RulesetEU, vat.RulesetUK, cmp.Or(s.set.Rates, vat.Rates()).Version()} {
		m := yearMonthRE.FindStringSubmatch(v)
		if m == nil {
			continue
		}
		t, err := time.Parse("2006.01", m[1]+"."+m[2])
		if err == nil && t.After(newest) {
			newest = t
		}
	}
	return newest.UTC()
}

// describeNetworks lists the supported networks for error details.
func describeNetworks() string { return strings.Join(SupportedNetworks(), ", ") }

// RequestLimits are the limits request validation enforces; the reliability
// document publishes them from here.
type RequestLimits struct {
	MaxRequestBytes        int64 `json:"max_request_bytes"`
	MaxAmountIntegerDigits int   `json:"max_amount_integer_digits"`
	USDCDecimals           int   `json:"usdc_decimals"`
	MaxClockSkewSeconds    int64 `json:"max_clock_skew_seconds"`
	MaxTextLength          int   `json:"max_text_length"`
	IdempotencyKeyMaxLen   int   `json:"idempotency_key_max_length"`
	EarliestSettlementYear int   `json:"earliest_settlement_year"`
}

// Limits returns the request limits of the engine's validation (package
// fiscal enforces them; a test checks each value against its behaviour).
func Limits() RequestLimits {
	return RequestLimits{
		MaxRequestBytes:        fiscal.MaxRequestBytes,
		MaxAmountIntegerDigits: 12,
		USDCDecimals:           usdcDecimals,
		MaxClockSkewSeconds:    int64(wire.MaxClockSkew / time.Second),
		MaxTextLength:          200,
		IdempotencyKeyMaxLen:   255,
		EarliestSettlementYear: 2015,
	}
}
