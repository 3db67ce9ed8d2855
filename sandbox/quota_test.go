package sandbox_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/evmverify"
	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/fx"
	"github.com/fiscal402/fiscal402/internal/fakechain"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
)

// emptyNode is a synced Base node that knows no transaction (head 256).
func emptyNode(t *testing.T) string {
	node := fakechain.New(time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
	node.Advance(0x100)
	return node.Serve(t)
}

// TestRefusedSimulationDoesNotCount: only valid requests count against the
// sandbox quota (README "Sandbox quota"). A simulation of a payment the
// chain does not have is refused (422 CHAIN_VERIFY_FAILED, no record) and
// must leave the agent's quota as it was.
func TestRefusedSimulationDoesNotCount(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	v, err := evmverify.NewVerifier(map[string]evmverify.Policy{
		evmverify.NetworkBase: {Mode: evmverify.ModeRequired, RPCURLs: []string{emptyNode(t)}, Timeout: 2 * time.Second},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chain = v
	e := fiscaltest.Engine(t, cfg)
	sb := sandbox.New(e, sandbox.Options{QuotaPerDay: 1})
	ctx := context.Background()
	agent := sandbox.Agent("address:192.0.2.1")
	_, err = sb.Simulate(ctx, "", agent, sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(1, "1.00", "DE", "2026-04-10T14:30:00Z")})
	if code := fiscaltest.Code(err); code != fiscal.CodeChainVerifyFailed {
		t.Fatalf("simulation of an unknown transaction: %v, want %s", err, fiscal.CodeChainVerifyFailed)
	}
	ev, err := sb.Evaluate(ctx, "", agent, sandbox.EvaluateRequest{
		Seller: &parties.Seller{Country: "US"}, Buyer: parties.Buyer{Country: "DE"},
		Supply: parties.Supply{Kind: vat.KindDigitalService}, AmountUSDC: "1.00", Date: "2026-04-10",
	})
	if err != nil {
		t.Fatalf("first valid call after a refused simulation: %v", err)
	}
	if ev.Quota == nil || ev.Quota.Used != 1 {
		t.Errorf("quota after one valid call %+v, want used 1", ev.Quota)
	}
}

// flakyFX is a rate source that fails while broken is set.
type flakyFX struct {
	fx.Source
	broken atomic.Bool
}

func (f *flakyFX) Rate(ctx context.Context, quote string, at time.Time, p fx.Policy) (fx.Rate, error) {
	if f.broken.Load() {
		return fx.Rate{}, errors.New("rate store unreadable")
	}
	return f.Source.Rate(ctx, quote, at, p)
}

// TestFailedSimulationDoesNotCount: a simulation that passes the quota
// check and the chain verification but then fails (here the rate lookup
// breaks: 500 INTERNAL, no record) gives its unit back: the agent's next
// simulation is its first counted call, and with a quota of one it is
// still allowed.
func TestFailedSimulationDoesNotCount(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	embedded, err := fx.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	rates := &flakyFX{Source: embedded}
	cfg.FX = rates
	e := fiscaltest.Engine(t, cfg)
	sb := sandbox.New(e, sandbox.Options{QuotaPerDay: 1})
	ctx := context.Background()
	agent := sandbox.Agent("address:192.0.2.1")
	rates.broken.Store(true)
	if _, err := sb.Simulate(ctx, "", agent, sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(1, "1.00", "DE", "2026-04-10T14:30:00Z")}); err == nil {
		t.Fatal("a simulation whose rate lookup fails succeeded")
	}
	rates.broken.Store(false)
	sim, err := sb.Simulate(ctx, "", agent, sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(2, "1.00", "DE", "2026-04-10T14:30:00Z")})
	if err != nil {
		t.Fatalf("first successful simulation after a failed one: %v", err)
	}
	if sim.Quota == nil || sim.Quota.Used != 1 || sim.Quota.Remaining != 0 {
		t.Errorf("quota after one successful simulation %+v, want used 1, remaining 0", sim.Quota)
	}
}
