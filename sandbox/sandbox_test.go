package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/parties"
	"github.com/fiscal402/fiscal402/receipt"
	"github.com/fiscal402/fiscal402/sandbox"
	"github.com/fiscal402/fiscal402/vat"
)

var euMemberStates = []string{"AT", "BE", "BG", "CY", "CZ", "DE", "DK", "EE", "EL", "ES", "FI", "FR", "HR", "HU", "IE", "IT", "LT", "LU", "LV", "MT", "NL", "PL", "PT", "RO", "SE", "SI", "SK"}

// TestSandboxInvoicesPassValidator: the watermarked invoices of the sandbox
// pass the UBL validator like production invoices do (the fiscal-event
// invoices are checked in package fiscalevent).
func TestSandboxInvoicesPassValidator(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	sb := sandbox.New(e, sandbox.Options{})
	ctx := context.Background()
	dir := t.TempDir()
	var files []string
	for i, cc := range euMemberStates {
		sim, err := sb.Simulate(ctx, "", "", sandbox.SimulateRequest{SettlementRequest: fiscaltest.Request(100+i, "11.90", cc, "2026-04-10T14:30:00Z")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sim.UBL, "SANDBOX TEST DOCUMENT") {
			t.Fatalf("%s: sandbox UBL without watermark", cc)
		}
		p := filepath.Join(dir, "sandbox-"+cc+".xml")
		if err := os.WriteFile(p, []byte(sim.UBL), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if e.Ledger().Size() != 0 {
		t.Fatalf("the production ledger holds %d entries after sandbox simulations", e.Ledger().Size())
	}
	fiscaltest.ValidateUBL(t, files, false) // B2C: plain EN 16931, not Peppol
}

// TestSandboxKeysStaySeparate: the sandbox keyring's keys never appear in
// the production JWKS, across a restart, and a production receipt does not
// verify with the sandbox keys either.
func TestSandboxKeysStaySeparate(t *testing.T) {
	cfg := fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller)
	open := func() (*fiscal.Engine, *sandbox.Sandbox) {
		e, err := fiscal.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e, sandbox.New(e, sandbox.Options{})
	}
	e, sb := open()
	ctx := context.Background()
	req := fiscaltest.Request(1, "1.00", "DE", "2026-04-10T14:30:00Z")
	res, err := fiscaltest.Books(t, e, 0).Settle(ctx, req, "")
	if err != nil {
		t.Fatal(err)
	}
	prodReceipt, err := e.Receipt(ctx, res.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := sb.Simulate(ctx, fiscaltest.AccountID(0), sandbox.AccountAgent(fiscaltest.AccountID(0)), sandbox.SimulateRequest{SettlementRequest: req})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, sb = open()
	defer e.Close()
	prodJWKS, _ := e.JWKS()
	sbJWKS, err := sb.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	sbLogKey, err := sb.LogVerifierKey()
	if err != nil {
		t.Fatal(err)
	}
	var prod, sbKeys receipt.KeySet
	if err := json.Unmarshal(prodJWKS, &prod); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sbJWKS, &sbKeys); err != nil {
		t.Fatal(err)
	}
	if len(sbKeys.Keys) == 0 || len(prod.Keys) == 0 {
		t.Fatalf("key sets: %d production, %d sandbox keys", len(prod.Keys), len(sbKeys.Keys))
	}
	for _, k := range sbKeys.Keys {
		if _, err := prod.Lookup(k.Kid); !errors.Is(err, receipt.ErrUnknownKey) {
			t.Fatalf("sandbox key %s in the production JWKS", k.Kid)
		}
	}
	if _, err := receipt.Verify(sim.Receipt, prodJWKS, e.LogVerifierKey()); err == nil {
		t.Fatal("sandbox receipt verified with the production keys")
	}
	if _, err := receipt.Verify(sim.Receipt, sbJWKS, sbLogKey); err != nil {
		t.Fatalf("sandbox receipt: %v", err)
	}
	if _, err := receipt.Verify(prodReceipt, prodJWKS, e.LogVerifierKey()); err != nil {
		t.Fatalf("production receipt: %v", err)
	}
	if _, err := receipt.Verify(prodReceipt, sbJWKS, e.LogVerifierKey()); err == nil {
		t.Fatal("production receipt verified with the sandbox keys")
	}
	sbLedger, err := sb.Ledger()
	if err != nil {
		t.Fatal(err)
	}
	if e.Ledger().Size() != 1 || sbLedger.Size() != 1 {
		t.Fatalf("ledger sizes %d/%d, want 1/1", e.Ledger().Size(), sbLedger.Size())
	}
	if strings.HasPrefix(sbLogKey, e.LogVerifierKey()) || !strings.HasPrefix(sbLogKey, fiscal.DefaultLogOrigin+"/sandbox+") {
		t.Errorf("sandbox log key %s", sbLogKey)
	}
}

// BenchmarkEvaluate measures the classification preview, unmetered (the
// metered call adds one fsynced quota update).
func BenchmarkEvaluate(b *testing.B) {
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)))
	sb := sandbox.New(e, sandbox.Options{})
	req := sandbox.EvaluateRequest{
		Seller: &parties.Seller{Country: "US"}, Buyer: parties.Buyer{Country: "DE"},
		Supply: parties.Supply{Kind: "digital_service"}, AmountUSDC: "11.90", Date: "2026-04-10",
	}
	if _, err := sb.Evaluate(context.Background(), "", "", req); err != nil { // opens the sandbox engine, outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sb.Evaluate(context.Background(), "", "", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSimulate measures a sandbox simulation (sandbox append and
// receipt assembly), unmetered.
func BenchmarkSimulate(b *testing.B) {
	e := fiscaltest.Engine(b, fiscaltest.Config(b, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	sb := sandbox.New(e, sandbox.Options{})
	countries := []string{"DE", "FR", "IT", "ES"}
	if _, err := sb.JWKS(); err != nil { // opens the sandbox engine, outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := fiscaltest.Request(i, "11.90", countries[i%4], "2026-04-10T14:30:00Z")
		if _, err := sb.Simulate(context.Background(), fiscaltest.AccountID(0), "", sandbox.SimulateRequest{SettlementRequest: req}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEvaluateAnswersAnySupplyKind: a kind the account does not sell, or
// one the ruleset does not cover, is answered with its determination (a
// manual review naming the kind, or the kind's own rate), never refused.
func TestEvaluateAnswersAnySupplyKind(t *testing.T) {
	e := fiscaltest.Engine(t, fiscaltest.Config(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), fiscaltest.IrishSeller))
	sb := sandbox.New(e, sandbox.Options{})
	for _, c := range []struct {
		kind   string
		status string
		reason string
	}{
		{"consulting", vat.StatusManualReview, vat.ReasonSupplyKindNotCovered},
		{vat.KindEbook, vat.StatusDetermined, ""},
	} {
		ev, err := sb.Evaluate(context.Background(), fiscaltest.AccountID(0), "", sandbox.EvaluateRequest{
			Buyer: parties.Buyer{Country: "DE"}, Supply: parties.Supply{Kind: c.kind}, AmountUSDC: "11.90", Date: "2026-04-10",
		})
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		d := ev.Determination
		if d.Status != c.status || c.reason != "" && (len(d.Reasons) == 0 || d.Reasons[0].Code != c.reason) {
			t.Errorf("%s: %s %v", c.kind, d.Status, d.Reasons)
		}
		if c.kind == vat.KindEbook {
			reduced, _, _ := vat.Rates().Reduced("DE", time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC))
			if d.RatePercent == nil || !slices.ContainsFunc(reduced, d.RatePercent.Decimal().Equal) {
				t.Errorf("German e-book rate %v, want one of the reduced rates %v", d.RatePercent, reduced)
			}
		}
	}
}
