package receipt

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// ErrInvalidClaims is matched (errors.Is) by every *ClaimsError.
var ErrInvalidClaims = errors.New("receipt: invalid claims")

// ClaimsError says which claim breaks the format rules of doc.go "# Claims".
// Sign returns it for claims it refuses to sign; Verify wraps it in a
// *VerifyError with Step StepSpec.
type ClaimsError struct {
	Field   string // JSON pointer into the claims, e.g. "/fx/gross_eur"
	Problem string
}

func (e *ClaimsError) Error() string {
	return fmt.Sprintf("receipt: claims %s: %s", e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidClaims) true.
func (e *ClaimsError) Is(target error) bool { return target == ErrInvalidClaims }

// FeeModelBasisPoints is the only fee model (service-spec §8).
const FeeModelBasisPoints = "basis_points"

// Syntax of the claim values. These are immutable lookup tables.
var (
	// The event id is "x402-" plus an opaque id (DESIGN "Identifiers").
	reEventID = regexp.MustCompile(`^x402-[0-9A-Za-z_-]{1,128}$`)
	// CAIP-2 chain id: namespace ":" reference (CAIP-2 §Syntax).
	reCAIP2 = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	// EVM transaction and block hashes, lower case (DESIGN: event ids derive
	// from the lower-case tx hash, so the receipt carries that form).
	reEVMHash = regexp.MustCompile(`^0x[0-9a-f]{64}$`)
	// EVM addresses, either case: EIP-55 mixed case carries a checksum that
	// the receipt must keep as submitted.
	reEVMAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	// USDC has 6 decimals (Circle's FiatTokenV2 "decimals" = 6).
	reUSDC = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$`)
	// EUR and GBP amounts have exactly 2 decimals (DESIGN "Money"); a credit
	// (a superseding receipt) may be negative.
	reMoney2 = regexp.MustCompile(`^-?(0|[1-9][0-9]*)\.[0-9]{2}$`)
	// Rates, percentages and basis points: non-negative decimal strings.
	reRate = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	// ISO 3166-1 alpha-2.
	reCountry = regexp.MustCompile(`^[A-Z]{2}$`)
	// SHA-256 in lower-case hex.
	reSHA256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// checkClaims enforces the format rules of doc.go "# Claims" and returns the
// first violation. Sign and Verify share it, so the service never signs a
// receipt that Verify would reject. It checks the shape and syntax of the
// format, never tax content: whether a rate or regime is right is for the
// ruleset and the auditor.
func checkClaims(c *Claims) error {
	v := &checker{}
	v.header(c)
	v.settlement(&c.Settlement)
	v.parties(c)
	if c.Classification != nil {
		v.classification(c.Classification)
	}
	if c.FX != nil {
		v.fxEUR(c.FX, c.Settlement.AmountUSDC)
	}
	if c.FXGBP != nil {
		v.fxGBP(c.FXGBP, c.Settlement.AmountUSDC, c.Spec)
	}
	if c.Invoice != nil {
		v.nonEmpty("/invoice/id", c.Invoice.ID)
		v.match("/invoice/ubl_sha256", c.Invoice.UBLSHA256, reSHA256Hex, "lower-case hex SHA-256")
	}
	if c.Fee != nil {
		v.fee(c.Fee)
	}
	v.nonEmpty("/log/origin", c.Log.Origin)
	if !isNoteName(c.Log.Origin) {
		v.fail("/log/origin", "not a checkpoint origin (no spaces, no '+')")
	}
	if c.Log.Index < 0 {
		v.fail("/log/index", "negative")
	}
	return v.err
}

type checker struct{ err error }

func (v *checker) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = &ClaimsError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
}

func (v *checker) nonEmpty(field, s string) {
	if s == "" {
		v.fail(field, "missing")
	}
}

func (v *checker) match(field, s string, re *regexp.Regexp, what string) {
	if !re.MatchString(s) {
		v.fail(field, "%q is not %s", s, what)
	}
}

// optMatch is match for an optional value.
func (v *checker) optMatch(field, s string, re *regexp.Regexp, what string) {
	if s != "" {
		v.match(field, s, re, what)
	}
}

func (v *checker) date(field, s string) {
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		v.fail(field, "%q is not a date YYYY-MM-DD", s)
	}
}

// instant requires an RFC 3339 time in UTC ("Z"): service-spec conventions,
// "Timestamps: ISO-8601 UTC".
func (v *checker) instant(field, s string) {
	if _, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") {
		v.fail(field, "%q is not an RFC 3339 UTC time (…Z)", s)
	}
}

func (v *checker) header(c *Claims) {
	wantJurisdiction := map[string]string{SpecV1: JurisdictionEUVAT, SpecV2: JurisdictionUKVAT}[c.Spec]
	if wantJurisdiction == "" {
		v.fail("/spec", "unknown spec %q", c.Spec)
		return
	}
	v.match("/event_id", c.EventID, reEventID, `"x402-" + id`)
	if c.ReceiptID != "rcpt_"+c.EventID {
		v.fail("/receipt_id", "%q is not \"rcpt_\" + event_id", c.ReceiptID)
	}
	if c.IssuedAt <= 0 {
		v.fail("/iat", "not a positive unix time")
	}
	switch c.Environment {
	case EnvProduction:
		if c.Watermark != "" {
			v.fail("/watermark", "present on a production receipt")
		}
	case EnvSandbox:
		if c.Watermark != SandboxWatermark {
			v.fail("/watermark", "a sandbox receipt must carry %q", SandboxWatermark)
		}
	default:
		v.fail("/environment", "%q is neither %q nor %q", c.Environment, EnvProduction, EnvSandbox)
	}
	if c.Custody != CustodyNone {
		v.fail("/custody", "%q is not %q", c.Custody, CustodyNone)
	}
	if c.Jurisdiction != wantJurisdiction {
		v.fail("/jurisdiction", "%q cannot be used with %s (it requires %q)", c.Jurisdiction, c.Spec, wantJurisdiction)
	}
	if !strings.HasPrefix(c.Ruleset, c.Jurisdiction+"-") {
		v.fail("/ruleset", "%q is not a ruleset of %q", c.Ruleset, c.Jurisdiction)
	}
	switch c.ReviewStatus {
	case ReviewProcessed:
		if len(c.ReviewReasons) > 0 {
			v.fail("/review_reasons", "present on a %s record", ReviewProcessed)
		}
	case ReviewPending:
		if len(c.ReviewReasons) == 0 {
			v.fail("/review_reasons", "a %s record must say why", ReviewPending)
		}
	default:
		v.fail("/review_status", "%q is neither %q nor %q", c.ReviewStatus, ReviewProcessed, ReviewPending)
	}
	for i, r := range c.ReviewReasons {
		v.nonEmpty(fmt.Sprintf("/review_reasons/%d", i), r)
	}
	if c.Supersedes != "" {
		if !strings.HasPrefix(c.Supersedes, "rcpt_") || !reEventID.MatchString(strings.TrimPrefix(c.Supersedes, "rcpt_")) {
			v.fail("/supersedes", "%q is not a receipt id", c.Supersedes)
		} else if c.Supersedes == c.ReceiptID {
			v.fail("/supersedes", "a receipt cannot supersede itself")
		}
	}
}

func (v *checker) settlement(s *Settlement) {
	v.nonEmpty("/settlement/protocol", s.Protocol)
	v.match("/settlement/network", s.Network, reCAIP2, "a CAIP-2 chain id")
	evm := strings.HasPrefix(s.Network, "eip155:")
	if evm {
		v.match("/settlement/tx_hash", s.TxHash, reEVMHash, "a lower-case 0x-prefixed 32-byte hash")
	} else {
		v.nonEmpty("/settlement/tx_hash", s.TxHash)
	}
	if s.LogIndex != nil && *s.LogIndex < 0 {
		v.fail("/settlement/log_index", "negative")
	}
	v.nonEmpty("/settlement/asset", s.Asset)
	v.match("/settlement/amount_usdc", s.AmountUSDC, reUSDC, "a USDC decimal string (at most 6 decimals)")
	if evm {
		v.optMatch("/settlement/asset_contract", s.AssetContract, reEVMAddress, "an EVM address")
		v.match("/settlement/payer", s.Payer, reEVMAddress, "an EVM address")
		v.match("/settlement/receiver", s.Receiver, reEVMAddress, "an EVM address")
	} else {
		v.nonEmpty("/settlement/payer", s.Payer)
		v.nonEmpty("/settlement/receiver", s.Receiver)
	}
	v.instant("/settlement/timestamp", s.Timestamp)

	ch := &s.Chain
	switch ch.Verification {
	case ChainNotPerformed:
		if ch.BlockNumber != 0 || ch.BlockHash != "" || ch.BlockTime != "" || ch.Confirmations != 0 || ch.Finalized != nil {
			v.fail("/settlement/chain", "block facts present although verification is %q", ChainNotPerformed)
		}
	case ChainVerified:
		if ch.BlockNumber == 0 {
			v.fail("/settlement/chain/block_number", "missing")
		}
		v.match("/settlement/chain/block_hash", ch.BlockHash, reEVMHash, "a lower-case 0x-prefixed 32-byte hash")
		v.instant("/settlement/chain/block_time", ch.BlockTime)
		// The block holding the transfer is its first confirmation.
		if ch.Confirmations == 0 {
			v.fail("/settlement/chain/confirmations", "missing")
		}
		if ch.Finalized == nil {
			v.fail("/settlement/chain/finalized", "missing")
		}
	default:
		v.fail("/settlement/chain/verification", "%q is neither %q nor %q", ch.Verification, ChainVerified, ChainNotPerformed)
	}
}

func (v *checker) parties(c *Claims) {
	v.nonEmpty("/seller/legal_name", c.Seller.LegalName)
	v.match("/seller/country", c.Seller.Country, reCountry, "an ISO 3166-1 alpha-2 code")
	v.optMatch("/buyer/country", c.Buyer.Country, reCountry, "an ISO 3166-1 alpha-2 code")
	if r := c.Buyer.Registry; r != nil {
		v.nonEmpty("/buyer/registry/registry", r.Registry)
		v.nonEmpty("/buyer/registry/status", r.Status)
		v.nonEmpty("/buyer/registry/number", r.Number)
		v.instant("/buyer/registry/checked_at", r.CheckedAt)
	}
}

func (v *checker) classification(k *Classification) {
	v.nonEmpty("/classification/status", k.Status)
	v.optMatch("/classification/rate_percent", k.RatePercent, reRate, "a decimal string")
	v.optMatch("/classification/taxing_country", k.TaxingCountry, reCountry, "an ISO 3166-1 alpha-2 code")
	if k.RateEffectiveFrom != "" {
		v.date("/classification/rate_effective_from", k.RateEffectiveFrom)
	}
	for i, r := range k.Reasons {
		v.nonEmpty(fmt.Sprintf("/classification/reasons/%d", i), r)
	}
}

// conversion holds what FX and FXGBP share, so that one routine checks both.
type conversion struct {
	prefix, pair, currency                           string
	amountUSDC, usdcUSDRate, usdcUSDSource, rounding string
	rate                                             *FXRate
	rateMember                                       string
	gross, net, vat                                  string
}

func (v *checker) fxEUR(f *FX, settled string) {
	v.conversion(conversion{
		prefix: "/fx", pair: "USDC/EUR", currency: "eur",
		amountUSDC: f.AmountUSDC, usdcUSDRate: f.USDCUSDRate, usdcUSDSource: f.USDCUSDSource, rounding: f.Rounding,
		rate: &f.USDPerEUR, rateMember: "usd_per_eur",
		gross: f.GrossEUR, net: f.NetEUR, vat: f.VATEUR,
	}, f.Pair, settled)
}

func (v *checker) fxGBP(f *FXGBP, settled, spec string) {
	if spec != SpecV2 {
		v.fail("/fx_gbp", "only %s receipts carry sterling figures", SpecV2)
		return
	}
	v.conversion(conversion{
		prefix: "/fx_gbp", pair: "USDC/GBP", currency: "gbp",
		amountUSDC: f.AmountUSDC, usdcUSDRate: f.USDCUSDRate, usdcUSDSource: f.USDCUSDSource, rounding: f.Rounding,
		rate: &f.USDPerGBP, rateMember: "usd_per_gbp",
		gross: f.GrossGBP, net: f.NetGBP, vat: f.VATGBP,
	}, f.Pair, settled)
}

func (v *checker) conversion(c conversion, pair, settled string) {
	if pair != c.pair {
		v.fail(c.prefix+"/pair", "%q is not %q", pair, c.pair)
	}
	if c.amountUSDC != settled {
		v.fail(c.prefix+"/amount_usdc", "%q differs from /settlement/amount_usdc %q", c.amountUSDC, settled)
	}
	v.match(c.prefix+"/usdc_usd_rate", c.usdcUSDRate, reRate, "a decimal string")
	v.nonEmpty(c.prefix+"/usdc_usd_source", c.usdcUSDSource)
	r, rp := c.rate, c.prefix+"/"+c.rateMember
	v.match(rp+"/raw", r.Raw, reRate, "a decimal string")
	v.date(rp+"/rate_date", r.RateDate)
	v.date(rp+"/requested_date", r.RequestedDate)
	v.nonEmpty(rp+"/policy", r.Policy)
	v.nonEmpty(rp+"/source", r.Source)
	v.nonEmpty(c.prefix+"/rounding", c.rounding)
	v.match(c.prefix+"/gross_"+c.currency, c.gross, reMoney2, "an amount with 2 decimals")
	v.optMatch(c.prefix+"/net_"+c.currency, c.net, reMoney2, "an amount with 2 decimals")
	v.optMatch(c.prefix+"/vat_"+c.currency, c.vat, reMoney2, "an amount with 2 decimals")
	if (c.net == "") != (c.vat == "") {
		v.fail(c.prefix, "net_%s and vat_%s must be both present or both absent", c.currency, c.currency)
	}
	// DESIGN "Gross, not net": VAT = gross − net, so the three must add up
	// exactly; a receipt whose own arithmetic fails is not signed.
	if v.err == nil && c.net != "" {
		g, n, t := decimal.RequireFromString(c.gross), decimal.RequireFromString(c.net), decimal.RequireFromString(c.vat)
		if !n.Add(t).Equal(g) {
			v.fail(c.prefix, "net_%[1]s %[2]s + vat_%[1]s %[3]s != gross_%[1]s %[4]s", c.currency, c.net, c.vat, c.gross)
		}
	}
}

func (v *checker) fee(f *Fee) {
	if f.Model != FeeModelBasisPoints {
		v.fail("/fee/model", "%q is not %q", f.Model, FeeModelBasisPoints)
	}
	v.match("/fee/bps", f.BPS, reRate, "a decimal string")
	v.match("/fee/accrued_eur", f.AccruedEUR, reMoney2, "an amount with 2 decimals")
}

// isNoteName reports whether s can be a C2SP signed-note key name and hence a
// checkpoint origin: non-empty, valid UTF-8, no Unicode spaces, no '+'
// (C2SP signed-note §"Signatures"; golang.org/x/mod/sumdb/note isValidName),
// and no control characters (a note must not contain any but newline).
func isNoteName(s string) bool {
	return s != "" && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return r == '+' || r < 0x20 || r == 0x7f || unicode.IsSpace(r)
	})
}
