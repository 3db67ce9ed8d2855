package settlement

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/shown"
	"github.com/fiscal402/fiscal402/internal/wire"
)

// MaxRequestBytes limits the body of POST /settlements. The limits are our
// own choice; they are documented in the README and the
// OpenAPI document. The fields themselves are checked by internal/wire
// (amounts, times, addresses, countries, text, Idempotency-Keys).
const MaxRequestBytes = 64 << 10

// The codes of the field errors that are not BAD_REQUEST (README "Errors"): the
// payment is well formed but not one the service takes. fiscal's
// CodeUnsupported* are these.
const (
	CodeUnsupportedNetwork = "UNSUPPORTED_NETWORK"
	CodeUnsupportedAsset   = "UNSUPPORTED_ASSET"
	CodeUnsupportedScheme  = "UNSUPPORTED_SCHEME"
)

// The payments the service takes: protocols, networks and assets, as GET
// /v1/capabilities lists them. The networks are evmverify's, so that what
// the engine accepts and what it can verify on chain are one list.
const (
	// AssetUSDC is the one asset (USDC on every supported network).
	AssetUSDC    = "USDC"
	protocolX402 = "x402"
	schemeExact  = "exact"
)

// usdcContracts are the USDC token contracts per supported network, lower
// case, taken from evmverify.USDCContract (which cites Circle's address list
// https://developers.circle.com/stablecoins/usdc-contract-addresses, and
// x402's constants); an asset given as a
// contract address must be one of them. Built once, never changed.
var usdcContracts = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{evmverify.NetworkBase, evmverify.NetworkEthereum} {
		addr, ok := evmverify.USDCContract(n)
		if !ok {
			panic("settlement: evmverify knows no USDC contract on " + n)
		}
		m[n] = addr
	}
	return m
}()

// USDCContract is the USDC contract (lower case) on a supported network,
// "" on any other.
func USDCContract(network string) string { return usdcContracts[network] }

var caip2RE = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)

// Networks returns the CAIP-2 ids of the supported networks (those of the
// USDC contract table), in ascending order.
func Networks() []string {
	out := make([]string, 0, len(usdcContracts))
	for n := range usdcContracts {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func describeNetworks() string { return strings.Join(Networks(), ", ") }

// parseNetwork accepts a supported CAIP-2 network (eip155:8453 or
// eip155:1): missing is a BAD_REQUEST, anything else unknown is
// UNSUPPORTED_NETWORK naming the supported ones.
func parseNetwork(field, v string) (string, error) {
	if v == "" {
		return "", badRequest(field, "is required (CAIP-2, e.g. %q)", evmverify.NetworkBase)
	}
	if _, ok := usdcContracts[v]; !ok {
		detail := fmt.Sprintf("network %s is not supported; supported: %s", shown.Quote(v), describeNetworks())
		if !caip2RE.MatchString(v) {
			detail = fmt.Sprintf("%s is not a CAIP-2 network id; supported: %s", shown.Quote(v), describeNetworks())
		}
		return "", &wire.FieldError{Code: CodeUnsupportedNetwork, Field: field, Detail: detail}
	}
	return v, nil
}

// parseAsset accepts "USDC" (the default when omitted) or the USDC contract
// address of the network, compared case-insensitively.
func parseAsset(network, v string) (string, error) {
	switch {
	case v == "" || v == AssetUSDC:
		return AssetUSDC, nil
	case strings.EqualFold(v, usdcContracts[network]):
		return AssetUSDC, nil
	}
	return "", &wire.FieldError{Code: CodeUnsupportedAsset, Field: "/asset", Detail: fmt.Sprintf("asset %s is not supported on %s; supported: %q (or its contract %s)", shown.Quote(v), network, AssetUSDC, usdcContracts[network])}
}
