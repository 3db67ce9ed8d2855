package receipt

import "strings"

// The syntax of claim values, as hand-written matchers: checkClaims runs on
// every Sign and Verify, and these are several times faster than the
// regular expressions they replace. TestPatternsAgreeWithRegexps and
// FuzzPatterns hold each one to its regular expression, quoted here.
type pattern func(string) bool

var (
	// ^x402-[0-9A-Za-z_-]{1,128}$: "x402-" plus an opaque id (recordid/doc.go).
	patEventID pattern = func(s string) bool { return idAfter(s, "x402-", 1, 128) }
	// ^x402-[0-9A-Za-z_-]{32,128}$: a SpecV3 event id has room for at least
	// 128 bits in hex (issue 19).
	patEventIDV3 pattern = func(s string) bool { return idAfter(s, "x402-", 32, 128) }
	// ^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$: CAIP-2 chain id, namespace ":"
	// reference (CAIP-2 §Syntax).
	patCAIP2 pattern = func(s string) bool {
		ns, ref, ok := strings.Cut(s, ":")
		return ok && span(ns, 3, 8, isCAIP2Namespace) && span(ref, 1, 32, isIDChar)
	}
	// ^0x[0-9a-f]{64}$: EVM transaction and block hashes, lower case (the
	// form event ids derive from).
	patEVMHash pattern = func(s string) bool { return hexAfter(s, "0x", 64, false) }
	// ^0x[0-9a-fA-F]{40}$: EVM addresses, either case (EIP-55 mixed case
	// carries a checksum the receipt keeps as submitted).
	patEVMAddress pattern = func(s string) bool { return hexAfter(s, "0x", 40, true) }
	// ^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$: USDC, 6 decimals (Circle's
	// FiatTokenV2 "decimals" = 6).
	patUSDC pattern = func(s string) bool { return isDecimal(s, false, 0, 6) }
	// ^-?(0|[1-9][0-9]*)\.[0-9]{2}$: EUR, GBP and the other tax currencies
	// have exactly 2 decimals (ISO 4217 minor unit 2; money is a decimal
	// string, never a float); a
	// credit may be negative.
	patMoney2 pattern = func(s string) bool { return isDecimal(s, true, 2, 2) }
	// ^(0|[1-9][0-9]*)(\.[0-9]+)?$: rates, percentages, basis points.
	patRate pattern = func(s string) bool { return isDecimal(s, false, 0, -1) }
	// ^-?(0|[1-9][0-9]*)(\.[0-9]{1,12})?$: exact (unrounded) SpecV3 amounts.
	patExact pattern = func(s string) bool { return isDecimal(s, true, 0, 12) }
	// ^[A-Z]{2}$: ISO 3166-1 alpha-2.
	patCountry pattern = func(s string) bool { return span(s, 2, 2, isUpper) }
	// ^[A-Z]{3}$: ISO 4217 alphabetic code.
	patCurrency pattern = func(s string) bool { return span(s, 3, 3, isUpper) }
	// ^[0-9a-f]{64}$: SHA-256 in lower-case hex.
	patSHA256Hex pattern = func(s string) bool { return hexAfter(s, "", 64, false) }
	// ^[a-z][a-z0-9_]{0,63}$: evidence kinds, lower-case words joined by '_'.
	patEvidenceKind pattern = func(s string) bool {
		return s != "" && s[0] >= 'a' && s[0] <= 'z' && span(s[1:], 0, 63, func(c byte) bool {
			return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
		})
	}
)

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIDChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

func isCAIP2Namespace(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' }

// span reports whether s has min to max bytes, each accepted by ok.
func span(s string, min, max int, ok func(byte) bool) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func idAfter(s, prefix string, min, max int) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && span(rest, min, max, isIDChar)
}

func hexAfter(s, prefix string, n int, upperToo bool) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	return ok && span(rest, n, n, func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || upperToo && c >= 'A' && c <= 'F'
	})
}

// isDecimal matches -?(0|[1-9][0-9]*)(\.[0-9]{minFrac,maxFrac})?, the sign
// only when signed, the fraction mandatory when minFrac > 0, maxFrac < 0
// meaning unbounded.
func isDecimal(s string, signed bool, minFrac, maxFrac int) bool {
	if signed && strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	switch {
	case intPart == "" || !span(intPart, 1, len(intPart), isDigit):
		return false
	case len(intPart) > 1 && intPart[0] == '0':
		return false
	case !hasFrac:
		return minFrac == 0
	case len(frac) < max(minFrac, 1) || maxFrac >= 0 && len(frac) > maxFrac:
		return false
	}
	return span(frac, 0, len(frac), isDigit)
}
