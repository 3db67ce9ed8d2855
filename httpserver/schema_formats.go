package httpserver

import (
	"maps"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/wire"
	"github.com/fiscal402/fiscal402/vat"
)

// The constraints that the descriptions state, as schema keywords, so
// that generated clients and validating proxies check them too. They are
// keyed by JSON member name: a member name means one kind of value
// throughout the API (a txHash is always 0x and 64 hex digits). A member of
// a request component may be written more loosely than the same member in
// an answer (a country in lower case, a network the service does not
// support, which is then a 422 naming it, not a schema failure), so
// request components get the looser form. TestSchemaFormatsCover fails on a
// string member whose name says hash, wallet, country, amount, network or
// date but whose schema says nothing of it.

// Patterns of the values.
const (
	patternTxHash    = `^0x[0-9a-fA-F]{64}$`                  // a 32-byte hash, 0x-prefixed hex (txHash, blockHash, EIP-3009 nonce)
	patternAddress   = `^0x[0-9a-fA-F]{40}$`                  // a 20-byte EVM address, 0x-prefixed hex (any case: EIP-55 checksums are mixed case)
	patternSHA256    = `^[0-9a-f]{64}$`                       // a SHA-256 digest, lower-case hex
	patternCountry   = `^[A-Z]{2}$`                           // ISO 3166-1 alpha-2 as the service writes it (EL, XI included)
	patternCountryIn = `^[A-Za-z]{2}$`                        // as requests may write it: case is ignored
	patternPlace     = `^[A-Z]{2}(-[A-Z0-9]{1,3})?$`          // a place-of-supply code: ISO 3166-1 alpha-2, or ISO 3166-2 for a special territory (ES-CN, PT-20, GR-69)
	patternUSDC      = `^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$`     // a USDC amount: no sign, no exponent, at most 6 decimals
	patternMoney2    = `^-?(0|[1-9][0-9]*)\.[0-9]{2}$`        // an amount in a fiat currency, 2 decimals (EN 16931)
	patternDecimal   = `^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`       // an exact decimal: rates, unrounded amounts, basis points
	patternUnsigned  = `^(0|[1-9][0-9]*)(\.[0-9]+)?$`         // a plain decimal string without a sign (vat.PlainDecimal): a manual rate
	patternCAIP2     = `^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$` // a CAIP-2 chain id (CAIP-2 §Syntax)
	patternAsset     = `^(USDC|0x[0-9a-fA-F]{40})$`           // USDC, or the network's USDC contract
)

// requestComponents are the components that only requests use: their
// members get the looser form of a rule.
var requestComponents = map[string]bool{
	"SettlementRequest": true, "SimulateRequest": true, "EvaluateRequest": true, "CapabilityCheckRequest": true,
	"CheckPayment": true, "FiscalEventRequest": true, "EventPayment": true, "EventSeller": true, "EventBuyer": true,
	"EventSupply": true, "BuyerFacts": true, "Resolution": true, "ResolutionBuyer": true, "ManualDetermination": true,
	"WebhookEndpointRequest": true, "X402IngestRequest": true, "SellerRequest": true,
}

// supportedNetworks are the CAIP-2 ids of the networks the service records.
var supportedNetworks = []string{evmverify.NetworkBase, evmverify.NetworkEthereum}

// memberFormat returns the keywords to add to a string member's schema, or
// nil.
func memberFormat(component, member string) map[string]any {
	req := requestComponents[component]
	pick := func(in, out map[string]any) map[string]any {
		if req {
			return in
		}
		return out
	}
	pattern := func(p string) map[string]any { return map[string]any{"pattern": p} }
	switch member {
	case "txHash", "tx_hash", "blockHash", "block_hash", "authorizationNonce":
		return pattern(patternTxHash)
	case "payerWallet", "receiverWallet", "payer", "receiver", "assetContract", "asset_contract":
		return pattern(patternAddress)
	case "contract":
		if component == "Asset" {
			return pattern(patternAddress)
		}
	case "from", "to", "token":
		if component == "EvmverifyFacts" {
			return pattern(patternAddress)
		}
	case "asset":
		if component == "Asset" || component == "ReceiptSettlement" || component == "RecordPayment" || component == "RefundPayment" {
			return map[string]any{"enum": []string{"USDC"}}
		}
		return pattern(patternAsset)
	case "legalIdScheme":
		return pattern(`^[0-9]{4}$`) // an ISO 6523 ICD
	case "scheme":
		if component == "ElectronicAddress" {
			return pattern(`^[0-9]{4}$`) // a Peppol EAS code
		}
	case "ublSha256", "ubl_sha256", "record_sha256":
		return pattern(patternSHA256)
	case "placeOfSupply":
		return pattern(patternPlace)
	case "country", "consumerCountry", "buyer_country", "seller_country", "taxingCountry", "taxing_country", "countryCode", "taxCountry":
		if member == "country" && (component == "VatEvidenceAssessment" || component == "ReturnsSummary") {
			// The settled location and the not-in-OSS summary's country
			// are places of supply, a special territory's included.
			return pattern(patternPlace)
		}
		if member == "countryCode" && component == "ViesResult" {
			// Empty when the number was refused on its syntax without a
			// readable country prefix (vies.FaultSyntax): no registry asked.
			return pattern(`^([A-Z]{2})?$`)
		}
		return pick(pattern(patternCountryIn), pattern(patternCountry))
	case "amountUsdc", "amount_usdc", "refundedUsdc", "remainingUsdc":
		return pattern(patternUSDC)
	case "grossEur", "netEur", "vatEur", "accruedEur", "gross_eur", "net_eur", "vat_eur", "accrued_eur", "gross_gbp", "net_gbp", "vat_gbp":
		return pattern(patternMoney2)
	case "taxableAmountEur", "invoiceTaxableAmountEur", "invoiceVatEur", "differenceVatEur", "correctionsVatEur":
		return pattern(patternMoney2)
	case "taxableAmount", "vatAmount":
		if component == "ReturnsRecordRow" || component == "ReturnsAdjustment" {
			return pattern(patternMoney2)
		}
	case "taxableAmountExact", "vatAmountExact", "usdPerEur":
		if component == "ReturnsRecordRow" || component == "ReturnsAdjustment" {
			return pattern(patternDecimal)
		}
	case "taxableAmountCurrency", "vatCurrency", "currency":
		if component == "ReturnsRecordRow" || component == "ReturnsAdjustment" || component == "ReturnsPayment" || component == "OSSReturn" {
			return pattern(`^[A-Z]{3,4}$`) // ISO 4217, or USDC
		}
	case "fxRateDate":
		return map[string]any{"format": "date"}
	case "rootHash":
		return map[string]any{"contentEncoding": "base64"}
	case "gross", "net", "vat":
		if component == "ReceiptFXTaxCurrency" || component == "RecordNationalFX" {
			return pattern(patternMoney2)
		}
	case "ratePercent":
		if component == "ManualDetermination" {
			// A person's rate is read as vat.PlainDecimal, 0 to 100: no
			// sign (vat.DetermineManually refuses "-19" as rate_invalid).
			return pattern(patternUnsigned)
		}
		return pattern(patternDecimal)
	case "gross_eur_exact", "net_eur_exact", "vat_eur_exact", "grossEurExact", "netEurExact", "vatEurExact", "accruedEurExact", "crossBorderEur", "openingEur", "limitEur", "totalBeforeEur", "totalAfterEur", "refundsReductionEur", "netOfRefundsEur", "gross_exact", "net_exact", "vat_exact", "netExact", "vatExact", "raw", "usdc_usd_rate", "bps", "rate_percent":
		return pattern(patternDecimal)
	case "rate":
		if component == "FxPeg" {
			return pattern(patternDecimal)
		}
	case "amount":
		if component == "EvmverifyFacts" || component == "ReturnsPayment" {
			return pattern(patternUSDC)
		}
	case "network":
		if isX402Component(component) {
			return nil // x402 v1 names networks ("base"): the ingest maps them
		}
		if req {
			return pattern(patternCAIP2)
		}
		if component == "Chain" || component == "Asset" || component == "RecordPayment" || component == "RefundPayment" || component == "EventPayment" ||
			component == "ReceiptSettlement" || component == "EvmverifyFacts" || component == "IngestStatus" {
			return map[string]any{"enum": supportedNetworks}
		}
		return pattern(patternCAIP2)
	case "createdAt", "updatedAt", "timestamp", "created", "at", "checked_at", "nextAttemptAt", "deliveredAt", "disabledAt",
		"evaluatedAt", "block_time", "reset_at", "updated_at", "publishedFrom":
		return map[string]any{"format": "date-time"}
	case "requestedDate":
		// fx.Rate: the day asked for, or under latest-published-at the
		// instant of the chargeable event.
		return map[string]any{"anyOf": []any{map[string]any{"format": "date"}, map[string]any{"format": "date-time"}}}
	case "supplyDate", "refundDate", "issueDate", "issueDeadline", "rateDate", "rate_date", "requested_date", "effectiveFrom", "rate_effective_from",
		"coverage_from", "coverage_to", "rates_from", "rates_through", "newest", "expected", "dueDate":
		return map[string]any{"format": "date"}
	case "date", "supply_date":
		if req {
			// A day, or an instant whose UTC day is meant.
			return map[string]any{"anyOf": []any{map[string]any{"format": "date"}, map[string]any{"format": "date-time"}}}
		}
		return map[string]any{"format": "date"}
	}
	return nil
}

// memberMaxLength is the most characters the server takes in a text
// member of a request component (0: none stated), from the limits its
// checks use; TestTextMaxLengthsAreTheServers holds each to the server.
// Components that answers use too (Address, VatEvidence, VatProvider) state
// none: a record stored under an older limit must still match them.
func memberMaxLength(component, member string) int {
	switch component {
	case "SettlementRequest", "SimulateRequest", "ResolutionBuyer":
		switch member {
		case "consumerName", "description":
			return wire.MaxTextLen
		case "consumerVatNumber":
			return wire.MaxVATNumberLen
		case "consumerPostalCode":
			return wire.MaxPostalCodeLen
		case "supplyKind":
			return wire.MaxTokenLen
		}
	case "EventSeller", "EventBuyer", "EventSupply":
		switch member {
		case "legalName", "name", "description":
			return wire.MaxTextLen
		case "vatNumber":
			return wire.MaxVATNumberLen
		case "postalCode":
			return wire.MaxPostalCodeLen
		case "kind":
			return wire.MaxTokenLen
		}
	case "RefundRequest":
		if member == "reason" {
			return wire.MaxTextLen
		}
	case "Resolution":
		switch member {
		case "note":
			return wire.MaxNoteLen
		case "resolvedBy":
			return wire.MaxTextLen
		}
	case "ManualDetermination":
		if member == "reason" {
			return vat.MaxManualReasonLength
		}
	}
	return 0
}

// withFormat adds the keywords of memberFormat and memberMaxLength to a
// string schema (not to a $ref, an object or a schema that already has an
// enum).
func withFormat(s map[string]any, component, member string) map[string]any {
	if s["type"] != "string" || s["enum"] != nil {
		return s
	}
	add := memberFormat(component, member)
	if n := memberMaxLength(component, member); n > 0 {
		add = maps.Clone(add)
		if add == nil {
			add = map[string]any{}
		}
		add["maxLength"] = n
	}
	if add == nil {
		return s
	}
	out := make(map[string]any, len(s)+len(add))
	for k, v := range s {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}
