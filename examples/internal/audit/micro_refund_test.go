package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
	"github.com/fiscal402/fiscal402/returns"
	"github.com/fiscal402/fiscal402/vat"
)

// TestMicroRefundsAreRefundsToTheAuditor: a refund of part of a
// micropayment credits less than half a euro cent, so its receipt's
// rounded euro figures are "0.00", not negative; its exact ones
// (gross_eur_exact, receipt 3.0.0 and 4.0.0) are. The auditor told a
// refund's receipt from a sale's by the sign of gross_eur alone: "audit
// return" then added the refunded USDC to the line's total instead of
// taking it off, and found a correct OSS return (README "The OSS return,
// records on request and the export": refunds reduce their line, or are
// corrections of the original period, Art. 61 Implementing Regulation
// 282/2011) not adding up; "audit receipt" described the refund as a
// payment with its invoice. Here an OSS seller's 0.001 USDC sales to
// Germany in Q4 2025 and Q1 2026 are each refunded 0.000001 USDC in Q1
// 2026 (a reduction of the Q1 line and a correction of Q4 2025).
func TestMicroRefundsAreRefundsToTheAuditor(t *testing.T) {
	ctx := context.Background()
	seller := fiscaltest.IrishSeller
	seller.Registrations = []vat.Registration{{Scheme: vat.RegistrationOSSUnion, Country: "IE", Number: "IE1234567T"},
		{Scheme: vat.RegistrationNational, Country: "IE", Number: "IE1234567T"}}
	clock := time.Date(2025, 12, 20, 12, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, clock, seller)
	cfg.NoBackground = true
	cfg.Clock = func() time.Time { return clock }
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	dir := t.TempDir()
	receipts := filepath.Join(dir, "receipts")
	if err := os.MkdirAll(receipts, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path string, data []byte) string {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	save := func(id string) string {
		doc, err := b.Receipt(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return write(filepath.Join(receipts, id+".json"), doc)
	}
	var sales []string
	settle := func(n int, at string) {
		res, err := b.Settle(ctx, fiscaltest.Request(n, "0.001", "DE", at), "")
		if err != nil || res.Record.Invoice == nil {
			t.Fatalf("sale %d: %v", n, err)
		}
		sales = append(sales, res.Record.ID)
		save(res.Record.Receipt.ID)
	}
	settle(1, "2025-12-10T10:00:00Z")
	clock = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	settle(2, "2026-03-10T10:00:00Z")
	var refundReceipt string
	for _, id := range sales {
		res, err := refunds.Create(ctx, b, id, refunds.Request{AmountUSDC: "0.000001"}, "")
		if err != nil {
			t.Fatal(err)
		}
		fx := res.Refund.FX
		if fx.GrossEUR != "0.00" || !decimal.RequireFromString(fx.GrossEURExact).IsNegative() {
			t.Fatalf("refund of 0.000001 USDC: gross %s, exact %s; the test needs a credit of less than half a cent", fx.GrossEUR, fx.GrossEURExact)
		}
		refundReceipt = save(res.Refund.Receipt.ID)
	}
	clock = time.Date(2026, 4, 13, 18, 0, 0, 0, time.UTC)
	ret, signed, err := returns.OSS(ctx, b, returns.Period{Year: 2026, Quarter: 1}, returns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.Lines) != 1 || ret.Lines[0].AmountUSDC != "0.000999" || len(ret.Corrections) != 1 || ret.Corrections[0].AmountUSDC != "-0.000001" {
		t.Fatalf("the return: lines %+v, corrections %+v", ret.Lines, ret.Corrections)
	}
	raw, err := json.Marshal(signed)
	if err != nil {
		t.Fatal(err)
	}
	retPath := write(filepath.Join(dir, "return.json"), raw)
	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	jwksPath := write(filepath.Join(dir, "jwks.json"), jwks)
	keys := []string{"--jwks", jwksPath, "--log-key", e.LogVerifierKey()}

	var out, errOut bytes.Buffer
	if code := Main(append([]string{"return", retPath, "--receipts", receipts}, keys...), &out, &errOut); code != ExitOK || !strings.HasPrefix(out.String(), "return verified") {
		t.Errorf("audit return of a correct return with micro refunds: exit %d\n%s%s", code, out.String(), errOut.String())
	}

	out.Reset()
	errOut.Reset()
	if code := Main(append([]string{"receipt", refundReceipt}, keys...), &out, &errOut); code != ExitOK {
		t.Fatalf("audit receipt: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	got := out.String()
	for _, bad := range []string{"Payment ", "  In euros"} {
		if strings.Contains(got, bad) {
			t.Errorf("the micro refund's receipt is described as a sale (%q):\n%s", bad, got)
		}
	}
	for _, want := range []string{"refunded", "Correction", "Credit note", "Corrects"} {
		if !strings.Contains(got, want) {
			t.Errorf("the micro refund's receipt words lack %q:\n%s", want, got)
		}
	}
}
