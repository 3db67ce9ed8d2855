package audit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReceiptWordsOfARefund: "audit receipt" on a refund's receipt says
// what it is, as the /verify page does: an amount refunded, a correction
// in euros, a credit note and the receipt it corrects. It said "Payment
// ... paid <refund time>" and "Invoice invoice F402-CN-…", which an auditor
// reads as a sale.
func TestReceiptWordsOfARefund(t *testing.T) {
	ctx := context.Background()
	r := newRefundedSale(t)
	e, res, ref := r.e, r.sale, r.refund
	doc, err := e.Receipt(ctx, ref.Refund.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	sale, err := e.Receipt(ctx, res.Record.Receipt.ID)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := e.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jwksPath := write("jwks.json", jwks)
	run := func(path string) string {
		var out, errOut bytes.Buffer
		if code := Main([]string{"receipt", path, "--jwks", jwksPath, "--log-key", e.LogVerifierKey()}, &out, &errOut); code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
		}
		return out.String()
	}
	got := run(write("refund.json", doc))
	cn := ref.Refund.CreditNote.ID
	for _, bad := range []string{"Payment ", "invoice " + cn, "  In euros"} {
		if strings.Contains(got, bad) {
			t.Errorf("the refund's receipt is described as a sale (%q):\n%s", bad, got)
		}
	}
	for _, want := range []string{"refunded", "  Correction    -", "Credit note", cn, "Corrects", res.Record.Receipt.ID} {
		if !strings.Contains(got, want) {
			t.Errorf("the refund's receipt words lack %q:\n%s", want, got)
		}
	}
	// The sale's own receipt keeps its words.
	if s := run(write("sale.json", sale)); !strings.Contains(s, "Payment ") || !strings.Contains(s, "invoice "+res.Record.Invoice.ID) || strings.Contains(s, "refunded") {
		t.Errorf("the sale's receipt:\n%s", s)
	}
}
