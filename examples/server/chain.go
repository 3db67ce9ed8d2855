package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
)

// chainFlags are the per-network chain policy flags:
//
//	-base-rpc urls            JSON-RPC endpoints of Base, comma-separated, tried in order (env FISCAL402_BASE_RPC)
//	-base-mode off|required   verify Base payments on chain (default off: the offline demo)
//	-base-confirmations n     blocks the payment's block must have (head - block + 1; 0 = 1)
//	-base-finalized           also require the block to be finalized
//	-ethereum-...             the same for Ethereum (env FISCAL402_ETHEREUM_RPC)
//	-chain-timeout d          bound on one verification attempt against one endpoint (default 10s)
//
// RPC URLs often carry a provider key: prefer the environment variables to
// flags, which other users of the machine can read in the process list.
type chainFlags struct {
	networks []*networkFlags
	timeout  time.Duration
}

type networkFlags struct {
	name, caip2   string
	rpc, mode     string
	confirmations uint64
	finalized     bool
	urls          []string // rpc, split
}

func addChainFlags(fs *flag.FlagSet) *chainFlags {
	c := &chainFlags{networks: []*networkFlags{
		{name: "base", caip2: evmverify.NetworkBase},
		{name: "ethereum", caip2: evmverify.NetworkEthereum},
	}}
	for _, n := range c.networks {
		env := "FISCAL402_" + strings.ToUpper(n.name) + "_RPC"
		fs.StringVar(&n.rpc, n.name+"-rpc", "", fmt.Sprintf("JSON-RPC endpoints of %s (%s), comma-separated (or the environment variable %s, which keeps a provider key out of the process list and out of -h)", n.name, n.caip2, env))
		fs.StringVar(&n.mode, n.name+"-mode", string(evmverify.ModeOff), fmt.Sprintf("chain verification of %s payments: off or required", n.name))
		fs.Uint64Var(&n.confirmations, n.name+"-confirmations", 0, fmt.Sprintf("confirmations a %s payment needs (0 means 1: mined)", n.name))
		fs.BoolVar(&n.finalized, n.name+"-finalized", false, fmt.Sprintf("require %s payments to be in a finalized block", n.name))
	}
	fs.DurationVar(&c.timeout, "chain-timeout", evmverify.DefaultTimeout, "bound on one verification attempt against one RPC endpoint")
	return c
}

// verifier builds the chain verifier the flags describe, or nil when every
// network is off (the offline demo: records say verification was not
// performed, and x402 ingest answers CHAIN_VERIFICATION_REQUIRED).
// Contradictory flags are errors rather than silently ignored.
func (c *chainFlags) verifier() (*evmverify.Verifier, error) {
	if c.timeout <= 0 {
		return nil, fmt.Errorf("-chain-timeout must be positive")
	}
	policies := map[string]evmverify.Policy{}
	for _, n := range c.networks {
		var urls []string
		for _, u := range strings.Split(n.rpc, ",") {
			if u = strings.TrimSpace(u); u != "" {
				urls = append(urls, u)
			}
		}
		n.urls = urls
		switch evmverify.Mode(n.mode) {
		case evmverify.ModeRequired:
			if len(urls) == 0 {
				return nil, fmt.Errorf("-%s-mode required needs -%s-rpc (or FISCAL402_%s_RPC)", n.name, n.name, strings.ToUpper(n.name))
			}
			policies[n.caip2] = evmverify.Policy{
				Mode: evmverify.ModeRequired, RPCURLs: urls, MinConfirmations: n.confirmations,
				RequireFinalized: n.finalized, Timeout: c.timeout,
			}
		case evmverify.ModeOff:
			switch {
			case len(urls) > 0:
				return nil, fmt.Errorf("-%s-rpc is set but -%s-mode is off: add -%s-mode required to verify %s payments, or drop the endpoint", n.name, n.name, n.name, n.name)
			case n.confirmations != 0 || n.finalized:
				return nil, fmt.Errorf("-%s-confirmations and -%s-finalized need -%s-mode required", n.name, n.name, n.name)
			}
		default:
			return nil, fmt.Errorf("-%s-mode %q: want off or required", n.name, n.mode)
		}
	}
	if len(policies) == 0 {
		return nil, nil
	}
	return evmverify.NewVerifier(policies, nil)
}

// describe prints one line per network saying how its payments are checked
// (after verifier).
func (c *chainFlags) describe(w io.Writer) {
	for _, n := range c.networks {
		if evmverify.Mode(n.mode) != evmverify.ModeRequired {
			fmt.Fprintf(w, "chain %s (%s): verification off; records say \"not_performed\"; x402 ingest needs it on\n", n.caip2, n.name)
			continue
		}
		depth := fmt.Sprintf("%d confirmation(s)", max(n.confirmations, 1))
		if n.finalized {
			depth += ", finalized"
		}
		fmt.Fprintf(w, "chain %s (%s): verification required, %d endpoint(s), %s\n", n.caip2, n.name, len(n.urls), depth)
	}
}
