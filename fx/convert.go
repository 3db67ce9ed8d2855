package fx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// EUR amounts are rounded in exactly one way, defined here: to EURScale
// decimal places (cents), half away from zero. Half away from zero is the
// rounding of Reg. (EC) 1103/97 Art. 5 ("if ... exactly half-way, the sum
// shall be rounded up") and common VAT practice; it is symmetric, so a
// refund rounds to the negative of its sale. Banker's rounding is not used.
// Rounding is national law (CJEU C-484/06 Koninklijke Ahold); this is the
// customary rule, not a per-Member-State one (Reg. 1103/97:
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:31997R1103;
// C-484/06, ECLI:EU:C:2008:394:
// https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX:62006CJ0484).
const (
	EURScale                 = 2
	RoundingHalfAwayFromZero = "half-away-from-zero"
)

// RoundEUR rounds d to cents, half away from zero: 0.125 → 0.13,
// −0.125 → −0.13. It is the one rounding rule for EUR amounts; the engine
// uses it (or DivEUR) for net and VAT too.
func RoundEUR(d decimal.Decimal) decimal.Decimal { return roundDec(d, EURScale) }

// DivEUR returns n / d rounded to cents by the rule of RoundEUR, applied to
// the exact quotient. Prefer it to dividing and then calling RoundEUR:
// rounding a quotient first to some finite precision and then to cents can
// round twice (1 / 200.0000000000000016 is 0.00499999999999999996..., which
// is 0.0050000000000000 at 16 places and would then become 0.01, not 0.00).
// It panics if d is zero, as decimal division does.
func DivEUR(n, d decimal.Decimal) decimal.Decimal { return divRound(n, d, EURScale) }

// USDC → USD is a 1:1 peg assumption, recorded on every conversion: USDC is
// not an ECB currency and the issuer redeems it at par. Market prices can
// deviate (USDC fell "as low as $0.88" in March 2023 when Silicon Valley Bank
// failed: https://blog.cryptology.com/silicon-valley-bank-collapses-and-usdc-depegs/),
// which is why the assumption is written
// into the record instead of being implicit.
const (
	PegRate   = "1"
	PegSource = "peg"
	PegNote   = "1 USDC = 1 USD assumed (issuer redemption peg)"
)

// Peg is the USDC→USD leg of a conversion.
type Peg struct {
	Rate   string `json:"rate"`   // USD per USDC, "1"
	Source string `json:"source"` // "peg"
	Note   string `json:"note"`
}

// USDCPeg is the 1:1 peg recorded by ConvertUSDC.
func USDCPeg() Peg { return Peg{Rate: PegRate, Source: PegSource, Note: PegNote} }

// PairUSDCEUR is the Pair of every Conversion.
const PairUSDCEUR = "USDC/EUR"

// Conversion is the EUR value of one USDC settlement with everything needed
// to recompute it. Its JSON is the "fx" object of the fiscal record; member
// names are stable. GrossEUR is not written: GrossEURString is its wire form.
type Conversion struct {
	Pair           string          `json:"pair"`       // "USDC/EUR"
	AmountUSDC     string          `json:"amountUsdc"` // the settled amount, canonical decimal string (no exponent, no trailing zeros)
	USDCUSD        Peg             `json:"usdcUsd"`    // the peg assumption
	USDPerEUR      Rate            `json:"usdPerEur"`  // the ECB rate with its provenance
	GrossEUR       decimal.Decimal `json:"-"`          // AmountUSDC × 1 / USDPerEUR, rounded once to cents (DivEUR)
	GrossEURString string          `json:"grossEur"`   // GrossEUR with exactly two decimals, e.g. "85.59"
	Rounding       string          `json:"rounding"`   // "half-away-from-zero"
	Scale          int             `json:"scale"`      // 2

	// The exact EUR gross, set by ConvertUSDCExact only (ConvertUSDC leaves
	// them zero and they are then not written): AmountUSDC / USDPerEUR
	// rounded once to ExactScale decimals, half away from zero.
	GrossEURExact       decimal.Decimal `json:"-"`
	GrossEURExactString string          `json:"grossEurExact,omitempty"` // e.g. "85.587127695995"
	ExactScale          int             `json:"exactScale,omitempty"`    // 12
}

// ConvertUSDC converts a settled USDC amount to EUR: USD = USDC × 1 (the
// recorded peg), EUR = USD / usdPerEUR (the rate as the ECB publishes it,
// USD per EUR, never inverted), rounded once to cents, half away from zero.
// 100 USDC at 1.1684 is 85.59 EUR. Negative amounts (refunds) round
// symmetrically.
//
// usdPerEUR must come from a Source or a decoded record: ConvertUSDC panics
// if its Quote is not USD per EUR or its Value is not positive, which only a
// hand-built Rate can be.
func ConvertUSDC(amount decimal.Decimal, usdPerEUR Rate) Conversion {
	if usdPerEUR.Base != "EUR" || usdPerEUR.Quote != "USD" || !usdPerEUR.Value.IsPositive() {
		panic(fmt.Sprintf("fx: ConvertUSDC: rate must be a positive USD per EUR rate, got %s per %s = %s",
			usdPerEUR.Quote, usdPerEUR.Base, usdPerEUR.Value.String()))
	}
	eur := DivEUR(amount, usdPerEUR.Value)
	return Conversion{
		Pair:           PairUSDCEUR,
		AmountUSDC:     canonicalDecimal(amount),
		USDCUSD:        USDCPeg(),
		USDPerEUR:      usdPerEUR,
		GrossEUR:       eur,
		GrossEURString: stringFixed(eur, EURScale),
		Rounding:       RoundingHalfAwayFromZero,
		Scale:          EURScale,
	}
}

// canonicalDecimal formats d in plain notation without trailing zeros
// ("100", "0.5", "-1.25"), independent of the decimal package's global
// formatting switches.
func canonicalDecimal(d decimal.Decimal) string {
	places := max(0, -d.Exponent())
	var s string
	if places <= 18 {
		s = stringFixed(d, places)
	} else {
		s = d.StringFixed(places)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// USDCDecimals is the number of decimals of USDC (ERC-20 decimals()).
const USDCDecimals = 6

// ErrAmount means a string is not a valid settled USDC amount.
var ErrAmount = errors.New("fx: invalid USDC amount")

// maxAmountLen bounds the text ParseUSDC reads: 30 integer digits, the
// point, six decimals and ample room for trailing zeros.
const maxAmountLen = 80

// ParseUSDC parses a settled USDC amount written as a decimal string: digits,
// optionally a point and digits ("12.5", "0.000001", "0.0510000"), positive,
// no sign, exponent, spaces or superfluous leading zeros. The value may have
// at most six decimals, USDC's precision; zeros after the sixth decimal
// change nothing and are accepted ("0.0510000" is 0.051), a non-zero digit
// there is refused with its position, because it is finer than any USDC
// amount can be. Errors wrap ErrAmount.
func ParseUSDC(s string) (decimal.Decimal, error) {
	intPart, frac, hasPoint := strings.Cut(s, ".")
	switch {
	case len(s) > maxAmountLen:
		return decimal.Decimal{}, fmt.Errorf("%w: %.20q...: longer than %d characters", ErrAmount, s, maxAmountLen)
	case !allDigits(intPart) || intPart == "":
		return decimal.Decimal{}, fmt.Errorf("%w: %q: not a plain decimal", ErrAmount, s)
	case len(intPart) > 1 && intPart[0] == '0':
		return decimal.Decimal{}, fmt.Errorf("%w: %q: leading zero", ErrAmount, s)
	case len(intPart) > 30:
		return decimal.Decimal{}, fmt.Errorf("%w: %q: too large", ErrAmount, s)
	case hasPoint && (frac == "" || !allDigits(frac)):
		return decimal.Decimal{}, fmt.Errorf("%w: %q: not a plain decimal", ErrAmount, s)
	}
	if len(frac) > USDCDecimals {
		if i := strings.LastIndexFunc(frac, func(r rune) bool { return r != '0' }); i >= USDCDecimals {
			return decimal.Decimal{}, fmt.Errorf("%w: %q: finer than USDC's %d decimals (non-zero digit at decimal place %d)",
				ErrAmount, s, USDCDecimals, i+1)
		}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%w: %q: %v", ErrAmount, s, err)
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("%w: %q: not positive", ErrAmount, s)
	}
	if d.Exponent() < -USDCDecimals {
		d = d.Round(USDCDecimals) // drops only the trailing zeros checked above
	}
	return d, nil
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ErrInconsistent means a Conversion does not recompute to its own figures.
var ErrInconsistent = errors.New("fx: inconsistent conversion")

// Check recomputes c from its recorded inputs (AmountUSDC, the peg, the raw
// ECB rate) and reports whether every recorded figure agrees. It lets an
// auditor verify the "fx" object of a fiscal record offline. Errors wrap
// ErrInconsistent or ErrAmount.
func (c Conversion) Check() error {
	amount, err := decimal.NewFromString(c.AmountUSDC)
	if err != nil || canonicalDecimal(amount) != c.AmountUSDC {
		return fmt.Errorf("%w: amountUsdc %q is not a canonical decimal", ErrAmount, c.AmountUSDC)
	}
	rate, err := parseRateValue(c.USDPerEUR.Raw)
	switch {
	case c.Pair != PairUSDCEUR:
		return fmt.Errorf("%w: pair %q", ErrInconsistent, c.Pair)
	case c.USDCUSD != USDCPeg():
		return fmt.Errorf("%w: usdcUsd %+v is not the 1:1 peg", ErrInconsistent, c.USDCUSD)
	case c.USDPerEUR.Base != "EUR" || c.USDPerEUR.Quote != "USD":
		return fmt.Errorf("%w: rate is %s per %s, want USD per EUR", ErrInconsistent, c.USDPerEUR.Quote, c.USDPerEUR.Base)
	case err != nil:
		return fmt.Errorf("%w: usdPerEur.raw %q: %v", ErrInconsistent, c.USDPerEUR.Raw, err)
	case c.Rounding != RoundingHalfAwayFromZero || c.Scale != EURScale:
		return fmt.Errorf("%w: rounding %q scale %d", ErrInconsistent, c.Rounding, c.Scale)
	}
	if err := c.USDPerEUR.checkPublishedFrom(); err != nil {
		return err
	}
	want := DivEUR(amount, rate)
	if c.GrossEURString != want.StringFixed(EURScale) {
		return fmt.Errorf("%w: grossEur %q, recomputed %q", ErrInconsistent, c.GrossEURString, want.StringFixed(EURScale))
	}
	// GrossEUR is not on the wire, so a decoded record has it zero.
	if !c.GrossEUR.IsZero() && !c.GrossEUR.Equal(want) {
		return fmt.Errorf("%w: GrossEUR %s, recomputed %s", ErrInconsistent, c.GrossEUR.StringFixed(EURScale), want.StringFixed(EURScale))
	}
	if c.GrossEURExactString == "" && c.ExactScale == 0 && c.GrossEURExact.IsZero() {
		return nil // a ConvertUSDC record
	}
	if c.ExactScale != ExactScale {
		return fmt.Errorf("%w: exactScale %d, want %d", ErrInconsistent, c.ExactScale, ExactScale)
	}
	exact := DivExact(amount, rate)
	if c.GrossEURExactString != exact.StringFixed(ExactScale) {
		return fmt.Errorf("%w: grossEurExact %q, recomputed %q", ErrInconsistent, c.GrossEURExactString, exact.StringFixed(ExactScale))
	}
	if !c.GrossEURExact.IsZero() && !c.GrossEURExact.Equal(exact) {
		return fmt.Errorf("%w: GrossEURExact %s, recomputed %s", ErrInconsistent, c.GrossEURExact.String(), exact.StringFixed(ExactScale))
	}
	return nil
}
