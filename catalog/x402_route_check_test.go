package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/catalog"
	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestCheckX402ListsTheX402Endpoint: an x402 payment can also be handed
// over as the SDK's documents, POST /v1/x402/settlements (README "x402
// ingest"), for the key's account as POST /settlements, and only where
// the network's chain verification is required (422
// CHAIN_VERIFICATION_REQUIRED otherwise: x402 carries no settlement time).
// The check's event_support lists the routes that record the payment, so a
// facilitator asking about its own corridor must find that endpoint there,
// usable or not, with the reason.
func TestCheckX402ListsTheX402Endpoint(t *testing.T) {
	route := func(t *testing.T, c *catalog.CapabilityCheck) *catalog.IngestRoute {
		t.Helper()
		for _, r := range c.EventSupport.Ingest {
			if r.Endpoint == "POST /v1/x402/settlements" {
				return &r
			}
		}
		t.Fatalf("x402 check: ingest routes %+v lack POST /v1/x402/settlements", c.EventSupport.Ingest)
		return nil
	}
	ctx := context.Background()
	off := testEngine(t, checkNow, irishSeller) // no chain verification
	c, err := off.CheckCapabilities(ctx, "acct_0", check("IE", "DE", "B2C", catalog.ProtocolX402, evmverify.NetworkBase))
	if err != nil {
		t.Fatal(err)
	}
	if r := route(t, c); r.Status != catalog.RouteNotUsable || !strings.Contains(r.Condition, "CHAIN_VERIFICATION_REQUIRED") {
		t.Errorf("verification off: %+v, want not_usable naming CHAIN_VERIFICATION_REQUIRED", r)
	}

	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{"http://127.0.0.1:1"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fiscaltest.Config(t, checkNow, irishSeller)
	cfg.Chain = v
	on := catalog.New(fiscaltest.Engine(t, cfg), catalog.DefaultPricing())
	for _, tc := range []struct {
		account, seller, want string
	}{
		{"acct_0", "IE", catalog.RouteUsable},    // the account's own seller
		{"acct_0", "FR", catalog.RouteNotUsable}, // another seller than the key's
		{"", "IE", catalog.RouteConditional},     // anonymous: the key decides
	} {
		c, err := on.CheckCapabilities(ctx, tc.account, check(tc.seller, "DE", "B2C", catalog.ProtocolX402, evmverify.NetworkBase))
		if err != nil {
			t.Fatal(err)
		}
		if r := route(t, c); r.Status != tc.want {
			t.Errorf("verification required, account %q, seller %s: %+v, want %s", tc.account, tc.seller, r, tc.want)
		}
	}
	// Ethereum's verification is still off on that engine.
	c, err = on.CheckCapabilities(ctx, "acct_0", check("IE", "DE", "B2C", catalog.ProtocolX402, evmverify.NetworkEthereum))
	if err != nil {
		t.Fatal(err)
	}
	if r := route(t, c); r.Status != catalog.RouteNotUsable {
		t.Errorf("ethereum, verification off: %+v, want not_usable", r)
	}
}
