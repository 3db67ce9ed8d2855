package evmverify

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CAIP-2 identifiers of the networks fiscal402 supports (eip155:8453 and
// eip155:1). CAIP-2 "eip155" namespace:
// the reference is the decimal EIP-155 chain id.
const (
	NetworkBase     = "eip155:8453"
	NetworkEthereum = "eip155:1"
)

// USDC contract addresses: Base mainnet from the x402 Go SDK
// go/mechanisms/evm/constants.go (https://github.com/x402-foundation/x402) and
// Circle's list at https://developers.circle.com/stablecoins/usdc-contract-addresses; Ethereum
// mainnet from the x402 TypeScript paywall (typescript/packages/http/
// paywall/src/evm/utils.ts) and the same Circle list. Both are
// FiatTokenProxy contracts with 6 decimals; the Transfer logs carry the
// proxy's address. Stored lower case, the form every comparison uses.
var usdcContracts = map[string]string{
	NetworkBase:     "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
	NetworkEthereum: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
}

// USDC has 6 decimals on both networks (x402 constants.go DefaultDecimals;
// FiatTokenV1.decimals as initialised by Circle). Amounts here are atomic
// units; this constant is for callers that render them.
const USDCDecimals = 6

// USDCContract returns the address of Circle's USDC contract on a CAIP-2
// network, in lower case, and whether the network is one this package
// knows. Only NetworkBase and NetworkEthereum are known: the testnets are
// deliberately absent so that a testnet payment can never pass as a
// mainnet asset.
func USDCContract(network string) (addr string, ok bool) {
	addr, ok = usdcContracts[network]
	return addr, ok
}

var errNotEIP155 = errors.New("not an eip155 network")

// ChainID returns the EIP-155 chain id of a CAIP-2 "eip155:<id>" network.
// The reference must be canonical decimal (no sign, no leading zero), so
// that one chain has exactly one spelling and dedupe keys cannot be forked
// ("eip155:08453" is refused).
func ChainID(network string) (uint64, error) {
	ref, ok := strings.CutPrefix(network, "eip155:")
	if !ok {
		return 0, fmt.Errorf("network %.50q: %w", network, errNotEIP155)
	}
	if ref == "" || (ref[0] == '0' && ref != "0") || ref[0] == '+' || ref[0] == '-' {
		return 0, fmt.Errorf("network %.50q: chain id is not canonical decimal", network)
	}
	id, err := strconv.ParseUint(ref, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("network %.50q: bad chain id", network)
	}
	return id, nil
}
