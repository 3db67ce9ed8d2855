package receipt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
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

// FeeModelBasisPoints is the only fee model (the pricing policy of GET /v1/pricing).
const FeeModelBasisPoints = "basis_points"

// Checking modes: what the claims must look like.
type claimsMode int

const (
	// modeSigned is the form Sign signs and Verify checks: for SpecV3, no
	// personal field in clear, each one committed.
	modeSigned claimsMode = iota
	// modeClear is SpecV3 claims with the personal fields in clear, before
	// Conceal commits them.
	modeClear
)

// checkClaims enforces the format rules of doc.go "# Claims" and returns the
// first violation. Sign and Verify share it, so the service never signs a
// receipt that Verify would reject. It checks the shape and syntax of the
// format, never tax content: whether a rate or regime is right is for the
// ruleset and the auditor.
func checkClaims(c *Claims) error { return checkClaimsMode(c, modeSigned) }

func checkClaimsMode(c *Claims, mode claimsMode) error {
	v := &checker{spec: c.Spec, v3: ConcealedSpec(c.Spec)}
	// Personal fields are in clear in the old versions and in Conceal's
	// input; a signed SpecV3 receipt has them only as commitments.
	v.inClear = !v.v3 || mode == modeClear
	if mode == modeClear && !v.v3 {
		v.fail("/spec", "%q claims carry no commitments; only %s and %s claims are concealed", c.Spec, SpecV3, SpecV4)
		return v.err
	}
	if !v.header(c) {
		return v.err
	}
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
	if c.FXTaxCurrency != nil {
		v.fxTaxCurrency(c.FXTaxCurrency, c.Settlement.AmountUSDC)
	}
	if c.Invoice != nil {
		v.nonEmpty("/invoice/id", c.Invoice.ID)
		v.personal("/invoice/ubl_sha256", c.Invoice.UBLSHA256 != "", func() {
			v.match("/invoice/ubl_sha256", c.Invoice.UBLSHA256, patSHA256Hex, "lower-case hex SHA-256")
		})
	}
	if c.Fee != nil {
		v.fee(c.Fee)
	}
	switch {
	case !v.v3 && c.RecordSHA256 != "":
		v.fail("/record_sha256", "only %s and %s receipts carry this member", SpecV3, SpecV4)
	case v.v3:
		v.personal("/record_sha256", c.RecordSHA256 != "", func() {
			v.optMatch("/record_sha256", c.RecordSHA256, patSHA256Hex, "lower-case hex SHA-256")
		})
	}
	switch {
	case !v.v3 && c.Commitments != nil:
		v.fail("/commitments", "only %s and %s receipts carry commitments", SpecV3, SpecV4)
	case v.v3 && mode == modeClear && c.Commitments != nil:
		v.fail("/commitments", "claims in clear carry no commitments yet")
	case v.v3 && mode == modeSigned:
		v.commitments(c)
	}
	v.nonEmpty("/log/origin", c.Log.Origin)
	if !isNoteName(c.Log.Origin) {
		v.fail("/log/origin", "not a checkpoint origin (no spaces, no '+')")
	}
	// A SpecV3 receipt does not sign its index (the proof binds it), so
	// only the older versions have one to check.
	if !v.v3 && c.Log.Index < 0 {
		v.fail("/log/index", "negative")
	}
	return v.err
}

// ConcealedSpec reports whether claims of spec are in the form of doc.go
// "# Version 3.0.0": personal fields only as commitments (Conceal), exact
// figures, location evidence, no log index in the payload. True for 3.0.0
// and 4.0.0, which shares its claims.
func ConcealedSpec(spec string) bool { return spec == SpecV3 || spec == SpecV4 }

type checker struct {
	err     error
	spec    string
	v3      bool
	inClear bool // personal fields are written in clear
}

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

func (v *checker) match(field, s string, ok pattern, what string) {
	if !ok(s) {
		v.fail(field, "%q is not %s", s, what)
	}
}

// optMatch is match for an optional value.
func (v *checker) optMatch(field, s string, ok pattern, what string) {
	if s != "" {
		v.match(field, s, ok, what)
	}
}

// matchIn is match for the member member of the object at prefix; the
// pointer is only built for a failure.
func (v *checker) matchIn(prefix, member, s string, ok pattern, what string, optional bool) {
	if (!optional || s != "") && !ok(s) {
		v.fail(prefix+"/"+member, "%q is not %s", s, what)
	}
}

// personal checks a personal field: in clear, with check; in a signed
// SpecV3 receipt, absent (it is committed).
func (v *checker) personal(field string, present bool, check func()) {
	switch {
	case v.inClear:
		check()
	case present:
		v.fail(field, "is personal data, which a %s receipt carries only as a commitment (see Conceal)", v.spec)
	}
}

// v3Only refuses a SpecV3 member in an older receipt.
func (v *checker) v3Only(field string, present bool) {
	if present && !v.v3 {
		v.fail(field, "only %s and %s receipts carry this member", SpecV3, SpecV4)
	}
}

func (v *checker) date(field, s string) {
	if !isDate(s) {
		v.fail(field, "%q is not a date YYYY-MM-DD", s)
	}
}

// isDate reports whether s is a date YYYY-MM-DD, read as
// time.Parse(time.DateOnly, s) reads it (four-digit year, two-digit month
// 01-12, a day that the month has in that year), without its generic
// layout parser: time.Parse was 1.7 µs of every receipt sealed.
func isDate(s string) bool {
	if len(s) != len(time.DateOnly) || s[4] != '-' || s[7] != '-' {
		return false
	}
	n := 0
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	year, month, day := n/10000, n/100%100, n%100
	// Every month has 28 days; beyond, the month's length by the standard
	// library's calendar (proleptic Gregorian, as time.Parse): day 0 of
	// the next month is its last day.
	return month >= 1 && month <= 12 && day >= 1 && (day <= 28 || day <= time.Date(year, time.Month(month+1), 0, 0, 0, 0, 0, time.UTC).Day())
}

// patNonEmpty accepts any non-empty string.
var patNonEmpty pattern = func(s string) bool { return s != "" }

// scaled12 reads a decimal string that passed patMoney2 or patExact (at
// most 12 decimals) as an integer count of 10⁻¹² units, false when it does
// not fit in 64 bits.
func scaled12(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if len(frac) > 12 || len(intPart)+12 > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(intPart); i++ {
		n = n*10 + int64(intPart[i]-'0')
	}
	for i := range 12 {
		n *= 10
		if i < len(frac) {
			n += int64(frac[i] - '0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// instant requires an RFC 3339 time in UTC ("Z"): every timestamp the service
// writes is ISO-8601 in UTC.
func (v *checker) instant(field, s string) {
	if _, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") {
		v.fail(field, "%q is not an RFC 3339 UTC time (…Z)", s)
	}
}

// header checks the top-level members; false when the spec is unknown and
// nothing else can be judged.
func (v *checker) header(c *Claims) bool {
	var jurisdictions []string
	switch c.Spec {
	case SpecV1:
		jurisdictions = []string{JurisdictionEUVAT}
	case SpecV2:
		jurisdictions = []string{JurisdictionUKVAT}
	case SpecV3, SpecV4:
		jurisdictions = []string{JurisdictionEUVAT, JurisdictionUKVAT}
	default:
		v.fail("/spec", "unknown spec %q (this verifier knows %s, %s, %s and %s)", c.Spec, SpecV1, SpecV2, SpecV3, SpecV4)
		return false
	}
	if v.v3 {
		// Issue 19: a public receipt's id must not be guessable, so it
		// needs room for at least 128 bits (32 hex digits) of a keyed MAC
		// or of randomness. The format cannot tell a MAC from a plain hash;
		// the issuer's documentation says which it writes.
		v.match("/event_id", c.EventID, patEventIDV3, `"x402-" + an id of 32 to 128 characters [0-9A-Za-z_-]`)
	} else {
		v.match("/event_id", c.EventID, patEventID, `"x402-" + id`)
	}
	if id, ok := strings.CutPrefix(c.ReceiptID, "rcpt_"); !ok || id != c.EventID {
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
	if !slices.Contains(jurisdictions, c.Jurisdiction) {
		v.fail("/jurisdiction", "%q cannot be used with %s (it requires %q)", c.Jurisdiction, c.Spec, strings.Join(jurisdictions, `" or "`))
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
		if r == "" {
			v.fail("/review_reasons/"+strconv.Itoa(i), "missing")
		}
	}
	if c.Supersedes != "" {
		// Any receipt id, of any version: a 3.0.0 receipt may amend a 1.0.0 one.
		if !strings.HasPrefix(c.Supersedes, "rcpt_") || !patEventID(strings.TrimPrefix(c.Supersedes, "rcpt_")) {
			v.fail("/supersedes", "%q is not a receipt id", c.Supersedes)
		} else if c.Supersedes == c.ReceiptID {
			v.fail("/supersedes", "a receipt cannot supersede itself")
		}
	}
	return true
}

func (v *checker) settlement(s *Settlement) {
	v.nonEmpty("/settlement/protocol", s.Protocol)
	v.match("/settlement/network", s.Network, patCAIP2, "a CAIP-2 chain id")
	evm := strings.HasPrefix(s.Network, "eip155:")
	v.personal("/settlement/tx_hash", s.TxHash != "", func() {
		if evm {
			v.match("/settlement/tx_hash", s.TxHash, patEVMHash, "a lower-case 0x-prefixed 32-byte hash")
		} else {
			v.nonEmpty("/settlement/tx_hash", s.TxHash)
		}
	})
	v.personal("/settlement/log_index", s.LogIndex != nil, func() {
		if s.LogIndex != nil && *s.LogIndex < 0 {
			v.fail("/settlement/log_index", "negative")
		}
	})
	v.nonEmpty("/settlement/asset", s.Asset)
	v.match("/settlement/amount_usdc", s.AmountUSDC, patUSDC, "a USDC decimal string (at most 6 decimals)")
	if evm {
		v.optMatch("/settlement/asset_contract", s.AssetContract, patEVMAddress, "an EVM address")
	}
	for _, w := range []struct{ field, addr string }{{"/settlement/payer", s.Payer}, {"/settlement/receiver", s.Receiver}} {
		v.personal(w.field, w.addr != "", func() {
			if evm {
				v.match(w.field, w.addr, patEVMAddress, "an EVM address")
			} else {
				v.nonEmpty(w.field, w.addr)
			}
		})
	}
	v.instant("/settlement/timestamp", s.Timestamp)

	ch := &s.Chain
	switch ch.Verification {
	case ChainNotPerformed:
		if ch.BlockNumber != 0 || ch.BlockHash != "" || ch.BlockTime != "" || ch.Confirmations != 0 || ch.Finalized != nil {
			v.fail("/settlement/chain", "block facts present although verification is %q", ChainNotPerformed)
		}
	case ChainVerified:
		v.personal("/settlement/chain/block_number", ch.BlockNumber != 0, func() {
			if ch.BlockNumber == 0 {
				v.fail("/settlement/chain/block_number", "missing")
			}
		})
		v.personal("/settlement/chain/block_hash", ch.BlockHash != "", func() {
			v.match("/settlement/chain/block_hash", ch.BlockHash, patEVMHash, "a lower-case 0x-prefixed 32-byte hash")
		})
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
	v.match("/seller/country", c.Seller.Country, patCountry, "an ISO 3166-1 alpha-2 code")
	b := &c.Buyer
	v.optMatch("/buyer/country", b.Country, patCountry, "an ISO 3166-1 alpha-2 code")
	// Buyer fields are all optional: in clear there is nothing to check
	// beyond presence; signed SpecV3 claims must not show them.
	v.personal("/buyer/postal_code", b.PostalCode != "", func() {})
	v.personal("/buyer/vat_number", b.VATNumber != "", func() {})
	v.personal("/buyer/name", b.Name != "", func() {})
	if r := b.Registry; r != nil {
		v.nonEmpty("/buyer/registry/registry", r.Registry)
		v.nonEmpty("/buyer/registry/status", r.Status)
		v.personal("/buyer/registry/number", r.Number != "", func() { v.nonEmpty("/buyer/registry/number", r.Number) })
		v.personal("/buyer/registry/request_identifier", r.RequestIdentifier != "", func() {})
		v.instant("/buyer/registry/checked_at", r.CheckedAt)
	}
	v.v3Only("/buyer/location_evidence", b.LocationEvidence != nil)
	for i, e := range b.LocationEvidence {
		p := "/buyer/location_evidence/" + strconv.Itoa(i)
		v.matchIn(p, "kind", e.Kind, patEvidenceKind, "an evidence kind (lower-case letters, digits, '_')", false)
		v.matchIn(p, "country", e.Country, patCountry, "an ISO 3166-1 alpha-2 code", false)
		// In clear an item's value may be empty: an item can come without
		// its datum (a payment provider reports a card's country, not its
		// number). It is committed all the same, so that every item has its
		// commitment (commitments) and an opening says the datum was "".
		if !v.inClear && e.Value != "" {
			v.personal(p+"/value", true, nil)
		}
	}
}

// commitments checks Commitments of signed SpecV3 claims: only the personal
// fields, each a well-formed commitment, and exactly those that the clear
// claims would have had (the required ones always, the optional ones with
// the section they belong to).
func (v *checker) commitments(c *Claims) {
	cm := c.Commitments
	valid := func(k string) bool { return committable(c, k) && isCommitment(cm[k]) }
	for k := range cm {
		if valid(k) {
			continue
		}
		// Report the first bad member in sorted order, so that the error
		// does not depend on map iteration.
		for _, k := range sortedKeys(cm) {
			if !committable(c, k) {
				v.fail("/commitments", "%q is not a field this receipt can commit", k)
			} else if !isCommitment(cm[k]) {
				v.fail("/commitments/"+escapePointer(k), "%q is not \"sha256:\" + the unpadded base64url of a SHA-256", cm[k])
			}
		}
		break
	}
	need := func(field string, required bool, why string) {
		_, has := cm[field]
		switch {
		case required && !has:
			v.fail("/commitments", "no commitment for %s, which %s", field, why)
		case !required && has:
			v.fail("/commitments", "a commitment for %s, which %s", field, why)
		}
	}
	need("/settlement/tx_hash", true, "every receipt has")
	need("/settlement/payer", true, "every receipt has")
	need("/settlement/receiver", true, "every receipt has")
	verified := c.Settlement.Chain.Verification == ChainVerified
	need("/settlement/chain/block_number", verified, "a receipt has exactly when the chain was verified")
	need("/settlement/chain/block_hash", verified, "a receipt has exactly when the chain was verified")
	hasRegistry := c.Buyer.Registry != nil
	need("/buyer/registry/number", hasRegistry, "a receipt has exactly when it has a buyer registry section")
	if _, has := cm["/buyer/registry/request_identifier"]; has && !hasRegistry {
		v.fail("/commitments", "a commitment for /buyer/registry/request_identifier without a buyer registry section")
	}
	need("/invoice/ubl_sha256", c.Invoice != nil, "a receipt has exactly when it has an invoice section")
	for i := range c.Buyer.LocationEvidence {
		need(evidenceField(i), true, "every location evidence item has")
	}
}

// committable reports whether a SpecV3 receipt with claims c may commit
// field.
func committable(c *Claims, field string) bool {
	if findPersonalField(field) != nil {
		return true
	}
	i, ok := evidenceIndex(field)
	return ok && i < len(c.Buyer.LocationEvidence)
}

// escapePointer escapes a string for use as one JSON pointer token (RFC
// 6901 §3).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (v *checker) classification(k *Classification) {
	v.nonEmpty("/classification/status", k.Status)
	v.optMatch("/classification/rate_percent", k.RatePercent, patRate, "a decimal string")
	v.optMatch("/classification/taxing_country", k.TaxingCountry, patCountry, "an ISO 3166-1 alpha-2 code")
	if k.RateEffectiveFrom != "" {
		v.date("/classification/rate_effective_from", k.RateEffectiveFrom)
	}
	for i, r := range k.Reasons {
		if r == "" {
			v.fail("/classification/reasons/"+strconv.Itoa(i), "missing")
		}
	}
}

// conversion holds what FX, FXGBP and FXTaxCurrency share, so that one
// routine checks all three.
type conversion struct {
	prefix, currency                                 string // the pair is "USDC/" + currency
	amountUSDC, usdcUSDRate, usdcUSDSource, rounding string
	rate                                             *FXRate
	rateMember                                       string
	gross, net, vat                                  amount
	grossExact, netExact, vatExact                   amount
}

// amount is one figure of a conversion and its member name.
type amount struct{ member, value string }

func (v *checker) fxEUR(f *FX, settled string) {
	v.v3Only("/fx/gross_eur_exact", f.GrossEURExact != "")
	v.v3Only("/fx/net_eur_exact", f.NetEURExact != "")
	v.v3Only("/fx/vat_eur_exact", f.VATEURExact != "")
	v.conversion(conversion{
		prefix: "/fx", currency: "EUR",
		amountUSDC: f.AmountUSDC, usdcUSDRate: f.USDCUSDRate, usdcUSDSource: f.USDCUSDSource, rounding: f.Rounding,
		rate: &f.USDPerEUR, rateMember: "usd_per_eur",
		gross: amount{"gross_eur", f.GrossEUR}, net: amount{"net_eur", f.NetEUR}, vat: amount{"vat_eur", f.VATEUR},
		grossExact: amount{"gross_eur_exact", f.GrossEURExact}, netExact: amount{"net_eur_exact", f.NetEURExact},
		vatExact: amount{"vat_eur_exact", f.VATEURExact},
	}, f.Pair, settled)
}

func (v *checker) fxGBP(f *FXGBP, settled, spec string) {
	switch spec {
	case SpecV2:
	case SpecV3, SpecV4:
		v.fail("/fx_gbp", "a %s receipt carries sterling figures in fx_tax_currency", spec)
		return
	default:
		v.fail("/fx_gbp", "only %s receipts carry sterling figures", SpecV2)
		return
	}
	v.conversion(conversion{
		prefix: "/fx_gbp", currency: "GBP",
		amountUSDC: f.AmountUSDC, usdcUSDRate: f.USDCUSDRate, usdcUSDSource: f.USDCUSDSource, rounding: f.Rounding,
		rate: &f.USDPerGBP, rateMember: "usd_per_gbp",
		gross: amount{"gross_gbp", f.GrossGBP}, net: amount{"net_gbp", f.NetGBP}, vat: amount{"vat_gbp", f.VATGBP},
	}, f.Pair, settled)
}

// fxTaxCurrency checks the conversion to the taxing state's currency
// (Art. 230 Directive 2006/112/EC). Every currency that can be due here has
// two decimals (ISO 4217 minor unit 2: BGN, CZK, DKK, GBP, HUF, PLN, RON,
// SEK), hence money amounts; euro figures belong in fx.
func (v *checker) fxTaxCurrency(f *FXTaxCurrency, settled string) {
	if !v.v3 {
		v.fail("/fx_tax_currency", "only %s and %s receipts carry this member", SpecV3, SpecV4)
		return
	}
	v.match("/fx_tax_currency/currency", f.Currency, patCurrency, "an ISO 4217 alphabetic code")
	if f.Currency == "EUR" {
		v.fail("/fx_tax_currency/currency", "euro figures belong in fx")
	}
	v.conversion(conversion{
		prefix: "/fx_tax_currency", currency: f.Currency,
		amountUSDC: f.AmountUSDC, usdcUSDRate: f.USDCUSDRate, usdcUSDSource: f.USDCUSDSource, rounding: f.Rounding,
		rate: &f.USDPerUnit, rateMember: "usd_per_unit",
		gross: amount{"gross", f.Gross}, net: amount{"net", f.Net}, vat: amount{"vat", f.VAT},
		grossExact: amount{"gross_exact", f.GrossExact}, netExact: amount{"net_exact", f.NetExact},
		vatExact: amount{"vat_exact", f.VATExact},
	}, f.Pair, settled)
}

func (v *checker) conversion(c conversion, pair, settled string) {
	if cur, ok := strings.CutPrefix(pair, "USDC/"); !ok || cur != c.currency {
		v.fail(c.prefix+"/pair", "%q is not %q", pair, "USDC/"+c.currency)
	}
	if c.amountUSDC != settled {
		v.fail(c.prefix+"/amount_usdc", "%q differs from /settlement/amount_usdc %q", c.amountUSDC, settled)
	}
	v.matchIn(c.prefix, "usdc_usd_rate", c.usdcUSDRate, patRate, "a decimal string", false)
	v.matchIn(c.prefix, "usdc_usd_source", c.usdcUSDSource, patNonEmpty, "a source", false)
	r := c.rate
	ok := patRate(r.Raw) && isDate(r.RateDate) && isDate(r.RequestedDate) && r.Policy != "" && r.Source != ""
	if !ok {
		rp := c.prefix + "/" + c.rateMember
		v.match(rp+"/raw", r.Raw, patRate, "a decimal string")
		v.date(rp+"/rate_date", r.RateDate)
		v.date(rp+"/requested_date", r.RequestedDate)
		v.nonEmpty(rp+"/policy", r.Policy)
		v.nonEmpty(rp+"/source", r.Source)
	}
	v.matchIn(c.prefix, "rounding", c.rounding, patNonEmpty, "a rounding rule", false)
	const money2 = "an amount with 2 decimals"
	v.matchIn(c.prefix, c.gross.member, c.gross.value, patMoney2, money2, false)
	v.matchIn(c.prefix, c.net.member, c.net.value, patMoney2, money2, true)
	v.matchIn(c.prefix, c.vat.member, c.vat.value, patMoney2, money2, true)
	v.addsUp(c.prefix, c.gross, c.net, c.vat)
	// The exact figures: the same split before rounding, so an auditor can
	// recompute the rounding (doc.go "exact"). They accompany the rounded
	// figures they refine.
	const exact = "an exact amount (at most 12 decimals)"
	v.matchIn(c.prefix, c.grossExact.member, c.grossExact.value, patExact, exact, true)
	v.matchIn(c.prefix, c.netExact.member, c.netExact.value, patExact, exact, true)
	v.matchIn(c.prefix, c.vatExact.member, c.vatExact.value, patExact, exact, true)
	if c.grossExact.value == "" && c.netExact.value != "" {
		v.fail(c.prefix, "%s without %s", c.netExact.member, c.grossExact.member)
	}
	if c.net.value == "" && c.netExact.value != "" {
		v.fail(c.prefix, "%s without %s", c.netExact.member, c.net.member)
	}
	v.addsUp(c.prefix, c.grossExact, c.netExact, c.vatExact)
}

// addsUp requires net and vat both present or both absent, and, when
// present, net + vat = gross exactly (the settled amount is the gross, VAT
// included, and VAT = gross − net, so a receipt whose own arithmetic fails
// is not signed).
func (v *checker) addsUp(prefix string, gross, net, vat amount) {
	if (net.value == "") != (vat.value == "") {
		v.fail(prefix, "%s and %s must be both present or both absent", net.member, vat.member)
	}
	if v.err == nil && net.value != "" && gross.value != "" {
		// Exact integer arithmetic on the amounts scaled to 12 decimals
		// when they fit in 64 bits (every realistic amount), decimal.Decimal
		// otherwise.
		g, ok1 := scaled12(gross.value)
		n, ok2 := scaled12(net.value)
		t, ok3 := scaled12(vat.value)
		if ok1 && ok2 && ok3 {
			// |n|, |t| < 10¹⁸: the sum cannot overflow.
			if n+t != g {
				v.fail(prefix, "%s %s + %s %s != %s %s", net.member, net.value, vat.member, vat.value, gross.member, gross.value)
			}
			return
		}
		g2, n2, t2 := decimal.RequireFromString(gross.value), decimal.RequireFromString(net.value), decimal.RequireFromString(vat.value)
		if !n2.Add(t2).Equal(g2) {
			v.fail(prefix, "%s %s + %s %s != %s %s", net.member, net.value, vat.member, vat.value, gross.member, gross.value)
		}
	}
}

func (v *checker) fee(f *Fee) {
	if f.Model != FeeModelBasisPoints {
		v.fail("/fee/model", "%q is not %q", f.Model, FeeModelBasisPoints)
	}
	v.match("/fee/bps", f.BPS, patRate, "a decimal string")
	v.match("/fee/accrued_eur", f.AccruedEUR, patMoney2, "an amount with 2 decimals")
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
