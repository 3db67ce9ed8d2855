package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fiscal402/fiscal402/fiscal"
	"github.com/fiscal402/fiscal402/internal/fiscaltest"
	"github.com/fiscal402/fiscal402/refunds"
)

// TestLedgerWithRefunds: refund entries (their receipts and stored refund
// documents, compared field by field: the refund's payment, its negative
// EUR figures, the original classification) pass the whole-ledger audit.
func TestLedgerWithRefunds(t *testing.T) {
	ctx := context.Background()
	r := newRefundedSale(t)
	cfg, e, books, res := r.cfg, r.e, r.books, r.sale
	if _, err := refunds.Create(ctx, books, res.Record.ID, refunds.Request{}, ""); err != nil {
		t.Fatal(err)
	}
	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	logKey := e.LogVerifierKey()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jwksPath := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwksPath, jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(cfg.Dir, "ledger.db")
	var out, errOut bytes.Buffer
	if code := Main([]string{"ledger", db, "--log-key", logKey, "--jwks", jwksPath}, &out, &errOut); code != ExitOK || !strings.Contains(out.String(), "LEDGER VERIFIED") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	t.Logf("%s", out.String())
}

// refundedSale is an engine with one sale of 11.90 USDC to a German
// consumer, refunded in part (4.90 USDC).
type refundedSale struct {
	cfg    fiscal.Config
	e      *fiscal.Engine
	books  *fiscal.Books
	sale   *fiscal.SettleResult
	refund *refunds.Result
}

func newRefundedSale(t *testing.T) refundedSale {
	t.Helper()
	ctx := context.Background()
	cfg := fiscaltest.Config(t, now, fiscaltest.IrishSeller)
	e := fiscaltest.Engine(t, cfg)
	books := fiscaltest.Books(t, e, 0)
	res, err := books.Settle(ctx, fiscaltest.Request(1, "11.90", "DE", "2026-04-10T14:30:00Z"), "")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := refunds.Create(ctx, books, res.Record.ID, refunds.Request{AmountUSDC: "4.90"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return refundedSale{cfg: cfg, e: e, books: books, sale: res, refund: ref}
}
