package fiscal_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/receipt"
)

func fiscalEvent(n int, sellerName, sellerCountry, buyerCountry string) fiscal.FiscalEventRequest {
	r := request(n, "11.90", "", "2026-04-10T14:30:00Z")
	return fiscal.FiscalEventRequest{
		Payment: fiscal.EventPayment{AmountUSDC: r.AmountUSDC, TxHash: r.TxHash, Timestamp: r.Timestamp,
			PayerWallet: r.PayerWallet, ReceiverWallet: r.ReceiverWallet, Network: r.Network},
		Seller: fiscal.EventSeller{LegalName: sellerName, Country: sellerCountry},
		Buyer:  fiscal.EventBuyer{Country: buyerCountry, BusinessStatus: "B2C"},
		Supply: fiscal.EventSupply{Kind: "digital_service"},
	}
}

// TestProductionArtifactsPassValidator: the invoices of fiscal events that
// meet the production invariants, and the watermarked invoices of the
// sandbox, pass the UBL validator like settlement invoices do.
func TestProductionArtifactsPassValidator(t *testing.T) {
	e := testEngine(t, time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC), irishSeller)
	ctx := context.Background()
	dir := t.TempDir()
	var files []string
	for i, cc := range euMemberStates {
		res, err := e.RecordFiscalEvent(ctx, "acct_0", fiscalEvent(i, irishSeller.LegalName, "IE", cc), "")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Event.Production.Receipt {
			t.Fatalf("%s: production invariants %+v", cc, res.Event.Production)
		}
		ubl, _, err := e.FiscalEventInvoice(ctx, "acct_0", res.Event.ID)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, writeFile(t, dir, res.Event.ID+".xml", ubl))

		sim, err := e.Simulate(ctx, "", "", fiscal.SimulateRequest{SettlementRequest: request(100+i, "11.90", cc, "2026-04-10T14:30:00Z")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sim.UBL, "SANDBOX TEST DOCUMENT") {
			t.Fatalf("sandbox UBL without watermark")
		}
		files = append(files, writeFile(t, dir, "sandbox-"+cc+".xml", []byte(sim.UBL)))
	}
	validateUBL(t, files, false) // B2C: plain EN 16931, not Peppol
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSandboxKeysStaySeparate: the sandbox keyring's keys never appear in
// the production JWKS, across a restart, and a production receipt does not
// verify with the sandbox keys either.
func TestSandboxKeysStaySeparate(t *testing.T) {
	dir := t.TempDir()
	accounts, _ := fiscal.NewAccounts([]fiscal.Account{{ID: "acct_0", KeyHashes: []string{fiscal.HashKey("k")}, Seller: irishSeller}})
	open := func() *fiscal.Engine {
		e, err := fiscal.New(fiscal.Config{DataDir: dir, Accounts: accounts, Clock: func() time.Time { return time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	ctx := context.Background()
	res, err := e.Settle(ctx, "acct_0", request(1, "1.00", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	prodReceipt, _ := e.Receipt(ctx, res.Record.Receipt.ID)
	sim, err := e.Simulate(ctx, "acct_0", fiscal.AccountAgent("acct_0"), fiscal.SimulateRequest{SettlementRequest: request(1, "1.00", "DE", "2026-04-10T14:30:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	prodJWKS, _ := e.JWKS()
	sbJWKS, _ := e.SandboxJWKS()
	var prod, sb receipt.KeySet
	_ = json.Unmarshal(prodJWKS, &prod)
	_ = json.Unmarshal(sbJWKS, &sb)
	for _, k := range sb.Keys {
		if _, err := prod.Lookup(k.Kid); !errors.Is(err, receipt.ErrUnknownKey) {
			t.Fatalf("sandbox key %s in the production JWKS", k.Kid)
		}
	}
	if _, err := receipt.Verify(sim.Receipt, prodJWKS, e.LogVerifierKey()); err == nil {
		t.Fatal("sandbox receipt verified with the production keys")
	}
	if _, err := receipt.Verify(sim.Receipt, sbJWKS, e.SandboxLogVerifierKey()); err != nil {
		t.Fatalf("sandbox receipt: %v", err)
	}
	if _, err := receipt.Verify(prodReceipt, sbJWKS, e.LogVerifierKey()); err == nil {
		t.Fatal("production receipt verified with the sandbox keys")
	}
	if e.Ledger().Size() != 1 || e.SandboxLedger().Size() != 1 {
		t.Fatalf("ledger sizes %d/%d, want 1/1", e.Ledger().Size(), e.SandboxLedger().Size())
	}
	if strings.HasPrefix(e.SandboxLogVerifierKey(), e.LogVerifierKey()) || !strings.HasPrefix(e.SandboxLogVerifierKey(), fiscal.DefaultLogOrigin+"/sandbox+") {
		t.Errorf("sandbox log key %s", e.SandboxLogVerifierKey())
	}
}
