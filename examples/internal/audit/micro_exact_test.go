package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fiscal402/fiscal402/internal/fiscaltest"
)

// TestReceiptShowsTheExactVATOfAMicropayment: a 0.001 USDC sale to a
// German consumer carries VAT of about EUR 0.00014, which is 0.00 to the
// cent; its receipt (3.0.0 and later) signs the exact figures too
// (vat_eur_exact), which are what the seller declares (the OSS return adds
// them, Art. 369h(2) Directive 2006/112/EC). "audit receipt" showed the
// cent figures alone, so the auditor read "0.00 EUR VAT" for a supply that
// bore VAT: where a cent figure hides a non-zero exact one, the exact
// figures are shown beside it.
func TestReceiptShowsTheExactVATOfAMicropayment(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	cfg := fiscaltest.Config(t, clock, fiscaltest.IrishSeller)
	cfg.NoBackground = true
	e := fiscaltest.Engine(t, cfg)
	b := fiscaltest.Books(t, e, 0)
	res, err := b.Settle(ctx, fiscaltest.Request(1, "0.001", "DE", "2026-03-10T10:00:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	fx := res.Record.FX
	if fx.VATEUR != "0.00" || decimal.RequireFromString(fx.VATEURExact).IsZero() {
		t.Fatalf("VAT %s, exact %s: the test needs VAT that rounds to 0.00", fx.VATEUR, fx.VATEURExact)
	}
	dir := t.TempDir()
	doc, err := b.Receipt(ctx, res.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	rp, jp := filepath.Join(dir, "receipt.json"), filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(rp, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"receipt", rp, "--jwks", jp, "--log-key", e.LogVerifierKey()}, &out, &errOut); code != ExitOK {
		t.Fatalf("audit receipt: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	got := strings.Join(strings.Fields(out.String()), " ") // unwrapped
	for _, want := range []string{fx.VATEURExact, fx.GrossEURExact, fx.NetEURExact} {
		if !strings.Contains(got, want) {
			t.Errorf("audit receipt does not show the exact figure %s (VAT %s to the cent):\n%s", want, fx.VATEUR, out.String())
		}
	}
}
