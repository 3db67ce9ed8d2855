package evmverify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The Ethereum JSON-RPC encodes numbers as "quantities" (0x-prefixed hex,
// no leading zeros, "0x0" for zero) and byte strings as "data" (0x-prefixed,
// two hex digits per byte). See the execution-apis specification
// (ethereum/execution-apis, src/schemas/base-types.yaml: uint, bytes,
// hash32, address).
//
// The parsers below accept leading zeros in quantities: a node that pads
// is odd, not lying, and rejecting it would turn a provable claim into
// "unavailable" for no gain. Everything else is strict.

var (
	errNoPrefix = errors.New("missing 0x prefix")
	errEmpty    = errors.New("empty hex")
	errOddHex   = errors.New("odd number of hex digits")
	errBadHex   = errors.New("non-hex character")
	errTooBig   = errors.New("quantity overflows uint64")
)

// parseQuantity decodes a JSON-RPC quantity such as "0x2105" into a uint64.
func parseQuantity(s string) (uint64, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, fmt.Errorf("quantity %.20q: %w", s, errNoPrefix)
	}
	if digits == "" {
		return 0, fmt.Errorf("quantity %q: %w", s, errEmpty)
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 16 {
		return 0, fmt.Errorf("quantity %.20q: %w", s, errTooBig)
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		d, ok := hexDigit(digits[i])
		if !ok {
			return 0, fmt.Errorf("quantity %.20q: %w", s, errBadHex)
		}
		n = n<<4 | uint64(d)
	}
	return n, nil
}

// formatQuantity is the inverse of parseQuantity, in the canonical form.
func formatQuantity(n uint64) string { return fmt.Sprintf("0x%x", n) }

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseData decodes JSON-RPC "data": "0x" followed by an even number of hex
// digits ("0x" alone is the empty byte string).
func parseData(s string) ([]byte, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return nil, fmt.Errorf("data %.20q: %w", s, errNoPrefix)
	}
	if len(digits)%2 != 0 {
		return nil, fmt.Errorf("data %.20q: %w", s, errOddHex)
	}
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil, fmt.Errorf("data %.20q: %w", s, errBadHex)
	}
	return b, nil
}

// parseFixedHex checks that s is 0x followed by exactly 2*size hex digits of
// either case and returns it in lower case, the canonical comparison form.
func parseFixedHex(s string, size int) (string, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		digits, ok = strings.CutPrefix(s, "0X")
	}
	if !ok {
		return "", errNoPrefix
	}
	if len(digits) != 2*size {
		return "", fmt.Errorf("want %d hex digits, have %d", 2*size, len(digits))
	}
	for i := 0; i < len(digits); i++ {
		if _, ok := hexDigit(digits[i]); !ok {
			return "", errBadHex
		}
	}
	return "0x" + strings.ToLower(digits), nil
}

// ParseAddress validates a 20-byte account or contract address (0x + 40 hex
// digits, any case) and returns it in lower case. Mixed-case input is not
// checked against EIP-55: the checksum needs Keccak-256, which the standard
// library does not provide, and every comparison here is case-insensitive
// anyway (a wrong address simply does not match the chain).
func ParseAddress(s string) (string, error) {
	a, err := parseFixedHex(s, 20)
	if err != nil {
		return "", fmt.Errorf("address %.50q: %w", s, err)
	}
	return a, nil
}

// ParseTxHash validates a 32-byte transaction hash (0x + 64 hex digits, any
// case) and returns it in lower case.
func ParseTxHash(s string) (string, error) {
	h, err := parseFixedHex(s, 32)
	if err != nil {
		return "", fmt.Errorf("transaction hash %.80q: %w", s, err)
	}
	return h, nil
}

// topicAddress decodes an indexed address event argument: a 32-byte topic
// holding the 20-byte address left-padded with 12 zero bytes (Solidity ABI
// spec, "Encoding of Indexed Event Parameters",
// https://docs.soliditylang.org/en/latest/abi-spec.html#encoding-of-indexed-event-parameters).
func topicAddress(topic string) (string, bool) {
	t, err := parseFixedHex(topic, 32)
	if err != nil {
		return "", false
	}
	const pad = 2 + 24 // "0x" + 12 zero bytes
	if strings.Trim(t[2:pad], "0") != "" {
		return "", false
	}
	return "0x" + t[pad:], true
}

// unixSeconds converts a block timestamp to int64 seconds, refusing values a
// time.Time cannot hold as Unix seconds.
func unixSeconds(ts uint64) (int64, bool) {
	if ts > math.MaxInt64 {
		return 0, false
	}
	return int64(ts), true
}
